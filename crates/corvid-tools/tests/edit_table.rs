//! The edit table: realistic mistakes models make when they call `edit`, each with the outcome a
//! careful tool gives (the exact file text it writes, or a refusal that says where to look).
//!
//! Every case runs through the public API (prepare, then apply; some change the file between
//! the two, as a user does while reviewing). The totals are printed
//! (`cargo test -p corvid-tools --test edit_table -- --nocapture`) and the bar is zero
//! wrong-place edits. The classes come from public trackers; each section names threads that
//! report it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_tools::{Cancellation, ToolContext, ToolRegistry, Workspace};
use serde_json::json;

/// Whitespace the model gets wrong at line ends or inside lines.
/// anthropics/claude-code#1986 (byte-exact matching), Gitlawb/zero#963, opencode#24742.
const WHITESPACE: &str = "trailing or inner whitespace";
/// Tabs and spaces. aws/amazon-q-developer-cli#3401 ("my interface converts tabs to spaces").
const TABS: &str = "tabs vs spaces";
/// A block quoted at the wrong depth. Gitlawb/openclaude#1561 (indentation fuzzy matching).
const INDENT: &str = "indentation shifted";
/// CRLF files. earendil-works/pi#355, #2744; charmbracelet/crush#684; langchain-ai/deepagents#2899.
const CRLF: &str = "CRLF line endings";
/// Typographic characters. anthropics/claude-code#31863 (curly quotes written into code),
/// #15920 and #1599 (the file's curly apostrophes clobbered), #1986, #29786.
const QUOTES: &str = "curly vs straight quotes, dashes";
/// Invisible characters. openclaw/openclaw#116459 (a fuzzy edit rewrote unrelated bytes).
const INVISIBLE: &str = "NBSP and zero-width characters";
/// A match inside a longer identifier (`count` in `account`).
const WORDS: &str = "match inside a longer identifier";
/// Lines left out of or added to old_string. Gitlawb/zero#963 (interior drift replaced),
/// anomalyco/opencode#24742 (two distant anchors, 2,337 lines deleted), can1357/oh-my-pi#10454.
const LINES: &str = "omitted or extra lines";
/// `// ... existing code ...` standing for unquoted lines. Aider-AI/aider#350, #343.
const ELISION: &str = "elided lines";
/// Line-number prefixes copied from a read tool. Zoo-Code-Org/Zoo-Code#716, xal-sh/xal#42,
/// Nano-Collective/nanocoder#765.
const NUMBERS: &str = "line-number prefixes from read output";
/// Markdown fences around old_string.
const FENCES: &str = "markdown fences";
/// `\n` written as two characters. openclaw/openclaw#110823 (double-escaped JSON strings).
const ESCAPES: &str = "escaped newlines in JSON";
/// Several identical places. Aider-AI/aider#685 (a bare `}` matched the first of many).
const REPEATS: &str = "multiple identical occurrences";
/// Edits that change nothing or have nothing to find. anthropics/claude-code#1986.
const DEGENERATE: &str = "old_string equals new_string, empty or blank old_string";
/// The model's picture of the file is older than the file. can1357/oh-my-pi#10454 (stale anchors).
const STALE: &str = "stale old_string after a user change";
/// The file changes while the edit waits for approval.
const WAITING: &str = "change while the edit waits for approval";
/// Unicode text.
const UNICODE: &str = "unicode content";
/// Deleting lines. BaseIntelligence/bounty-challenge#9959 (a fuzzy match ate the next newline).
const DELETION: &str = "deletions";

