//! The secrets file: `KEY=VALUE` lines, as a shell would `source` them.
//!
//! Reading accepts `#` comments, blank lines, an `export ` prefix and one layer of single or
//! double quotes. Writing keeps comments and unrelated lines, quotes values so bash reads them
//! back unchanged, and replaces the file atomically with mode 0600 (directory 0700).

use std::fs;
use std::path::Path;

use crate::ConfigError;
use crate::atomic::{FileMode, write_atomic};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Entry {
        key: String,
        value: String,
    },
    /// A comment, a blank line, or a line we could not parse: kept verbatim.
    Other(String),
}

/// An env file's contents. Values are secrets: this type's `Debug` shows keys only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EnvFile {
    lines: Vec<Line>,
}

impl std::fmt::Debug for EnvFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvFile")
            .field("keys", &self.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl EnvFile {
    /// Parses env-file text.
    pub fn parse(text: &str) -> Self {
        let lines = text.lines().map(parse_line).collect();
        Self { lines }
    }

    /// Reads `path`; a missing file is an empty env file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        match fs::read_to_string(path) {
            Ok(text) => Ok(Self::parse(&text)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(err) => Err(ConfigError::io("cannot read", path, err)),
        }
    }

    /// The value of `key`; the last assignment wins, as in a shell.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.lines.iter().rev().find_map(|line| match line {
            Line::Entry { key: k, value } if k == key => Some(value.as_str()),
            _ => None,
        })
    }

    /// Every key that has a value, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|line| match line {
            Line::Entry { key, .. } => Some(key.as_str()),
            Line::Other(_) => None,
        })
    }

    /// Sets `key`, replacing its first assignment in place (later duplicates are removed) or
    /// appending it.
    pub fn set(&mut self, key: &str, value: &str) {
        let mut replaced = false;
        self.lines.retain_mut(|line| match line {
            Line::Entry { key: k, value: v } if k == key => {
                if replaced {
                    return false;
                }
                *v = value.to_owned();
                replaced = true;
                true
            }
            _ => true,
        });
        if !replaced {
            self.lines.push(Line::Entry {
                key: key.to_owned(),
                value: value.to_owned(),
            });
        }
    }

    /// Removes every assignment of `key`; returns whether there was one.
    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.lines.len();
        self.lines
            .retain(|line| !matches!(line, Line::Entry { key: k, .. } if k == key));
        before != self.lines.len()
    }

    /// The file text, with every value quoted so that bash reads it back unchanged.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            match line {
                Line::Entry { key, value } => {
                    text.push_str(key);
                    text.push('=');
                    text.push_str(&shell_quote(value));
                }
                Line::Other(raw) => text.push_str(raw),
            }
            text.push('\n');
        }
        text
    }

    /// Writes the file atomically (temporary file in the same directory, then rename) with mode
    /// 0600, creating the directory with mode 0700 when it is missing.
    pub fn write(&self, path: &Path) -> Result<(), ConfigError> {
        write_atomic(path, self.render().as_bytes(), FileMode::Private)
    }
}

fn parse_line(raw: &str) -> Line {
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Line::Other(raw.to_owned());
    }
    let body = trimmed
        .strip_prefix("export ")
        .map(str::trim_start)
        .unwrap_or(trimmed);
    let Some((key, value)) = body.split_once('=') else {
        return Line::Other(raw.to_owned());
    };
    let key = key.trim();
    if !is_valid_key(key) {
        return Line::Other(raw.to_owned());
    }
    Line::Entry {
        key: key.to_owned(),
        value: unquote(value.trim()),
    }
}

fn is_valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Removes one layer of quotes. Single quotes are literal except for bash's `'\''` idiom;
/// double quotes understand `\"`, `\\`, `\$` and `` \` ``. Unquoted values lose a trailing
/// ` # comment`.
fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('\'') {
        // Bash concatenates adjacent quoted pieces: 'it'\''s' is "it's".
        let inner = &value[1..];
        let inner = inner.strip_suffix('\'').unwrap_or(inner);
        return inner.split("'\\''").collect::<Vec<_>>().join("'");
    }
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let inner = &value[1..value.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some(next @ ('"' | '\\' | '$' | '`')) => out.push(next),
                    Some(next) => {
                        out.push('\\');
                        out.push(next);
                    }
                    None => out.push('\\'),
                }
            } else {
                out.push(c);
            }
        }
        return out;
    }
    match value.find(" #") {
        Some(comment) => value[..comment].trim_end().to_owned(),
        None => value.to_owned(),
    }
}

/// Quotes a value for bash: bare when it holds only safe characters, otherwise single quotes
/// with embedded single quotes written as `'\''`.
fn shell_quote(value: &str) -> String {
    let safe = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/@+=,%".contains(c));
    if safe {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests;
