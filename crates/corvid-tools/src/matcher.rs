//! The edit matcher: where does the model's `old_string` sit in the file, and what exactly is
//! written there?
//!
//! One rule governs every stage: a place is taken only when it is the only one the stage finds
//! (or, with `replace_all`, every one), and it accounts for `old_string` line for line — every
//! line it replaces is a line the model quoted, every quoted line is there. Nothing else is
//! guessed: a miss is refused with the closest places, their line numbers and what differs, so
//! the model can copy the real text and retry.
//!
//! The cascade, strictest first; the first stage that finds anything decides:
//!
//! 1. **Exact**: the text as given, in the file's line endings (then as given, for files with
//!    mixed endings). Works inside a line. An occurrence that starts or ends inside a longer
//!    word is not a match (`count = 0` is not in `account = 0`).
//! 2. **Folded**: as 1, once typographic quotes, dashes, no-break spaces and zero-width
//!    characters are folded on both sides (`fold`).
//! 3. **Whitespace**: whole lines equal once trailing and inner whitespace are also ignored,
//!    at the same indentation width (tabs vs spaces at the same width included) (`lines`).
//! 4. **Indentation**: as 3, every line shifted by the same number of columns, or — when the
//!    model quoted at another indent width (2 spaces per level for the file's 4, tabs for
//!    spaces) — every line's indentation mapped by one width ratio around the shallowest line.
//!    Stages 3 and 4 look together: a place at the quoted depth and another shifted or
//!    re-widthed one are two places, so the edit is refused as ambiguous.
//! 5. **Repaired**: artifacts of how `old_string` was produced — line-number prefixes copied
//!    from `read`, a markdown fence, `\n` sent as two characters — are removed (from
//!    `new_string` too when it carries them) and 1–4 run again (`repair`).
//!
//! What is written: stage 1 writes `new_string` as given. The tolerant stages adapt it to the
//! file (`render`): unchanged lines stay byte for byte, changed lines keep the file's quotes,
//! spacing and invisible characters where the model only folded them, and indentation follows
//! the file's style.
//!
//! Elided lines (`// ... existing code ...`) stand for text the model did not quote. Repeated at
//! the same place in `new_string` they mean "keep these lines": the quoted pieces around them
//! are each located by the cascade (once each, in order) and the text between is left as it is
//! (`elision`). An elision `new_string` does not repeat is refused, and the refusal says why.
//!
//! [`relocate`] runs the same cascade on the text current when an approved edit is applied,
//! and applies only if the place it finds holds exactly the bytes that were approved: a change
//! elsewhere in the file is fine, a change inside the matched region is refused.

mod closest;
mod elision;
mod fold;
mod lines;
mod render;
mod repair;

use std::ops::Range;

pub(crate) use closest::Closest;
pub(crate) use repair::Repair;

use crate::text;
use fold::Folded;
use lines::{FileLines, needle_lines};

/// Which stage of the cascade matched, strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strategy {
    Exact,
    Folded,
    Whitespace,
    Indentation,
    Width,
}

impl Strategy {
    /// For summaries and results, so the model learns what was forgiven.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Exact => "exact match",
            Self::Folded => {
                "matched after folding typographic quotes, dashes and invisible spaces; written with the file's characters"
            }
            Self::Whitespace => {
                "matched ignoring whitespace differences; unchanged text kept as in the file"
            }
            Self::Indentation => {
                "matched ignoring an indentation shift; new_string re-indented to fit"
            }
            Self::Width => {
                "matched with old_string indented at another width per level; new_string re-indented to the file's width"
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
    /// What was removed from `old_string` before it matched.
    pub(crate) repair: Option<Repair>,
    /// In file order, not overlapping.
    pub(crate) replacements: Vec<Replacement>,
}

impl Located {
    /// "(what was forgiven)" for summaries, empty for an exact match as given.
    pub(crate) fn note(&self) -> String {
        let mut parts = Vec::new();
        if let Some(repair) = self.repair {
            parts.push(repair.describe());
        }
        if self.strategy != Strategy::Exact {
            parts.push(self.strategy.describe());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join("; "))
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Found(Located),
    /// Several places match; their first lines (1-based).
    Ambiguous {
        lines: Vec<usize>,
    },
    NotFound(Miss),
}

/// Why nothing matched, for the refusal.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Miss {
    /// The most similar places, best first.
    pub(crate) candidates: Vec<Closest>,
    /// Lines where `old_string` occurs, but only inside longer words.
    pub(crate) inside_words: Vec<(usize, String)>,
    /// A line of `old_string` (1-based) that elides text.
    pub(crate) elision: Option<Elided>,
}

/// An elision line of `old_string`, for the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Elided {
    /// Its line in `old_string`, 1-based.
    pub(crate) line: usize,
    pub(crate) text: String,
    /// `new_string` repeats the elisions (so the pieces around them were not found in order).
    pub(crate) repeated: bool,
}

