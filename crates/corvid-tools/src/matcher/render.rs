//! What a tolerant match writes: `new_string` adapted to the file, never the model's folded
//! text.
//!
//! `old_string` matched the file only up to folding (whitespace, typographic and invisible
//! characters, indentation), so the text written is built from three sources:
//! - a line `new_string` keeps from `old_string` is the file's line, byte for byte;
//! - on a changed line, every piece `new_string` shares with `old_string` is the file's piece
//!   (its quotes, its spacing, its invisible characters), found through the match;
//! - what the model added is its own text, minus the typographic substitutions that made the
//!   match: a curly quote the model wrote where the file has a straight one is written straight
//!   everywhere in the added text (the reverse is not guessed: straight quotes are never made
//!   curly), and indentation is re-expressed in the file's style.

use std::collections::BTreeSet;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::fold::{Token, fold, folds, tokens};
use super::lines::Shift;

/// How the match relates lines to the file.
#[derive(Debug, Clone, Copy)]
pub(super) enum Layout {
    /// Character folding only: whitespace, indentation included, is identical.
    Same,
    /// Whole lines, indentation mapped by the shift (`tabs`: the file indents with tabs).
    Lines { shift: Shift, tabs: bool },
}

/// The lines to write in place of `file` (the matched lines, without terminators), given the
/// model's `old` (matching `file` line for line) and `new`.
pub(super) fn adapt(file: &[&str], old: &[&str], new: &[&str], layout: Layout) -> Vec<String> {
    let straighten = straightened(file, old, layout);
    let mut out = Vec::with_capacity(new.len());
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index: _,
                len,
            } => out.extend(
                file[old_index..old_index + len]
                    .iter()
                    .map(|l| (*l).to_owned()),
            ),
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            } => out.extend(
                new[new_index..new_index + new_len]
                    .iter()
                    .map(|line| added_line(line, layout, &straighten)),
            ),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for offset in 0..new_len {
                    let line = new[new_index + offset];
                    out.push(if offset < old_len {
                        changed_line(
                            file[old_index + offset],
                            old[old_index + offset],
                            line,
                            layout,
                            &straighten,
                        )
                    } else {
                        added_line(line, layout, &straighten)
                    });
                }
            }
        }
    }
    out
}

/// The model's typographic characters that stand where the file has their ASCII fold.
fn straightened(file: &[&str], old: &[&str], layout: Layout) -> BTreeSet<char> {
    let edges = matches!(layout, Layout::Same);
    let mut set = BTreeSet::new();
    for (file_line, old_line) in file.iter().zip(old) {
        let file_tokens = tokens(file_line, edges);
        let old_tokens = tokens(old_line, edges);
        for (have, wanted) in file_tokens.iter().zip(&old_tokens) {
            let have = &file_line[have.raw.clone()];
            let wanted = &old_line[wanted.raw.clone()];
            if have != wanted {
                set.extend(
                    wanted
                        .chars()
                        .filter(|ch| folds(*ch) && !have.contains(*ch)),
                );
            }
        }
    }
    set
}

fn straighten(text: &str, set: &BTreeSet<char>) -> String {
    text.chars()
        .filter_map(|ch| {
            if set.contains(&ch) {
                fold(ch)
            } else {
                Some(ch)
            }
        })
        .collect()
}

fn indent(line: &str, layout: Layout) -> (String, &str) {
    match layout {
        Layout::Same => (String::new(), line),
        Layout::Lines { shift, tabs } => {
            let (indent, body) = shift.split(line, tabs);
            (indent, body)
        }
    }
}

/// A line the model added: its own text, re-indented and straightened.
fn added_line(line: &str, layout: Layout, set: &BTreeSet<char>) -> String {
    if matches!(layout, Layout::Lines { .. }) && line.trim().is_empty() {
        return String::new();
    }
    let (indent, body) = indent(line, layout);
    format!("{indent}{}", straighten(body, set))
}

/// A line the model changed: pieces it kept come from the file, pieces it added are its own.
fn changed_line(
    file_line: &str,
    old_line: &str,
    new_line: &str,
    layout: Layout,
    set: &BTreeSet<char>,
) -> String {
    let edges = matches!(layout, Layout::Same);
    if !edges && new_line.trim().is_empty() {
        return String::new();
    }
    let file_tokens = tokens(file_line, edges);
    let old_tokens = tokens(old_line, edges);
    let new_tokens = tokens(new_line, edges);
    let keys = |tokens: &[Token]| tokens.iter().map(|token| token.key).collect::<Vec<_>>();
    if keys(&file_tokens) != keys(&old_tokens) {
        // Not a line-for-line match (cannot happen for matched lines); write the model's line.
        return added_line(new_line, layout, set);
    }
    let (indent, _) = indent(new_line, layout);
    let old_raw: Vec<&str> = old_tokens
        .iter()
        .map(|token| &old_line[token.raw.clone()])
        .collect();
    let new_raw: Vec<&str> = new_tokens
        .iter()
        .map(|token| &new_line[token.raw.clone()])
        .collect();
    let mut out = indent;
    for op in capture_diff_slices(Algorithm::Myers, &old_raw, &new_raw) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for token in &file_tokens[old_index..old_index + len] {
                    out.push_str(&file_line[token.raw.clone()]);
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for piece in &new_raw[new_index..new_index + new_len] {
                    out.push_str(&straighten(piece, set));
                }
            }
        }
    }
    out
}
