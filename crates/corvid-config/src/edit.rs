//! The one writer of `config.toml`: the settings page and `corvid mcp add/remove --global` both
//! change the file through [`ConfigDocument`]. Only the keys that change are touched; the user's
//! comments, blank lines and key order stay as written (a `toml_edit` document), and the file is
//! replaced atomically (written beside, then renamed: see [`crate::write_atomic`]).
//!
//! The running process does not re-read the file: callers say what needs a restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, TableLike};

use crate::ConfigError;
use crate::atomic::{FileMode, write_atomic};
use crate::mcp::{McpEntry, check_server_name};

/// `config.toml`, read to be changed.
#[derive(Debug, Clone)]
pub struct ConfigDocument {
    path: PathBuf,
    document: DocumentMut,
    /// The file held no keys (only comments, or nothing) when it was read.
    was_empty: bool,
}

impl ConfigDocument {
    /// Reads `path`; a missing file is an empty document.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let document = match std::fs::read_to_string(path) {
            Ok(text) => text
                .parse::<DocumentMut>()
                .map_err(|err| ConfigError::Toml {
                    path: path.to_path_buf(),
                    message: err.to_string(),
                })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => DocumentMut::new(),
            Err(err) => return Err(ConfigError::io("cannot read", path, err)),
        };
        let was_empty = document.as_table().is_empty();
        Ok(Self {
            path: path.to_path_buf(),
            document,
            was_empty,
        })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The string at `keys` (`["providers", "xai", "base_url"]`), if there is one.
    pub fn text(&self, keys: &[&str]) -> Option<&str> {
        self.item(keys)?.as_str()
    }

    /// The boolean at `keys`, if there is one.
    pub fn flag(&self, keys: &[&str]) -> Option<bool> {
        self.item(keys)?.as_bool()
    }

    /// The integer at `keys`, if there is one.
    pub fn integer(&self, keys: &[&str]) -> Option<i64> {
        self.item(keys)?.as_integer()
    }

    /// The string values of the table at `keys` (`["aliases"]`), if it is a table; values that
    /// are not strings are left out.
    pub fn strings(&self, keys: &[&str]) -> Option<BTreeMap<String, String>> {
        let table = self.item(keys)?.as_table_like()?;
        Some(
            table
                .iter()
                .filter_map(|(name, value)| Some((name.to_owned(), value.as_str()?.to_owned())))
                .collect(),
        )
    }

    /// Sets the value at `keys`, creating the tables on the way (as `[section]`s without empty
    /// parents). A value that was there keeps its comment and spacing.
    pub fn set(
        &mut self,
        keys: &[&str],
        value: impl Into<toml_edit::Value>,
    ) -> Result<(), ConfigError> {
        let Some((last, tables)) = keys.split_last() else {
            return Ok(());
        };
        let table = self.table_mut(tables)?;
        set_value(table, last, value.into());
        Ok(())
    }

    /// Makes the table at `keys` hold exactly `entries` (strings): others are removed, those
    /// that stay keep their comments.
    pub fn replace_strings(
        &mut self,
        keys: &[&str],
        entries: &BTreeMap<String, String>,
    ) -> Result<(), ConfigError> {
        let table = self.table_mut(keys)?;
        let gone: Vec<String> = table
            .iter()
            .map(|(name, _)| name.to_owned())
            .filter(|name| !entries.contains_key(name))
            .collect();
        for name in gone {
            table.remove(&name);
        }
        for (name, value) in entries {
            set_value(table, name, value.as_str().into());
        }
        Ok(())
    }

    /// `default_model`.
    pub fn set_default_model(&mut self, model: &str) {
        set_value(self.document.as_table_mut(), "default_model", model.into());
    }

    /// `approval`: the approval policy of every new session (`ApprovalPolicy::as_str`).
    pub fn set_approval(&mut self, policy: &str) {
        set_value(self.document.as_table_mut(), "approval", policy.into());
    }

    /// The names under `[mcp_servers]`, in file order.
    pub fn mcp_server_names(&self) -> Vec<String> {
        self.item(&["mcp_servers"])
            .and_then(Item::as_table_like)
            .map(|servers| servers.iter().map(|(name, _)| name.to_owned()).collect())
            .unwrap_or_default()
    }

    /// Adds `[mcp_servers.<name>]` with Codex's keys (`command`/`args`/`env`, or
    /// `url`/`http_headers`); a server of that name already there is refused.
    pub fn add_mcp_server(&mut self, name: &str, entry: &McpEntry) -> Result<(), ConfigError> {
        check_server_name(name, &self.path)?;
        if self.mcp_server_names().iter().any(|known| known == name) {
            return Err(ConfigError::AlreadyDefined {
                name: name.to_owned(),
                path: self.path.clone(),
            });
        }
        let mut table = Table::new();
        match entry {
            McpEntry::Stdio { command, args, env } => {
                table.insert("command", toml_edit::value(command.as_str()));
                table.insert("args", toml_edit::value(string_array(args)));
                if !env.is_empty() {
                    table.insert("env", toml_edit::value(inline_strings(env)));
                }
            }
            McpEntry::Http { url, headers } => {
                table.insert("url", toml_edit::value(url.as_str()));
                if !headers.is_empty() {
                    table.insert("http_headers", toml_edit::value(inline_strings(headers)));
                }
            }
        }
        self.table_mut(&["mcp_servers"])?
            .insert(name, Item::Table(table));
        Ok(())
    }

    /// Removes the server `name` (its table and sub-tables, however it is written); a name
    /// that is not there is refused.
    pub fn remove_mcp_server(&mut self, name: &str) -> Result<(), ConfigError> {
        let removed = self
            .document
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
            .and_then(|servers| servers.remove(name));
        match removed {
            Some(removed) => {
                self.keep_detached_comments(&removed);
                Ok(())
            }
            None => Err(ConfigError::NotDefined {
                name: name.to_owned(),
                path: self.path.clone(),
            }),
        }
    }

    /// Comments above a removed table's header that a blank line separates from it belong to
    /// what came before (the file's head, notes on a section), not to the table: they move to
    /// the next table, or to the end of the file. Comments right above the header go with it.
    fn keep_detached_comments(&mut self, removed: &Item) {
        let Some(table) = removed.as_table() else {
            return;
        };
        let (Some(position), Some(prefix)) = (
            table.position(),
            table.decor().prefix().and_then(|prefix| prefix.as_str()),
        ) else {
            return;
        };
        let Some(blank) = prefix.rfind("\n\n") else {
            return;
        };
        let detached = &prefix[..blank + 2];
        if detached.trim().is_empty() {
            return;
        }
        let mut tables = Vec::new();
        table_positions(self.document.as_table(), &mut Vec::new(), &mut tables);
        let next = tables
            .into_iter()
            .filter(|(at, _)| *at > position)
            .min_by_key(|(at, _)| *at);
        let target = next.and_then(|(_, keys)| {
            let mut table = self.document.as_table_mut();
            for key in keys {
                table = table.get_mut(&key)?.as_table_mut()?;
            }
            Some(table)
        });
        match target {
            Some(table) => {
                let own = table
                    .decor()
                    .prefix()
                    .and_then(|prefix| prefix.as_str())
                    .unwrap_or_default()
                    .trim_start_matches('\n')
                    .to_owned();
                table.decor_mut().set_prefix(format!("{detached}{own}"));
            }
            None => {
                let trailing = self.document.trailing().as_str().unwrap_or_default();
                let trailing = format!("{trailing}{detached}");
                self.document.set_trailing(trailing);
            }
        }
    }

    /// The file's text. A file that held only comments keeps them on top: toml_edit reads them
    /// as the document's trailing text, which it would write after every new item.
    pub fn render(&self) -> String {
        if !self.was_empty {
            return self.document.to_string();
        }
        let mut document = self.document.clone();
        let head = document.trailing().as_str().unwrap_or_default().to_owned();
        document.set_trailing("");
        let body = document.to_string();
        if head.trim().is_empty() {
            return body;
        }
        let gap = match (head.ends_with("\n\n"), head.ends_with('\n')) {
            (true, _) => "",
            (false, true) => "\n",
            (false, false) => "\n\n",
        };
        format!("{head}{gap}{body}")
    }

    /// Replaces the file atomically (0644 when new; an existing file keeps its mode).
    pub fn save(&self) -> Result<(), ConfigError> {
        write_atomic(&self.path, self.render().as_bytes(), FileMode::Shared)
    }

    fn item(&self, keys: &[&str]) -> Option<&Item> {
        let (first, rest) = keys.split_first()?;
        let mut item = self.document.get(first)?;
        for key in rest {
            item = item.as_table_like()?.get(key)?;
        }
        Some(item)
    }

    /// The table at `keys` (a `[section]` or an inline table), created as a section when
    /// missing; something else there is refused, naming the key.
    fn table_mut(&mut self, keys: &[&str]) -> Result<&mut dyn TableLike, ConfigError> {
        let path = self.path.clone();
        let mut table: &mut dyn TableLike = self.document.as_table_mut();
        for (depth, key) in keys.iter().enumerate() {
            if table.get(key).is_none() {
                let mut created = Table::new();
                // `[providers.xai]` without an empty `[providers]` above it.
                created.set_implicit(true);
                table.insert(key, Item::Table(created));
            }
            table = table
                .get_mut(key)
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| ConfigError::NotATable {
                    key: keys[..=depth].join("."),
                    path: path.clone(),
                })?;
        }
        Ok(table)
    }
}

