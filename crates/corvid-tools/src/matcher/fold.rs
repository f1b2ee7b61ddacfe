//! Comparing text the way a model misquotes it: typographic characters folded to ASCII,
//! invisible characters dropped, whitespace runs collapsed — while remembering where every
//! compared piece came from, so what is written can be taken from the file's own bytes.

use std::ops::Range;

/// Typographic characters a model "fixes" or "breaks", folded to ASCII; `None` for invisible
/// characters, which do not take part in comparisons.
pub(super) fn fold(ch: char) -> Option<char> {
    match ch {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Some('"'),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Some('-'),
        '\u{00A0}' | '\u{2007}' | '\u{202F}' | '\u{3000}' => Some(' '),
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => None,
        other => Some(other),
    }
}

/// Whether folding changes `ch` (so a match through it needs the file's character back).
pub(super) fn folds(ch: char) -> bool {
    fold(ch) != Some(ch)
}

/// A text folded character by character (no whitespace collapsing), with, for every byte of
/// the folded text, the byte range of the original character it came from.
pub(super) struct Folded {
    pub(super) text: String,
    origin: Vec<Range<usize>>,
}

impl Folded {
    pub(super) fn new(original: &str) -> Self {
        let mut text = String::with_capacity(original.len());
        let mut origin = Vec::with_capacity(original.len());
        for (at, ch) in original.char_indices() {
            if let Some(folded) = fold(ch) {
                text.push(folded);
                for _ in 0..folded.len_utf8() {
                    origin.push(at..at + ch.len_utf8());
                }
            }
        }
        Self { text, origin }
    }

    /// The original byte range of the folded range `start..end` (non-empty).
    pub(super) fn original(&self, start: usize, end: usize) -> Range<usize> {
        self.origin[start].start..self.origin[end - 1].end
    }
}

/// One compared piece of a line: a visible character (folded) or a run of whitespace, with the
/// bytes it stands for. Invisible characters belong to the piece before them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) key: char,
    pub(super) raw: Range<usize>,
}

/// The pieces of one line. With `edges`, leading and trailing whitespace are pieces too;
/// without, they are left out (indentation is handled apart, trailing whitespace ignored).
pub(super) fn tokens(line: &str, edges: bool) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let mut space: Option<usize> = None;
    for (at, ch) in line.char_indices() {
        let end = at + ch.len_utf8();
        match fold(ch) {
            None => {
                if space.is_none()
                    && let Some(last) = out.last_mut()
                {
                    last.raw.end = end;
                }
            }
            Some(folded) if folded.is_whitespace() => {
                space.get_or_insert(at);
            }
            Some(folded) => {
                if let Some(start) = space.take()
                    && (edges || !out.is_empty())
                {
                    out.push(Token {
                        key: ' ',
                        raw: start..at,
                    });
                }
                out.push(Token {
                    key: folded,
                    raw: at..end,
                });
            }
        }
    }
    if edges && let Some(start) = space {
        out.push(Token {
            key: ' ',
            raw: start..line.len(),
        });
    }
    out
}

/// A line for comparison: the keys of its pieces (whitespace collapsed, ends trimmed,
/// typographic characters folded, invisible ones dropped).
pub(super) fn normalize(line: &str) -> String {
    tokens(line, false).iter().map(|token| token.key).collect()
}

/// A character that continues an identifier.
fn is_word(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Whether `text[range]` (a match of `needle`) starts or ends inside a longer word: `count`
/// found in `account`, `let tot` in `let total`.
pub(super) fn cuts_word(text: &str, range: Range<usize>, needle: &str) -> bool {
    let starts_in_word = needle.chars().next().is_some_and(is_word)
        && text[..range.start].chars().next_back().is_some_and(is_word);
    let ends_in_word = needle.chars().next_back().is_some_and(is_word)
        && text[range.end..].chars().next().is_some_and(is_word);
    starts_in_word || ends_in_word
}
