//! Turning "grant this folder, except these paths" into Landlock rules.
//!
//! A Landlock rule on a folder covers everything beneath it, and rules only ever add rights, so
//! a hidden path inside a granted folder cannot be carved out. Instead the grant is split: on
//! the way from the granted folder down to each hidden path, every sibling gets the grant whole,
//! and the folders on the way get only the right to list them (for reads) or nothing (for
//! writes). Symbolic links met on the way are skipped: their targets are covered (or not) where
//! they really are, and following one could grant a hidden path under another name.

use std::path::{Path, PathBuf};

/// What a rule grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Grant {
    /// Read files, list folders, execute.
    Read,
    /// List folders only (a folder on the way to a hidden path).
    List,
    /// Create, change and remove.
    Write,
}

/// The rules granting `grant` on `root` minus everything at or beneath a `hidden` path.
/// `hidden` paths should be absolute and canonical (see [`canonical_hidden`]).
pub(crate) fn split(
    root: &Path,
    grant: Grant,
    hidden: &[PathBuf],
    rules: &mut Vec<(PathBuf, Grant)>,
) {
    if hidden.iter().any(|path| root.starts_with(path)) {
        return;
    }
    let hidden_beneath = hidden
        .iter()
        .any(|path| path.starts_with(root) && path != root);
    if !hidden_beneath {
        rules.push((root.to_path_buf(), grant));
        return;
    }
    if grant == Grant::Read {
        rules.push((root.to_path_buf(), Grant::List));
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link = entry
            .file_type()
            .map(|kind| kind.is_symlink())
            .unwrap_or(true);
        if is_link {
            continue;
        }
        split(&path, grant, hidden, rules);
    }
}

/// The hidden paths as the kernel sees them: canonical (a hidden path reached through a
/// symbolic link is hidden where it really is), the ones that do not exist left out (there is
/// nothing to read, and nothing can be created there outside the writable folders).
pub(crate) fn canonical_hidden(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut canonical: Vec<PathBuf> = paths
        .iter()
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .collect();
    canonical.sort();
    canonical.dedup();
    canonical
}
