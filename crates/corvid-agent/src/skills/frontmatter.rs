//! The YAML frontmatter of a `SKILL.md`, without a YAML library.
//!
//! Skills need two text fields, so the accepted language is small and every refusal says why:
//!
//! - The file starts with a `---` line; the next `---` line closes the frontmatter; the rest is
//!   the body.
//! - Each entry is `key: value` at the start of a line. Blank lines and `#` comments are skipped.
//! - A value is plain (continued on more-indented lines, folded with spaces, ` #` starts a
//!   comment), `'single-quoted'` (`''` is a quote) or `"double-quoted"` (with `\` escapes), each
//!   on one line; or a `|` (literal) or `>` (folded) block scalar, optionally with a `-`/`+`
//!   chomping indicator, whose indented lines follow.
//! - A key with nothing after the colon and indented lines below holds a nested mapping or list,
//!   and a value starting with `[` or `{` is a flow collection: both are kept as
//!   [`Value::Nested`] so other tools' keys (`metadata`, `allowed-tools`) do not spoil a skill,
//!   but such a value is refused where text is needed.
//! - Anchors, aliases and tags (`&`, `*`, `!`), tabs used for indentation, duplicate keys and
//!   lines that are not `key: value` are refused.

#[cfg(test)]
mod tests;

/// Why a frontmatter was refused. Line numbers count from 1 in the whole file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrontmatterError {
    #[error("it does not start with a `---` line opening the YAML frontmatter")]
    Missing,
    #[error("the frontmatter opened on line 1 is never closed by a `---` line")]
    Unterminated,
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
}

/// A frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Text: a plain, quoted or block scalar, or an empty value.
    Text(String),
    /// A nested mapping or list, or a flow collection: accepted, not interpreted.
    Nested,
}

/// One `key: value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) value: Value,
    /// Where the key is.
    pub(crate) line: usize,
}

/// A parsed `SKILL.md`: its frontmatter entries, in order, and the body after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Document<'a> {
    pub(crate) entries: Vec<Entry>,
    pub(crate) body: &'a str,
}

impl Document<'_> {
    pub(crate) fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.key == key)
    }
}

fn line_error(line: usize, reason: impl Into<String>) -> FrontmatterError {
    FrontmatterError::Line {
        line,
        reason: reason.into(),
    }
}

/// Splits `text` into frontmatter and body, and parses the frontmatter.
pub(crate) fn parse(text: &str) -> Result<Document<'_>, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut offset = 0;
    let mut lines = Vec::new();
    let mut closed_at = None;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        offset += raw.len();
        if index == 0 {
            if line.trim_end() != "---" {
                return Err(FrontmatterError::Missing);
            }
            continue;
        }
        if line.trim_end() == "---" {
            closed_at = Some(offset);
            break;
        }
        lines.push((index + 1, line));
    }
    if text.is_empty() {
        return Err(FrontmatterError::Missing);
    }
    let Some(body_start) = closed_at else {
        return Err(FrontmatterError::Unterminated);
    };
    let entries = parse_entries(&lines)?;
    Ok(Document {
        entries,
        body: &text[body_start..],
    })
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn parse_entries(lines: &[(usize, &str)]) -> Result<Vec<Entry>, FrontmatterError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let (number, line) = lines[index];
        index += 1;
        if is_blank(line) || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with('\t') {
            return Err(line_error(number, "tabs cannot indent YAML; use spaces"));
        }
        if line.starts_with(' ') {
            return Err(line_error(
                number,
                "an indented line must continue the value of the key above it",
            ));
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(line_error(
                number,
                format!("expected `key: value`, found `{}`", line.trim()),
            ));
        };
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(line_error(
                number,
                format!(
                    "`{key}` is not a plain key (letters, digits, `-` and `_`); expected `key: value`"
                ),
            ));
        }
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            return Err(line_error(number, format!("put a space after `{key}:`")));
        }
        if entries.iter().any(|entry| entry.key == key) {
            return Err(line_error(number, format!("`{key}` appears twice")));
        }
        // The lines below that belong to this entry: blank or indented.
        let start = index;
        while index < lines.len()
            && (is_blank(lines[index].1) || lines[index].1.starts_with([' ', '\t']))
        {
            index += 1;
        }
        let mut continuation = &lines[start..index];
        while let [rest @ .., (_, last)] = continuation
            && is_blank(last)
        {
            continuation = rest;
        }
        if let Some((tab_line, _)) = continuation.iter().find(|(_, line)| line.starts_with('\t')) {
            return Err(line_error(*tab_line, "tabs cannot indent YAML; use spaces"));
        }
        let value = parse_value(number, rest.trim(), continuation)?;
        entries.push(Entry {
            key: key.to_owned(),
            value,
            line: number,
        });
    }
    Ok(entries)
}

fn parse_value(
    number: usize,
    value: &str,
    continuation: &[(usize, &str)],
) -> Result<Value, FrontmatterError> {
    let no_continuation = |value: Value| match continuation.first() {
        Some((line, _)) => Err(line_error(
            *line,
            "unexpected indented line after a quoted value",
        )),
        None => Ok(value),
    };
    match value.chars().next() {
        None if continuation.is_empty() => Ok(Value::Text(String::new())),
        None => Ok(Value::Nested),
        Some('|' | '>') => block_scalar(number, value, continuation).map(Value::Text),
        Some('"') => no_continuation(Value::Text(double_quoted(number, value)?)),
        Some('\'') => no_continuation(Value::Text(single_quoted(number, value)?)),
        Some('[' | '{') => Ok(Value::Nested),
        Some(c @ ('&' | '*' | '!')) => Err(line_error(
            number,
            format!("YAML anchors, aliases and tags (`{c}`) are not supported; quote the value"),
        )),
        Some(c @ ('@' | '`' | '%')) => Err(line_error(
            number,
            format!("a plain value cannot start with '{c}'; quote the value"),
        )),
        Some(_) => Ok(Value::Text(plain(value, continuation))),
    }
}

