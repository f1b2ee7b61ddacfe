//! The one way corvid replaces a file it owns (the env file, `config.toml`, `.corvid/mcp.json`,
//! the MCP trust store): the new text goes to a temporary sibling, is synced, and is renamed over
//! the old file, so a crash or a full disk leaves the old file or the new one, never half of one.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::ConfigError;

/// Who may read a file corvid writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// Secrets: the file is 0600 and a folder created for it 0700, whatever was there before.
    Private,
    /// Settings: a new file is 0644; a file that exists keeps its mode (a user who made their
    /// `config.toml` private keeps it private).
    Shared,
}

/// Replaces `path` with `contents` atomically (see the module), creating its folder when
/// missing.
pub fn write_atomic(path: &Path, contents: &[u8], mode: FileMode) -> Result<(), ConfigError> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    create_dir(&dir, mode)?;
    let permissions = match mode {
        FileMode::Private => 0o600,
        FileMode::Shared => existing_mode(path).unwrap_or(0o644),
    };
    let mut temp = TempFile::beside(&dir, path, permissions)?;
    temp.file
        .write_all(contents)
        .and_then(|()| temp.file.sync_all())
        .map_err(|err| ConfigError::io("cannot write", &temp.path, err))?;
    fs::rename(&temp.path, path).map_err(|err| ConfigError::io("cannot replace", path, err))?;
    temp.committed = true;
    Ok(())
}

#[cfg(unix)]
fn existing_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(path)
        .ok()
        .map(|meta| meta.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn existing_mode(_path: &Path) -> Option<u32> {
    None
}

fn create_dir(dir: &Path, mode: FileMode) -> Result<(), ConfigError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if mode == FileMode::Private {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|err| ConfigError::io("cannot create", dir, err))
}

/// A temporary sibling of the target, removed unless the rename committed it.
struct TempFile {
    file: fs::File,
    path: PathBuf,
    committed: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl TempFile {
    /// A new file in `dir` named after `target`, created with `permissions` (never wider for a
    /// moment: the mode is set at creation).
    fn beside(dir: &Path, target: &Path, permissions: u32) -> Result<Self, ConfigError> {
        let name = target
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".to_owned());
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(permissions);
        }
        #[cfg(not(unix))]
        let _ = permissions;
        let mut attempt = 0u32;
        loop {
            let path = dir.join(format!(".{name}.tmp.{}.{attempt}", std::process::id()));
            match options.open(&path) {
                Ok(file) => {
                    return Ok(Self {
                        file,
                        path,
                        committed: false,
                    });
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(err) => return Err(ConfigError::io("cannot create", path, err)),
            }
        }
    }
}
