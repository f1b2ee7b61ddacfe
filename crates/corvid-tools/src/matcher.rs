//! The edit matcher: where does the model's `old_string` sit in the file?
//!
//! A cascade, strictest first; the first stage that finds anything decides, and uniqueness is a
//! hard rule at every stage (two candidates are refused with their line numbers unless
//! `replace_all` is set):
//!
//! 1. **Exact**: the text as given, after converting its line endings to the file's (a CRLF file
//!    edited with LF text matches here). Works inside a line.
//! 2. **Whitespace**: whole lines equal once trailing whitespace, runs of inner whitespace and
//!    typographic punctuation (curly quotes, dashes, no-break spaces) are ignored, with the same
//!    indentation width (tabs counted as 4, 8 or 2 columns). When the indentation *characters*
//!    differ (tabs vs spaces) `new_string` is re-indented in the file's style.
//! 3. **Indentation**: as 2, but every line shifted by the same number of columns;
//!    `new_string` is shifted the same way.
//! 4. **Trimmed context**: an unchanged context line at either edge (equal in `old_string` and
//!    `new_string`) that is not in the file is dropped, and stages 2–3 run again.
//! 5. **Block anchors**: the first and last lines match (normalised), the middle is at least
//!    70 % similar and at most a quarter of its lines longer or shorter.
//!
//! A miss reports the closest region (line-wise bigram similarity) with line numbers.
//! [`relocate`] re-finds a prepared edit's exact original text when the edit is applied.

use std::ops::Range;
use std::time::Duration;

use crate::text;

/// Block anchors: the least similarity of the middle lines.
const BLOCK_SIMILARITY: f64 = 0.7;
/// Closest region: below this, nothing is similar enough to show.
const CLOSEST_SIMILARITY: f64 = 0.2;
/// Closest region: skip the scan past this many line comparisons.
const CLOSEST_BUDGET: usize = 4_000_000;
/// Closest region: the most lines shown.
const CLOSEST_MAX_LINES: usize = 30;

/// Which stage of the cascade matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    Exact,
    Whitespace,
    Indentation,
    TrimmedContext,
    BlockAnchor,
}

impl Strategy {
    /// For summaries and results, so the model learns what was forgiven.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Exact => "exact match",
            Self::Whitespace => "matched ignoring whitespace differences",
            Self::Indentation => {
                "matched ignoring an indentation shift; new_string re-indented to fit"
            }
            Self::TrimmedContext => {
                "matched after dropping an unchanged edge line of old_string that is not in the file"
            }
            Self::BlockAnchor => {
                "matched by its first and last lines; the lines between differ slightly from old_string"
            }
        }
    }
}

/// One region of the file and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub(crate) range: Range<usize>,
    pub(crate) text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) strategy: Strategy,
    /// In file order, not overlapping.
    pub(crate) replacements: Vec<Replacement>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Found(Located),
    /// Several places match; their first lines (1-based).
    Ambiguous {
        lines: Vec<usize>,
    },
    NotFound {
        closest: Option<Closest>,
    },
}

/// The region most like `old_string`, shown on a miss.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Closest {
    pub(crate) first_line: usize,
    pub(crate) last_line: usize,
    pub(crate) similarity: f64,
    /// The region's lines, numbered like `read` shows them.
    pub(crate) excerpt: String,
}

