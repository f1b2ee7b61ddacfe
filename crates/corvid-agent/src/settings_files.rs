//! The settings files Claude Code users already have, read as they are: hooks and permission
//! rules come from `settings.json` in corvid's configuration folder (the user's), then the
//! project's `.corvid/settings.json`, `.claude/settings.json` and `.claude/settings.local.json`.
//!
//! A user's file is the user's own. A project's file may come with a cloned repository, so
//! what in it runs a program (its hooks) needs the user's trust first (see `crate::hooks`).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The settings file's name, in corvid's configuration folder and in `.corvid/` and `.claude/`.
pub const SETTINGS_FILE: &str = "settings.json";
/// The project's files, relative to its root, in the order they are read.
pub const PROJECT_SETTINGS: [&str; 3] = [
    ".corvid/settings.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];
/// The largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// Whose a settings file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SettingsScope {
    /// corvid's configuration folder: the user's own.
    User,
    /// The project folder: may have come with the repository.
    Project,
}

/// One settings file that exists and holds a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsFile {
    pub path: PathBuf,
    /// How the user knows it: relative to the project for a project's file, else the full path.
    pub shown: String,
    pub scope: SettingsScope,
    pub value: Value,
}

/// Where the settings files of a session are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsPaths {
    /// The user's `settings.json` (in corvid's configuration folder), if any.
    pub user: Option<PathBuf>,
    /// The project's root.
    pub project: PathBuf,
}

impl SettingsPaths {
    /// Every file, in reading order: the user's first, then the project's.
    pub fn files(&self) -> Vec<(PathBuf, String, SettingsScope)> {
        let mut files = Vec::new();
        if let Some(user) = &self.user {
            files.push((
                user.clone(),
                user.display().to_string(),
                SettingsScope::User,
            ));
        }
        for relative in PROJECT_SETTINGS {
            files.push((
                self.project.join(relative),
                relative.to_owned(),
                SettingsScope::Project,
            ));
        }
        files
    }

    /// The files that exist, parsed; a file that cannot be read or is not a JSON object is left
    /// out with a warning naming it.
    pub fn read(&self) -> (Vec<SettingsFile>, Vec<String>) {
        let mut found = Vec::new();
        let mut warnings = Vec::new();
        for (path, shown, scope) in self.files() {
            match read_one(&path) {
                Ok(Some(value)) => found.push(SettingsFile {
                    path,
                    shown,
                    scope,
                    value,
                }),
                Ok(None) => {}
                Err(reason) => warnings.push(format!("{shown} was not read: {reason}")),
            }
        }
        (found, warnings)
    }
}

/// Why a settings file was not read (each reads as the end of "X was not read: …").
#[derive(Debug, thiserror::Error)]
enum SettingsFileError {
    #[error(transparent)]
    Io(std::io::Error),
    #[error("it is larger than {} KiB", MAX_SETTINGS_BYTES / 1024)]
    TooLarge,
    #[error("it is not a JSON object")]
    NotAnObject,
    #[error("it is not valid JSON ({0})")]
    NotJson(serde_json::Error),
}

fn read_one(path: &Path) -> Result<Option<Value>, SettingsFileError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(SettingsFileError::Io(error)),
    };
    if meta.len() > MAX_SETTINGS_BYTES {
        return Err(SettingsFileError::TooLarge);
    }
    let text = std::fs::read_to_string(path).map_err(SettingsFileError::Io)?;
    match serde_json::from_str::<Value>(&text) {
        Ok(value @ Value::Object(_)) => Ok(Some(value)),
        Ok(_) => Err(SettingsFileError::NotAnObject),
        Err(error) => Err(SettingsFileError::NotJson(error)),
    }
}

/// The fingerprint of a JSON value (SHA-256, hex), so a changed definition asks for trust again.
pub(crate) fn fingerprint(value: &Value) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(value.to_string().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_file_comes_first_and_bad_files_warn() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("config/settings.json");
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, r#"{"permissions":{"allow":["Read"]}}"#).unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(project.join(".corvid")).unwrap();
        std::fs::write(project.join(".claude/settings.json"), r#"{"hooks":{}}"#).unwrap();
        std::fs::write(project.join(".corvid/settings.json"), "[1]").unwrap();
        let paths = SettingsPaths {
            user: Some(user.clone()),
            project,
        };
        let (files, warnings) = paths.read();
        let shown: Vec<(&str, SettingsScope)> = files
            .iter()
            .map(|file| (file.shown.as_str(), file.scope))
            .collect();
        assert_eq!(
            shown,
            vec![
                (user.to_str().unwrap(), SettingsScope::User),
                (".claude/settings.json", SettingsScope::Project)
            ]
        );
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains(".corvid/settings.json"),
            "{warnings:?}"
        );
        assert_ne!(fingerprint(&files[0].value), fingerprint(&files[1].value));
    }
}
