//! The message history kept across runs, one file per project under corvid's data folder:
//! each line one message as a JSON string (so a multi-line message stays one entry).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The most entries kept per project.
const KEEP: usize = 1000;

/// The history file of a project: `<data_dir>/history/<hash of the project path>.jsonl`.
pub fn file_for(data_dir: &Path, project: &Path) -> PathBuf {
    // FNV-1a: stable across Rust versions, unlike the standard library's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in project.to_string_lossy().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    data_dir.join("history").join(format!("{hash:016x}.jsonl"))
}

/// The entries, oldest first; a missing or unreadable file is an empty history.
pub fn load(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let entries: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let skip = entries.len().saturating_sub(KEEP);
    entries.into_iter().skip(skip).collect()
}

/// Appends one entry.
pub fn append(file: &Path, entry: &str) -> std::io::Result<()> {
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let mut handle = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    writeln!(handle, "{line}")
}
