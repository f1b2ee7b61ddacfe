//! `web_fetch`'s work: GET a URL, follow redirects by hand (each hop goes through the guard
//! again, so a public page cannot bounce the fetch to `127.0.0.1`), check the content type,
//! decode the text and turn HTML into markdown.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use corvid_config::WebConfig;
use http::header::{ACCEPT, CONTENT_ENCODING, CONTENT_TYPE, LOCATION};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use url::Url;

use crate::client::{Client, Outgoing, Reply, RequestError};
use crate::guard::Guard;
use crate::net::Network;
use crate::page::{self, Page};

/// What the fetch asks for: pages first, any text after.
const ACCEPTED: &str = "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/json;q=0.8, text/*;q=0.7, */*;q=0.1";

/// Why a fetch produced no page. The text is for the model.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not a URL.
    #[error("not a valid URL ({0}); give an absolute http:// or https:// URL")]
    InvalidUrl(String),
    /// One hop failed.
    #[error("{0}")]
    Request(#[from] RequestError),
    /// A redirect refused or failed; `from` is the page that redirected.
    #[error("{from} redirected to {to}, which was not fetched: {error}")]
    Redirect {
        /// The page that answered with the redirect.
        from: String,
        /// Where it pointed.
        to: String,
        /// What happened there.
        error: RequestError,
    },
    /// A redirect with no usable `Location`.
    #[error("{from} answered {status} without a valid Location")]
    NoLocation {
        /// The page.
        from: String,
        /// Its status.
        status: StatusCode,
    },
    /// Longer chains are refused.
    #[error("more than {limit} redirects, starting at {start}; stopped at {last}")]
    TooManyRedirects {
        /// The cap.
        limit: u32,
        /// The URL asked for.
        start: String,
        /// The last URL reached.
        last: String,
    },
    /// The whole fetch ran out of time.
    #[error("no complete answer within {0:?}")]
    Timeout(Duration),
    /// The server compressed the body although only `identity` was accepted.
    #[error(
        "{url} was sent {encoding}-compressed although web_fetch asked for an uncompressed page"
    )]
    Compressed {
        /// The final URL.
        url: String,
        /// Its `Content-Encoding`.
        encoding: String,
    },
    /// The converter failed (a panic inside it); the session goes on.
    #[error("the page could not be converted: {0}")]
    Convert(String),
    /// Not text.
    #[error(
        "{url} is {content_type}, not a page or text; web_fetch only reads text (HTML, markdown, plain text, JSON, XML)"
    )]
    NotText {
        /// The final URL.
        url: String,
        /// Its content type.
        content_type: String,
    },
}

/// The caps of one fetch.
#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    /// The most body bytes read.
    pub max_page_bytes: usize,
    /// One fetch, every hop included.
    pub timeout: Duration,
    /// Redirects followed.
    pub max_redirects: u32,
}

impl FetchLimits {
    /// The caps `[web]` sets.
    pub fn new(web: &WebConfig) -> Self {
        Self {
            max_page_bytes: web.max_page_bytes,
            timeout: web.timeout,
            max_redirects: web.max_redirects,
        }
    }
}

/// A fetched response and how it was reached.
#[derive(Debug)]
pub struct Fetched {
    /// The URL asked for.
    pub requested: Url,
    /// The URL that answered (after redirects).
    pub url: Url,
    /// The page.
    pub page: Page,
    /// The status of the last response.
    pub status: StatusCode,
    /// True when the body was longer than `max_page_bytes`.
    pub truncated: bool,
}

/// Fetches pages through the guard.
#[derive(Debug)]
pub struct Fetcher {
    client: Client,
    limits: FetchLimits,
}

impl Fetcher {
    /// A fetcher for `[web]`.
    pub fn new(web: &WebConfig, network: Arc<dyn Network>) -> Self {
        let connect_timeout = web.timeout.min(Duration::from_secs(10));
        Self {
            client: Client::new(Guard::new(web), network, connect_timeout),
            limits: FetchLimits::new(web),
        }
    }

    /// Fetches `url` and reads it as a page.
    pub async fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        let limit = self.limits.timeout;
        match tokio::time::timeout(limit, self.fetch_untimed(url)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout(limit)),
        }
    }

    async fn fetch_untimed(&self, text: &str) -> Result<Fetched, FetchError> {
        let requested =
            Url::parse(text.trim()).map_err(|error| FetchError::InvalidUrl(error.to_string()))?;
        let mut url = requested.clone();
        let mut came_from: Option<Url> = None;
        let mut redirects = 0;
        loop {
            let reply = match (self.get(&url).await, &came_from) {
                (Ok(reply), _) => reply,
                (Err(error), None) => return Err(error.into()),
                (Err(error), Some(from)) => {
                    return Err(FetchError::Redirect {
                        from: from.to_string(),
                        to: url.to_string(),
                        error,
                    });
                }
            };
            if !matches!(reply.status.as_u16(), 301 | 302 | 303 | 307 | 308) {
                return read(requested, url, reply).await;
            }
            let next = reply
                .headers
                .get(LOCATION)
                .and_then(|location| location.to_str().ok())
                .and_then(|location| url.join(location.trim()).ok())
                .ok_or_else(|| FetchError::NoLocation {
                    from: url.to_string(),
                    status: reply.status,
                })?;
            if redirects == self.limits.max_redirects {
                return Err(FetchError::TooManyRedirects {
                    limit: self.limits.max_redirects,
                    start: requested.to_string(),
                    last: url.to_string(),
                });
            }
            redirects += 1;
            came_from = Some(std::mem::replace(&mut url, next));
        }
    }

    async fn get(&self, url: &Url) -> Result<Reply, RequestError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPTED));
        let mut url = url.clone();
        url.set_fragment(None);
        self.client
            .send(Outgoing {
                method: Method::GET,
                url: &url,
                headers,
                body: Bytes::new(),
                max_body: self.limits.max_page_bytes,
            })
            .await
    }
}

/// Reads the final response as a page. Parsing and converting a few megabytes of HTML takes
/// a while, so it runs on a blocking thread, not on the runtime's.
async fn read(requested: Url, url: Url, reply: Reply) -> Result<Fetched, FetchError> {
    let encoding = reply
        .headers
        .get(CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(encoding.as_str(), "" | "identity") {
        return Err(FetchError::Compressed {
            url: url.to_string(),
            encoding,
        });
    }
    let content_type = reply
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let (status, truncated) = (reply.status, reply.truncated);
    let body = reply.body;
    let page_url = url.clone();
    let read =
        tokio::task::spawn_blocking(move || page::read(&page_url, content_type.as_deref(), &body))
            .await
            .map_err(|error| FetchError::Convert(error.to_string()))?;
    let page = read.map_err(|found| FetchError::NotText {
        url: url.to_string(),
        content_type: found.0,
    })?;
    Ok(Fetched {
        requested,
        url,
        page,
        status,
        truncated,
    })
}
