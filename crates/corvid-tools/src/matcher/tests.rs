use pretty_assertions::assert_eq;

use super::fold::{Folded, normalize, tokens};
use super::{Approved, Outcome, RelocateError, Repair, Strategy, apply, locate, relocate};

/// Locates and applies, or says why not.
fn edited(file: &str, old: &str, new: &str) -> Result<(String, Strategy), Outcome> {
    match locate(file, old, new, false) {
        Outcome::Found(located) => Ok((apply(file, &located.replacements), located.strategy)),
        other => Err(other),
    }
}

#[test]
fn each_stage_in_turn() {
    assert_eq!(
        edited("let x = 1;\n", "x = 1", "x = 2"),
        Ok(("let x = 2;\n".to_owned(), Strategy::Exact))
    );
    assert_eq!(
        edited(
            "say(\"hi\")\n",
            "say(\u{201c}hi\u{201d})",
            "say(\u{201c}yo\u{201d})"
        ),
        Ok(("say(\"yo\")\n".to_owned(), Strategy::Folded))
    );
    assert_eq!(
        edited("a  =  1\n", "a = 1", "a = 2"),
        Ok(("a  =  2\n".to_owned(), Strategy::Whitespace))
    );
    assert_eq!(
        edited(
            "    if x:\n        go()\n",
            "if x:\n    go()",
            "if x:\n    stop()"
        ),
        Ok((
            "    if x:\n        stop()\n".to_owned(),
            Strategy::Indentation
        ))
    );
}

#[test]
fn repairs_are_reported() {
    let Outcome::Found(located) = locate(
        "alpha\nbeta\n",
        "1\u{2192}alpha\n2\u{2192}beta",
        "gamma",
        false,
    ) else {
        panic!("expected a match");
    };
    assert_eq!(located.repair, Some(Repair::LineNumbers));
    assert_eq!(apply("alpha\nbeta\n", &located.replacements), "gamma\n");
    assert!(
        located.note().contains("line-number prefixes"),
        "{}",
        located.note()
    );
}

#[test]
fn a_tolerant_stage_never_skips_or_adds_lines() {
    let file = "a = 1\nb = 2\nc = 3\n";
    // b = 2 left out: not matched, and the miss names the line.
    let Err(Outcome::NotFound(miss)) = edited(file, "a = 1\nc = 3", "x") else {
        panic!("expected a miss");
    };
    let best = &miss.candidates[0];
    assert_eq!((best.first_line, best.last_line), (1, 3));
    assert_eq!(
        best.notes,
        vec!["line 2 is not in old_string: `b = 2`".to_owned()]
    );
    // An invented line: not matched either.
    let Err(Outcome::NotFound(miss)) = edited(file, "a = 1\nlog()\nb = 2", "x") else {
        panic!("expected a miss");
    };
    assert!(
        miss.candidates[0]
            .notes
            .iter()
            .any(|note| note.contains("old_string's line 2 is not in the file here")),
        "{:?}",
        miss.candidates[0].notes
    );
}

#[test]
fn words_are_not_cut() {
    let Err(Outcome::NotFound(miss)) = edited("let account = 0;\n", "count = 0", "count = 1")
    else {
        panic!("expected a miss");
    };
    assert_eq!(miss.inside_words, vec![(1, "let account = 0;".to_owned())]);
    assert_eq!(
        edited("account = 0;\ncount = 0;\n", "count = 0", "count = 1"),
        Ok(("account = 0;\ncount = 1;\n".to_owned(), Strategy::Exact))
    );
}

#[test]
fn elisions_are_named() {
    let Err(Outcome::NotFound(miss)) = edited(
        "fn a() {\n    one();\n    two();\n}\n",
        "fn a() {\n    // ...\n}",
        "fn a() {}",
    ) else {
        panic!("expected a miss");
    };
    assert_eq!(miss.elision, Some((2, "    // ...".to_owned())));
}

#[test]
fn ambiguity_at_every_stage() {
    assert_eq!(
        locate("x = 1\nx = 1\n", "x = 1", "y", false),
        Outcome::Ambiguous { lines: vec![1, 2] }
    );
    assert_eq!(
        locate("\"a\"\n\"a\"\n", "\u{201c}a\u{201d}", "b", false),
        Outcome::Ambiguous { lines: vec![1, 2] }
    );
    assert_eq!(
        locate("  foo()\n    foo()\n", "foo()  ", "bar()", false),
        Outcome::Ambiguous { lines: vec![1, 2] }
    );
    // One at the quoted depth, one deeper: the tolerant stages see both.
    assert_eq!(
        locate("foo()\n    foo()\n", "foo()  ", "bar()", false),
        Outcome::Ambiguous { lines: vec![1, 2] }
    );
    assert_eq!(
        locate("===", "==", "b", false),
        Outcome::Ambiguous { lines: vec![1, 1] }
    );
}

#[test]
fn tokens_keep_the_bytes_they_stand_for() {
    let line = "  a\u{200b}\u{a0} b\u{2019}  ";
    let pieces: Vec<(char, &str)> = tokens(line, false)
        .into_iter()
        .map(|token| (token.key, &line[token.raw]))
        .collect();
    assert_eq!(
        pieces,
        vec![
            ('a', "a\u{200b}"),
            (' ', "\u{a0} "),
            ('b', "b"),
            ('\'', "\u{2019}")
        ]
    );
    assert_eq!(tokens(line, true).len(), 6);
    assert_eq!(normalize(line), "a b'");
    let folded = Folded::new("x\u{200b}\u{201c}y");
    assert_eq!(folded.text, "x\"y");
    assert_eq!(folded.original(1, 3), 4..8);
}

fn approve(text: &str, old: &str, new: &str, replace_all: bool) -> Approved {
    let Outcome::Found(located) = locate(text, old, new, replace_all) else {
        panic!("expected a match");
    };
    Approved::new(text, old, new, replace_all, &located)
}

#[test]
fn relocation_uses_the_same_matcher() {
    let approved = approve("x = 1\nxx = 1\n", "x = 1  ", "x = 2", false);
    // A plain substring search finds `x = 1` twice; the matcher finds the same line again.
    assert_eq!(
        relocate("// new\nx = 1\nxx = 1\n", &approved),
        Ok(("// new\nx = 2\nxx = 1\n".to_owned(), vec![2]))
    );
    // The target line re-indented: found, but it is not what was approved.
    assert_eq!(
        relocate("  x = 1\nxx = 1\n", &approved),
        Err(RelocateError::Changed { first: 1, last: 1 })
    );
}

#[test]
fn relocation_refuses_a_changed_region() {
    let approved = approve("a = 1  \nb = 2\n", "a = 1\nb = 2", "a = 1\nb = 3", false);
    assert_eq!(
        relocate("a = 1\nb = 2\n", &approved),
        Err(RelocateError::Changed { first: 1, last: 2 })
    );
    assert_eq!(
        relocate("top\na = 1  \nb = 2\n", &approved),
        Ok(("top\na = 1  \nb = 3\n".to_owned(), vec![2]))
    );
    assert_eq!(relocate("a = 7\n", &approved), Err(RelocateError::Vanished));
}

#[test]
fn relocation_with_replace_all_wants_the_same_count() {
    let approved = approve("x x", "x", "y", true);
    assert_eq!(
        relocate("x x", &approved),
        Ok(("y y".to_owned(), vec![1, 1]))
    );
    assert_eq!(
        relocate("x x x", &approved),
        Err(RelocateError::CountChanged {
            expected: 2,
            found: 3
        })
    );
}
