//! Which folder is the project. Started in a subfolder, the agent works on the whole repository:
//! the project root is the nearest folder, from the start folder up, that holds `.git` (a
//! folder, or the file a git worktree or submodule has); with none, the start folder itself.
//! An explicit `--project` skips the search. The start folder stays the working folder, so the
//! AGENTS.md files from the root down to it are all read.
//!
//! The search never climbs to the home folder or above it: a home folder kept in git (dotfiles)
//! or a stray `/.git` must not widen a session in `~/code/scratch` to everything the user owns,
//! secrets included. Only `--project ~` can do that, on purpose.

use std::path::{Path, PathBuf};

/// Where the agent works: the project root and the working folder inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFolders {
    /// The folder tools are confined to.
    pub root: PathBuf,
    /// The folder the user started in: the root or a folder under it.
    pub cwd: PathBuf,
}

/// The nearest folder at or above `start`, below the home folder (`$HOME`), that holds `.git`;
/// else `start`.
pub fn find_project_root(start: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    root_below(start, home.as_deref())
}

fn root_below(start: &Path, home: Option<&Path>) -> PathBuf {
    let home = home.map(|home| home.canonicalize().unwrap_or_else(|_| home.to_path_buf()));
    start
        .ancestors()
        // A folder the home folder lies in (or the home folder itself) is never a project.
        .take_while(|folder| {
            folder.parent().is_some()
                && home.as_deref().is_none_or(|home| !home.starts_with(folder))
        })
        .find(|folder| folder.join(".git").exists())
        .unwrap_or(start)
        .to_path_buf()
}

/// The folders for a session started in `cwd`: `explicit` (the `--project` flag) as the root
/// when given, else the nearest git root above `cwd`. The working folder is `cwd` when it lies
/// inside the root, else the root.
pub fn project_folders(cwd: &Path, explicit: Option<&Path>) -> ProjectFolders {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let root = match explicit {
        Some(root) => {
            let root = if root.is_absolute() {
                root.to_path_buf()
            } else {
                cwd.join(root)
            };
            root.canonicalize().unwrap_or(root)
        }
        None => find_project_root(&cwd),
    };
    let cwd = if cwd.starts_with(&root) {
        cwd
    } else {
        root.clone()
    };
    ProjectFolders { root, cwd }
}

#[cfg(test)]
mod tests;
