//! `${VAR}` references in a server's configured values, expanded when the server starts (never
//! when the configuration is read, so no secret sits in the resolved configuration).

/// Why a configured value's variable references could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("`${{` without a closing `}}` in {value:?}")]
    Unclosed { value: String },
    #[error("`${{{reference}}}` is not a variable reference")]
    NotAReference { reference: String },
    /// The variable is not set (or empty) and the reference gives no default.
    #[error("the variable {name} is not set")]
    Unset { name: String },
}

/// Expands the variable references of a configured value: `${VAR}` and `${VAR:-default}`
/// (Claude Code), `${env:VAR}` (Cursor, VS Code). `$` without `{` is kept as it is. A variable
/// that `lookup` does not know and that has no default is an error naming it.
pub fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed {
                value: value.to_owned(),
            });
        };
        let reference = &after[..end];
        let stripped = reference.strip_prefix("env:").unwrap_or(reference);
        let (name, default) = match stripped.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (stripped, None),
        };
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ExpandError::NotAReference {
                reference: stripped.to_owned(),
            });
        }
        match (lookup(name).filter(|found| !found.is_empty()), default) {
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(ExpandError::Unset {
                    name: name.to_owned(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
