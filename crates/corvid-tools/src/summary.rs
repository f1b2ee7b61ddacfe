//! The one line front ends show for a built-in call (`$ cargo test`, `edit src/main.rs`), with
//! paths relative to the project folder (`ready.cwd`), as the protocol README promises,
//! whatever form the model gave them in.

use std::path::Path;

use serde_json::Value;

use crate::{edit, process, read, search, shell, todo, write};

/// The line for a call of the built-in `tool`; `None` when `tool` is not a built-in.
pub fn builtin_summary(project: &Path, tool: &str, arguments: &Value) -> Option<String> {
    let field = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or("");
    Some(match tool {
        read::NAME | write::NAME | edit::NAME => {
            format!("{tool} {}", shown(project, field("path")))
        }
        shell::NAME => format!("$ {}", field("command")),
        search::GLOB => format!("glob {}", field("pattern")),
        search::GREP => format!("grep {}", field("pattern")),
        process::NAME => format!("process {} {}", field("action"), field("id")),
        todo::NAME => todo::NAME.to_owned(),
        _ => return None,
    })
}

/// `given` relative to `project` when it is an absolute path inside it (`.` for the root
/// itself); anything else as given (a relative path already is; one outside stays visible as
/// such, and the tool refuses it).
pub(crate) fn shown(project: &Path, given: &str) -> String {
    let path = Path::new(given);
    if !path.is_absolute() {
        return given.to_owned();
    }
    match path.strip_prefix(project) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => given.to_owned(),
    }
}

#[cfg(test)]
mod tests;
