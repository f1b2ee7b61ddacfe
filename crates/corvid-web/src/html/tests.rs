use pretty_assertions::assert_eq;
use url::Url;

use super::*;

fn convert(html: &str) -> Converted {
    to_markdown(
        html,
        &Url::parse("https://docs.example.com/guide/start.html").unwrap(),
    )
}

#[test]
fn a_page_keeps_headings_links_lists_and_code_and_drops_scripts_and_styles() {
    let converted = convert(
        r##"<!doctype html>
<html><head><title>  Getting
   started </title>
<style>body { color: red }</style>
<script>var secret = "do not show";</script>
</head>
<body>
<h1>Getting started</h1>
<p>Read the <a href="../api/index.html">API reference</a> or <a href="https://other.example/x">elsewhere</a>.</p>
<ul><li>one</li><li>two</li></ul>
<ol><li>first</li><li>second</li></ol>
<pre><code class="language-rust">fn main() {
    println!("hi");
}
</code></pre>
<p>Inline <code>cargo run</code>.</p>
<form><input name="q"><button>Search</button></form>
<noscript>enable JavaScript</noscript>
<p><a href="javascript:alert(1)">click</a> <a href="#install">Install</a></p>
<p><img src="/img/logo.png" alt="Logo"> <img src="data:image/png;base64,AAAA" alt="dot"></p>
</body></html>"##,
    );
    assert_eq!(converted.title.as_deref(), Some("Getting started"));
    let markdown = &converted.markdown;
    for expected in [
        "# Getting started",
        "[API reference](https://docs.example.com/api/index.html)",
        "[elsewhere](https://other.example/x)",
        "- one\n- two",
        "1. first",
        "2. second",
        "```",
        "fn main() {\n    println!(\"hi\");\n}",
        "`cargo run`",
        "[Install](https://docs.example.com/guide/start.html#install)",
        "![Logo](https://docs.example.com/img/logo.png)",
        "dot",
        "click",
    ] {
        assert!(
            markdown.contains(expected),
            "{expected:?} missing from:\n{markdown}"
        );
    }
    for absent in [
        "secret",
        "color: red",
        "enable JavaScript",
        "Search",
        "javascript:",
        "data:image",
        "\n\n\n",
    ] {
        assert!(!markdown.contains(absent), "{absent:?} in:\n{markdown}");
    }
    assert!(
        !markdown.contains("Getting\n"),
        "the title is not repeated as text:\n{markdown}"
    );
}

#[test]
fn blank_lines_close_up_outside_code_only() {
    assert_eq!(tidy("a  \n\n\n\nb\n"), "a\n\nb");
    assert_eq!(tidy("```\nx\n\n\n\ny\n```"), "```\nx\n\n\n\ny\n```");
    assert_eq!(tidy("\n\nstart"), "start");
    // Icon-only navigation leaves bullets with nothing after them.
    assert_eq!(tidy("-\n- \n-\n\ntext\n- item"), "text\n- item");
}

#[test]
fn link_targets_are_escaped_for_markdown() {
    let converted = convert(r#"<a href="/wiki/Rust_(language) page">Rust</a>"#);
    assert_eq!(
        converted.markdown,
        "[Rust](https://docs.example.com/wiki/Rust_%28language%29%20page)"
    );
}

#[test]
fn a_page_with_a_main_element_is_only_its_main_content() {
    let converted = convert(
        r#"<html><body>
<nav><ul><li><a href="/a">Chapter A</a></li><li><a href="/b">Chapter B</a></li></ul></nav>
<main><h1>Vec</h1><p>A growable array.</p><main><p>nested part</p></main></main>
<footer>© Someone</footer>
</body></html>"#,
    );
    assert_eq!(
        converted.markdown,
        "# Vec\n\nA growable array.\n\nnested part"
    );
    let converted = convert(
        r#"<body><div class="sidebar">Menu</div><div role="main"><h2>Article</h2></div></body>"#,
    );
    assert_eq!(converted.markdown, "## Article");
    // Without one, the whole body.
    let converted = convert("<body><nav>Menu</nav><div><p>Text</p></div></body>");
    assert_eq!(converted.markdown, "Menu\n\nText");
}

#[test]
fn links_inside_code_are_their_text() {
    let converted = convert(
        r#"<pre><code>pub struct Vec&lt;T, A = <a href="struct.Global.html">Global</a>&gt;</code></pre><p>See <code><a href="x.html">Vec::new</a></code> and <a href="y.html"><code>push</code></a>.</p>"#,
    );
    assert_eq!(
        converted.markdown,
        "```\npub struct Vec<T, A = Global>\n```\n\nSee `Vec::new` and [`push`](https://docs.example.com/guide/y.html)."
    );
}