/// Finds `old` in `text` (which has no BOM) and what replaces it. `old` must not be empty.
pub(crate) fn locate(text: &str, old: &str, new: &str, replace_all: bool) -> Outcome {
    if old.is_empty() {
        return Outcome::NotFound(Miss::default());
    }
    let eol = text::line_ending(text);
    let file = FileLines::new(text, eol, replace_all);
    if let Some(outcome) = cascade(text, &file, old, new) {
        return outcome;
    }
    for (repair, old, new) in repair::candidates(old, new) {
        match cascade(text, &file, &old, &new) {
            Some(Outcome::Found(mut located)) => {
                located.repair = Some(repair);
                return Outcome::Found(located);
            }
            Some(other) => return other,
            None => {}
        }
    }
    let pieces = elision::pieces(&text::to_lf(old), &text::to_lf(new), &file);
    if !replace_all
        && let Some(pieces) = &pieces
        && let Some(outcome) = elided(text, &file, pieces)
    {
        return outcome;
    }
    Outcome::NotFound(miss(text, &file, old, pieces.is_some()))
}

/// Each quoted piece found on its own, once, in order; the elided text between them stays.
fn elided(text: &str, file: &FileLines<'_>, pieces: &[(String, String)]) -> Option<Outcome> {
    let mut replacements: Vec<Replacement> = Vec::new();
    let mut strategy = Strategy::Exact;
    for (old, new) in pieces {
        match cascade(text, file, old, new)? {
            Outcome::Found(located) => {
                strategy = strategy.max(located.strategy);
                let [replacement] = <[Replacement; 1]>::try_from(located.replacements).ok()?;
                if replacements
                    .last()
                    .is_some_and(|previous| previous.range.end > replacement.range.start)
                {
                    return None;
                }
                replacements.push(replacement);
            }
            other => return Some(other),
        }
    }
    // Pieces the model kept as they were only anchor the others.
    replacements.retain(|replacement| text[replacement.range.clone()] != replacement.text);
    Some(Outcome::Found(Located {
        strategy,
        repair: Some(Repair::Elision),
        replacements,
    }))
}

/// Stages 1–4 on one pair of strings; `None` when none finds anything.
fn cascade(text: &str, file: &FileLines<'_>, old: &str, new: &str) -> Option<Outcome> {
    let old_lf = text::to_lf(old);
    let new_lf = text::to_lf(new);
    let needle = text::with_line_ending(&old_lf, file.eol);
    let replacement = text::with_line_ending(&new_lf, file.eol);
    if let Some(outcome) = exact(text, &needle, &replacement, file.replace_all) {
        return Some(outcome);
    }
    if needle != old
        && let Some(outcome) = exact(text, old, new, file.replace_all)
    {
        return Some(outcome);
    }
    if let Some(outcome) = folded(text, file, &needle, &new_lf) {
        return Some(outcome);
    }
    let (needle, replacement) = needle_lines(&old_lf, &new_lf);
    file.line_stages(&needle, &replacement)
}

