//! Small text helpers shared by the tools: line endings, BOM, binary sniffing, numbering,
//! truncation and unified diffs.

use std::fmt::Write as _;

/// The UTF-8 byte order mark.
pub(crate) const BOM: &str = "\u{feff}";

/// How many bytes are sniffed to tell text from binary.
pub(crate) const SNIFF_BYTES: usize = 8192;

/// The line ending a text mostly uses: `"\r\n"` when CRLF lines outnumber bare LF lines.
pub(crate) fn line_ending(text: &str) -> &'static str {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf { "\r\n" } else { "\n" }
}

/// Converts every line ending to LF.
pub(crate) fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// Converts LF-only text to `eol` endings.
pub(crate) fn with_line_ending(lf_text: &str, eol: &str) -> String {
    if eol == "\n" {
        lf_text.to_owned()
    } else {
        lf_text.replace('\n', eol)
    }
}

/// Splits off a leading byte order mark.
pub(crate) fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// Why a sample of bytes is not text, if it is not.
pub(crate) fn binary_reason(sample: &[u8]) -> Option<&'static str> {
    if sample.contains(&0) {
        return Some("it contains NUL bytes");
    }
    match std::str::from_utf8(sample) {
        Ok(_) => None,
        // A character cut at the end of the sample is not evidence.
        Err(error) if error.error_len().is_none() => None,
        Err(_) => Some("it is not valid UTF-8"),
    }
}

/// Cuts a line to `max` characters, saying how much was cut.
pub(crate) fn cut_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_owned(),
        Some((index, _)) => {
            let rest = line[index..].chars().count();
            format!("{}… [{rest} more characters]", &line[..index])
        }
    }
}

/// Formats one numbered line the way `cat -n` does: the number right-aligned in six columns, a
/// tab, the text.
pub(crate) fn numbered(number: u64, line: &str) -> String {
    format!("{number:>6}\t{line}")
}

/// Numbers a block of lines starting at `first` (1-based).
pub(crate) fn numbered_block<'a>(first: u64, lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (offset, line) in lines.into_iter().enumerate() {
        let _ = writeln!(out, "{}", numbered(first + offset as u64, line));
    }
    out
}

/// The largest index `<= index` that is a char boundary of `text`.
pub(crate) fn floor_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// A unified diff of two texts, labelled `a/<path>` and `b/<path>` (`/dev/null` for a file that
/// does not exist). CRLF is shown as LF so a diff reads the same on every file.
pub(crate) fn unified_diff(old: Option<&str>, new: &str, path: &str) -> String {
    let old_text = to_lf(old.unwrap_or(""));
    let new_text = to_lf(new);
    let old_label = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(&old_text, &new_text);
    diff.unified_diff()
        .context_radius(3)
        .header(&old_label, &format!("b/{path}"))
        .to_string()
}

/// Lines added and removed in a diff, for summaries.
pub(crate) fn diff_stats(diff: &str) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for line in diff.lines() {
        if line.starts_with('+') && !line.starts_with("+++") {
            added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            removed += 1;
        }
    }
    (added, removed)
}

/// Caps a diff for a proposal; a huge diff is cut with a note.
pub(crate) fn cap_diff(diff: String, max: usize) -> String {
    if diff.len() <= max {
        return diff;
    }
    let cut = floor_boundary(&diff, max);
    let cut = diff[..cut].rfind('\n').map_or(cut, |newline| newline + 1);
    format!(
        "{}… [diff cut: {} more bytes]\n",
        &diff[..cut],
        diff.len() - cut
    )
}

/// Counts the lines of a text the way an editor numbers them (a final newline does not start a
/// new line).
pub(crate) fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count()
    }
}

/// The 1-based line number of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|byte| **byte == b'\n')
        .count()
        + 1
}

/// "1 line", "2 lines".
pub(crate) fn lines(count: usize) -> String {
    if count == 1 {
        "1 line".to_owned()
    } else {
        format!("{count} lines")
    }
}

/// A byte count for people: "40 bytes", "50 KB", "64 MB".
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        bytes if bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0 => {
            format!("{} MB", bytes / (1024 * 1024))
        }
        bytes if bytes >= 1024 && bytes % 1024 == 0 => format!("{} KB", bytes / 1024),
        bytes => format!("{bytes} bytes"),
    }
}

/// Joins line numbers for messages: "3, 17, 42".
pub(crate) fn join_numbers(numbers: &[usize]) -> String {
    numbers
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings() {
        assert_eq!(line_ending("a\r\nb\r\n"), "\r\n");
        assert_eq!(line_ending("a\nb\r\n"), "\n");
        assert_eq!(line_ending(""), "\n");
        assert_eq!(with_line_ending("a\nb", "\r\n"), "a\r\nb");
    }

    #[test]
    fn binary_sniffing() {
        assert_eq!(binary_reason(b"plain text\n"), None);
        assert!(binary_reason(b"a\0b").is_some());
        assert!(binary_reason(&[0xff, 0xfe, 0x41]).is_some());
        // "é" cut after its first byte at the end of the sample.
        assert_eq!(binary_reason(&[b'a', 0xc3]), None);
    }

    #[test]
    fn cutting_and_numbering() {
        assert_eq!(cut_line("abcdef", 3), "abc… [3 more characters]");
        assert_eq!(cut_line("ééé", 5), "ééé");
        assert_eq!(numbered(12, "x"), "    12\tx");
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }

    #[test]
    fn diff_of_a_new_file() {
        let diff = unified_diff(None, "one\ntwo\n", "x.txt");
        assert!(diff.starts_with("--- /dev/null\n+++ b/x.txt\n"), "{diff}");
        assert_eq!(diff_stats(&diff), (2, 0));
    }
}
