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
    assert_eq!(
        miss.elision,
        Some(super::Elided {
            line: 2,
            text: "    // ...".to_owned(),
            repeated: false
        })
    );
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

/// A small deterministic generator, so a failure names its seed.
struct Dice(u64);

impl Dice {
    fn below(&mut self, bound: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % bound.max(1)
    }
}

/// Whatever is found accounts for old_string line for line: the invariant behind "zero
/// wrong-place edits", checked over many files and mistakes a model makes.
#[test]
fn a_match_always_accounts_for_every_quoted_line() {
    use super::lines::needle_lines;
    let vocabulary = [
        "fn run() {",
        "    let count = 0;",
        "    let account = 0;",
        "    count += 1;",
        "    say(\"hi\");",
        "    say(\u{201c}hi\u{201d});",
        "\tgo();",
        "        go();",
        "    go();",
        "}",
        "",
        "    return count;",
        "x = 1",
        "xx = 1",
        "    if x {",
        "    }",
    ];
    let mut seen = std::collections::BTreeMap::new();
    let mut straightened = 0;
    for seed in 1..3000u64 {
        let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let height = 3 + dice.below(12);
        let file_lines: Vec<&str> = (0..height)
            .map(|_| vocabulary[dice.below(vocabulary.len())])
            .collect();
        let file = format!("{}\n", file_lines.join("\n"));
        let first = dice.below(height);
        let tall = 1 + dice.below((height - first).min(4));
        let mut quoted: Vec<String> = file_lines[first..first + tall]
            .iter()
            .map(|line| (*line).to_owned())
            .collect();
        match dice.below(9) {
            0 if quoted.len() > 2 => {
                quoted.remove(1);
            }
            1 => quoted.insert(dice.below(quoted.len() + 1), "    invented();".to_owned()),
            2 => quoted.iter_mut().for_each(|line| line.push_str("  ")),
            3 => quoted.iter_mut().for_each(|line| line.insert_str(0, "  ")),
            4 => {
                for line in &mut quoted {
                    *line = line.replace('"', "\u{201d}");
                }
            }
            5 => {
                let index = dice.below(quoted.len());
                quoted[index] = quoted[index].replace("count", "cnt");
            }
            6 => {
                for line in &mut quoted {
                    *line = line.trim_start().to_owned();
                }
            }
            7 => {
                // Quoted at half the width: 4 spaces become 2, a tab becomes 2 spaces.
                for line in &mut quoted {
                    let body = line.trim_start_matches([' ', '\t']).to_owned();
                    let indent = &line[..line.len() - body.len()];
                    let width: usize = indent
                        .chars()
                        .map(|ch| if ch == '\t' { 4 } else { 1 })
                        .sum();
                    *line = format!("{}{body}", " ".repeat(width / 2));
                }
            }
            _ => {}
        }
        let old = quoted.join("\n");
        if old.trim().is_empty() {
            continue;
        }
        // The model's new_string: a word changed, a line added in the model's quote style.
        let mut new_lines = quoted.clone();
        if let Some(line) = new_lines.iter_mut().find(|line| line.contains("count")) {
            *line = line.replace("count", "total");
        }
        let curly = quoted.iter().any(|line| line.contains('\u{201d}'));
        new_lines.push(if curly {
            "    say(\u{201d}added\u{201d});".to_owned()
        } else {
            "    say(\"added\");".to_owned()
        });
        let new = new_lines.join("\n");
        let Outcome::Found(located) = locate(&file, &old, &new, false) else {
            continue;
        };
        assert_eq!(located.replacements.len(), 1, "seed {seed}");
        *seen.entry(format!("{:?}", located.strategy)).or_insert(0) += 1;
        let region = &file[located.replacements[0].range.clone()];
        match located.strategy {
            Strategy::Exact => assert_eq!(region, old, "seed {seed}"),
            Strategy::Folded => {
                assert_eq!(
                    Folded::new(region).text,
                    Folded::new(&old).text,
                    "seed {seed}"
                );
            }
            Strategy::Whitespace | Strategy::Indentation | Strategy::Width => {
                let (needle, _) = needle_lines(&old, "");
                let have: Vec<String> = region.split('\n').map(normalize).collect();
                let want: Vec<String> = needle.iter().map(|line| normalize(line)).collect();
                assert_eq!(have, want, "seed {seed}: {file:?} / {old:?}");
            }
        }
        // What is written is new_string up to what the matcher ignores, and never the
        // model's curly quotes where the file had straight ones.
        let written = &located.replacements[0].text;
        if located.strategy != Strategy::Exact {
            let have: Vec<String> = written.split('\n').map(normalize).collect();
            let want: Vec<String> = new.split('\n').map(normalize).collect();
            assert_eq!(have, want, "seed {seed}: {file:?} / {old:?} -> {written:?}");
            if curly && !region.contains('\u{201d}') {
                assert!(!written.contains('\u{201d}'), "seed {seed}: {written:?}");
                straightened += 1;
            }
        }
    }
    // Not vacuous: every stage was exercised.
    assert_eq!(seen.len(), 5, "{seen:?}");
    assert!(seen.values().all(|count| *count >= 20), "{seen:?}");
    assert!(straightened >= 20, "{straightened}");
}

