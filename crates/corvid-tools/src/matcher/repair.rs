//! Artifacts of how a model produced `old_string`, removed before the cascade runs again:
//! line-number prefixes copied from a read tool, markdown fences, newlines sent as the two
//! characters `\n`. Each is recognised only when the whole of `old_string` carries it, and
//! only after the text as given matched nothing (a file may really contain such text).
//! `new_string` is repaired the same way when it carries the same artifact.
//!
//! Also here: recognising elisions (`// ... existing code ...`), which are never repaired.

/// What was removed from `old_string`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repair {
    LineNumbers,
    Fence,
    Escapes,
    /// Not removed but kept: elided lines repeated in `new_string` (see `elision`).
    Elision,
}

impl Repair {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::LineNumbers => "line-number prefixes copied from read output removed",
            Self::Fence => "markdown fence around the text removed",
            Self::Escapes => "\\n written as two characters read as newlines",
            Self::Elision => "the elided lines kept as they are",
        }
    }
}

/// Every repair that applies, with the repaired `old_string` and `new_string`.
pub(super) fn candidates(old: &str, new: &str) -> Vec<(Repair, String, String)> {
    let mut out = Vec::new();
    if let Some(repaired) = strip_line_numbers(old) {
        let new = strip_some_line_numbers(new);
        out.push((Repair::LineNumbers, repaired, new));
    }
    if let Some(repaired) = strip_fence(old) {
        let new = strip_fence(new).unwrap_or_else(|| new.to_owned());
        out.push((Repair::Fence, repaired, new));
    }
    if let Some(repaired) = unescape(old) {
        let new = unescape(new).unwrap_or_else(|| new.to_owned());
        out.push((Repair::Escapes, repaired, new));
    }
    out.retain(|(_, old, _)| !old.trim().is_empty());
    out
}

/// The lines of a text, a final newline not starting another line.
fn body_lines(text: &str) -> (Vec<&str>, bool) {
    match text.strip_suffix('\n') {
        Some(body) => (body.split('\n').collect(), true),
        None => (text.split('\n').collect(), false),
    }
}

/// `  12→text`, `    12\ttext`, `12: text`, `12 | text`: the number and the text.
fn numbered(line: &str) -> Option<(u64, &str)> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len()
        - rest
            .trim_start_matches(|ch: char| ch.is_ascii_digit())
            .len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let number = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    ["→", "\t", ": ", " | ", "| "]
        .iter()
        .find_map(|separator| after.strip_prefix(separator))
        .map(|text| (number, text.strip_suffix('\r').unwrap_or(text)))
}

/// Every line numbered, the numbers consecutive: the text without the prefixes.
fn strip_line_numbers(text: &str) -> Option<String> {
    let (lines, final_newline) = body_lines(text);
    let mut expected = None;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let (number, body) = numbered(line)?;
        if expected.is_some_and(|expected| expected != number) {
            return None;
        }
        expected = Some(number + 1);
        out.push(body);
    }
    let mut joined = out.join("\n");
    if final_newline {
        joined.push('\n');
    }
    Some(joined)
}

/// `new_string` after numbered `old_string`: the model may have numbered only the lines it
/// kept, so prefixes are removed line by line when most lines carry one.
fn strip_some_line_numbers(text: &str) -> String {
    let (lines, final_newline) = body_lines(text);
    let numbered_count = lines.iter().filter(|line| numbered(line).is_some()).count();
    if numbered_count * 2 <= lines.len() {
        return text.to_owned();
    }
    let mut joined = lines
        .iter()
        .map(|line| numbered(line).map_or(*line, |(_, body)| body))
        .collect::<Vec<_>>()
        .join("\n");
    if final_newline {
        joined.push('\n');
    }
    joined
}

/// "```lang" first and "```" last: the lines between.
fn strip_fence(text: &str) -> Option<String> {
    let trimmed = text.trim_matches('\n');
    let (first, rest) = trimmed.split_once('\n')?;
    let (inner, last) = rest.rsplit_once('\n').unwrap_or(("", rest));
    let fence = first.trim_end();
    let opens = fence.starts_with("```") && !fence[3..].contains('`');
    (opens && last.trim() == "```" && !inner.is_empty()).then(|| inner.to_owned())
}

/// No real newline but `\n` as two characters: the text with `\n`, `\t`, `\"` and `\\`
/// decoded.
fn unescape(text: &str) -> Option<String> {
    if text.contains('\n') || !text.contains("\\n") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

/// Whether a line of `old_string` stands for lines it does not quote.
pub(super) fn is_elision(line: &str) -> bool {
    let mut rest = line.trim();
    for leader in ["<!--", "//", "/*", "#", "--", ";", "*"] {
        if let Some(stripped) = rest.strip_prefix(leader) {
            rest = stripped.trim_start();
            break;
        }
    }
    for trailer in ["-->", "*/"] {
        if let Some(stripped) = rest.strip_suffix(trailer) {
            rest = stripped.trim_end();
        }
    }
    let lower = rest.to_lowercase();
    if lower == "..." || lower == "…" {
        return true;
    }
    let dots = lower.starts_with("...")
        || lower.starts_with('…')
        || lower.ends_with("...")
        || lower.ends_with('…');
    let words = [
        "existing code",
        "rest of",
        "unchanged",
        "omitted",
        "remains the same",
        "remain the same",
        "same as before",
        "other code",
        "more code",
    ];
    let says = words.iter().any(|word| lower.contains(word));
    (dots && says) || lower.starts_with("rest of") || lower.starts_with("existing code")
}
