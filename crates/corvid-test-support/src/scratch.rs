//! Folders for a test's files that a sandboxed command does not count as temporary.
//!
//! The sandbox lets every command write under `/tmp`, `$TMPDIR` and `/dev/shm`, so a folder
//! meant to be "outside the project" must live elsewhere: under the test crate's
//! `CARGO_TARGET_TMPDIR`, unless a checkout under `/tmp` puts that in a temporary root too —
//! then under `/var/tmp`. One home for the sandbox tests of corvid-tools and corvid-cli.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// The folders the sandbox treats as temporary (writable by every command).
fn temporary_roots() -> [PathBuf; 3] {
    [
        PathBuf::from("/tmp"),
        std::env::temp_dir(),
        PathBuf::from("/dev/shm"),
    ]
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A fresh folder, removed when dropped, in none of the sandbox's temporary roots. Pass the
/// calling test crate's `env!("CARGO_TARGET_TMPDIR")` (only a test crate has it).
pub fn outside_temp(target_tmpdir: &str) -> std::io::Result<TempDir> {
    let target = PathBuf::from(target_tmpdir);
    let in_temp = temporary_roots()
        .iter()
        .any(|root| canonical(&target).starts_with(canonical(root)));
    let base = if in_temp {
        let base = PathBuf::from("/var/tmp/corvid-sandbox-tests");
        std::fs::create_dir_all(&base)?;
        base
    } else {
        target
    };
    tempfile::tempdir_in(base)
}

#[cfg(test)]
mod tests;