/// Every start of `needle` in `text` that does not cut a word, overlapping ones included.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut positions = Vec::new();
    if needle.is_empty() {
        return positions;
    }
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        if !fold::cuts_word(text, at..at + needle.len(), needle) {
            positions.push(at);
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
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

/// Stage 1.
fn exact(text: &str, needle: &str, replacement: &str, replace_all: bool) -> Option<Outcome> {
    let positions = occurrences(text, needle);
    if positions.is_empty() {
        return None;
    }
    if positions.len() > 1 && !replace_all {
        let lines = positions
            .iter()
            .map(|at| text::line_of(text, *at))
            .collect();
        return Some(Outcome::Ambiguous { lines });
    }
    let replacements = non_overlapping(&positions, needle.len())
        .into_iter()
        .map(|at| Replacement {
            range: at..at + needle.len(),
            text: replacement.to_owned(),
        })
        .collect();
    Some(Outcome::Found(Located {
        strategy: Strategy::Exact,
        repair: None,
        replacements,
    }))
}

/// Stage 2: exact after folding both sides character by character.
fn folded(text: &str, file: &FileLines<'_>, needle: &str, new_lf: &str) -> Option<Outcome> {
    if !needle.chars().any(fold::folds) && !text.chars().any(fold::folds) {
        return None;
    }
    let haystack = Folded::new(text);
    let wanted = Folded::new(needle);
    if wanted.text.trim().is_empty() {
        return None;
    }
    let positions = occurrences(&haystack.text, &wanted.text);
    if positions.is_empty() {
        return None;
    }
    let len = wanted.text.len();
    let ranges: Vec<Range<usize>> = positions
        .iter()
        .map(|at| haystack.original(*at, at + len))
        .collect();
    if ranges.len() > 1 && !file.replace_all {
        let lines = ranges
            .iter()
            .map(|range| text::line_of(text, range.start))
            .collect();
        return Some(Outcome::Ambiguous { lines });
    }
    let kept = non_overlapping(&positions, len);
    let needle_lf = text::to_lf(needle);
    let old_lines: Vec<&str> = needle_lf.split('\n').collect();
    let new_lines: Vec<&str> = new_lf.split('\n').collect();
    let replacements = kept
        .into_iter()
        .map(|at| {
            let range = haystack.original(at, at + len);
            let region = text::to_lf(&text[range.clone()]);
            let region_lines: Vec<&str> = region.split('\n').collect();
            let adapted = if region_lines.len() == old_lines.len() {
                render::adapt(&region_lines, &old_lines, &new_lines, render::Layout::Same)
            } else {
                new_lines.iter().map(|line| (*line).to_owned()).collect()
            };
            Replacement {
                range,
                text: adapted.join(file.eol),
            }
        })
        .collect();
    Some(Outcome::Found(Located {
        strategy: Strategy::Folded,
        repair: None,
        replacements,
    }))
}

/// What to tell the model when nothing matched.
fn miss(text: &str, file: &FileLines<'_>, old: &str, repeated: bool) -> Miss {
    let old_lf = text::to_lf(old);
    let needle = text::with_line_ending(&old_lf, file.eol);
    let mut inside_words = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(needle.as_str()) {
        let at = from + found;
        let line = text::line_of(text, at);
        if inside_words.last().is_none_or(|(last, _)| *last != line) && inside_words.len() < 3 {
            let shown = file
                .lines
                .get(line - 1)
                .map_or(String::new(), |line| line.text.to_owned());
            inside_words.push((line, shown));
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    let (needle_lines, _) = needle_lines(&old_lf, "");
    let elision = needle_lines
        .iter()
        .enumerate()
        .find(|(_, line)| {
            repair::is_elision(line)
                && !file
                    .normalized
                    .iter()
                    .any(|have| *have == fold::normalize(line))
        })
        .map(|(index, line)| Elided {
            line: index + 1,
            text: (*line).to_owned(),
            repeated,
        });
    let candidates = if needle_lines.iter().all(|line| line.trim().is_empty()) {
        Vec::new()
    } else {
        closest::candidates(file, &needle_lines)
    };
    Miss {
        candidates,
        inside_words,
        elision,
    }
}

/// Why an approved edit cannot be applied to the current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RelocateError {
    /// Nothing matches any more.
    Vanished,
    /// Several places match now.
    Ambiguous { lines: Vec<usize> },
    /// `replace_all` finds a different number of places.
    CountChanged { expected: usize, found: usize },
    /// The place is found, but its text is not what was approved (first and last line).
    Changed { first: usize, last: usize },
}

/// An edit as approved: the model's strings and, per place, the file's bytes then and what
/// replaces them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Approved {
    pub(crate) old: String,
    pub(crate) new: String,
    pub(crate) replace_all: bool,
    pub(crate) pairs: Vec<(String, String)>,
}

impl Approved {
    pub(crate) fn new(
        text: &str,
        old: &str,
        new: &str,
        replace_all: bool,
        located: &Located,
    ) -> Self {
        Self {
            old: old.to_owned(),
            new: new.to_owned(),
            replace_all,
            pairs: located
                .replacements
                .iter()
                .map(|replacement| {
                    (
                        text[replacement.range.clone()].to_owned(),
                        replacement.text.clone(),
                    )
                })
                .collect(),
        }
    }
}

/// Applies an approved edit to the *current* text: the same cascade finds the place again
/// (moved is fine), which must hold the approved bytes. Returns the new text and the first line
/// of each replaced region.
pub(crate) fn relocate(
    text: &str,
    approved: &Approved,
) -> Result<(String, Vec<usize>), RelocateError> {
    let located = match locate(text, &approved.old, &approved.new, approved.replace_all) {
        Outcome::Found(located) => located,
        Outcome::Ambiguous { lines } => return Err(RelocateError::Ambiguous { lines }),
        Outcome::NotFound(_) => return Err(RelocateError::Vanished),
    };
    let found = located.replacements.len();
    let expected = approved.pairs.len();
    if found != expected {
        return Err(if approved.replace_all {
            RelocateError::CountChanged { expected, found }
        } else {
            RelocateError::Vanished
        });
    }
    let mut replacements = Vec::with_capacity(found);
    for (replacement, (region, approved_text)) in located.replacements.iter().zip(&approved.pairs) {
        let range = replacement.range.clone();
        if text[range.clone()] != **region {
            return Err(RelocateError::Changed {
                first: text::line_of(text, range.start),
                last: text::line_of(text, range.end.saturating_sub(1).max(range.start)),
            });
        }
        replacements.push(Replacement {
            range,
            text: approved_text.clone(),
        });
    }
    let lines = replacements
        .iter()
        .map(|replacement| text::line_of(text, replacement.range.start))
        .collect();
    Ok((apply(text, &replacements), lines))
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

#[cfg(test)]
mod tests;
