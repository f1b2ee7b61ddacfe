//! On a miss: the places most like `old_string`, with line numbers and, for the best one, the
//! lines that keep it from matching (a line the model left out, a line that differs, a line
//! the file does not have), so the model can copy the real text and retry.
//!
//! Each window of the file about as tall as `old_string` (one line shorter to one taller, so a
//! left-out or invented line still lines up) is scored by aligning its lines with
//! `old_string`'s in order (the square of the character-bigram similarity of each pair).

use super::fold::normalize;
use super::lines::FileLines;
use crate::text;

/// Below this, nothing is similar enough to show.
const LEAST_SIMILARITY: f64 = 0.2;
/// Other places are listed only when at least this similar.
const OTHER_SIMILARITY: f64 = 0.4;
/// Skip the scan past this many line comparisons.
const BUDGET: usize = 4_000_000;
/// Align windows of other heights only below this many alignment steps.
const ALIGN_BUDGET: usize = 40_000_000;
/// The most lines shown, and the most notes.
const MAX_LINES: usize = 30;
const MAX_NOTES: usize = 4;
/// Lines quoted in notes are cut to this many characters.
const NOTE_WIDTH: usize = 80;

/// A region like `old_string`, shown on a miss.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Closest {
    pub(crate) first_line: usize,
    pub(crate) last_line: usize,
    /// 0 to 1: the root of the mean squared line similarity.
    pub(crate) similarity: f64,
    /// The region's lines, numbered like `read` shows them (the best candidate only).
    pub(crate) excerpt: String,
    /// What differs from `old_string` there, one sentence each (the best candidate only).
    pub(crate) notes: Vec<String>,
}

/// The most similar places, best first, not overlapping (at most three).
pub(super) fn candidates(file: &FileLines<'_>, needle: &[&str]) -> Vec<Closest> {
    let total = file.lines.len();
    let height = needle.len().clamp(1, total.max(1));
    if total == 0 || total.saturating_mul(needle.len()) > BUDGET {
        return Vec::new();
    }
    let wanted: Vec<String> = needle.iter().map(|line| normalize(line)).collect();
    let wanted_grams: Vec<Vec<(char, char)>> = wanted.iter().map(|line| bigrams(line)).collect();
    let have_grams: Vec<Vec<(char, char)>> =
        file.normalized.iter().map(|line| bigrams(line)).collect();
    // similarity[file line][needle line], squared so that equal lines outweigh merely
    // similar ones (a window that skips a line beats one that pairs two different lines).
    let similarity: Vec<Vec<f64>> = have_grams
        .iter()
        .map(|have| {
            wanted_grams
                .iter()
                .map(|want| dice(have, want).powi(2))
                .collect()
        })
        .collect();
    let heights: Vec<usize> = if total * 3 * needle.len() * (needle.len() + 1) <= ALIGN_BUDGET {
        [height, height.saturating_sub(1), height + 1]
            .into_iter()
            .filter(|candidate| (1..=total).contains(candidate))
            .collect()
    } else {
        vec![height]
    };
    // The best (score, height) per first line.
    let mut scored: Vec<(usize, usize, f64)> = Vec::new();
    for first in 0..total {
        let mut best: Option<(usize, f64)> = None;
        for &tall in &heights {
            if first + tall > total {
                continue;
            }
            let score = if tall == needle.len() && heights.len() == 1 {
                (0..tall)
                    .map(|index| similarity[first + index][index])
                    .sum::<f64>()
                    / tall as f64
            } else {
                align(&similarity[first..first + tall], needle.len()).0
            };
            if best.is_none_or(|(_, seen)| score > seen) {
                best = Some((tall, score));
            }
        }
        if let Some((tall, score)) = best {
            scored.push((first, tall, score));
        }
    }
    scored.sort_by(|left, right| right.2.total_cmp(&left.2).then(left.0.cmp(&right.0)));
    let mut chosen: Vec<(usize, usize, f64)> = Vec::new();
    for (first, tall, score) in scored {
        let floor = if chosen.is_empty() {
            LEAST_SIMILARITY
        } else {
            OTHER_SIMILARITY
        };
        if score < floor || chosen.len() == 3 {
            break;
        }
        let overlaps = chosen
            .iter()
            .any(|(other, other_tall, _)| first < other + other_tall && *other < first + tall);
        if !overlaps {
            chosen.push((first, tall, score));
        }
    }
    chosen
        .into_iter()
        .enumerate()
        .map(|(rank, (first, tall, score))| {
            let (excerpt, notes) = if rank == 0 {
                let shown = tall.min(MAX_LINES);
                let mut excerpt = text::numbered_block(
                    first as u64 + 1,
                    file.lines[first..first + shown]
                        .iter()
                        .map(|line| line.text),
                );
                if shown < tall {
                    excerpt.push_str(&format!("   … {} more lines\n", tall - shown));
                }
                let pairs = align(&similarity[first..first + tall], needle.len()).1;
                (excerpt, notes(file, first, tall, needle, &wanted, &pairs))
            } else {
                (String::new(), Vec::new())
            };
            Closest {
                first_line: first + 1,
                last_line: first + tall,
                // Shown on the scale of the per-line similarity (the score sums squares).
                similarity: score.sqrt(),
                excerpt,
                notes,
            }
        })
        .collect()
}

