use pretty_assertions::assert_eq;

use super::{Outcome, RelocateError, Strategy, apply, locate, relocate};

#[derive(Debug)]
enum Expect {
    Edited(&'static str, Strategy),
    Ambiguous(&'static [usize]),
    /// The closest region's first and last line, if any.
    NotFound(Option<(usize, usize)>),
}

struct Case {
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    replace_all: bool,
    expect: Expect,
}

const fn case(
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    expect: Expect,
) -> Case {
    Case {
        name,
        file,
        old,
        new,
        replace_all: false,
        expect,
    }
}

/// Real-world model mistakes, and what the matcher makes of them.
fn cases() -> Vec<Case> {
    use Expect::{Ambiguous, Edited, NotFound};
    use Strategy::{BlockAnchor, Exact, Indentation, TrimmedContext, Whitespace};
    vec![
        case(
            "exact text inside a line",
            "let x = 1;\nlet y = 2;\n",
            "y = 2",
            "y = 3",
            Edited("let x = 1;\nlet y = 3;\n", Exact),
        ),
        case(
            "exact multi-line block",
            "fn a() {\n    one();\n    two();\n}\n",
            "    one();\n    two();\n",
            "    three();\n",
            Edited("fn a() {\n    three();\n}\n", Exact),
        ),
        case(
            "wrong indentation: old_string and new_string dedented by four",
            "impl A {\n    fn a(&self) {\n        if x {\n            go();\n        }\n    }\n}\n",
            "fn a(&self) {\n    if x {\n        go();\n    }\n}",
            "fn a(&self) {\n    if x {\n        go();\n        again();\n    }\n}",
            Edited(
                "impl A {\n    fn a(&self) {\n        if x {\n            go();\n            again();\n        }\n    }\n}\n",
                Indentation,
            ),
        ),
        case(
            "wrong indentation: python block indented too far",
            "def f():\n    if x:\n        return 1\n    return 2\n",
            "        if x:\n            return 1",
            "        if x:\n            return 3",
            Edited(
                "def f():\n    if x:\n        return 3\n    return 2\n",
                Indentation,
            ),
        ),
        case(
            "trailing spaces in the file that the model dropped",
            "a = 1   \nb = 2  \nc = 3\n",
            "a = 1\nb = 2\n",
            "a = 10\nb = 20\n",
            Edited("a = 10\nb = 20\nc = 3\n", Whitespace),
        ),
        case(
            "trailing spaces the model added",
            "one\ntwo\nthree\n",
            "one  \ntwo \n",
            "uno\ndos\n",
            Edited("uno\ndos\nthree\n", Whitespace),
        ),
        case(
            "CRLF file edited with LF old_string",
            "line one\r\nline two\r\nline three\r\n",
            "line one\nline two\n",
            "first\nsecond\n",
            Edited("first\r\nsecond\r\nline three\r\n", Exact),
        ),
        case(
            "CRLF file with trailing spaces and LF old_string",
            "alpha  \r\nbeta\r\ngamma\r\n",
            "alpha\nbeta",
            "ALPHA\nBETA",
            Edited("ALPHA\r\nBETA\r\ngamma\r\n", Whitespace),
        ),
        case(
            "tabs in the file, spaces from the model",
            "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n",
            "    if ok {\n        run()\n    }",
            "    if ok {\n        run()\n        done()\n    }",
            Edited(
                "func main() {\n\tif ok {\n\t\trun()\n\t\tdone()\n\t}\n}\n",
                Whitespace,
            ),
        ),
        case(
            "spaces in the file, tabs from the model",
            "fn main() {\n    let a = 1;\n    let b = 2;\n}\n",
            "\tlet a = 1;\n\tlet b = 2;",
            "\tlet a = 1;\n\tlet c = 3;",
            Edited(
                "fn main() {\n    let a = 1;\n    let c = 3;\n}\n",
                Whitespace,
            ),
        ),
        case(
            "inner whitespace differs",
            "let  total =   a + b;\nprint(total)\n",
            "let total = a + b;\nprint(total)",
            "let total = a - b;\nprint(total)",
            Edited("let total = a - b;\nprint(total)\n", Whitespace),
        ),
        case(
            "off by one: an extra leading context line that is not in the file",
            "// header\nfn compute() -> u32 {\n    41\n}\n",
            "use std::fmt;\nfn compute() -> u32 {\n    41\n}",
            "use std::fmt;\nfn compute() -> u32 {\n    42\n}",
            Edited(
                "// header\nfn compute() -> u32 {\n    42\n}\n",
                TrimmedContext,
            ),
        ),
        case(
            "off by one: an extra trailing context line that is not in the file",
            "fn compute() -> u32 {\n    41\n}\n\nfn other() {}\n",
            "fn compute() -> u32 {\n    41\n}\nfn next() {}",
            "fn compute() -> u32 {\n    42\n}\nfn next() {}",
            Edited(
                "fn compute() -> u32 {\n    42\n}\n\nfn other() {}\n",
                TrimmedContext,
            ),
        ),
        case(
            "off by one: a context line missing at the edge still matches exactly",
            "a();\nb();\nc();\nd();\n",
            "b();\nc();",
            "b();\nC();",
            Edited("a();\nb();\nC();\nd();\n", Exact),
        ),
        case(
            "unicode content, exact",
            "let s = \"héllo wörld\";\nlet t = \"日本語\";\n",
            "\"日本語\"",
            "\"中文\"",
            Edited("let s = \"héllo wörld\";\nlet t = \"中文\";\n", Exact),
        ),
        case(
            "unicode punctuation: the model straightened curly quotes and a dash",
            "msg = \u{201c}it\u{2019}s done\u{201d} \u{2014} ok\nnext\n",
            "msg = \"it's done\" - ok\n",
            "msg = \"finished\"\n",
            Edited("msg = \"finished\"\nnext\n", Whitespace),
        ),
        case(
            "block anchors: a middle line differs slightly",
            "fn run() {\n    let config = load_config();\n    start(config);\n    wait();\n}\n",
            "fn run() {\n    let config = load_configs();\n    start(config);\n    wait();\n}",
            "fn run() {\n    start(Config::default());\n}",
            Edited(
                "fn run() {\n    start(Config::default());\n}\n",
                BlockAnchor,
            ),
        ),
        case(
            "block anchors: the model forgot a middle line",
            "class A:\n    def f(self):\n        x = 1\n        y = 2\n        z = 3\n        return x\n",
            "    def f(self):\n        x = 1\n        z = 3\n        return x",
            "    def f(self):\n        return 0",
            Edited(
                "class A:\n    def f(self):\n        return 0\n",
                BlockAnchor,
            ),
        ),
        case(
            "deleting whole lines takes their terminators",
            "keep\ndrop me  \nkeep too\n",
            "drop me\n",
            "",
            Edited("keep\nkeep too\n", Whitespace),
        ),
        case(
            "ambiguous exact match lists both lines",
            "x = 1\ny = 2\nx = 1\n",
            "x = 1",
            "x = 3",
            Ambiguous(&[1, 3]),
        ),
        case(
            "inconsistent indentation is a miss, not a guess",
            "if a:\n    go()\nif a:\n        go()\n",
            "if a:\n  go()",
            "if b:\n  go()",
            NotFound(Some((1, 2))),
        ),
        case(
            "ambiguous with consistent shifts",
            "  foo()\n  bar()\n    foo()\n    bar()\n",
            "foo()\nbar()",
            "baz()",
            Ambiguous(&[1, 3]),
        ),
        case(
            "a miss shows the closest region",
            "fn a() {}\nfn compute(x: u32) -> u32 {\n    x * 2\n}\nfn b() {}\n",
            "fn compute(y: u64) -> u64 {\n    y * 3\n}",
            "fn compute() {}",
            NotFound(Some((2, 4))),
        ),
        case(
            "a miss with nothing similar",
            "aaaa\nbbbb\n",
            "zzzz qqqq",
            "x",
            NotFound(None),
        ),
        case(
            "only blank lines are never matched fuzzily",
            "a\n\n\nb\n",
            "  \n \n",
            "x",
            NotFound(None),
        ),
        Case {
            replace_all: true,
            ..case(
                "replace_all changes every occurrence",
                "x = 1\ny = x\nx = 1\n",
                "x = 1",
                "x = 2",
                Edited("x = 2\ny = x\nx = 2\n", Exact),
            )
        },
        Case {
            replace_all: true,
            ..case(
                "replace_all with whitespace differences",
                "call(a)\nother\ncall(a)\n",
                "call(a)  \n",
                "call(b)\n",
                Edited("call(b)\nother\ncall(b)\n", Whitespace),
            )
        },
    ]
}

#[test]
fn real_world_model_mistakes() {
    for case in cases() {
        let outcome = locate(case.file, case.old, case.new, case.replace_all);
        match (&case.expect, outcome) {
            (Expect::Edited(expected, strategy), Outcome::Found(located)) => {
                assert_eq!(
                    apply(case.file, &located.replacements),
                    *expected,
                    "{}",
                    case.name
                );
                assert_eq!(located.strategy, *strategy, "{}", case.name);
            }
            (Expect::Ambiguous(expected), Outcome::Ambiguous { lines }) => {
                assert_eq!(lines, expected.to_vec(), "{}", case.name);
            }
            (Expect::NotFound(expected), Outcome::NotFound { closest }) => {
                let got = closest.map(|closest| (closest.first_line, closest.last_line));
                assert_eq!(got, *expected, "{}", case.name);
            }
            (expect, outcome) => panic!("{}: expected {expect:?}, got {outcome:?}", case.name),
        }
    }
}

#[test]
fn closest_region_is_numbered_like_read() {
    let Outcome::NotFound {
        closest: Some(closest),
    } = locate(
        "one\ntwo\nthree\nfour\n",
        "thre\nfuor",
        "x",
        /*replace_all*/ false,
    )
    else {
        panic!("expected a miss with a closest region");
    };
    assert_eq!(closest.excerpt, "     3\tthree\n     4\tfour\n");
    assert!(closest.similarity > 0.5, "{}", closest.similarity);
}

#[test]
fn relocation_finds_the_original_again() {
    let pairs = vec![("b = 2".to_owned(), "b = 3".to_owned())];
    // Moved down by two lines while the user reviewed.
    assert_eq!(
        relocate("new\nnew\na = 1\nb = 2\n", &pairs, false),
        Ok(("new\nnew\na = 1\nb = 3\n".to_owned(), vec![4]))
    );
    assert_eq!(
        relocate("a = 1\n", &pairs, false),
        Err(RelocateError::Vanished)
    );
    assert_eq!(
        relocate("b = 2\nb = 2\n", &pairs, false),
        Err(RelocateError::Ambiguous { lines: vec![1, 2] })
    );
}

#[test]
fn relocation_with_replace_all_wants_the_same_count() {
    let pairs = vec![
        ("x".to_owned(), "y".to_owned()),
        ("x".to_owned(), "y".to_owned()),
    ];
    assert_eq!(
        relocate("x x", &pairs, true),
        Ok(("y y".to_owned(), vec![1, 1]))
    );
    assert_eq!(
        relocate("x x x", &pairs, true),
        Err(RelocateError::CountChanged {
            expected: 2,
            found: 3
        })
    );
}

#[test]
fn overlapping_occurrences_are_ambiguous() {
    assert_eq!(
        locate("aaa", "aa", "b", false),
        Outcome::Ambiguous { lines: vec![1, 1] }
    );
}
