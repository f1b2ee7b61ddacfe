use pretty_assertions::assert_eq;
use url::Url;

use super::*;

fn url() -> Url {
    Url::parse("https://example.com/").unwrap()
}

#[test]
fn html_becomes_markdown_and_text_stays_text() {
    let page = read(
        &url(),
        Some("text/html; charset=utf-8"),
        b"<title>T</title><h2>Hi</h2>",
    )
    .unwrap();
    assert_eq!(page.kind, PageKind::Html);
    assert_eq!(page.title.as_deref(), Some("T"));
    assert_eq!(page.text, "## Hi");
    let page = read(&url(), Some("application/json"), b"{\"a\": 1}").unwrap();
    assert_eq!(page.kind, PageKind::Text);
    assert_eq!(page.media_type, "application/json");
    assert_eq!(page.text, "{\"a\": 1}");
    let page = read(&url(), Some("TEXT/Markdown"), b"# Title\n").unwrap();
    assert_eq!(page.text, "# Title\n");
}

#[test]
fn binaries_are_refused_with_their_type() {
    for content_type in [
        "image/png",
        "application/pdf",
        "application/zip",
        "video/mp4",
    ] {
        assert_eq!(
            read(&url(), Some(content_type), b"\x89PNG\r\n\x1a\n\0\0")
                .unwrap_err()
                .0,
            content_type
        );
    }
    assert_eq!(
        read(&url(), None, b"\x00\x01\x02binary").unwrap_err().0,
        "application/octet-stream"
    );
    assert_eq!(
        read(
            &url(),
            Some("application/octet-stream"),
            b"\x7fELF\x02\x01\x01\0"
        )
        .unwrap_err()
        .0,
        "application/octet-stream"
    );
}

#[test]
fn a_missing_or_generic_type_is_sniffed() {
    let page = read(&url(), None, b"<!DOCTYPE html><p>hello</p>").unwrap();
    assert_eq!(page.kind, PageKind::Html);
    assert_eq!(page.text, "hello");
    let page = read(&url(), Some("application/octet-stream"), b"plain words\n").unwrap();
    assert_eq!(page.kind, PageKind::Text);
}

#[test]
fn the_charset_comes_from_the_header_the_bom_or_the_page() {
    // "café" in ISO-8859-1.
    let latin1 = b"caf\xe9";
    let page = read(&url(), Some("text/plain; charset=\"ISO-8859-1\""), latin1).unwrap();
    assert_eq!(page.text, "café");
    let page = read(&url(), Some("text/plain"), b"\xef\xbb\xbfcaf\xc3\xa9").unwrap();
    assert_eq!(page.text, "café");
    let html = b"<html><head><meta charset=\"windows-1252\"></head><body><p>caf\xe9 \x93quoted\x94</p></body></html>";
    let page = read(&url(), Some("text/html"), html).unwrap();
    assert_eq!(page.text, "café \u{201c}quoted\u{201d}");
    let html = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"><p>caf\xe9</p>";
    assert_eq!(read(&url(), Some("text/html"), html).unwrap().text, "café");
}
