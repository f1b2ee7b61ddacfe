//! HTML → markdown for the model, by htmd (turndown's rules on html5ever's parser), with what a
//! reader does not need taken out: scripts, styles, templates, forms and their controls,
//! embedded frames and media, inline SVG — and, when the page marks its main content (`<main>`
//! or `role="main"`), everything around it (navigation, sidebars, footers). Links and images are made absolute against the page's
//! URL so the model can fetch them next; `javascript:` links keep only their text and `data:`
//! images their alt text. The `<title>` is kept apart, and runs of blank lines are closed up.

use std::sync::{Arc, Mutex};

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BrStyle, BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown};
use url::Url;

/// Elements dropped with everything inside them.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "frame", "object",
    "embed", "video", "audio", "form", "button", "input", "select", "textarea", "dialog", "link",
    "meta",
];

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Converted {
    /// The `<title>`, whitespace collapsed.
    pub(crate) title: Option<String>,
    /// The body as markdown.
    pub(crate) markdown: String,
}

/// Converts `html`, fetched from `base`.
pub(crate) fn to_markdown(html: &str, base: &Url) -> Converted {
    let walk: Arc<Mutex<Walk>> = Arc::default();
    // Compact lists (`- item`, `1. item`); a line break as `\` so trimming trailing spaces
    // cannot lose it.
    let options = Options {
        bullet_list_marker: BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        br_style: BrStyle::Backslash,
        ..Options::default()
    };
    let (title, links, code, mains, divs, body) = (
        Arc::clone(&walk),
        Arc::clone(&walk),
        Arc::clone(&walk),
        Arc::clone(&walk),
        Arc::clone(&walk),
        Arc::clone(&walk),
    );
    let (link_base, image_base) = (base.clone(), base.clone());
    let converter = HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(DROPPED.to_vec())
        .add_handler(
            vec!["title"],
            move |handlers: &dyn Handlers, element: Element| on_title(&title, handlers, &element),
        )
        .add_handler(
            vec!["a"],
            move |handlers: &dyn Handlers, element: Element| {
                on_link(&links, &link_base, handlers, &element)
            },
        )
        .add_handler(vec!["img"], move |_: &dyn Handlers, element: Element| {
            Some(image(&image_base, &element).into())
        })
        .add_handler(
            vec!["pre", "code"],
            move |handlers: &dyn Handlers, element: Element| in_code(&code, handlers, element),
        )
        .add_handler(
            vec!["main"],
            move |handlers: &dyn Handlers, element: Element| {
                Some(main_text(&mains, handlers, &element).into())
            },
        )
        .add_handler(
            vec!["div"],
            move |handlers: &dyn Handlers, element: Element| {
                if attribute(&element, "role") == Some("main") {
                    Some(main_text(&divs, handlers, &element).into())
                } else {
                    handlers.fallback(element)
                }
            },
        )
        .add_handler(
            vec!["body"],
            move |handlers: &dyn Handlers, element: Element| on_body(&body, handlers, &element),
        )
        .build();
    // htmd reads from memory; its only error is an I/O error of that read, which cannot happen.
    let markdown = converter.convert(html).unwrap_or_default();
    let title = walk.lock().ok().and_then(|walk| walk.title.clone());
    Converted {
        title: title.filter(|title| !title.is_empty()),
        markdown: tidy(&markdown),
    }
}

/// What the handlers learn while the document is walked.
#[derive(Debug, Default)]
struct Walk {
    /// The first `<title>`.
    title: Option<String>,
    /// `pre`/`code` elements being walked now: inside them a link is its text (markdown in a
    /// code span or block would be shown literally).
    code_depth: usize,
    /// `<main>` (or `role="main"`) elements being walked now; a main inside a main is part of
    /// the outer one.
    main_depth: usize,
    /// Each outermost main's markdown: when there is one, the body is that and nothing else
    /// (no navigation, sidebars or footers around it).
    mains: Vec<String>,
}

fn on_title(
    walk: &Mutex<Walk>,
    handlers: &dyn Handlers,
    element: &Element,
) -> Option<HandlerResult> {
    let text = handlers.walk_children(element.node).content;
    if let Ok(mut walk) = walk.lock()
        && walk.title.is_none()
    {
        walk.title = Some(unescape(&collapse(&text)));
    }
    None
}

