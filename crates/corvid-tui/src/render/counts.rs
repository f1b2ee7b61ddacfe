//! Counts and sizes as people read them: `2 steps`, `1.2k` tokens, `2.1 KB`.

/// `1 step`, `2 steps`.
pub fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `1234` → `1.2k`, for the status line.
pub fn tokens(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", count as f64 / 1_000.0),
        _ => format!("{:.1}M", count as f64 / 1_000_000.0),
    }
}

/// A size as people read it: `512 bytes`, `2.1 KB`, `1.3 MB`.
pub fn bytes(count: u64) -> String {
    match count {
        0..1_024 => plural(count, "byte"),
        1_024..1_048_576 => format!("{:.1} KB", count as f64 / 1_024.0),
        _ => format!("{:.1} MB", count as f64 / 1_048_576.0),
    }
}
