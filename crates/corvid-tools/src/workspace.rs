//! Path confinement: every path a tool touches is resolved inside the project folder.
//!
//! Resolution walks the path one component at a time, the way the kernel does, following each
//! symbolic link it meets (in the middle, at the end, dangling or not) and applying `..` to the
//! *physical* directory. The result is the real location of the file; it must lie under the
//! canonical project root. Components that do not exist yet (a file about to be created) are
//! appended as plain names, and `..` after one of them is refused. Writes are also refused
//! inside protected folders (`.git`, wherever it appears). Extra folders can be opened for
//! reading only ([`Workspace::allow_reads_in`]; the tools' own output folder).
//!
//! Residual risk (documented, not closed): between [`Workspace::resolve`] and the moment a tool
//! opens the file, a process outside the agent could replace a directory on the path with a
//! symbolic link. Closing that window needs `openat2(RESOLVE_BENEATH)` on every open, which is
//! Linux-only. A write's `apply` resolves the path again and refuses if it now leads elsewhere,
//! which keeps the window to a few system calls; and the agent's own `bash` (the only in-band way
//! to plant such a link) goes through the approval gate.
//! Hard links cannot be detected by path; writes replace the directory entry (write to a
//! temporary file, then rename), so a hard-linked file elsewhere keeps its old content.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// The most symbolic links followed while resolving one path (Linux's own limit is 40).
const MAX_LINKS: usize = 40;

/// The project folder the tools work in.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    protected: Vec<OsString>,
    read_roots: Vec<PathBuf>,
}

/// A path a tool may not use.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The project folder itself cannot be opened.
    #[error("the project folder {root} cannot be used: {source}")]
    Root {
        /// The folder as given.
        root: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// No path was given.
    #[error("the path is empty; give a path relative to the project folder")]
    Empty,
    /// The path lies outside the project folder.
    #[error(
        "{path} is outside the project folder {root}; tools only work inside it (use a path relative to the project folder)"
    )]
    Outside {
        /// The path as given.
        path: String,
        /// The project folder.
        root: PathBuf,
    },
    /// A symbolic link on the path points outside the project folder.
    #[error(
        "{path} leads outside the project folder through the symbolic link {link} -> {target}; tools only work inside {root}"
    )]
    SymlinkOutside {
        /// The path as given.
        path: String,
        /// The first symbolic link met, relative to the project folder when it is inside.
        link: PathBuf,
        /// What the link points to, as stored in the link.
        target: PathBuf,
        /// The project folder.
        root: PathBuf,
    },
    /// `..` follows a folder that does not exist, so it cannot be resolved safely.
    #[error("{path} uses `..` after a folder that does not exist")]
    ParentOfMissing {
        /// The path as given.
        path: String,
    },
    /// The path is inside a folder tools never write (`.git`).
    #[error("{path} is inside `{name}`, which tools never write")]
    Protected {
        /// The path as given.
        path: String,
        /// The protected folder name.
        name: String,
    },
    /// The project folder itself cannot be written as a file.
    #[error("{path} is the project folder itself, not a file")]
    IsRoot {
        /// The path as given.
        path: String,
    },
    /// Symbolic links loop or nest too deeply.
    #[error("too many symbolic links while resolving {path}")]
    SymlinkLoop {
        /// The path as given.
        path: String,
    },
    /// The file system refused to say what the path is.
    #[error("cannot resolve {path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// Why.
        source: io::Error,
    },
}