/// Finds `old` in `text` (which has no BOM). `old` must not be empty.
pub(crate) fn locate(text: &str, old: &str, new: &str, replace_all: bool) -> Outcome {
    if old.is_empty() {
        return Outcome::NotFound { closest: None };
    }
    let eol = text::line_ending(text);
    let old_lf = text::to_lf(old);
    let new_lf = text::to_lf(new);

    // 1. Exact, in the file's line endings first, then as given (for mixed-ending files).
    let mut attempts = vec![(
        text::with_line_ending(&old_lf, eol),
        text::with_line_ending(&new_lf, eol),
    )];
    if attempts[0].0 != old {
        attempts.push((old.to_owned(), new.to_owned()));
    }
    for (needle, replacement) in &attempts {
        let positions = occurrences(text, needle);
        if positions.is_empty() {
            continue;
        }
        if positions.len() > 1 && !replace_all {
            let lines = positions
                .iter()
                .map(|at| text::line_of(text, *at))
                .collect();
            return Outcome::Ambiguous { lines };
        }
        let replacements = non_overlapping(&positions, needle.len())
            .into_iter()
            .map(|at| Replacement {
                range: at..at + needle.len(),
                text: replacement.clone(),
            })
            .collect();
        return Outcome::Found(Located {
            strategy: Strategy::Exact,
            replacements,
        });
    }

    // The line-based stages work on whole lines.
    let lines = split_lines(text);
    let file = FileLines {
        normalized: lines.iter().map(|line| normalize(line.text)).collect(),
        lines,
        eol,
        replace_all,
    };
    let (needle, replacement) = needle_lines(&old_lf, &new_lf);
    if needle.iter().all(|line| line.trim().is_empty()) {
        return Outcome::NotFound { closest: None };
    }

    // 2 and 3.
    if let Some(outcome) = file.line_stages(&needle, &replacement) {
        return outcome;
    }

    // 4. Drop an unchanged edge line the file does not have.
    let prefix = needle
        .iter()
        .zip(&replacement)
        .take_while(|(old, new)| old == new)
        .count();
    let suffix = needle
        .iter()
        .rev()
        .zip(replacement.iter().rev())
        .take_while(|(old, new)| old == new)
        .count();
    for (front, back) in [(1, 0), (0, 1), (1, 1)] {
        let usable = front <= prefix
            && back <= suffix
            && front + back < needle.len()
            && front + back <= replacement.len();
        if !usable {
            continue;
        }
        let trimmed_needle = &needle[front..needle.len() - back];
        let trimmed_replacement = &replacement[front..replacement.len() - back];
        if !substantial(trimmed_needle) {
            continue;
        }
        if let Some(Outcome::Found(mut located)) =
            file.line_stages(trimmed_needle, trimmed_replacement)
        {
            located.strategy = Strategy::TrimmedContext;
            return Outcome::Found(located);
        }
    }

    // 5. Block anchors.
    if let Some(outcome) = file.block_anchors(&needle, &replacement) {
        return outcome;
    }

    Outcome::NotFound {
        closest: file.closest(&needle),
    }
}

/// Why a prepared edit cannot be applied to the current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RelocateError {
    Vanished,
    Ambiguous { lines: Vec<usize> },
    CountChanged { expected: usize, found: usize },
}

/// Applies prepared `(original, replacement)` pairs to the *current* text: each original must be
/// found again exactly (once, or — with `replace_all` — exactly as often as when prepared).
/// Returns the new text and the first line of each replaced region (in the current text).
pub(crate) fn relocate(
    text: &str,
    pairs: &[(String, String)],
    replace_all: bool,
) -> Result<(String, Vec<usize>), RelocateError> {
    let mut edits: Vec<(Range<usize>, &str)> = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for (original, _) in pairs {
        if done.contains(&original.as_str()) {
            continue;
        }
        done.push(original);
        let same: Vec<&str> = pairs
            .iter()
            .filter(|(other, _)| other == original)
            .map(|(_, replacement)| replacement.as_str())
            .collect();
        let positions = occurrences(text, original);
        if positions.is_empty() {
            return Err(RelocateError::Vanished);
        }
        if !replace_all && positions.len() > 1 {
            let lines = positions
                .iter()
                .map(|at| text::line_of(text, *at))
                .collect();
            return Err(RelocateError::Ambiguous { lines });
        }
        let positions = non_overlapping(&positions, original.len());
        if positions.len() != same.len() {
            return Err(RelocateError::CountChanged {
                expected: same.len(),
                found: positions.len(),
            });
        }
        for (at, replacement) in positions.into_iter().zip(same) {
            edits.push((at..at + original.len(), replacement));
        }
    }
    edits.sort_by_key(|(range, _)| range.start);
    if edits.windows(2).any(|pair| pair[0].0.end > pair[1].0.start) {
        let lines = edits
            .iter()
            .map(|(range, _)| text::line_of(text, range.start))
            .collect();
        return Err(RelocateError::Ambiguous { lines });
    }
    let mut out = String::with_capacity(text.len());
    let mut lines = Vec::with_capacity(edits.len());
    let mut cursor = 0;
    for (range, replacement) in edits {
        lines.push(text::line_of(text, range.start));
        out.push_str(&text[cursor..range.start]);
        out.push_str(replacement);
        cursor = range.end;
    }
    out.push_str(&text[cursor..]);
    Ok((out, lines))
}