/// Every `[section]` under `table` that is written in the file, with its place in the file and
/// its keys from the top.
fn table_positions(table: &Table, keys: &mut Vec<String>, out: &mut Vec<(isize, Vec<String>)>) {
    for (key, item) in table.iter() {
        let Some(child) = item.as_table() else {
            continue;
        };
        keys.push(key.to_owned());
        if let Some(position) = child.position().filter(|_| !child.is_implicit()) {
            out.push((position, keys.clone()));
        }
        table_positions(child, keys, out);
        keys.pop();
    }
}

/// Sets `key` in `table`, keeping the comment and spacing around a value that was there.
fn set_value(table: &mut dyn TableLike, key: &str, mut value: toml_edit::Value) {
    match table.get_mut(key).and_then(Item::as_value_mut) {
        Some(existing) => {
            *value.decor_mut() = existing.decor().clone();
            *existing = value;
        }
        None => {
            table.insert(key, Item::Value(value));
        }
    }
}

fn string_array(items: &[String]) -> toml_edit::Array {
    items.iter().map(String::as_str).collect()
}

fn inline_strings(pairs: &BTreeMap<String, String>) -> toml_edit::InlineTable {
    pairs
        .iter()
        .map(|(name, value)| (name.as_str(), toml_edit::Value::from(value.as_str())))
        .collect()
}

#[cfg(test)]
mod tests;
