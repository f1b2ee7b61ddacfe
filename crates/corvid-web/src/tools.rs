//! The two tools as the model sees them: names, descriptions and argument schemas, the checked
//! call, the one-line proposal the approval gate shows, and the text result (capped, with a note
//! saying how to read on).

use std::sync::Arc;

use corvid_config::{Loaded, WebConfig};
use corvid_tools::{Cancellation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::fetch::{Fetched, Fetcher};
use crate::net::Network;
use crate::page::PageKind;
use crate::search::{self, Backend, Searcher};

/// `web_fetch`'s name.
pub const FETCH: &str = "web_fetch";
/// `web_search`'s name.
pub const SEARCH: &str = "web_search";

/// The largest `count` a search may ask for.
const MAX_COUNT: usize = 20;
/// How much of an error page goes back with the status.
const ERROR_PAGE_BYTES: usize = 2 * 1024;

/// A tool on offer: its name, what the model reads about it, its arguments' schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    /// The name the model calls.
    pub name: &'static str,
    /// What it does.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// A checked call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebCall {
    /// Fetch `url`, returning its text from `offset` on.
    Fetch {
        /// As the model gave it.
        url: String,
        /// A byte offset into the page's text.
        offset: usize,
    },
    /// Search for `query`.
    Search {
        /// What to look for.
        query: String,
        /// How many results.
        count: usize,
    },
}

impl WebCall {
    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        match self {
            Self::Fetch { .. } => FETCH,
            Self::Search { .. } => SEARCH,
        }
    }

    /// One line for the approval prompt and the transcript.
    pub fn summary(&self) -> String {
        match self {
            Self::Fetch { url, offset: 0 } => format!("Fetch {url}"),
            Self::Fetch { url, offset } => format!("Fetch {url} (from byte {offset})"),
            Self::Search { query, .. } => format!("Search the web for \"{query}\""),
        }
    }
}

/// `web_fetch` and `web_search`, as configured.
#[derive(Debug)]
pub struct WebTools {
    fetcher: Option<Fetcher>,
    searcher: Option<Searcher>,
    max_text_bytes: usize,
    search_results: usize,
}

impl WebTools {
    /// The tools `[web]` turns on: `web_fetch` unless `fetch = false`, `web_search` when a
    /// backend is given (see [`Backend::from_config`]).
    pub fn new(web: &WebConfig, search: Option<Backend>, network: Arc<dyn Network>) -> Self {
        Self {
            fetcher: web.fetch.then(|| Fetcher::new(web, Arc::clone(&network))),
            searcher: search.map(|backend| Searcher::new(backend, network, web.timeout)),
            max_text_bytes: web.max_text_bytes,
            search_results: web.search_results,
        }
    }

    /// The tools as `config.toml` and the keys set them, over the system's network. A backend
    /// that cannot be used (its key is not set) leaves `web_search` off; the notice says what
    /// to set, for the user (never the key's value).
    pub fn configured(loaded: &Loaded) -> (Self, Vec<String>) {
        let web = &loaded.config.web;
        let mut notices = Vec::new();
        let backend = match Backend::from_config(web.search, web.search_url.as_deref(), |name| {
            loaded.secret(name)
        }) {
            Ok(backend) => backend,
            Err(error) => {
                notices.push(error.to_string());
                None
            }
        };
        let network: Arc<dyn Network> = Arc::new(crate::net::SystemNetwork);
        (Self::new(web, backend, network), notices)
    }

