//! The whole-line stages: `old_string`'s lines equal the file's once whitespace and
//! typographic characters are ignored, line for line (nothing skipped, nothing added), at the
//! same indentation or consistently shifted.

use super::fold::normalize;
use super::render::{self, Layout};
use super::{Located, Outcome, Replacement, Strategy};

/// One line of the file: its bytes without the terminator, and where the next line starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line<'a> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) next: usize,
    pub(super) text: &'a str,
}

pub(super) fn split_lines(text: &str) -> Vec<Line<'_>> {
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
pub(super) fn needle_lines<'a>(old_lf: &'a str, new_lf: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
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

pub(super) fn indent_of(line: &str) -> &str {
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

/// How the needle's indentation relates to the file's for one match: a needle line at column
/// `c` sits at column `to + (c - from) * scale` in the file (with tab stops every `tab`
/// columns). A pure shift has scale 1; a quote written at another indent width (2 spaces per
/// level for the file's 4) has another ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shift {
    tab: usize,
    from: isize,
    to: isize,
    /// Numerator and denominator of the width ratio, in lowest terms.
    scale: (isize, isize),
    /// The indentation characters are identical: use `new_string`'s as written.
    verbatim: bool,
}

/// The largest numerator or denominator of a width ratio taken (8 columns for 1 and back).
const MAX_RATIO_TERM: isize = 8;

impl Shift {
    fn shifted(tab: usize, delta: isize) -> Self {
        Self {
            tab,
            from: 0,
            to: delta,
            scale: (1, 1),
            verbatim: false,
        }
    }

    /// The same place, indentation mapped without change of depth.
    pub(super) fn is_identity(self) -> bool {
        self.verbatim || (self.from == self.to && self.scale == (1, 1))
    }

    /// The indentation width differs (not only the depth).
    pub(super) fn is_scaled(self) -> bool {
        !self.verbatim && self.scale != (1, 1)
    }

    /// The file column for a needle column (never negative).
    fn map(self, column: usize) -> usize {
        let (num, den) = self.scale;
        let offset = (column as isize - self.from) * num;
        (self.to + offset.div_euclid(den)).max(0) as usize
    }

    /// A line of `new_string` split into the indentation to write (in the file's style) and
    /// its body.
    pub(super) fn split(self, line: &str, tabs: bool) -> (String, &str) {
        let indent = indent_of(line);
        let body = &line[indent.len()..];
        if self.verbatim {
            return (indent.to_owned(), body);
        }
        let column = self.map(columns(indent, self.tab));
        let written = if tabs {
            let mut out = "\t".repeat(column / self.tab);
            out.push_str(&" ".repeat(column % self.tab));
            out
        } else {
            " ".repeat(column)
        };
        (written, body)
    }
}

fn gcd(left: isize, right: isize) -> isize {
    if right == 0 {
        left
    } else {
        gcd(right, left % right)
    }
}

/// The shift that maps the needle's indentation onto the region's, if one does for every
/// non-blank line: the same columns, then one shift by a number of columns, then one width
/// ratio around the shallowest line (trying tab widths 4, 8 and 2 for each).
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
            from: 0,
            to: 0,
            scale: (1, 1),
            verbatim: true,
        });
    }
    let columns_at = |tab: usize| -> Vec<(isize, isize)> {
        pairs()
            .map(|(line, wanted)| {
                (
                    columns(indent_of(wanted), tab) as isize,
                    columns(indent_of(line.text), tab) as isize,
                )
            })
            .collect()
    };
    for tab in [4, 8, 2] {
        let columns = columns_at(tab);
        let mut deltas = columns.iter().map(|(wanted, have)| have - wanted);
        let first = deltas.next().unwrap_or(0);
        if deltas.all(|delta| delta == first) {
            return Some(Shift::shifted(tab, first));
        }
    }
    for tab in [4, 8, 2] {
        if let Some(shift) = width_ratio(tab, &columns_at(tab)) {
            return Some(shift);
        }
    }
    None
}