/// Applies located replacements to the text they were located in.
pub(crate) fn apply(text: &str, replacements: &[Replacement]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for replacement in replacements {
        out.push_str(&text[cursor..replacement.range.start]);
        out.push_str(&replacement.text);
        cursor = replacement.range.end;
    }
    out.push_str(&text[cursor..]);
    out
}

/// Every start position of `needle` in `text`, overlapping ones included.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut positions = Vec::new();
    if needle.is_empty() {
        return positions;
    }
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        positions.push(at);
        let step = text[at..].chars().next().map_or(1, char::len_utf8);
        from = at + step;
        if from > text.len() {
            break;
        }
    }
    positions
}

/// Keeps positions whose spans of `len` bytes do not overlap the previous kept one.
fn non_overlapping(positions: &[usize], len: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for &at in positions {
        if kept.last().is_none_or(|last| at >= last + len) {
            kept.push(at);
        }
    }
    kept
}

/// One line of the file: its bytes without the terminator, and where the next line starts.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    start: usize,
    end: usize,
    next: usize,
    text: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let (end, next) = match text[start..].find('\n') {
            Some(found) => {
                let newline = start + found;
                let end = if text[start..newline].ends_with('\r') {
                    newline - 1
                } else {
                    newline
                };
                (end, newline + 1)
            }
            None => (text.len(), text.len()),
        };
        lines.push(Line {
            start,
            end,
            next,
            text: &text[start..end],
        });
        start = next;
    }
    lines
}

/// `old_string` and `new_string` as lines. A trailing newline on `old` means "whole lines": it is
/// dropped from both (the file keeps its own terminator). An empty `new` is a deletion (no
/// lines).
fn needle_lines<'a>(old_lf: &'a str, new_lf: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let (old_body, new_body) = match old_lf.strip_suffix('\n') {
        Some(old_body) => (old_body, new_lf.strip_suffix('\n').unwrap_or(new_lf)),
        None => (old_lf, new_lf),
    };
    let needle = old_body.split('\n').collect();
    let replacement = if new_lf.is_empty() {
        Vec::new()
    } else {
        new_body.split('\n').collect()
    };
    (needle, replacement)
}

/// Enough of a needle left to trust a unique match: at least 12 non-blank characters.
fn substantial(needle: &[&str]) -> bool {
    needle
        .iter()
        .map(|line| line.chars().filter(|ch| !ch.is_whitespace()).count())
        .sum::<usize>()
        >= 12
}

/// A line for comparison: whitespace runs collapsed, ends trimmed, punctuation folded.
fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut space = false;
    for ch in line.chars() {
        let ch = fold(ch);
        if ch.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(ch);
    }
    out
}

/// Typographic punctuation a model tends to "fix" or "break", folded to ASCII.
fn fold(ch: char) -> char {
    match ch {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2007}' | '\u{202F}' | '\u{3000}' => ' ',
        other => other,
    }
}

fn indent_of(line: &str) -> &str {
    let body = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - body.len()]
}

/// The column an indentation reaches with tab stops every `tab` columns.
fn columns(indent: &str, tab: usize) -> usize {
    indent.chars().fold(0, |column, ch| match ch {
        '\t' => (column / tab + 1) * tab,
        _ => column + 1,
    })
}

/// How the needle's indentation relates to the file's for one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shift {
    tab: usize,
    delta: isize,
    /// The indentation characters are identical: use `new_string` as written.
    verbatim: bool,
}

impl Shift {
    fn reindent(self, line: &str, tabs: bool) -> String {
        if self.verbatim {
            return line.to_owned();
        }
        if line.trim().is_empty() {
            return String::new();
        }
        let indent = indent_of(line);
        let column = (columns(indent, self.tab) as isize + self.delta).max(0) as usize;
        let mut out = if tabs {
            let mut out = "\t".repeat(column / self.tab);
            out.push_str(&" ".repeat(column % self.tab));
            out
        } else {
            " ".repeat(column)
        };
        out.push_str(&line[indent.len()..]);
        out
    }
}

/// A candidate region: lines `first..=last` (0-based).
#[derive(Debug, Clone, Copy)]
struct Window {
    first: usize,
    last: usize,
    shift: Shift,
}