    /// The tools on offer; none when both are off.
    pub fn offered(&self) -> Vec<Offered> {
        let mut offered = Vec::new();
        if self.fetcher.is_some() {
            offered.push(Offered {
                name: FETCH,
                description: format!(
                    "Fetch a web page (http:// or https://) and return it as markdown: headings, links, lists, tables and code are kept; scripts, styles and forms are dropped; links are made absolute. Plain text, markdown, JSON and XML come back as they are; images, PDFs and other binary files are refused. Only public internet addresses can be reached (not localhost or private networks, unless the user allowed them). At most {} KB of text is returned per call; a longer page ends with a note giving the `offset` to read on from. Use it for documentation, issues, release notes and pages the user or a search result pointed to.",
                    self.max_text_bytes / 1024
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "url": {
                            "type": "string",
                            "description": "The absolute http:// or https:// URL to fetch."
                        },
                        "offset": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "Where to start in the page's text, in bytes (from the note at the end of a cut page). Default 0."
                        }
                    },
                    "required": ["url"],
                    "additionalProperties": false
                }),
            });
        }
        if let Some(searcher) = &self.searcher {
            offered.push(Offered {
                name: SEARCH,
                description: format!(
                    "Search the web (through {}) and return the top results as a markdown list: title, URL and a snippet each. Read a promising result with `web_fetch`. Write queries as you would in a search engine; add a year or a version for recent topics.",
                    searcher.backend()
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "What to search for."
                        },
                        "count": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_COUNT,
                            "description": format!("How many results (default {}).", self.search_results)
                        }
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
            });
        }
        offered
    }

    /// Whether `name` is one of the tools on offer.
    pub fn offers(&self, name: &str) -> bool {
        match name {
            FETCH => self.fetcher.is_some(),
            SEARCH => self.searcher.is_some(),
            _ => false,
        }
    }

    /// Checks a call's arguments. The error is for the model.
    pub fn check(&self, name: &str, arguments: &Value) -> Result<WebCall, WebCallError> {
        match name {
            FETCH if self.fetcher.is_some() => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Arguments {
                    url: String,
                    #[serde(default)]
                    offset: usize,
                }
                let arguments: Arguments = serde_json::from_value(arguments.clone())
                    .map_err(|error| WebCallError::Arguments { tool: FETCH, error })?;
                let url = arguments.url.trim().to_owned();
                if url.is_empty() {
                    return Err(WebCallError::Empty {
                        tool: FETCH,
                        field: "url",
                    });
                }
                Ok(WebCall::Fetch {
                    url,
                    offset: arguments.offset,
                })
            }
            SEARCH if self.searcher.is_some() => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Arguments {
                    query: String,
                    count: Option<usize>,
                }
                let arguments: Arguments =
                    serde_json::from_value(arguments.clone()).map_err(|error| {
                        WebCallError::Arguments {
                            tool: SEARCH,
                            error,
                        }
                    })?;
                let query = arguments.query.trim().to_owned();
                if query.is_empty() {
                    return Err(WebCallError::Empty {
                        tool: SEARCH,
                        field: "query",
                    });
                }
                let count = arguments.count.unwrap_or(self.search_results);
                if !(1..=MAX_COUNT).contains(&count) {
                    return Err(WebCallError::Count);
                }
                Ok(WebCall::Search { query, count })
            }
            other => Err(WebCallError::NotOffered(other.to_owned())),
        }
    }

    /// Runs a checked call; cancelling stops it at once.
    pub async fn run(&self, call: &WebCall, mut cancel: Cancellation) -> ToolOutput {
        tokio::select! {
            output = self.run_uncancelled(call) => output,
            () = cancel.cancelled() => failure(format!("{} was cancelled", call.tool())),
        }
    }

    async fn run_uncancelled(&self, call: &WebCall) -> ToolOutput {
        match (call, &self.fetcher, &self.searcher) {
            (WebCall::Fetch { url, offset }, Some(fetcher), _) => match fetcher.fetch(url).await {
                Ok(fetched) => render_page(&fetched, *offset, self.max_text_bytes),
                Err(error) => failure(format!("{FETCH} {url}: {error}")),
            },
            (WebCall::Search { query, count }, _, Some(searcher)) => {
                match searcher.search(query, *count).await {
                    Ok(hits) => ToolOutput {
                        text: search::render(query, searcher.backend(), &hits),
                        is_error: false,
                        detail: None,
                    },
                    Err(error) => failure(format!("{SEARCH}: {error}")),
                }
            }
            _ => failure(format!("`{}` is not on offer", call.tool())),
        }
    }
}

/// Why a web tool call was refused before it ran; the text is for the model.
#[derive(Debug, thiserror::Error)]
pub enum WebCallError {
    #[error("invalid arguments for `{tool}`: {error}")]
    Arguments {
        tool: &'static str,
        error: serde_json::Error,
    },
    #[error("invalid arguments for `{tool}`: `{field}` is empty")]
    Empty {
        tool: &'static str,
        field: &'static str,
    },
    #[error("invalid arguments for `{SEARCH}`: `count` must be from 1 to {MAX_COUNT}")]
    Count,
    #[error("`{0}` is not a web tool on offer")]
    NotOffered(String),
}

fn failure(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: true,
        detail: None,
    }
}

/// The page as the model reads it: where it came from, its title, then the text from `offset`,
/// at most `max_bytes` of it, and a note when there is more.
fn render_page(fetched: &Fetched, offset: usize, max_bytes: usize) -> ToolOutput {
    let page = &fetched.page;
    let mut out = format!("URL: {}\n", fetched.url);
    if fetched.url != fetched.requested {
        out.push_str(&format!("Redirected from: {}\n", fetched.requested));
    }
    if let Some(title) = page.title.as_deref().filter(|title| !title.is_empty()) {
        out.push_str(&format!("Title: {title}\n"));
    }
    if page.kind == PageKind::Text {
        out.push_str(&format!("Content-Type: {}\n", page.media_type));
    }
    let success = fetched.status.is_success();
    if !success {
        out.push_str(&format!("Status: {}\n", fetched.status));
    }
    out.push('\n');
    let text = page.text.as_str();
    let limit = if success {
        max_bytes
    } else {
        max_bytes.min(ERROR_PAGE_BYTES)
    };
    let start = floor_boundary(text, offset.min(text.len()));
    let rest = &text[start..];
    let shown = cut_at(rest, limit);
    if start > 0 && rest.is_empty() {
        out.push_str(&format!(
            "[offset {offset} is past the end: the text is {} bytes]\n",
            text.len()
        ));
    }
    out.push_str(shown);
    let end = start + shown.len();
    if end < text.len() {
        out.push_str(&format!(
            "\n\n[cut: bytes {start}-{end} of {} shown; call {FETCH} again with \"offset\": {end} to read on]",
            text.len()
        ));
    }
    if fetched.truncated {
        out.push_str(
            "\n\n[the page is larger than web_fetch reads ([web] max_page_kb); its end is missing]",
        );
    }
    ToolOutput {
        text: out,
        is_error: !success,
        detail: None,
    }
}

/// The longest prefix of `text` of at most `max` bytes, ending at a line break when one is
/// near the end.
fn cut_at(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let end = floor_boundary(text, max);
    let head = &text[..end];
    match head.rfind('\n') {
        Some(line) if line >= end - end / 4 => &head[..=line],
        _ => head,
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests;
