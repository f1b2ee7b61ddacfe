use pretty_assertions::assert_eq;

use super::*;

#[test]
fn search_is_off_until_a_backend_is_named_and_keyed() {
    let none = |_: &str| None;
    assert!(
        Backend::from_config(SearchBackend::Off, None, none)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        Backend::from_config(SearchBackend::Brave, None, none).unwrap_err(),
        BackendError::MissingKey {
            backend: "brave",
            variable: "BRAVE_API_KEY"
        }
    );
    assert_eq!(
        Backend::from_config(SearchBackend::Tavily, None, |_: &str| Some("  ".to_owned()))
            .unwrap_err(),
        BackendError::MissingKey {
            backend: "tavily",
            variable: "TAVILY_API_KEY"
        }
    );
    let brave = Backend::from_config(SearchBackend::Brave, None, |name: &str| {
        (name == "BRAVE_API_KEY").then(|| "brave-secret".to_owned())
    })
    .unwrap()
    .unwrap();
    match &brave {
        Backend::Brave { base, .. } => assert_eq!(base.as_str(), "https://api.search.brave.com/"),
        other => panic!("{other:?}"),
    }
    assert!(
        !format!("{brave:?}").contains("brave-secret"),
        "the key never shows in Debug"
    );
    let searxng = Backend::from_config(
        SearchBackend::Searxng,
        Some("http://127.0.0.1:8888/searx"),
        none,
    )
    .unwrap()
    .unwrap();
    match searxng {
        Backend::Searxng { base } => {
            assert_eq!(
                join(&base, "search").as_str(),
                "http://127.0.0.1:8888/searx/search"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn snippets_lose_markup_and_long_ones_are_cut() {
    assert_eq!(
        clean("The <strong>Rust</strong>  &amp; <em>Cargo</em>\n book &quot;2024&quot;"),
        "The Rust & Cargo book \"2024\""
    );
    assert_eq!(cut("abcdef", 3), "abc…");
    assert_eq!(cut("abc", 3), "abc");
    assert_eq!(cut("ééééé", 2), "éé…");
}

#[test]
fn results_render_as_a_numbered_markdown_list() {
    let hits = vec![
        Hit {
            title: "The [Rust] Book".to_owned(),
            url: "https://doc.rust-lang.org/book/".to_owned(),
            snippet: "Learn Rust.".to_owned(),
        },
        Hit {
            title: String::new(),
            url: "https://example.org/".to_owned(),
            snippet: String::new(),
        },
    ];
    assert_eq!(
        render("rust book", "searxng", &hits),
        "Results for \"rust book\" (searxng):\n\n1. [The \\[Rust\\] Book](https://doc.rust-lang.org/book/)\n   Learn Rust.\n\n2. [https://example.org/](https://example.org/)\n"
    );
    assert_eq!(
        render("nothing", "brave", &[]),
        "No results for \"nothing\" (brave)."
    );
}
