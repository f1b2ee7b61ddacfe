//! `web_search`'s backends: a SearXNG instance (`/search?format=json`), Brave's Search API or
//! Tavily's, chosen in `[web]`. The backend is the user's choice, so its address is not put
//! through the fetch guard (a SearXNG on `127.0.0.1` is the usual set-up); its key goes only
//! into the request header and never into a message or a log.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use corvid_config::SearchBackend;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::Value;
use url::Url;

use crate::client::{Client, Outgoing, RequestError};
use crate::guard::Guard;
use crate::net::Network;

/// The most bytes read from a backend's answer.
const MAX_ANSWER: usize = 2 * 1024 * 1024;
/// A snippet longer than this is cut.
const SNIPPET_CHARS: usize = 400;

/// An API key: shown as `****` by `Debug`, never printed.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

/// A configured backend.
#[derive(Debug, Clone)]
pub enum Backend {
    /// SearXNG at this base URL.
    Searxng {
        /// The instance, e.g. `http://127.0.0.1:8888`.
        base: Url,
    },
    /// Brave's Search API.
    Brave {
        /// `https://api.search.brave.com` unless configured.
        base: Url,
        /// `BRAVE_API_KEY`.
        key: ApiKey,
    },
    /// Tavily's search API.
    Tavily {
        /// `https://api.tavily.com` unless configured.
        base: Url,
        /// `TAVILY_API_KEY`.
        key: ApiKey,
    },
}

/// Why no backend could be set up from the configuration.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BackendError {
    /// The backend needs a key and none is set.
    #[error(
        "[web] search = \"{backend}\" needs {variable} (in the environment or the env file); web_search is off until it is set"
    )]
    MissingKey {
        /// The backend's name.
        backend: &'static str,
        /// The variable to set.
        variable: &'static str,
    },
    /// `search_url` is not a URL.
    #[error("[web] search_url is not a valid URL: {0}")]
    InvalidUrl(String),
}

impl Backend {
    /// The backend `[web]` names; `Ok(None)` when search is off. `secret` looks a variable up
    /// in the environment and the env file.
    pub fn from_config(
        search: SearchBackend,
        search_url: Option<&str>,
        secret: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, BackendError> {
        let base = |default: &str| {
            let text = search_url.unwrap_or(default);
            Url::parse(&format!("{}/", text.trim_end_matches('/')))
                .map_err(|error| BackendError::InvalidUrl(error.to_string()))
        };
        let key = |backend: SearchBackend| {
            let variable = backend.key_variable().unwrap_or_default();
            secret(variable)
                .filter(|value| !value.trim().is_empty())
                .map(|value| ApiKey::new(value.trim()))
                .ok_or(BackendError::MissingKey {
                    backend: backend.as_str(),
                    variable,
                })
        };
        Ok(Some(match search {
            SearchBackend::Off => return Ok(None),
            SearchBackend::Searxng => Self::Searxng {
                base: base("http://127.0.0.1:8888")?,
            },
            SearchBackend::Brave => Self::Brave {
                base: base("https://api.search.brave.com")?,
                key: key(search)?,
            },
            SearchBackend::Tavily => Self::Tavily {
                base: base("https://api.tavily.com")?,
                key: key(search)?,
            },
        }))
    }

    /// The name used in `config.toml`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Searxng { .. } => "searxng",
            Self::Brave { .. } => "brave",
            Self::Tavily { .. } => "tavily",
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The page title.
    pub title: String,
    /// The page.
    pub url: String,
    /// What the backend says about it.
    pub snippet: String,
}

/// Why a search failed. The text is for the model.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The backend could not be reached.
    #[error("the {backend} search backend could not be reached: {error}")]
    Request {
        /// Its name.
        backend: &'static str,
        /// What happened.
        error: RequestError,
    },
    /// The backend answered with an error status.
    #[error("the {backend} search backend answered {status}{hint}")]
    Status {
        /// Its name.
        backend: &'static str,
        /// The status.
        status: StatusCode,
        /// What usually causes it.
        hint: &'static str,
    },
    /// The answer was not the expected JSON.
    #[error("the {backend} search backend sent an answer that is not its JSON: {message}")]
    Unexpected {
        /// Its name.
        backend: &'static str,
        /// What was wrong.
        message: String,
    },
    /// No answer in time.
    #[error("the {backend} search backend did not answer within {timeout:?}")]
    Timeout {
        /// Its name.
        backend: &'static str,
        /// The limit.
        timeout: Duration,
    },
}

/// Sends searches to one backend.
#[derive(Debug)]
pub struct Searcher {
    backend: Backend,
    client: Client,
    timeout: Duration,
}