/// The best in-order pairing of window lines with needle lines: its score (the summed
/// similarity over the taller side) and the pairs `(window line, needle line)`.
fn align(window: &[Vec<f64>], needle: usize) -> (f64, Vec<(usize, usize)>) {
    let rows = window.len();
    let mut table = vec![vec![0.0f64; needle + 1]; rows + 1];
    for row in 1..=rows {
        for column in 1..=needle {
            let pair = table[row - 1][column - 1] + window[row - 1][column - 1];
            table[row][column] = pair.max(table[row - 1][column]).max(table[row][column - 1]);
        }
    }
    let mut pairs = Vec::new();
    let (mut row, mut column) = (rows, needle);
    while row > 0 && column > 0 {
        let pair = table[row - 1][column - 1] + window[row - 1][column - 1];
        if (table[row][column] - pair).abs() < 1e-12 && window[row - 1][column - 1] > 0.0 {
            pairs.push((row - 1, column - 1));
            row -= 1;
            column -= 1;
        } else if (table[row][column] - table[row - 1][column]).abs() < 1e-12 {
            row -= 1;
        } else {
            column -= 1;
        }
    }
    pairs.reverse();
    (table[rows][needle] / rows.max(needle) as f64, pairs)
}

/// What keeps the window from matching, in the file's line numbers.
fn notes(
    file: &FileLines<'_>,
    first: usize,
    tall: usize,
    needle: &[&str],
    wanted: &[String],
    pairs: &[(usize, usize)],
) -> Vec<String> {
    let mut notes = Vec::new();
    let mut row = 0;
    let mut column = 0;
    let mut push = |note: String| {
        if notes.len() < MAX_NOTES {
            notes.push(note);
        }
    };
    let quote = |line: &str| {
        if line.trim().is_empty() {
            "(a blank line)".to_owned()
        } else {
            format!("`{}`", text::cut_line(line.trim_end(), NOTE_WIDTH))
        }
    };
    for &(pair_row, pair_column) in pairs.iter().chain(std::iter::once(&(tall, needle.len()))) {
        while row < pair_row {
            push(format!(
                "line {} is not in old_string: {}",
                first + row + 1,
                quote(file.lines[first + row].text)
            ));
            row += 1;
        }
        while column < pair_column {
            push(format!(
                "old_string's line {} is not in the file here: {}",
                column + 1,
                quote(needle[column])
            ));
            column += 1;
        }
        if pair_row < tall && pair_column < needle.len() {
            if file.normalized[first + pair_row] != wanted[pair_column] {
                let have = file.lines[first + pair_row].text;
                push(format!(
                    "line {} differs: the file has {}, old_string has {}{}",
                    first + pair_row + 1,
                    quote(have),
                    quote(needle[pair_column]),
                    lookalikes(have, needle[pair_column])
                ));
            }
            row += 1;
            column += 1;
        }
    }
    if notes.is_empty() {
        // Every line pairs with an equal one: only the indentation keeps them apart.
        notes.push(
            "the lines are there, but old_string's indentation is not the file's shifted by one amount or scaled by one width ratio; copy the indentation from the file".to_owned(),
        );
    }
    notes
}

/// For two lines that may look alike: the non-ASCII characters only one of them has, named by
/// code point (a composed `é` against `e` and a combining accent, a no-break space).
fn lookalikes(have: &str, wanted: &str) -> String {
    let only = |left: &str, right: &str| -> Vec<String> {
        let mut seen: Vec<char> = left
            .chars()
            .filter(|ch| !ch.is_ascii() && !right.contains(*ch))
            .collect();
        seen.dedup();
        seen.iter()
            .take(3)
            .map(|ch| format!("U+{:04X}", u32::from(*ch)))
            .collect()
    };
    let (file_only, old_only) = (only(have, wanted), only(wanted, have));
    if file_only.is_empty() && old_only.is_empty() {
        return String::new();
    }
    let side = |list: &[String]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.join(" ")
        }
    };
    format!(
        " (characters that differ: the file has {}, old_string has {})",
        side(&file_only),
        side(&old_only)
    )
}

/// Sorted character bigrams of a line, padded so one-character lines have some.
fn bigrams(line: &str) -> Vec<(char, char)> {
    if line.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = std::iter::once(' ')
        .chain(line.chars())
        .chain(std::iter::once(' '))
        .collect();
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
