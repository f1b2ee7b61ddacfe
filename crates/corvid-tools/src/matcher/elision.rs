//! Elided lines kept as they are: a line such as `// ... existing code ...` in `old_string`,
//! repeated at the same place in `new_string`, means "the lines here stay". The quoted pieces
//! between elisions are located one by one by the cascade — each must be the only place it
//! matches, and they must come in order — and the text between them is not touched, so every
//! line replaced is still a line the model quoted. An elision `new_string` does not repeat is
//! never applied (those lines would be replaced unseen); the miss says why.

use super::fold::normalize;
use super::lines::FileLines;
use super::repair::is_elision;

/// `old_string` and `new_string` cut at the elision lines they share, in order: the quoted
/// pieces, each with its replacement. `None` unless `old` has an elision line that the file
/// does not have and `new` repeats every one of them in the same order.
pub(super) fn pieces(
    old_lf: &str,
    new_lf: &str,
    file: &FileLines<'_>,
) -> Option<Vec<(String, String)>> {
    let elides = |line: &str| {
        is_elision(line) && !file.normalized.iter().any(|have| *have == normalize(line))
    };
    let cut = |text: &str| -> (Vec<String>, Vec<String>) {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut pieces = vec![Vec::new()];
        let mut markers = Vec::new();
        for line in body.split('\n') {
            if elides(line) {
                markers.push(normalize(line));
                pieces.push(Vec::new());
            } else if let Some(last) = pieces.last_mut() {
                last.push(line);
            }
        }
        (
            pieces.into_iter().map(|lines| lines.join("\n")).collect(),
            markers,
        )
    };
    let (old_pieces, old_markers) = cut(old_lf);
    if old_markers.is_empty() {
        return None;
    }
    let (new_pieces, new_markers) = cut(new_lf);
    if new_markers != old_markers {
        return None;
    }
    let last = old_pieces.len() - 1;
    let mut out = Vec::new();
    for (index, (old, new)) in old_pieces.into_iter().zip(new_pieces).enumerate() {
        if old.trim().is_empty() {
            // An elision at either end keeps everything beyond the quoted text; one between two
            // elisions leaves nothing to anchor on.
            if (index == 0 || index == last) && new.trim().is_empty() {
                continue;
            }
            return None;
        }
        out.push((old, new));
    }
    (!out.is_empty()).then_some(out)
}