impl Searcher {
    /// A searcher for `backend`.
    pub fn new(backend: Backend, network: Arc<dyn Network>, timeout: Duration) -> Self {
        let connect_timeout = timeout.min(Duration::from_secs(10));
        Self {
            backend,
            client: Client::new(Guard::trusting(), network, connect_timeout),
            timeout,
        }
    }

    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        self.backend.name()
    }

    /// Up to `count` results for `query`.
    pub async fn search(&self, query: &str, count: usize) -> Result<Vec<Hit>, SearchError> {
        let backend = self.backend.name();
        match tokio::time::timeout(self.timeout, self.search_untimed(query, count)).await {
            Ok(result) => result,
            Err(_) => Err(SearchError::Timeout {
                backend,
                timeout: self.timeout,
            }),
        }
    }

    async fn search_untimed(&self, query: &str, count: usize) -> Result<Vec<Hit>, SearchError> {
        let backend = self.backend.name();
        let unexpected = |message: String| SearchError::Unexpected { backend, message };
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let (method, url, body) = match &self.backend {
            Backend::Searxng { base } => {
                let mut url = join(base, "search");
                url.query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("format", "json");
                (Method::GET, url, Bytes::new())
            }
            Backend::Brave { base, key } => {
                let mut url = join(base, "res/v1/web/search");
                url.query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("count", &count.to_string());
                headers.insert(
                    HeaderName::from_static("x-subscription-token"),
                    secret_header(&key.0).map_err(|error| unexpected(error.to_string()))?,
                );
                (Method::GET, url, Bytes::new())
            }
            Backend::Tavily { base, key } => {
                headers.insert(
                    AUTHORIZATION,
                    secret_header(&format!("Bearer {}", key.0))
                        .map_err(|error| unexpected(error.to_string()))?,
                );
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                let body = serde_json::json!({
                    "query": query,
                    "max_results": count,
                    "search_depth": "basic",
                });
                (
                    Method::POST,
                    join(base, "search"),
                    Bytes::from(body.to_string()),
                )
            }
        };
        let reply = self
            .client
            .send(Outgoing {
                method,
                url: &url,
                headers,
                body,
                max_body: MAX_ANSWER,
            })
            .await
            .map_err(|error| SearchError::Request { backend, error })?;
        if !reply.status.is_success() {
            return Err(SearchError::Status {
                backend,
                status: reply.status,
                hint: hint(&self.backend, reply.status),
            });
        }
        let answer: Value =
            serde_json::from_slice(&reply.body).map_err(|error| unexpected(format!("{error}")))?;
        let (list, snippet_field) = match &self.backend {
            Backend::Searxng { .. } => (answer.get("results"), "content"),
            Backend::Brave { .. } => (
                answer.get("web").and_then(|web| web.get("results")),
                "description",
            ),
            Backend::Tavily { .. } => (answer.get("results"), "content"),
        };
        let Some(list) = list else {
            // Brave leaves out `web` when nothing was found.
            return match (&self.backend, answer.is_object()) {
                (Backend::Brave { .. }, true) => Ok(Vec::new()),
                _ => Err(unexpected("no `results` list".to_owned())),
            };
        };
        let list = list
            .as_array()
            .ok_or_else(|| unexpected("`results` is not a list".to_owned()))?;
        let field = |item: &Value, name: &str| {
            item.get(name)
                .and_then(Value::as_str)
                .map(clean)
                .unwrap_or_default()
        };
        Ok(list
            .iter()
            .filter_map(|item| {
                let url = field(item, "url");
                (!url.is_empty()).then(|| Hit {
                    title: field(item, "title"),
                    snippet: cut(&field(item, snippet_field), SNIPPET_CHARS),
                    url,
                })
            })
            .take(count)
            .collect())
    }
}

fn join(base: &Url, path: &str) -> Url {
    base.join(path).unwrap_or_else(|_| base.clone())
}

/// An API key a header cannot carry.
#[derive(Debug, thiserror::Error)]
#[error("the API key has characters a header cannot carry")]
struct UnsendableKey;

fn secret_header(value: &str) -> Result<HeaderValue, UnsendableKey> {
    let mut header = HeaderValue::from_str(value).map_err(|_| UnsendableKey)?;
    header.set_sensitive(true);
    Ok(header)
}

fn hint(backend: &Backend, status: StatusCode) -> &'static str {
    match (backend, status.as_u16()) {
        (Backend::Searxng { .. }, 403) => {
            " (SearXNG refuses format=json unless `json` is listed under search.formats in its settings.yml)"
        }
        (Backend::Brave { .. } | Backend::Tavily { .. }, 401 | 403) => {
            " (the API key was refused; check it)"
        }
        (_, 429) => " (rate limited; wait before searching again)",
        _ => "",
    }
}

/// Backends put `<strong>` and entities in snippets; the model needs neither.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_owned(),
    }
}

/// The results as a short markdown list.
pub fn render(query: &str, backend: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\" ({backend}).");
    }
    let mut out = format!("Results for \"{query}\" ({backend}):\n");
    for (number, hit) in hits.iter().enumerate() {
        let title = if hit.title.is_empty() {
            hit.url.as_str()
        } else {
            hit.title.as_str()
        };
        let title = title.replace('[', "\\[").replace(']', "\\]");
        out.push_str(&format!("\n{}. [{title}]({})\n", number + 1, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out
}

#[cfg(test)]
mod tests;
