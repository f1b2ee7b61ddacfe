//! A command's prompt with the user's arguments put in, cut into what is already text and what
//! still needs the session: a file to read (`@path`) or a command to run (`` !`cmd` ``).
//! Pure: nothing here reads a file or runs anything.

use super::{CustomCommand, Syntax};

/// One piece of an expanded prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    /// A command line whose output replaces it (arguments in it are shell-quoted).
    Shell(String),
    /// A project file whose content is inlined; `literal` is what the prompt said, kept when
    /// there is no such file (`@team` is not always a path).
    File {
        path: String,
        literal: String,
    },
}

/// The pieces of `command` invoked with `arguments`. When the prompt uses no placeholder, the
/// arguments follow it after a blank line, so what the user typed is never lost.
pub(crate) fn pieces(command: &CustomCommand, arguments: &str) -> Vec<Piece> {
    let arguments = arguments.trim();
    let words = words(arguments);
    let mut used = false;
    let mut pieces = Vec::new();
    for segment in segments(&command.template, command.syntax) {
        match segment {
            Segment::Text(text) => {
                let text = substitute(&text, command.syntax, arguments, &words, &mut used, false);
                match command.syntax {
                    Syntax::Markdown => mentions(&text, &mut pieces),
                    Syntax::Gemini => pieces.push(Piece::Text(text)),
                }
            }
            Segment::Shell(line) => pieces.push(Piece::Shell(substitute(
                &line,
                command.syntax,
                arguments,
                &words,
                &mut used,
                true,
            ))),
            Segment::File(path) => pieces.push(Piece::File {
                literal: format!("@{{{path}}}"),
                path: substitute(&path, command.syntax, arguments, &words, &mut used, false),
            }),
        }
    }
    if !used && !arguments.is_empty() {
        pieces.push(Piece::Text(format!("\n\n{arguments}")));
    }
    pieces
}

enum Segment {
    Text(String),
    Shell(String),
    File(String),
}

/// The prompt cut at its `` !`cmd` `` (markdown) or `!{cmd}` and `@{path}` (Gemini).
fn segments(template: &str, syntax: Syntax) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while !rest.is_empty() {
        let found = match syntax {
            Syntax::Markdown => rest.strip_prefix("!`").and_then(|after| {
                after
                    .find('`')
                    .map(|end| (Segment::Shell(after[..end].to_owned()), &after[end + 1..]))
            }),
            Syntax::Gemini => ["!{", "@{"].iter().find_map(|open| {
                let after = rest.strip_prefix(open)?;
                let end = closing_brace(after)?;
                let inner = after[..end].trim().to_owned();
                let segment = if *open == "!{" {
                    Segment::Shell(inner)
                } else {
                    Segment::File(inner)
                };
                Some((segment, &after[end + 1..]))
            }),
        };
        match found {
            Some((segment, after)) => {
                if !text.is_empty() {
                    segments.push(Segment::Text(std::mem::take(&mut text)));
                }
                segments.push(segment);
                rest = after;
            }
            None => {
                let mut chars = rest.chars();
                if let Some(c) = chars.next() {
                    text.push(c);
                }
                rest = chars.as_str();
            }
        }
    }
    if !text.is_empty() {
        segments.push(Segment::Text(text));
    }
    segments
}

/// Where the `}` closing an already opened brace is (braces inside balance).
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with the placeholders replaced: `$ARGUMENTS` and `$1`…`$9` (markdown) or `{{args}}`
/// (Gemini); in a command line (`quoted`), each value shell-quoted.
fn substitute(
    text: &str,
    syntax: Syntax,
    arguments: &str,
    words: &[String],
    used: &mut bool,
    quoted: bool,
) -> String {
    let value = |text: &str| {
        if quoted {
            shell_quote(text)
        } else {
            text.to_owned()
        }
    };
    if syntax == Syntax::Gemini {
        if text.contains("{{args}}") {
            *used = true;
        }
        return text.replace("{{args}}", &value(arguments));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(&value(arguments));
            *used = true;
            rest = tail;
            continue;
        }
        let mut chars = after.chars();
        match (chars.next(), chars.next()) {
            (Some(digit @ '1'..='9'), next) if !next.is_some_and(|c| c.is_ascii_digit()) => {
                let index = (digit as usize) - ('1' as usize);
                out.push_str(&value(words.get(index).map_or("", String::as_str)));
                *used = true;
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The arguments' words, as a shell would split them (quotes group, and are removed).
pub(super) fn words(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in arguments.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => current.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => {
                if let Some(word) = current.take() {
                    words.push(word);
                }
            }
            (None, c) => current.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(current);
    words
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Cuts markdown text at its `@path` mentions (an `@` at the start or after white space, up to
/// the next white space, less trailing punctuation).
fn mentions(text: &str, pieces: &mut Vec<Piece>) {
    let mut plain = String::new();
    let mut rest = text;
    let mut after_space = true;
    while let Some(c) = rest.chars().next() {
        if c == '@' && after_space {
            let token_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let token = &rest[1..token_end];
            let path = token.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
            if !path.is_empty() {
                if !plain.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut plain)));
                }
                pieces.push(Piece::File {
                    path: path.to_owned(),
                    literal: format!("@{path}"),
                });
                rest = &rest[1 + path.len()..];
                after_space = false;
                continue;
            }
        }
        plain.push(c);
        after_space = c.is_whitespace();
        rest = &rest[c.len_utf8()..];
    }
    if !plain.is_empty() {
        pieces.push(Piece::Text(plain));
    }
}