/// Strips a ` #` comment from a plain value.
fn strip_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(at) => text[..at].trim_end(),
        None => text,
    }
}

/// A plain scalar: the first line and any more-indented lines, folded (lines joined with a
/// space, a blank line kept as a line break).
fn plain(first: &str, continuation: &[(usize, &str)]) -> String {
    let mut text = strip_comment(first).to_owned();
    let mut pending_breaks = 0;
    for (_, line) in continuation {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let line = strip_comment(line);
        if line.is_empty() {
            pending_breaks += 1;
            continue;
        }
        if pending_breaks > 0 {
            text.push_str(&"\n".repeat(pending_breaks));
            pending_breaks = 0;
        } else {
            text.push(' ');
        }
        text.push_str(line);
    }
    text
}

fn block_scalar(
    number: usize,
    header: &str,
    continuation: &[(usize, &str)],
) -> Result<String, FrontmatterError> {
    let header = strip_comment(header).trim_end();
    let mut chars = header.chars();
    let folded = chars.next() == Some('>');
    let mut chomp = None;
    let mut explicit_indent = None;
    for c in chars {
        match c {
            '-' | '+' if chomp.is_none() => chomp = Some(c),
            '1'..='9' if explicit_indent.is_none() => {
                explicit_indent = c.to_digit(10).map(|d| d as usize)
            }
            _ => {
                return Err(line_error(
                    number,
                    format!(
                        "`{header}` is not a block scalar header (use `|`, `|-`, `>` or `>-`, with the text on the indented lines below)"
                    ),
                ));
            }
        }
    }
    let Some(indent) = explicit_indent.or_else(|| {
        continuation
            .iter()
            .find(|(_, line)| !is_blank(line))
            .map(|(_, line)| indentation(line))
    }) else {
        return Ok(String::new());
    };
    let mut lines = Vec::with_capacity(continuation.len());
    for (line_number, line) in continuation {
        if is_blank(line) {
            lines.push("");
        } else if indentation(line) < indent {
            return Err(line_error(
                *line_number,
                "this line is indented less than the block's first line",
            ));
        } else {
            lines.push(&line[indent..]);
        }
    }
    let mut text = if folded {
        fold(&lines)
    } else {
        lines.join("\n")
    };
    match chomp {
        Some('+') => text.push('\n'),
        Some(_) => {}
        None => {
            text.truncate(text.trim_end_matches('\n').len());
            text.push('\n');
        }
    }
    Ok(text)
}

/// `>` folding: lines joined with spaces, a blank line becoming a line break; more-indented
/// lines are kept as they are.
fn fold(lines: &[&str]) -> String {
    let mut text = String::new();
    let mut previous_literal = true;
    let mut breaks = 0;
    for line in lines {
        if line.is_empty() {
            breaks += 1;
            continue;
        }
        let literal = line.starts_with(' ');
        if !text.is_empty() {
            if breaks > 0 {
                text.push_str(&"\n".repeat(if literal || previous_literal {
                    breaks + 1
                } else {
                    breaks
                }));
            } else if literal || previous_literal {
                text.push('\n');
            } else {
                text.push(' ');
            }
        }
        breaks = 0;
        text.push_str(line);
        previous_literal = literal;
    }
    text
}

fn after_closing_quote(number: usize, rest: &str) -> Result<(), FrontmatterError> {
    let rest = rest.trim_start();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(line_error(
            number,
            format!("unexpected `{rest}` after the closing quote"),
        ))
    }
}

fn single_quoted(number: usize, value: &str) -> Result<String, FrontmatterError> {
    let mut text = String::new();
    let mut chars = value[1..].char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\'' {
            text.push(c);
        } else if chars.peek().map(|&(_, next)| next) == Some('\'') {
            chars.next();
            text.push('\'');
        } else {
            after_closing_quote(number, &value[1 + at + 1..])?;
            return Ok(text);
        }
    }
    Err(line_error(
        number,
        "the single-quoted value is not closed on this line",
    ))
}

fn double_quoted(number: usize, value: &str) -> Result<String, FrontmatterError> {
    let mut text = String::new();
    let mut chars = value[1..].char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => {
                after_closing_quote(number, &value[1 + at + 1..])?;
                return Ok(text);
            }
            '\\' => {
                let escaped = match chars.next().map(|(_, c)| c) {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('0') => '\0',
                    Some(c @ ('"' | '\\' | '/' | ' ')) => c,
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| {
                                line_error(
                                    number,
                                    format!("`\\u{hex}` is not a valid unicode escape"),
                                )
                            })?
                    }
                    Some(other) => {
                        return Err(line_error(
                            number,
                            format!("`\\{other}` is not a supported escape"),
                        ));
                    }
                    None => break,
                };
                text.push(escaped);
            }
            c => text.push(c),
        }
    }
    Err(line_error(
        number,
        "the double-quoted value is not closed on this line",
    ))
}
