//! A response body as text for the model: the content type decides whether it is read at all
//! (pages, markdown, plain text, JSON, XML — never images, archives or PDFs), the charset (from
//! the header, a BOM or the page's `<meta>`) decides how bytes become text, and HTML becomes
//! markdown.

use encoding_rs::Encoding;
use url::Url;

use crate::html;

/// What kind of text a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// HTML, converted to markdown.
    Html,
    /// Any other text, as it came.
    Text,
}

/// A page read as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// How it was read.
    pub kind: PageKind,
    /// The media type, lower case, without parameters (`text/html`); sniffed when absent.
    pub media_type: String,
    /// The `<title>`, for HTML.
    pub title: Option<String>,
    /// Markdown for HTML, the text itself otherwise.
    pub text: String,
}

/// A body that is not text, with its content type (as sent, else sniffed).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not text")]
pub(crate) struct NotText(pub(crate) String);

/// Reads `body` as text, or says it is not text.
pub(crate) fn read(url: &Url, content_type: Option<&str>, body: &[u8]) -> Result<Page, NotText> {
    let (media_type, charset) = match content_type {
        Some(value) => parse_content_type(value),
        None => (sniff(body).to_owned(), None),
    };
    let kind = match media_type.as_str() {
        "text/html" | "application/xhtml+xml" => PageKind::Html,
        other if is_text(other) => PageKind::Text,
        // Servers often mislabel text as a download; take it when it is plainly text.
        "application/octet-stream" | "" if sniff(body) != "application/octet-stream" => {
            if sniff(body) == "text/html" {
                PageKind::Html
            } else {
                PageKind::Text
            }
        }
        _ => {
            return Err(NotText(
                content_type.unwrap_or(media_type.as_str()).to_owned(),
            ));
        }
    };
    let meta = match kind {
        PageKind::Html => meta_charset(body),
        PageKind::Text => None,
    };
    let encoding = charset
        .or(meta)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    Ok(match kind {
        PageKind::Html => {
            let converted = html::to_markdown(&text, url);
            Page {
                kind,
                media_type,
                title: converted.title,
                text: converted.markdown,
            }
        }
        PageKind::Text => Page {
            kind,
            media_type,
            title: None,
            text: text.into_owned(),
        },
    })
}

/// `text/HTML; Charset="utf-8"` → (`text/html`, `Some("utf-8")`).
fn parse_content_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let media_type = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts.find_map(|part| {
        let (name, value) = part.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_owned())
    });
    (media_type, charset)
}

fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || matches!(
            media_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        )
}

/// A guess for a body without a usable type: HTML when it opens like a page, text when it is
/// valid UTF-8 without control bytes, a download otherwise.
fn sniff(body: &[u8]) -> &'static str {
    let start = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") || start.contains("<body")
    {
        return "text/html";
    }
    let sample = &body[..body.len().min(8192)];
    let text = match std::str::from_utf8(sample) {
        Ok(text) => text,
        // A multi-byte character cut by the sample's end is still text.
        Err(error) if error.error_len().is_none() => {
            std::str::from_utf8(&sample[..error.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return "application/octet-stream",
    };
    let controls = text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}'));
    if controls {
        "application/octet-stream"
    } else {
        "text/plain"
    }
}

/// The charset a page declares in its first kilobyte (`<meta charset=…>` or the
/// `http-equiv` form).
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let label: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!label.is_empty()).then_some(label)
}

#[cfg(test)]
mod tests;