/// One ratio of indent widths that maps every (needle, file) column pair, measured from the
/// shallowest needle line; it needs two depths to be seen and is never 1 (that is a shift).
fn width_ratio(tab: usize, columns: &[(isize, isize)]) -> Option<Shift> {
    let &(from, to) = columns.iter().min_by_key(|(wanted, _)| *wanted)?;
    let &(wanted, have) = columns.iter().find(|(wanted, _)| *wanted != from)?;
    let (rise, run) = (have - to, wanted - from);
    if rise <= 0 {
        return None;
    }
    let common = gcd(rise, run);
    let scale = (rise / common, run / common);
    if scale == (1, 1) || scale.0 > MAX_RATIO_TERM || scale.1 > MAX_RATIO_TERM {
        return None;
    }
    columns
        .iter()
        .all(|(wanted, have)| (have - to) * scale.1 == (wanted - from) * scale.0)
        .then_some(Shift {
            tab,
            from,
            to,
            scale,
            verbatim: false,
        })
}

/// A candidate region: lines `first..=last` (0-based).
#[derive(Debug, Clone, Copy)]
struct Window {
    first: usize,
    last: usize,
    shift: Shift,
}

pub(super) struct FileLines<'a> {
    pub(super) lines: Vec<Line<'a>>,
    pub(super) normalized: Vec<String>,
    pub(super) eol: &'static str,
    pub(super) replace_all: bool,
}

impl<'a> FileLines<'a> {
    pub(super) fn new(text: &'a str, eol: &'static str, replace_all: bool) -> Self {
        let lines = split_lines(text);
        Self {
            normalized: lines.iter().map(|line| normalize(line.text)).collect(),
            lines,
            eol,
            replace_all,
        }
    }

    /// Normalised lines equal one for one; indentation equal (whitespace stage) or
    /// consistently shifted (indentation stage).
    pub(super) fn line_stages(&self, needle: &[&str], replacement: &[&str]) -> Option<Outcome> {
        let (count, total) = (needle.len(), self.lines.len());
        if count == 0 || count > total || needle.iter().all(|line| line.trim().is_empty()) {
            return None;
        }
        let wanted: Vec<String> = needle.iter().map(|line| normalize(line)).collect();
        let mut windows = Vec::new();
        for first in 0..=total - count {
            if !(0..count).all(|index| self.normalized[first + index] == wanted[index]) {
                continue;
            }
            let region = &self.lines[first..first + count];
            let Some(shift) = consistent_shift(region, needle) else {
                continue;
            };
            windows.push(Window {
                first,
                last: first + count - 1,
                shift,
            });
        }
        if windows.is_empty() {
            return None;
        }
        // Every window counts for uniqueness, at the quoted depth or not: a single line quoted
        // exactly is found inside a deeper-indented copy too, and a tolerant stage is never
        // bolder than the exact one.
        let strategy = if windows.iter().all(|window| window.shift.is_identity()) {
            Strategy::Whitespace
        } else if windows.iter().any(|window| window.shift.is_scaled()) {
            Strategy::Width
        } else {
            Strategy::Indentation
        };
        Some(self.decide(strategy, windows, needle, replacement))
    }

    /// Uniqueness, or every non-overlapping window with `replace_all`.
    fn decide(
        &self,
        strategy: Strategy,
        windows: Vec<Window>,
        needle: &[&str],
        replacement: &[&str],
    ) -> Outcome {
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
            repair: None,
            replacements: kept
                .into_iter()
                .map(|window| self.replacement(window, needle, replacement))
                .collect(),
        })
    }

    fn replacement(&self, window: Window, needle: &[&str], replacement: &[&str]) -> Replacement {
        let region = &self.lines[window.first..=window.last];
        let tabs = region
            .iter()
            .any(|line| !line.text.trim().is_empty() && indent_of(line.text).starts_with('\t'));
        let file: Vec<&str> = region.iter().map(|line| line.text).collect();
        let layout = Layout::Lines {
            shift: window.shift,
            tabs,
        };
        let text = render::adapt(&file, needle, replacement, layout).join(self.eol);
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
}