fn on_link(
    walk: &Mutex<Walk>,
    base: &Url,
    handlers: &dyn Handlers,
    element: &Element,
) -> Option<HandlerResult> {
    let text = handlers.walk_children(element.node).content;
    let in_code = walk.lock().map(|walk| walk.code_depth > 0).unwrap_or(false);
    if in_code {
        return Some(text.into());
    }
    Some(link(base, element, &text).into())
}

fn in_code(walk: &Mutex<Walk>, handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    if let Ok(mut walk) = walk.lock() {
        walk.code_depth += 1;
    }
    let converted = handlers.fallback(element);
    if let Ok(mut walk) = walk.lock() {
        walk.code_depth -= 1;
    }
    converted
}

fn main_text(walk: &Mutex<Walk>, handlers: &dyn Handlers, element: &Element) -> String {
    if let Ok(mut walk) = walk.lock() {
        walk.main_depth += 1;
    }
    let text = handlers.walk_children(element.node).content;
    if let Ok(mut walk) = walk.lock() {
        walk.main_depth -= 1;
        if walk.main_depth == 0 {
            walk.mains.push(text.clone());
        }
    }
    format!("\n\n{text}\n\n")
}

fn on_body(
    walk: &Mutex<Walk>,
    handlers: &dyn Handlers,
    element: &Element,
) -> Option<HandlerResult> {
    let everything = handlers.walk_children(element.node).content;
    let mains = walk
        .lock()
        .map(|mut walk| std::mem::take(&mut walk.mains))
        .unwrap_or_default();
    if mains.iter().any(|main| !main.trim().is_empty()) {
        Some(mains.join("\n\n").into())
    } else {
        Some(everything.into())
    }
}

fn attribute<'a>(element: &'a Element, name: &str) -> Option<&'a str> {
    element
        .attrs
        .iter()
        .find(|attribute| &*attribute.name.local == name)
        .map(|attribute| attribute.value.trim())
        .filter(|value| !value.is_empty())
}

/// `[text](absolute URL)`; the text alone when the target is not a web address. Text spread
/// over blocks is put on one line (a markdown link cannot span a blank line).
fn link(base: &Url, element: &Element, content: &str) -> String {
    let mut text = collapse(content);
    if text.is_empty() {
        text = attribute(element, "aria-label")
            .map(collapse)
            .unwrap_or_default();
    }
    match attribute(element, "href").and_then(|href| absolute(base, href)) {
        Some(target) if !text.is_empty() => format!("[{text}]({target})"),
        _ => text,
    }
}

/// `![alt](absolute URL)`; the alt text alone for an inline (`data:`) image.
fn image(base: &Url, element: &Element) -> String {
    let alt = attribute(element, "alt").map(collapse).unwrap_or_default();
    let alt = alt.replace(['[', ']'], "");
    match attribute(element, "src").and_then(|src| absolute(base, src)) {
        Some(source) => format!("![{alt}]({source})"),
        None => alt,
    }
}

/// An http(s) URL (or a same-page anchor) with spaces and parentheses escaped for markdown.
fn absolute(base: &Url, reference: &str) -> Option<String> {
    if let Some(fragment) = reference.strip_prefix('#') {
        let mut url = base.clone();
        url.set_fragment(Some(fragment));
        return Some(escape_target(url.as_str()));
    }
    let url = base.join(reference).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| escape_target(url.as_str()))
}

fn escape_target(target: &str) -> String {
    target
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// Markdown escapes off (`C\+\+` → `C++`): the title is shown as plain text.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(next) if c == '\\' && next.is_ascii_punctuation() => {}
            _ => out.push(c),
        }
    }
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trailing spaces off every line, empty list items dropped, never more than one blank line
/// in a row (outside code fences, which keep their lines as they are).
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    let mut in_fence = false;
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```");
        if in_fence && !fence {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if fence {
            in_fence = !in_fence;
        }
        let line = line.trim_end();
        if matches!(line.trim_start(), "-" | "*" | "+") {
            // A list item with nothing in it (an icon-only link): nothing to read.
            continue;
        }
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests;