struct FileLines<'a> {
    lines: Vec<Line<'a>>,
    normalized: Vec<String>,
    eol: &'static str,
    replace_all: bool,
}

impl FileLines<'_> {
    /// Stages 2 and 3: normalised lines equal, indentation equal or consistently shifted.
    fn line_stages(&self, needle: &[&str], replacement: &[&str]) -> Option<Outcome> {
        let (count, total) = (needle.len(), self.lines.len());
        if count == 0 || count > total {
            return None;
        }
        let wanted: Vec<String> = needle.iter().map(|line| normalize(line)).collect();
        let mut same = Vec::new();
        let mut shifted = Vec::new();
        for first in 0..=total - count {
            if !(0..count).all(|index| self.normalized[first + index] == wanted[index]) {
                continue;
            }
            let region = &self.lines[first..first + count];
            let Some(shift) = consistent_shift(region, needle) else {
                continue;
            };
            let window = Window {
                first,
                last: first + count - 1,
                shift,
            };
            if shift.delta == 0 {
                same.push(window);
            } else {
                shifted.push(window);
            }
        }
        [
            (Strategy::Whitespace, same),
            (Strategy::Indentation, shifted),
        ]
        .into_iter()
        .find(|(_, windows)| !windows.is_empty())
        .map(|(strategy, windows)| self.decide(strategy, windows, replacement))
    }

    /// Stage 5: first and last lines equal (normalised), the middle similar enough.
    fn block_anchors(&self, needle: &[&str], replacement: &[&str]) -> Option<Outcome> {
        let count = needle.len();
        if count < 3 {
            return None;
        }
        let first_wanted = normalize(needle[0]);
        let last_wanted = normalize(needle[count - 1]);
        if first_wanted.is_empty() || last_wanted.is_empty() {
            return None;
        }
        let middle_wanted: Vec<String> = needle[1..count - 1]
            .iter()
            .map(|line| normalize(line))
            .collect();
        let slack = (count / 4).max(1);
        let total = self.lines.len();
        let mut windows = Vec::new();
        for first in 0..total {
            if self.normalized[first] != first_wanted {
                continue;
            }
            let low = first + (count - 1).saturating_sub(slack).max(1);
            let high = (first + count - 1 + slack).min(total.saturating_sub(1));
            let mut best: Option<(usize, f64)> = None;
            for last in low..=high {
                if last >= total || self.normalized[last] != last_wanted {
                    continue;
                }
                let score = similarity(&self.normalized[first + 1..last], &middle_wanted);
                if best.is_none_or(|(_, best_score)| score > best_score) {
                    best = Some((last, score));
                }
            }
            if let Some((last, score)) = best
                && score >= BLOCK_SIMILARITY
            {
                let file_indent = indent_of(self.lines[first].text);
                let needle_indent = indent_of(needle[0]);
                let shift = Shift {
                    tab: 4,
                    delta: columns(file_indent, 4) as isize - columns(needle_indent, 4) as isize,
                    verbatim: file_indent == needle_indent,
                };
                windows.push(Window { first, last, shift });
            }
        }
        if windows.is_empty() {
            return None;
        }
        Some(self.decide(Strategy::BlockAnchor, windows, replacement))
    }

    /// Uniqueness, or every non-overlapping window with `replace_all`.
    fn decide(&self, strategy: Strategy, windows: Vec<Window>, replacement: &[&str]) -> Outcome {
        if windows.len() > 1 && !self.replace_all {
            return Outcome::Ambiguous {
                lines: windows.iter().map(|window| window.first + 1).collect(),
            };
        }
        let mut kept: Vec<Window> = Vec::new();
        for window in windows {
            if kept.last().is_none_or(|last| window.first > last.last) {
                kept.push(window);
            }
        }
        Outcome::Found(Located {
            strategy,
            replacements: kept
                .into_iter()
                .map(|window| self.replacement(window, replacement))
                .collect(),
        })
    }

    fn replacement(&self, window: Window, replacement: &[&str]) -> Replacement {
        let region = &self.lines[window.first..=window.last];
        let tabs = region
            .iter()
            .any(|line| !line.text.trim().is_empty() && indent_of(line.text).starts_with('\t'));
        let text = replacement
            .iter()
            .map(|line| window.shift.reindent(line, tabs))
            .collect::<Vec<_>>()
            .join(self.eol);
        let first = self.lines[window.first];
        let last = self.lines[window.last];
        let mut range = first.start..last.end;
        if replacement.is_empty() {
            // A deletion takes the whole lines, terminator included.
            if last.next > last.end {
                range.end = last.next;
            } else if window.first > 0 {
                range.start = self.lines[window.first - 1].end;
            }
        }
        Replacement { range, text }
    }

    /// The window of the needle's height most like it, line by line.
    fn closest(&self, needle: &[&str]) -> Option<Closest> {
        let total = self.lines.len();
        if total == 0 {
            return None;
        }
        let height = needle.len().clamp(1, total);
        if total.saturating_mul(height) > CLOSEST_BUDGET {
            return None;
        }
        let wanted: Vec<Vec<(char, char)>> = needle
            .iter()
            .take(height)
            .map(|line| bigrams(&normalize(line)))
            .collect();
        let have: Vec<Vec<(char, char)>> =
            self.normalized.iter().map(|line| bigrams(line)).collect();
        let mut best: Option<(usize, f64)> = None;
        for first in 0..=total - height {
            let score = (0..height)
                .map(|index| dice(&have[first + index], &wanted[index]))
                .sum::<f64>()
                / height as f64;
            if best.is_none_or(|(_, best_score)| score > best_score) {
                best = Some((first, score));
            }
        }
        let (first, similarity) = best?;
        if similarity < CLOSEST_SIMILARITY {
            return None;
        }
        let shown = height.min(CLOSEST_MAX_LINES);
        let mut excerpt = text::numbered_block(
            first as u64 + 1,
            self.lines[first..first + shown]
                .iter()
                .map(|line| line.text),
        );
        if shown < height {
            excerpt.push_str(&format!("   … {} more lines\n", height - shown));
        }
        Some(Closest {
            first_line: first + 1,
            last_line: first + height,
            similarity,
            excerpt,
        })
    }
}