impl Workspace {
    /// Opens the project folder. The root is canonicalised once, here; `.git` is protected from
    /// writes.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, PathError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|source| PathError::Root {
            root: given.to_path_buf(),
            source,
        })?;
        if !root.is_dir() {
            return Err(PathError::Root {
                root: given.to_path_buf(),
                source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        Ok(Self {
            root,
            protected: vec![OsString::from(".git")],
            read_roots: Vec::new(),
        })
    }

    /// Adds a folder name that tools never write, wherever it appears (`.git` always is).
    pub fn protect(mut self, name: impl Into<OsString>) -> Self {
        self.protected.push(name.into());
        self
    }

    /// Allows *reads* (never writes) under another folder too. The tools use it for their own
    /// output folder, so the model can read a command's full log. The folder need not exist yet.
    pub fn allow_reads_in(mut self, folder: impl Into<PathBuf>) -> Self {
        self.read_roots.push(folder.into());
        self
    }

    /// The canonical project folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path for reading: relative paths start at the project root; the result is the
    /// physical location (no symbolic links, no `..`) and lies inside the project folder (or a
    /// folder opened with [`Workspace::allow_reads_in`]). The path need not exist.
    pub fn resolve(&self, path: impl AsRef<Path>) -> Result<PathBuf, PathError> {
        let given = path.as_ref();
        match self.resolve_inner(given) {
            Err(error @ (PathError::Outside { .. } | PathError::SymlinkOutside { .. })) => {
                let resolved = self.physical(given).ok_or(error)?;
                Ok(resolved)
            }
            other => other,
        }
    }

    /// The physical path of `given` when it lies in one of the extra read folders.
    fn physical(&self, given: &Path) -> Option<PathBuf> {
        let roots: Vec<PathBuf> = self
            .read_roots
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .collect();
        if roots.is_empty() {
            return None;
        }
        let resolved = walk(given, &self.root).ok()?.path;
        roots
            .iter()
            .any(|root| resolved.starts_with(root))
            .then_some(resolved)
    }

    /// Resolves a path for writing: as [`Workspace::resolve`], and also refuses the project
    /// folder itself and anything inside a protected folder (`.git`).
    pub fn resolve_for_write(&self, path: impl AsRef<Path>) -> Result<PathBuf, PathError> {
        let given = path.as_ref();
        let resolved = self.resolve_inner(given)?;
        if resolved == self.root {
            return Err(PathError::IsRoot { path: shown(given) });
        }
        let relative = resolved.strip_prefix(&self.root).unwrap_or(&resolved);
        for component in relative.components() {
            let name = component.as_os_str();
            if let Some(protected) = self.protected_name(name) {
                return Err(PathError::Protected {
                    path: shown(given),
                    name: protected.to_string_lossy().into_owned(),
                });
            }
        }
        Ok(resolved)
    }

    /// The path relative to the project root, for messages (`.` for the root itself). Paths
    /// outside the root are returned whole.
    pub fn relative(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => PathBuf::from("."),
            Ok(relative) => relative.to_path_buf(),
            Err(_) => path.to_path_buf(),
        }
    }

    /// [`Workspace::relative`] as a string.
    pub fn display(&self, path: &Path) -> String {
        self.relative(path).to_string_lossy().into_owned()
    }

    fn protected_name(&self, name: &OsStr) -> Option<&OsStr> {
        let name = name.to_str()?;
        self.protected
            .iter()
            .find(|protected| {
                protected
                    .to_str()
                    .is_some_and(|protected| protected.eq_ignore_ascii_case(name))
            })
            .map(OsString::as_os_str)
    }

    fn resolve_inner(&self, given: &Path) -> Result<PathBuf, PathError> {
        let Walked { path, first_link } = walk(given, &self.root)?;
        if path.starts_with(&self.root) {
            return Ok(path);
        }
        match first_link {
            Some((link, target)) => Err(PathError::SymlinkOutside {
                path: shown(given),
                link: self.relative(&link),
                target,
                root: self.root.clone(),
            }),
            None => Err(PathError::Outside {
                path: shown(given),
                root: self.root.clone(),
            }),
        }
    }
}

/// A path resolved to its physical location.
struct Walked {
    path: PathBuf,
    /// The first symbolic link met and its target, for messages.
    first_link: Option<(PathBuf, PathBuf)>,
}

/// Resolves `given` (relative paths start at `root`) the way the kernel would, following every
/// symbolic link; components that do not exist are appended as they are.
fn walk(given: &Path, root: &Path) -> Result<Walked, PathError> {
    if given.as_os_str().is_empty() {
        return Err(PathError::Empty);
    }
    let start = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };

    // `current` is always a fully resolved physical path; `pending` holds what is left to
    // walk, front last. A symbolic link is replaced by its target's components.
    let mut current = PathBuf::from("/");
    let mut pending: Vec<OsString> = Vec::new();
    push_front(&mut pending, &start);
    let mut links = 0usize;
    let mut first_link: Option<(PathBuf, PathBuf)> = None;
    let mut missing = false;

    while let Some(part) = pending.pop() {
        match part.to_str() {
            Some("/") => current = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                if missing {
                    return Err(PathError::ParentOfMissing { path: shown(given) });
                }
                current.pop();
            }
            _ => {
                let next = current.join(&part);
                if missing {
                    current = next;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {
                        missing = true;
                        current = next;
                    }
                    Err(source) => {
                        return Err(PathError::Io {
                            path: shown(given),
                            source,
                        });
                    }
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(PathError::SymlinkLoop { path: shown(given) });
                        }
                        let target = std::fs::read_link(&next).map_err(|source| PathError::Io {
                            path: shown(given),
                            source,
                        })?;
                        if first_link.is_none() {
                            first_link = Some((next.clone(), target.clone()));
                        }
                        // A relative target is relative to the link's folder, `current`.
                        push_front(&mut pending, &target);
                    }
                    Ok(_) => current = next,
                }
            }
        }
    }
    Ok(Walked {
        path: current,
        first_link,
    })
}

/// Puts `path`'s components in front of the stack (the stack pops from the end).
fn push_front(pending: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .map(|component| match component {
            Component::RootDir => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(name) => name.to_os_string(),
            Component::Prefix(prefix) => prefix.as_os_str().to_os_string(),
        })
        .collect();
    pending.extend(parts.into_iter().rev());
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests;
