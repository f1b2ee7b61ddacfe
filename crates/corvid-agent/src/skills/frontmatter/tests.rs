use pretty_assertions::assert_eq;

use super::*;

fn text(value: &str) -> Value {
    Value::Text(value.to_owned())
}

/// The (key, value) pairs of a frontmatter, or the error's text.
fn fields(source: &str) -> Result<Vec<(String, Value)>, String> {
    parse(source)
        .map(|document| {
            document
                .entries
                .into_iter()
                .map(|entry| (entry.key, entry.value))
                .collect()
        })
        .map_err(|error| error.to_string())
}

fn one(value_lines: &str) -> Result<Value, String> {
    let source = format!("---\nkey: {value_lines}\n---\n");
    fields(&source).map(|mut entries| entries.remove(0).1)
}

#[test]
fn splits_frontmatter_and_body() {
    let document = parse("\u{feff}---\r\nname: x\r\n---\r\n# Body\n---\nmore\n").unwrap();

    assert_eq!(
        document.entries,
        vec![Entry {
            key: "name".to_owned(),
            value: text("x"),
            line: 2
        }]
    );
    assert_eq!(document.body, "# Body\n---\nmore\n");
}

#[test]
fn plain_values() {
    assert_eq!(one("simple text"), Ok(text("simple text")));
    assert_eq!(one("text # a comment"), Ok(text("text")));
    assert_eq!(
        one("a#b and http://x.y/z"),
        Ok(text("a#b and http://x.y/z"))
    );
    assert_eq!(
        one("first\n  second\n\n  third"),
        Ok(text("first second\nthird"))
    );
    assert_eq!(one(""), Ok(text("")));
}

#[test]
fn quoted_values() {
    assert_eq!(
        one("'it''s: here # not a comment'"),
        Ok(text("it's: here # not a comment"))
    );
    assert_eq!(
        one(r#""tab\there \"q\" \\ \u00e9" # comment"#),
        Ok(text("tab\there \"q\" \\ é"))
    );
    assert_eq!(one("''"), Ok(text("")));
}

#[test]
fn block_values() {
    assert_eq!(
        one("|\n  line one\n    indented\n\n  line three"),
        Ok(text("line one\n  indented\n\nline three\n"))
    );
    assert_eq!(one("|-\n  a\n  b\n\n"), Ok(text("a\nb")));
    assert_eq!(
        one(">\n  folded\n  together\n\n  new paragraph"),
        Ok(text("folded together\nnew paragraph\n"))
    );
    assert_eq!(one(">- # comment\n  x\n  y"), Ok(text("x y")));
    assert_eq!(
        one("|2\n    two more\n  base"),
        Ok(text("  two more\nbase\n"))
    );
    assert_eq!(one("|"), Ok(text("")));
}

#[test]
fn nested_values_are_accepted_but_not_read() {
    assert_eq!(one("\n  a: 1\n  b:\n    - x"), Ok(Value::Nested));
    assert_eq!(one("[a, b]"), Ok(Value::Nested));
    assert_eq!(one("{a: 1}"), Ok(Value::Nested));
}

#[test]
fn refusals_say_why() {
    let cases = [
        (
            "",
            "it does not start with a `---` line opening the YAML frontmatter",
        ),
        (
            "name: x\n",
            "it does not start with a `---` line opening the YAML frontmatter",
        ),
        (
            "---\nname: x\n",
            "the frontmatter opened on line 1 is never closed by a `---` line",
        ),
        (
            "---",
            "the frontmatter opened on line 1 is never closed by a `---` line",
        ),
        (
            "---\nname x\n---\n",
            "line 2: expected `key: value`, found `name x`",
        ),
        (
            "---\n- item\n---\n",
            "line 2: expected `key: value`, found `- item`",
        ),
        (
            "---\nmy key: x\n---\n",
            "line 2: `my key` is not a plain key (letters, digits, `-` and `_`); expected `key: value`",
        ),
        ("---\nname:x\n---\n", "line 2: put a space after `name:`"),
        (
            "---\nname: a\nname: b\n---\n",
            "line 3: `name` appears twice",
        ),
        (
            "---\n  name: x\n---\n",
            "line 2: an indented line must continue the value of the key above it",
        ),
        (
            "---\n\tname: x\n---\n",
            "line 2: tabs cannot indent YAML; use spaces",
        ),
        (
            "---\nd: |\n\tx\n---\n",
            "line 3: tabs cannot indent YAML; use spaces",
        ),
        (
            "---\nd: 'open\n---\n",
            "line 2: the single-quoted value is not closed on this line",
        ),
        (
            "---\nd: \"open\n---\n",
            "line 2: the double-quoted value is not closed on this line",
        ),
        (
            "---\nd: \"a\" b\n---\n",
            "line 2: unexpected `b` after the closing quote",
        ),
        (
            "---\nd: 'a'\n  more\n---\n",
            "line 3: unexpected indented line after a quoted value",
        ),
        (
            "---\nd: \"\\q\"\n---\n",
            "line 2: `\\q` is not a supported escape",
        ),
        (
            "---\nd: &anchor x\n---\n",
            "line 2: YAML anchors, aliases and tags (`&`) are not supported; quote the value",
        ),
        (
            "---\nd: *alias\n---\n",
            "line 2: YAML anchors, aliases and tags (`*`) are not supported; quote the value",
        ),
        (
            "---\nd: !!str x\n---\n",
            "line 2: YAML anchors, aliases and tags (`!`) are not supported; quote the value",
        ),
        (
            "---\nd: `code`\n---\n",
            "line 2: a plain value cannot start with '`'; quote the value",
        ),
        (
            "---\nd: |x\n  a\n---\n",
            "line 2: `|x` is not a block scalar header (use `|`, `|-`, `>` or `>-`, with the text on the indented lines below)",
        ),
        (
            "---\nd: |\n    a\n  b\n---\n",
            "line 4: this line is indented less than the block's first line",
        ),
    ];
    for (source, reason) in cases {
        assert_eq!(fields(source), Err(reason.to_owned()), "{source:?}");
    }
}