/// The shift that maps the needle's indentation onto the region's, if one does for every
/// non-blank line (trying tab widths 4, 8 and 2).
fn consistent_shift(region: &[Line<'_>], needle: &[&str]) -> Option<Shift> {
    let pairs = || {
        region
            .iter()
            .zip(needle)
            .filter(|(line, wanted)| !line.text.trim().is_empty() && !wanted.trim().is_empty())
    };
    if pairs().all(|(line, wanted)| indent_of(line.text) == indent_of(wanted)) {
        return Some(Shift {
            tab: 4,
            delta: 0,
            verbatim: true,
        });
    }
    'tabs: for tab in [4, 8, 2] {
        let mut delta = None;
        for (line, wanted) in pairs() {
            let here = columns(indent_of(line.text), tab) as isize
                - columns(indent_of(wanted), tab) as isize;
            match delta {
                None => delta = Some(here),
                Some(seen) if seen == here => {}
                Some(_) => continue 'tabs,
            }
        }
        return Some(Shift {
            tab,
            delta: delta.unwrap_or(0),
            verbatim: false,
        });
    }
    None
}

/// Character similarity of two blocks of lines, 0 to 1.
fn similarity(have: &[String], wanted: &[String]) -> f64 {
    if have.is_empty() && wanted.is_empty() {
        return 1.0;
    }
    let have = have.join("\n");
    let wanted = wanted.join("\n");
    f64::from(
        similar::TextDiff::configure()
            .timeout(Duration::from_millis(200))
            .diff_chars(&have, &wanted)
            .ratio(),
    )
}

/// Sorted character bigrams of a line, padded so one-character lines have some.
fn bigrams(line: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = std::iter::once(' ')
        .chain(line.chars())
        .chain(std::iter::once(' '))
        .collect();
    if line.is_empty() {
        return Vec::new();
    }
    let mut grams: Vec<(char, char)> = chars.windows(2).map(|pair| (pair[0], pair[1])).collect();
    grams.sort_unstable();
    grams
}

/// Dice coefficient of two sorted bigram lists; two blank lines are alike.
fn dice(left: &[(char, char)], right: &[(char, char)]) -> f64 {
    if left.is_empty() && right.is_empty() {
        return 1.0;
    }
    if left.is_empty() || right.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < left.len() && j < right.len() {
        match left[i].cmp(&right[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * shared as f64 / (left.len() + right.len()) as f64
}

#[cfg(test)]
mod tests;