/// A 4-space function quoted at 2 spaces per level (the case the README promises).
const FOUR: &str = "fn main() {\n    if ready {\n        go();\n    }\n}\n";

#[test]
fn a_quote_at_another_width_is_written_at_the_files() {
    assert_eq!(
        edited(
            FOUR,
            "fn main() {\n  if ready {\n    go();\n  }\n}",
            "fn main() {\n  if ready {\n    go();\n    stop();\n  }\n}"
        ),
        Ok((
            "fn main() {\n    if ready {\n        go();\n        stop();\n    }\n}\n".to_owned(),
            Strategy::Width
        ))
    );
    // The other way round: a 2-space file quoted at 4.
    assert_eq!(
        edited(
            "a:\n  b:\n    c: 1\n",
            "a:\n    b:\n        c: 1",
            "a:\n    b:\n        c: 2\n        d: 3"
        ),
        Ok(("a:\n  b:\n    c: 2\n    d: 3\n".to_owned(), Strategy::Width))
    );
    // A tab-indented file quoted with 2 spaces per level keeps its tabs (tabs read as 2
    // columns make this a plain shift, which writes the same).
    assert_eq!(
        edited(
            "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n",
            "if x {\n  y();\n}",
            "if x {\n  y();\n  z();\n}"
        ),
        Ok((
            "fn f() {\n\tif x {\n\t\ty();\n\t\tz();\n\t}\n}\n".to_owned(),
            Strategy::Indentation
        ))
    );
}

#[test]
fn a_width_ratio_combines_with_a_depth_shift() {
    // A method of a 4-space class quoted from column 0 at 2 spaces per level.
    let file =
        "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n";
    assert_eq!(
        edited(
            file,
            "def f(self):\n  if x:\n    return 1\n  return 2",
            "def f(self):\n  if x:\n    return 1\n  if y:\n    return 3\n  return 2"
        ),
        Ok((
            "class A:\n    def f(self):\n        if x:\n            return 1\n        if y:\n            return 3\n        return 2\n"
                .to_owned(),
            Strategy::Width
        ))
    );
}

#[test]
fn a_width_match_is_taken_only_when_unique() {
    let twice = format!("{FOUR}\n{FOUR}");
    assert_eq!(
        edited(
            &twice,
            "fn main() {\n  if ready {\n    go();\n  }\n}",
            "fn main() {}"
        ),
        Err(Outcome::Ambiguous { lines: vec![1, 7] })
    );
    // A copy at the quoted width and one at the file's other width are two places.
    let both = "if a {\n  b();\n}\nif a {\n    b();\n}\n";
    assert_eq!(
        edited(both, "if a {\n      b();\n}", "if a {}"),
        Err(Outcome::Ambiguous { lines: vec![1, 4] })
    );
}

#[test]
fn indentation_that_no_single_ratio_maps_is_refused() {
    // Levels 0, 2, 4 against 0, 4, 6: neither one shift nor one ratio.
    let file = "a {\n    b {\n      c();\n    }\n}\n";
    let Err(Outcome::NotFound(miss)) = edited(file, "a {\n  b {\n    c();\n  }\n}", "x") else {
        panic!("a non-uniform mapping must not match");
    };
    let notes = format!("{:?}", miss.candidates);
    assert!(notes.contains("one width ratio"), "{notes}");
    // A deeper line shallower in the file (a ratio below zero) is refused too.
    assert!(matches!(
        edited("a\n  b\n", "a\n    b\n", "x"),
        Ok((_, Strategy::Width))
    ));
    assert!(matches!(
        edited("  a\nb\n", "a\n  b\n", "x"),
        Err(Outcome::NotFound(_))
    ));
}

#[test]
fn relocation_applies_a_width_match_again() {
    let approved = approve(
        FOUR,
        "  if ready {\n    go();\n  }",
        "  if ready {\n    go();\n    stop();\n  }",
        false,
    );
    let moved = format!("// a comment added above\n{FOUR}");
    assert_eq!(
        relocate(&moved, &approved).map(|(text, _)| text),
        Ok(
            "// a comment added above\nfn main() {\n    if ready {\n        go();\n        stop();\n    }\n}\n"
                .to_owned()
        )
    );
}
