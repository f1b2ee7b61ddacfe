//! Paths as events show them: relative to the project root (`ready.cwd`), as the protocol
//! README promises, whatever form the model gave them in.

use std::path::Path;

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