#[derive(Debug, Clone)]
enum Expect {
    /// The edit lands and the file reads exactly this.
    Applied(String),
    /// The edit is refused (the file is untouched) and the refusal mentions this text.
    Refused(&'static str),
}

#[derive(Debug, Clone)]
struct Case {
    class: &'static str,
    name: &'static str,
    /// None: the file does not exist.
    file: Option<String>,
    old: String,
    new: String,
    replace_all: bool,
    /// Written between prepare and apply, as a user editing during review.
    meanwhile: Option<String>,
    expect: Expect,
}

/// Lines joined with `\n`, each terminated.
fn l(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Lines joined with `\n`, the last unterminated (as a model writes old_string).
fn s(lines: &[&str]) -> String {
    lines.join("\n")
}

fn edit(
    class: &'static str,
    name: &'static str,
    file: impl Into<String>,
    old: impl Into<String>,
    new: impl Into<String>,
) -> Case {
    Case {
        class,
        name,
        file: Some(file.into()),
        old: old.into(),
        new: new.into(),
        replace_all: false,
        meanwhile: None,
        expect: Expect::Refused(""),
    }
}

impl Case {
    fn applied(mut self, text: impl Into<String>) -> Self {
        self.expect = Expect::Applied(text.into());
        self
    }
    fn refused(mut self, mention: &'static str) -> Self {
        self.expect = Expect::Refused(mention);
        self
    }
    fn all(mut self) -> Self {
        self.replace_all = true;
        self
    }
    fn meanwhile(mut self, text: impl Into<String>) -> Self {
        self.meanwhile = Some(text.into());
        self
    }
    fn missing(mut self) -> Self {
        self.file = None;
        self
    }
}

fn rust_main() -> String {
    l(&[
        "fn main() {",
        "    let total = compute(1);",
        "    println!(\"{total}\");",
        "}",
    ])
}

fn go_block() -> String {
    l(&[
        "func a() {",
        "\tx := 1",
        "\ty := 2",
        "\tz := 3",
        "\treturn",
        "}",
    ])
}

fn two_resets() -> String {
    l(&[
        "fn reset_a(state: &mut State) {",
        "    state.count = 0;",
        "    state.dirty = true;",
        "}",
        "",
        "fn reset_b(state: &mut State) -> bool {",
        "    state.count = 0;",
        "    state.dirty = false;",
        "    true",
        "}",
    ])
}

#[allow(clippy::too_many_lines)] // the table is the point
fn cases() -> Vec<Case> {
    vec![
        // --- whitespace ---
        edit(
            WHITESPACE,
            "trailing spaces in the file that the model dropped",
            l(&["a = 1   ", "b = 2  ", "c = 3"]),
            s(&["a = 1", "b = 2"]),
            s(&["a = 10", "b = 20"]),
        )
        .applied(l(&["a = 10", "b = 20", "c = 3"])),
        edit(
            WHITESPACE,
            "trailing spaces the model added",
            l(&["one", "two", "three"]),
            l(&["one  ", "two "]),
            l(&["uno", "dos"]),
        )
        .applied(l(&["uno", "dos", "three"])),
        edit(
            WHITESPACE,
            "unchanged lines keep the file's trailing whitespace",
            l(&["first  ", "second", "third"]),
            s(&["first", "second"]),
            s(&["first", "2nd"]),
        )
        .applied(l(&["first  ", "2nd", "third"])),
        edit(
            WHITESPACE,
            "inner whitespace differs; the file's spacing is kept on the changed line",
            l(&["let  total =   a + b;", "print(total)"]),
            s(&["let total = a + b;", "print(total)"]),
            s(&["let total = a - b;", "print(total)"]),
        )
        .applied(l(&["let  total =   a - b;", "print(total)"])),
        edit(
            WHITESPACE,
            "a leading newline the model added",
            l(&["x = 1", "foo()"]),
            "\nfoo()",
            "\nbar()",
        )
        .applied(l(&["x = 1", "bar()"])),
        edit(
            WHITESPACE,
            "old_string ends with a newline the file's last line lacks",
            "a\nb",
            "b\n",
            "c\n",
        )
        .applied("a\nc"),
        edit(
            WHITESPACE,
            "a blank line with spaces in the file, empty in old_string",
            l(&["fn a() {", "    one();", "    ", "    two();", "}"]),
            s(&["    one();", "", "    two();"]),
            s(&["    one();", "", "    three();"]),
        )
        .applied(l(&["fn a() {", "    one();", "    ", "    three();", "}"])),
        edit(
            WHITESPACE,
            "a blank line of the file left out of old_string",
            l(&["a();", "", "b();", "c();"]),
            s(&["a();", "b();"]),
            s(&["a();", "B();"]),
        )
        .refused("line"),
        edit(
            WHITESPACE,
            "a blank line in old_string that the file does not have",
            l(&["a();", "b();", "c();"]),
            s(&["a();", "", "b();"]),
            s(&["a();", "", "B();"]),
        )
        .refused("line"),
        // --- tabs ---
        edit(
            TABS,
            "tabs in the file, spaces from the model",
            l(&["func main() {", "\tif ok {", "\t\trun()", "\t}", "}"]),
            s(&["    if ok {", "        run()", "    }"]),
            s(&["    if ok {", "        run()", "        done()", "    }"]),
        )
        .applied(l(&[
            "func main() {",
            "\tif ok {",
            "\t\trun()",
            "\t\tdone()",
            "\t}",
            "}",
        ])),
        edit(
            TABS,
            "spaces in the file, tabs from the model",
            l(&["fn main() {", "    let a = 1;", "    let b = 2;", "}"]),
            s(&["\tlet a = 1;", "\tlet b = 2;"]),
            s(&["\tlet a = 1;", "\tlet c = 3;"]),
        )
        .applied(l(&["fn main() {", "    let a = 1;", "    let c = 3;", "}"])),
        edit(
            TABS,
            "a tab-indented Go block quoted with two-space indentation",
            go_block(),
            s(&["  y := 2", "  z := 3"]),
            s(&["  y := 20", "  z := 30"]),
        )
        .applied(l(&[
            "func a() {",
            "\tx := 1",
            "\ty := 20",
            "\tz := 30",
            "\treturn",
            "}",
        ])),
        // --- indentation ---
        edit(
            INDENT,
            "a method quoted without its impl indentation",
            l(&[
                "impl A {",
                "    fn a(&self) {",
                "        if x {",
                "            go();",
                "        }",
                "    }",
                "}",
            ]),
            s(&["fn a(&self) {", "    if x {", "        go();", "    }", "}"]),
            s(&[
                "fn a(&self) {",
                "    if x {",
                "        go();",
                "        again();",
                "    }",
                "}",
            ]),
        )
        .applied(l(&[
            "impl A {",
            "    fn a(&self) {",
            "        if x {",
            "            go();",
            "            again();",
            "        }",
            "    }",
            "}",
        ])),
        edit(
            INDENT,
            "a python block indented too far",
            l(&["def f():", "    if x:", "        return 1", "    return 2"]),
            s(&["        if x:", "            return 1"]),
            s(&["        if x:", "            return 3"]),
        )
        .applied(l(&[
            "def f():",
            "    if x:",
            "        return 3",
            "    return 2",
        ])),
        edit(
            INDENT,
            "inconsistent indentation is not guessed",
            l(&["if a:", "    go()", "if b:", "        go()"]),
            s(&["if a:", "  go()", "  stop()"]),
            s(&["if a:", "  go()"]),
        )
        .refused("closest"),
        edit(
            INDENT,
            "two-space nesting quoted as four-space nesting",
            l(&["a:", "  b:", "    c: 1"]),
            s(&["a:", "    b:", "        c: 1"]),
            s(&["a:", "    b:", "        c: 2"]),
        )
        .applied(l(&["a:", "  b:", "    c: 2"])),
        edit(
            INDENT,
            "a four-space function quoted at two spaces per level",
            l(&["fn main() {", "    if ready {", "        go();", "    }", "}"]),
            s(&["fn main() {", "  if ready {", "    go();", "  }", "}"]),
            s(&["fn main() {", "  if ready {", "    go();", "    stop();", "  }", "}"]),
        )
        .applied(l(&[
            "fn main() {",
            "    if ready {",
            "        go();",
            "        stop();",
            "    }",
            "}",
        ])),
        edit(
            INDENT,
            "a method quoted from column 0 at half the class's width",
            l(&["class A:", "    def f(self):", "        if x:", "            return 1"]),
            s(&["def f(self):", "  if x:", "    return 1"]),
            s(&["def f(self):", "  if x:", "    return 2"]),
        )
        .applied(l(&["class A:", "    def f(self):", "        if x:", "            return 2"])),
        edit(
            INDENT,
            "two copies at the file's width quoted at another are ambiguous",
            l(&["if a {", "    b();", "}", "if a {", "    b();", "}"]),
            s(&["if a {", "  b();", "}"]),
            s(&["if a {", "  c();", "}"]),
        )
        .refused("1, 4"),
        edit(
            INDENT,
            "levels no single width ratio maps are not guessed",
            l(&["a {", "    b {", "      c();", "    }", "}"]),
            s(&["a {", "  b {", "    c();", "  }", "}"]),
            s(&["a {", "  b {", "    d();", "  }", "}"]),
        )
        .refused("width ratio"),
        // --- CRLF ---
        edit(
            CRLF,
            "CRLF file edited with LF old_string",
            "line one\r\nline two\r\nline three\r\n",
            s(&["line one", "line two"]),
            s(&["first", "second"]),
        )
        .applied("first\r\nsecond\r\nline three\r\n"),
        edit(
            CRLF,
            "CRLF file, trailing spaces and LF old_string",
            "alpha  \r\nbeta\r\ngamma\r\n",
            s(&["alpha", "beta"]),
            s(&["ALPHA", "BETA"]),
        )
        .applied("ALPHA\r\nBETA\r\ngamma\r\n"),
        edit(
            CRLF,
            "CRLF old_string for an LF file",
            l(&["a", "b", "c"]),
            "a\r\nb",
            "A\r\nB",
        )
        .applied(l(&["A", "B", "c"])),
        edit(
            CRLF,
            "lines added to a CRLF file get CRLF",
            "one\r\ntwo\r\n",
            "one\n",
            "one\nhalf\n",
        )
        .applied("one\r\nhalf\r\ntwo\r\n"),
        edit(
            CRLF,
            "byte order mark and CRLF kept",
            "\u{feff}one\r\ntwo\r\nthree\r\n",
            "two\nthree\n",
            "2\n3",
        )
        .applied("\u{feff}one\r\n2\r\n3\r\n"),
        // --- quotes ---
        edit(
            QUOTES,
            "curly quotes from the model are not written into code",
            l(&["fn greet() {", "    let msg = \"hello\";", "}"]),
            "let msg = \u{201c}hello\u{201d};",
            "let msg = \u{201c}goodbye\u{201d};",
        )
        .applied(l(&["fn greet() {", "    let msg = \"goodbye\";", "}"])),
        edit(
            QUOTES,
            "curly quotes on a whole new line the model added",
            l(&["const a = \"x\";", "export { a };"]),
            "const a = \u{201c}x\u{201d};",
            s(&[
                "const a = \u{201c}x\u{201d};",
                "const b = \u{201c}y\u{201d};",
            ]),
        )
        .applied(l(&[
            "const a = \"x\";",
            "const b = \"y\";",
            "export { a };",
        ])),
        edit(
            QUOTES,
            "the file's curly apostrophe is kept when the model straightened it",
            l(&["title = \"Tourner l\u{2019}image vers la gauche\""]),
            "Tourner l'image vers la gauche",
            "Tourner l'image vers la droite",
        )
        .applied(l(&["title = \"Tourner l\u{2019}image vers la droite\""])),
        edit(
            QUOTES,
            "a curly apostrophe in a string literal, new straight code beside it",
            l(&["print(\"it\u{2019}s\")"]),
            "print(\"it's\")",
            "print(\"it's\", 'x')",
        )
        .applied(l(&["print(\"it\u{2019}s\", 'x')"])),
        edit(
            QUOTES,
            "an en dash from the model, an ASCII hyphen in the file",
            l(&["# range 1-5", "x = 1"]),
            "# range 1\u{2013}5",
            "# range 1\u{2013}10",
        )
        .applied(l(&["# range 1-10", "x = 1"])),
        edit(
            QUOTES,
            "straight to curly on purpose, matched exactly",
            l(&["fmt = '%s'"]),
            "'%s'",
            "\u{2018}%s\u{2019}",
        )
        .applied(l(&["fmt = \u{2018}%s\u{2019}"])),
        edit(
            QUOTES,
            "the change is only the quote style the matcher folds away",
            l(&["s = \"it\u{2019}s\""]),
            "s = \"it's\"  ",
            "s = \"it\u{2019}s\"",
        )
        .refused("nothing would change"),
        edit(
            QUOTES,
            "curly quotes in a multi-line block of code",
            l(&["if x {", "    log(\"a\");", "    log(\"b\");", "}"]),
            s(&["    log(\u{201c}a\u{201d});", "    log(\u{201c}b\u{201d});"]),
            s(&["    log(\u{201c}a\u{201d});", "    log(\u{201c}c\u{201d});"]),
        )
        .applied(l(&["if x {", "    log(\"a\");", "    log(\"c\");", "}"])),
        // --- invisible characters ---
        edit(
            INVISIBLE,
            "a no-break space in the file, a space from the model",
            l(&["price:\u{a0}10", "tax: 2"]),
            "price: 10",
            "price: 20",
        )
        .applied(l(&["price:\u{a0}20", "tax: 2"])),
        edit(
            INVISIBLE,
            "a zero-width space in the file is kept",
            l(&["let na\u{200b}me = 1;"]),
            "let name = 1;",
            "let name = 2;",
        )
        .applied(l(&["let na\u{200b}me = 2;"])),
        edit(
            INVISIBLE,
            "a zero-width space from the model is not written",
            l(&["let name = 1;"]),
            "let na\u{200b}me = 1;",
            "let na\u{200b}me = 2;",
        )
        .applied(l(&["let name = 2;"])),
        edit(
            INVISIBLE,
            "a no-break space from the model inside a block",
            l(&["a = 1", "b = 2"]),
            s(&["a\u{a0}= 1", "b = 2"]),
            s(&["a\u{a0}= 1", "b = 3"]),
        )
        .applied(l(&["a = 1", "b = 3"])),
        // --- words ---
        edit(
            WORDS,
            "count = 0 exists only inside account = 0",
            l(&["let account = 0;", "let total = 1;"]),
            "count = 0",
            "count = 5",
        )
        .refused("inside a longer word"),
        edit(
            WORDS,
            "count = 0 is found on its own line, not inside account = 0",
            l(&["let account = 0;", "let count = 0;"]),
            "count = 0",
            "count = 5",
        )
        .applied(l(&["let account = 0;", "let count = 5;"])),
        edit(
            WORDS,
            "replace_all renames whole identifiers only",
            l(&["let count = 0;", "count += 1;", "let account = count;"]),
            "count",
            "total",
        )
        .all()
        .applied(l(&[
            "let total = 0;",
            "total += 1;",
            "let account = total;",
        ])),
        edit(
            WORDS,
            "old_string ends inside an identifier",
            l(&["let total = 1;"]),
            "let tot",
            "let sum",
        )
        .refused("inside a longer word"),
        edit(
            WORDS,
            "old_string starts with punctuation inside a line",
            rust_main(),
            "(1)",
            "(2)",
        )
        .applied(rust_main().replace("(1)", "(2)")),
        edit(
            WORDS,
            "a suffix of an identifier",
            l(&["let userName = 1;"]),
            "Name",
            "Id",
        )
        .refused("inside a longer word"),
        // --- omitted or extra lines ---
        edit(
            LINES,
            "a middle line omitted: it is not deleted",
            go_block(),
            s(&["func a() {", "\tx := 1", "\tz := 3", "\treturn", "}"]),
            s(&["func a() {", "\treturn", "}"]),
        )
        .refused("line 3"),
        edit(
            LINES,
            "an interior line drifted (y := 99 quoted, y := 2 in the file)",
            go_block(),
            s(&[
                "func a() {",
                "\tx := 1",
                "\ty := 99",
                "\tz := 3",
                "\treturn",
                "}",
            ]),
            s(&[
                "func a() {",
                "\tx := 1",
                "\ty := 99",
                "\tz := 4",
                "\treturn",
                "}",
            ]),
        )
        .refused("line 3"),
        edit(
            LINES,
            "old_string stitched from two distant places",
            l(&[
                ".a {",
                "  outline-offset: 3px;",
                "}",
                "",
                ".b { color: red; }",
                ".c { color: blue; }",
                "",
                "/* 27. MOBILE */",
                ".d {}",
            ]),
            s(&["  outline-offset: 3px;", "}", "", "/* 27. MOBILE */"]),
            "  outline-offset: 2px;",
        )
        .refused("closest"),
        edit(
            LINES,
            "the first line misremembered; the rest matches another function",
            two_resets(),
            s(&[
                "fn reset_b(state: &mut State) -> bool {",
                "    state.count = 0;",
                "    state.dirty = true;",
                "}",
            ]),
            s(&[
                "fn reset_b(state: &mut State) -> bool {",
                "    state.count = 1;",
                "    state.dirty = true;",
                "}",
            ]),
        )
        .refused("closest"),
        edit(
            LINES,
            "an invented line in the middle",
            l(&["def f():", "    a = 1", "    b = 2"]),
            s(&["def f():", "    a = 1", "    log()", "    b = 2"]),
            s(&["def f():", "    a = 1", "    b = 3"]),
        )
        .refused("closest"),
        edit(
            LINES,
            "an extra leading context line that is not in the file",
            l(&["// header", "fn compute() -> u32 {", "    41", "}"]),
            s(&["use std::fmt;", "fn compute() -> u32 {", "    41", "}"]),
            s(&["use std::fmt;", "fn compute() -> u32 {", "    42", "}"]),
        )
        .refused("closest"),
        edit(
            LINES,
            "an extra trailing context line that is not in the file",
            l(&["fn compute() -> u32 {", "    41", "}", "", "fn other() {}"]),
            s(&["fn compute() -> u32 {", "    41", "}", "fn next() {}"]),
            s(&["fn compute() -> u32 {", "    42", "}", "fn next() {}"]),
        )
        .refused("closest"),
        edit(
            LINES,
            "a context line missing at the edge still matches exactly",
            l(&["a();", "b();", "c();", "d();"]),
            s(&["b();", "c();"]),
            s(&["b();", "C();"]),
        )
        .applied(l(&["a();", "b();", "C();", "d();"])),
        // --- elision ---
        edit(
            ELISION,
            "// ... existing code ... between quoted lines",
            l(&[
                "fn run() {",
                "    setup();",
                "    work();",
                "    teardown();",
                "}",
            ]),
            s(&[
                "fn run() {",
                "    // ... existing code ...",
                "    teardown();",
                "}",
            ]),
            s(&[
                "fn run() {",
                "    // ... existing code ...",
                "    cleanup();",
                "}",
            ]),
        )
        .applied(l(&[
            "fn run() {",
            "    setup();",
            "    work();",
            "    cleanup();",
            "}",
        ])),
        edit(
            ELISION,
            "an elision new_string does not repeat: the lines it stands for are not deleted",
            l(&["fn run() {", "    setup();", "    work();", "    teardown();", "}"]),
            s(&["fn run() {", "    // ... existing code ...", "    teardown();", "}"]),
            s(&["fn run() {", "    cleanup();", "}"]),
        )
        .refused("existing code"),
        edit(
            ELISION,
            "an elision between pieces that are not unique",
            l(&["a();", "b();", "x();", "a();", "b();", "y();"]),
            s(&["a();", "// ...", "y();"]),
            s(&["a();", "// ...", "z();"]),
        )
        .refused("lines 1, 4"),
        edit(
            ELISION,
            "an elision whose pieces come in the wrong order",
            l(&["second();", "middle();", "first();"]),
            s(&["first();", "// ... existing code ...", "second();"]),
            s(&["first();", "// ... existing code ...", "third();"]),
        )
        .refused("not each found once, in this order"),
        edit(
            ELISION,
            "two elisions, each repeated, with whitespace slips in the pieces",
            l(&["class A:", "    def f(self):", "        return 1", "    def g(self):", "        return 2", "    def h(self):", "        return 3"]),
            s(&["class A:", "    # ...", "    def g(self):  ", "        return 2", "    # ...", "        return 3"]),
            s(&["class A:", "    # ...", "    def g(self):", "        return 20", "    # ...", "        return 30"]),
        )
        .applied(l(&["class A:", "    def f(self):", "        return 1", "    def g(self):", "        return 20", "    def h(self):", "        return 30"])),
        edit(
            ELISION,
            "a bare ... line standing for a function body",
            l(&["def f():", "    a = 1", "    b = 2", "    return a + b"]),
            s(&["def f():", "    ...", "    return a + b"]),
            s(&["def f():", "    return 0"]),
        )
        .refused("..."),
        edit(
            ELISION,
            "# rest of the file unchanged",
            l(&["import os", "import sys", "print(os.name)"]),
            s(&["import os", "# rest of the file unchanged"]),
            s(&["import os", "import re", "# rest of the file unchanged"]),
        )
        .applied(l(&["import os", "import re", "import sys", "print(os.name)"])),
        edit(
            ELISION,
            "# rest of the file unchanged, not repeated in new_string",
            l(&["import os", "import sys", "print(os.name)"]),
            s(&["import os", "# rest of the file unchanged"]),
            s(&["import os", "import re"]),
        )
        .refused("rest of the file"),
        // --- line numbers ---
        edit(
            NUMBERS,
            "Claude Code style `  12→` prefixes on old_string",
            rust_main(),
            s(&[
                "     2→    let total = compute(1);",
                "     3→    println!(\"{total}\");",
            ]),
            s(&["    let total = compute(2);", "    println!(\"{total}\");"]),
        )
        .applied(rust_main().replace("compute(1)", "compute(2)")),
        edit(
            NUMBERS,
            "cat -n prefixes (this tool's read) on both strings",
            rust_main(),
            s(&[
                "     2\t    let total = compute(1);",
                "     3\t    println!(\"{total}\");",
            ]),
            s(&[
                "     2\t    let total = compute(3);",
                "     3\t    println!(\"{total}\");",
            ]),
        )
        .applied(rust_main().replace("compute(1)", "compute(3)")),
        edit(
            NUMBERS,
            "numbered new_string with an added line the model did not number",
            rust_main(),
            s(&["     2\t    let total = compute(1);", "     3\t    println!(\"{total}\");"]),
            s(&["     2\t    let total = compute(1);", "    let twice = total * 2;", "     3\t    println!(\"{total}\");"]),
        )
        .applied(rust_main().replace("compute(1);\n", "compute(1);\n    let twice = total * 2;\n")),
        edit(
            NUMBERS,
            "bare `2\\t` prefixes",
            rust_main(),
            s(&[
                "2\t    let total = compute(1);",
                "3\t    println!(\"{total}\");",
            ]),
            s(&["    let total = compute(4);", "    println!(\"{total}\");"]),
        )
        .applied(rust_main().replace("compute(1)", "compute(4)")),
        edit(
            NUMBERS,
            "prefixes that are not consecutive are not read as line numbers",
            rust_main(),
            s(&[
                "2\t    let total = compute(1);",
                "9\t    println!(\"{total}\");",
            ]),
            s(&["    let total = compute(4);", "    println!(\"{total}\");"]),
        )
        .refused("closest"),
        edit(
            NUMBERS,
            "a file whose lines really start with numbers and tabs",
            l(&["1\tapple", "2\tpear", "3\tplum"]),
            s(&["1\tapple", "2\tpear"]),
            s(&["1\tapple", "2\tquince"]),
        )
        .applied(l(&["1\tapple", "2\tquince", "3\tplum"])),
        // --- fences ---
        edit(
            FENCES,
            "old_string and new_string wrapped in a rust fence",
            rust_main(),
            "```rust\n    let total = compute(1);\n```",
            "```rust\n    let total = compute(5);\n```",
        )
        .applied(rust_main().replace("compute(1)", "compute(5)")),
        edit(
            FENCES,
            "only old_string fenced",
            rust_main(),
            "```\n    let total = compute(1);\n```",
            "    let total = compute(6);",
        )
        .applied(rust_main().replace("compute(1)", "compute(6)")),
        // --- escapes ---
        edit(
            ESCAPES,
            "newlines sent as backslash-n",
            rust_main(),
            "    let total = compute(1);\\n    println!(\"{total}\");",
            "    let total = compute(7);\\n    println!(\"{total}\");",
        )
        .applied(rust_main().replace("compute(1)", "compute(7)")),
        edit(
            ESCAPES,
            "a real backslash-n in a string literal matches exactly",
            l(&["println!(\"a\\nb\");"]),
            "\"a\\nb\"",
            "\"a\\tb\"",
        )
        .applied(l(&["println!(\"a\\tb\");"])),
        // --- repeats ---
        edit(
            REPEATS,
            "two identical lines without replace_all",
            l(&["x = 1", "y = 2", "x = 1"]),
            "x = 1",
            "x = 3",
        )
        .refused("lines 1, 3"),
        edit(
            REPEATS,
            "two identical lines with replace_all",
            l(&["x = 1", "y = x", "x = 1"]),
            "x = 1",
            "x = 2",
        )
        .all()
        .applied(l(&["x = 2", "y = x", "x = 2"])),
        edit(
            REPEATS,
            "replace_all with whitespace differences",
            l(&["call(a)", "other", "call(a)"]),
            "call(a)  \n",
            "call(b)\n",
        )
        .all()
        .applied(l(&["call(b)", "other", "call(b)"])),
        edit(
            REPEATS,
            "a bare closing brace",
            rust_main() + &l(&["fn b() {", "}"]),
            "}",
            "}\n",
        )
        .refused("matches 3 places"),
        edit(
            REPEATS,
            "the same block at two depths, quoted at neither",
            l(&["  foo()", "  bar()", "    foo()", "    bar()"]),
            s(&["foo()", "bar()"]),
            "baz()",
        )
        .refused("lines 1, 3"),
        // --- degenerate ---
        edit(
            DEGENERATE,
            "old_string equals new_string",
            rust_main(),
            "compute(1)",
            "compute(1)",
        )
        .refused("nothing would change"),
        edit(
            DEGENERATE,
            "empty old_string on a file with content",
            rust_main(),
            "",
            "fn main() {}\n",
        )
        .refused("already has content"),
        edit(
            DEGENERATE,
            "empty old_string creates a missing file",
            "",
            "",
            "hello\n",
        )
        .missing()
        .applied("hello\n"),
        edit(
            DEGENERATE,
            "empty old_string fills a whitespace-only file",
            "\n\n",
            "",
            "filled\n",
        )
        .applied("filled\n"),
        edit(
            DEGENERATE,
            "old_string of blank lines only",
            l(&["a", "", "", "b"]),
            "  \n \n",
            "x",
        )
        .refused("not found"),
        edit(
            DEGENERATE,
            "old_string from another file entirely",
            l(&["aaaa", "bbbb"]),
            "zzzz qqqq",
            "x",
        )
        .refused("Nothing in the file is similar"),
        // --- stale ---
        edit(
            STALE,
            "the user changed a middle line; the model's old text is not written back",
            l(&[
                "[server]",
                "host = \"0.0.0.0\"",
                "timeout = 45",
                "retries = 3",
                "log = true",
            ]),
            s(&[
                "[server]",
                "host = \"0.0.0.0\"",
                "timeout = 30",
                "retries = 3",
                "log = true",
            ]),
            s(&[
                "[server]",
                "host = \"127.0.0.1\"",
                "timeout = 30",
                "retries = 3",
                "log = true",
            ]),
        )
        .refused("line 3"),
        edit(
            STALE,
            "a misspelt identifier in old_string",
            rust_main(),
            s(&["let totl = compute(1);", "println!(\"{totl}\");"]),
            "x",
        )
        .refused("lines 2-3"),
        edit(
            STALE,
            "a renamed function",
            l(&["fn start() {", "    boot();", "    serve();", "}"]),
            s(&["fn begin() {", "    boot();", "    serve();", "}"]),
            s(&["fn begin() {", "    boot();", "}"]),
        )
        .refused("line 1"),
        // --- while waiting for approval ---
        edit(
            WAITING,
            "lines added above while waiting: applied where the text moved",
            rust_main(),
            "compute(1)",
            "compute(2)",
        )
        .meanwhile(format!("use std::fmt;\n\n{}", rust_main()))
        .applied(format!(
            "use std::fmt;\n\n{}",
            rust_main().replace("compute(1)", "compute(2)")
        )),
        edit(
            WAITING,
            "an unrelated change elsewhere; the matched line is also a substring of another line",
            l(&["x = 1", "xx = 1"]),
            "x = 1  ",
            "x = 2",
        )
        .meanwhile(l(&["x = 1", "xx = 1", "// reviewed"]))
        .applied(l(&["x = 2", "xx = 1", "// reviewed"])),
        edit(
            REPEATS,
            "a tolerant match at the quoted depth and one deeper is ambiguous",
            l(&["go();", "if x {", "    go();", "}"]),
            "go();  ",
            "stop();",
        )
        .refused("lines 1, 3"),
        edit(
            WAITING,
            "a whole-word match, the file changed elsewhere",
            l(&["let account = 0;", "let count = 0;"]),
            "count = 0",
            "count = 5",
        )
        .meanwhile(l(&["let account = 0;", "let count = 0;", "let other = 1;"]))
        .applied(l(&["let account = 0;", "let count = 5;", "let other = 1;"])),
        edit(
            WAITING,
            "a tolerant match, the file changed elsewhere",
            rust_main(),
            s(&["let total = compute(1);", "println!(\"{total}\");"]),
            s(&["let total = compute(1) * 2;", "println!(\"{total}\");"]),
        )
        .meanwhile(format!("// top\n{}", rust_main()))
        .applied(format!(
            "// top\n{}",
            rust_main().replace("compute(1);", "compute(1) * 2;")
        )),
        edit(
            WAITING,
            "the matched line itself changed",
            rust_main(),
            "compute(1)",
            "compute(2)",
        )
        .meanwhile(rust_main().replace("compute(1)", "compute(7)"))
        .refused("changed while the edit waited"),
        edit(
            WAITING,
            "the matched region's spacing changed",
            l(&["a = 1  ", "b = 2"]),
            s(&["a = 1", "b = 2"]),
            s(&["a = 1", "b = 3"]),
        )
        .meanwhile(l(&["a = 1", "b = 2"]))
        .refused("changed while the edit waited"),
        edit(
            WAITING,
            "a second copy appeared",
            rust_main(),
            "compute(1)",
            "compute(2)",
        )
        .meanwhile(format!("{}// compute(1) again\n", rust_main()))
        .refused("lines 2, 5"),
        edit(
            WAITING,
            "replace_all approved for two, three now",
            l(&["x x"]),
            "x",
            "y",
        )
        .all()
        .meanwhile(l(&["x x x"]))
        .refused("approved for 2"),
        edit(
            WAITING,
            "a CRLF file changed elsewhere",
            "a\r\nb\r\nc\r\n",
            "b\n",
            "B\n",
        )
        .meanwhile("a\r\nb\r\nc\r\nd\r\n")
        .applied("a\r\nB\r\nc\r\nd\r\n"),
        edit(
            WAITING,
            "the same text appeared inside a longer word elsewhere",
            l(&["let count = 0;"]),
            "count = 0",
            "count = 1",
        )
        .meanwhile(l(&["let account = 0;", "let count = 0;"]))
        .applied(l(&["let account = 0;", "let count = 1;"])),
        edit(
            WAITING,
            "a folded match, the file changed elsewhere",
            l(&["say(\"hi\")", "next()"]),
            "say(\u{201c}hi\u{201d})",
            "say(\u{201c}bye\u{201d})",
        )
        .meanwhile(l(&["first()", "say(\"hi\")", "next()"]))
        .applied(l(&["first()", "say(\"bye\")", "next()"])),
        edit(
            WAITING,
            "the user changed an elided line while the edit waited: kept, the edit applies",
            l(&["fn run() {", "    setup();", "    work();", "    teardown();", "}"]),
            s(&["fn run() {", "    // ... existing code ...", "    teardown();", "}"]),
            s(&["fn run() {", "    // ... existing code ...", "    cleanup();", "}"]),
        )
        .meanwhile(l(&["fn run() {", "    setup();", "    work_harder();", "    teardown();", "}"]))
        .applied(l(&["fn run() {", "    setup();", "    work_harder();", "    cleanup();", "}"])),
        // --- more quotes ---
        edit(
            QUOTES,
            "straight in one place, curly in another: the model's curly quotes find the straight one",
            l(&["a = \"x\"", "b = \u{201c}x\u{201d}"]),
            "a = \u{201c}x\u{201d}",
            "a = \u{201c}y\u{201d}",
        )
        .applied(l(&["a = \"y\"", "b = \u{201c}x\u{201d}"])),
        edit(
            QUOTES,
            "a folded match in two places is ambiguous",
            l(&["say(\"hi\")", "say(\u{201c}hi\u{201d})"]),
            "say(\u{201e}hi\u{201d})",
            "say(\"yo\")",
        )
        .refused("lines 1, 2"),
        edit(
            QUOTES,
            "replace_all through folded quotes",
            l(&["f(\"a\") + f(\"a\")"]),
            "\u{201c}a\u{201d}",
            "\u{201c}b\u{201d}",
        )
        .all()
        .applied(l(&["f(\"b\") + f(\"b\")"])),
        edit(
            QUOTES,
            "curly quotes from the model in a CRLF file",
            "say(\"hi\")\r\nnext()\r\n",
            s(&["say(\u{201c}hi\u{201d})", "next()"]),
            s(&["say(\u{201c}hi\u{201d})", "then()", "next()"]),
        )
        .applied("say(\"hi\")\r\nthen()\r\nnext()\r\n"),
        edit(
            WORDS,
            "replace_all leaves longer identifiers with underscores alone",
            l(&["count = count_total + count"]),
            "count",
            "n",
        )
        .all()
        .applied(l(&["n = count_total + n"])),
        // --- reported regressions of tolerant matchers ---
        edit(
            INDENT,
            "a whole line quoted too deep keeps the next line's indentation (Gitlawb/openclaude#1561)",
            l(&["if ok:", "  foo()", "  bar()"]),
            "    foo()\n",
            "    baz()\n",
        )
        .applied(l(&["if ok:", "  baz()", "  bar()"])),
        edit(
            WHITESPACE,
            "a tolerant match does not eat the next newline (BaseIntelligence/bounty-challenge#9959)",
            l(&["a  ", "b"]),
            "a\n",
            "c",
        )
        .applied(l(&["c", "b"])),
        edit(
            UNICODE,
            "the rest of the matched line is not rewritten (openclaw/openclaw#116459)",
            l(&["export const RETRY MAX = 3; // \u{518d}\u{8a66}\u{884c}\u{ff08}\u{6700}\u{5927}\u{ff13}\u{56de}\u{ff09}"]),
            "export const RETRY MAX = 3;",
            "export const RETRY_MAX = 5;",
        )
        .applied(l(&["export const RETRY_MAX = 5; // \u{518d}\u{8a66}\u{884c}\u{ff08}\u{6700}\u{5927}\u{ff13}\u{56de}\u{ff09}"])),
        edit(
            STALE,
            "a second edit quoting text the first edit already changed (can1357/oh-my-pi#10454)",
            l(&["async function handleExport() {", "  const rows = await fetchRows();", "  await saveXlsx(rows);", "}"]),
            s(&["async function handleExport() {", "  const rows = fetchRows();", "  saveXlsx(rows);", "}"]),
            s(&["async function handleExport() {", "  const rows = fetchRows();", "  saveCsv(rows);", "}"]),
        )
        .refused("line 2"),
        edit(
            STALE,
            "old_string ends mid-line with a spacing slip",
            l(&["let total =  compute(1);", "done();"]),
            "let total = compute(",
            "let total = compute_all(",
        )
        .refused("closest"),
        // --- unicode ---
        edit(
            UNICODE,
            "non-ASCII text, exact",
            l(&["let s = \"héllo wörld\";", "let t = \"日本語\";"]),
            "\"日本語\"",
            "\"中文\"",
        )
        .applied(l(&["let s = \"héllo wörld\";", "let t = \"中文\";"])),
        edit(
            UNICODE,
            "non-ASCII text with trailing whitespace",
            l(&["título = 'año'  ", "x = 1"]),
            "título = 'año'",
            "título = 'mes'",
        )
        .applied(l(&["título = 'mes'  ", "x = 1"])),
        edit(
            UNICODE,
            "NFD in the file, NFC from the model is not guessed",
            l(&["name = \"cafe\u{301}\""]),
            "name = \"caf\u{e9}\"",
            "name = \"bar\"",
        )
        .refused("closest"),
        // --- deletions ---
        edit(
            DELETION,
            "a whole line with its newline",
            l(&["keep", "drop me", "keep too"]),
            "drop me\n",
            "",
        )
        .applied(l(&["keep", "keep too"])),
        edit(
            DELETION,
            "a line with trailing spaces, deleted with whitespace slack",
            l(&["keep", "drop me  ", "keep too"]),
            "drop me\n",
            "",
        )
        .applied(l(&["keep", "keep too"])),
        edit(
            DELETION,
            "the last line of a file without a final newline",
            "a\nb\nc",
            "c",
            "",
        )
        .applied("a\nb\n"),
        edit(
            DELETION,
            "a fragment inside a line",
            l(&["call(a, b, c)"]),
            ", b",
            "",
        )
        .applied(l(&["call(a, c)"])),
    ]
}

/// What happened to one case.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    AppliedRight,
    WrongPlace(String),
    RefusedWrongly(String),
    RefusedRightly,
}

/// `EDIT_TABLE_VERBOSE=1` prints every result and refusal, to review what the model is told.
fn verbose() -> bool {
    std::env::var_os("EDIT_TABLE_VERBOSE").is_some()
}

async fn run(case: &Case) -> (Verdict, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    std::fs::create_dir_all(&root).unwrap();
    let path = root.join("file.txt");
    if let Some(file) = &case.file {
        std::fs::write(&path, file).unwrap();
    }
    let workspace = Workspace::new(&root).unwrap();
    let tools = ToolRegistry::new(ToolContext::new(workspace, base.join("logs")));
    let arguments = json!({
        "path": "file.txt",
        "old_string": case.old,
        "new_string": case.new,
        "replace_all": case.replace_all,
    });
    let mut before = case.file.clone();
    let result = match tools.prepare("edit", arguments).await {
        Ok(prepared) => {
            if let Some(meanwhile) = &case.meanwhile {
                std::fs::write(&path, meanwhile).unwrap();
                before = Some(meanwhile.clone());
            }
            tools
                .apply(prepared.plan, Cancellation::never())
                .await
                .map(|output| output.text)
        }
        Err(error) => Err(error),
    };
    let now = std::fs::read_to_string(&path).ok();
    if verbose() {
        match &result {
            Ok(text) => println!("--- {} [{}]\napplied: {text}", case.name, case.class),
            Err(error) => println!("--- {} [{}]\nrefused: {error}", case.name, case.class),
        }
    }
    match (&case.expect, result) {
        (Expect::Applied(expected), Ok(_)) if now.as_deref() == Some(expected.as_str()) => {
            (Verdict::AppliedRight, None)
        }
        (_, Ok(_)) => (Verdict::WrongPlace(format!("{now:?}")), None),
        (expect, Err(error)) => {
            let message = error.to_string();
            if now != before {
                return (
                    Verdict::WrongPlace(format!("refused but wrote {now:?}")),
                    None,
                );
            }
            match expect {
                Expect::Applied(_) => (Verdict::RefusedWrongly(message), None),
                Expect::Refused(mention) => {
                    let unhelpful = (!message.contains(mention)).then_some(message);
                    (Verdict::RefusedRightly, unhelpful)
                }
            }
        }
    }
}

#[tokio::test]
async fn the_edit_table() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let (mut right, mut wrong, mut refused_wrongly, mut refused_rightly) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for case in &cases {
        let (verdict, unhelpful) = run(case).await;
        match &verdict {
            Verdict::AppliedRight => right += 1,
            Verdict::WrongPlace(got) => {
                wrong += 1;
                problems.push(format!("WRONG PLACE [{}] {}: {got}", case.class, case.name));
            }
            Verdict::RefusedWrongly(message) => {
                refused_wrongly += 1;
                problems.push(format!(
                    "REFUSED WRONGLY [{}] {}: {message}",
                    case.class, case.name
                ));
            }
            Verdict::RefusedRightly => refused_rightly += 1,
        }
        if let Some(message) = unhelpful {
            let Expect::Refused(mention) = case.expect else {
                unreachable!()
            };
            problems.push(format!(
                "UNHELPFUL REFUSAL [{}] {}: does not mention {mention:?}: {message}",
                case.class, case.name
            ));
        }
    }
    println!(
        "edit table: {} cases; applied right {right}, wrong place {wrong}, refused wrongly {refused_wrongly}, refused rightly {refused_rightly}",
        cases.len()
    );
    for problem in &problems {
        println!("{problem}");
    }
    assert_eq!(wrong, 0, "wrong-place edits:\n{}", problems.join("\n"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
