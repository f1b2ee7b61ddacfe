use std::time::Duration;

use bytes::{Bytes, BytesMut};
use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use http::{HeaderValue, StatusCode};

use crate::backoff::{backoff_delay, parse_retry_after};
use crate::error::{ProviderError, Retry};

/// The longest `Retry-After` corvid waits out itself; a longer one goes back to the client.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// How much of an upstream error body is kept for the caller's error message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Builds the shared HTTP client: connect timeout, and an idle read timeout instead of a total
/// deadline so long streams are not cut. Loopback upstreams bypass any system proxy.
pub fn build_http_client(config: &Config) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .read_timeout(config.request_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .user_agent(concat!("corvid/", env!("CARGO_PKG_VERSION")));
    if is_loopback_url(&config.upstream) {
        builder = builder.no_proxy();
    }
    builder.build()
}

fn is_loopback_url(url: &str) -> bool {
    url::Url::parse(url)
        .ok()
        .and_then(|url| url.host().map(|host| host.to_owned()))
        .is_some_and(|host| match host {
            url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        })
}

/// One POST to the upstream.
#[derive(Debug, Clone)]
pub struct UpstreamRequest<'a> {
    /// Path under the base URL, without a leading slash: `chat/completions`, `responses`.
    pub path: &'a str,
    /// The JSON body, sent as is (cloning `Bytes` shares the buffer).
    pub body: Bytes,
    /// A total deadline for this call, when it must be shorter than the idle timeout (FIM).
    pub deadline: Option<Duration>,
}

/// A successful upstream response, its body not yet read.
#[derive(Debug)]
pub struct UpstreamResponse {
    pub response: reqwest::Response,
    /// Attempts made, 1 when the first one succeeded.
    pub attempts: u32,
}

/// An OpenAI-compatible upstream (xAI by default) with its credential.
#[derive(Debug, Clone)]
pub struct Upstream {
    http: reqwest::Client,
    base_url: String,
    credential: Credential,
    max_retries: u32,
}

impl Upstream {
    pub fn new(
        http: reqwest::Client,
        base_url: &str,
        credential: Credential,
        max_retries: u32,
    ) -> Self {
        Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            credential,
            max_retries,
        }
    }

    /// The credential this upstream injects.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// The base URL, e.g. `https://api.x.ai/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Sends `request`, retrying before any byte has been read: on 429/502/503/504 and on
    /// connect errors and timeouts, with the seed's backoff or the upstream's `Retry-After`, at
    /// most `max_retries` times; and once more after a 401 if the credential could be renewed.
    /// Returns the response as soon as its headers arrive, so the caller streams the body.
    pub async fn post(
        &self,
        request: UpstreamRequest<'_>,
    ) -> Result<UpstreamResponse, ProviderError> {
        let url_text = format!("{}/{}", self.base_url, request.path);
        // Parsed once per call, not once per attempt; reqwest would parse a string each time.
        let url = reqwest::Url::parse(&url_text).map_err(|_| ProviderError::InvalidUrl {
            url: url_text.clone(),
        })?;
        let mut retries = 0u32;
        let mut renewed_after_401 = false;
        let mut bearer = self.credential.bearer().await?;
        loop {
            let outcome = self.send_once(&url, &url_text, &request, &bearer).await;
            let error = match outcome {
                Ok(response) if response.status().is_success() => {
                    return Ok(UpstreamResponse {
                        response,
                        attempts: retries + u32::from(renewed_after_401) + 1,
                    });
                }
                Ok(response)
                    if response.status() == StatusCode::UNAUTHORIZED && !renewed_after_401 =>
                {
                    renewed_after_401 = true;
                    match self.credential.after_unauthorized(&bearer).await? {
                        Some(renewed) => {
                            tracing::info!(
                                "upstream rejected the credential; retrying once with a renewed one"
                            );
                            bearer = renewed;
                            continue;
                        }
                        None => status_error(response).await,
                    }
                }
                Ok(response) => status_error(response).await,
                Err(error) => error,
            };
            let delay = match error.retry() {
                Retry::After(_) if retries >= self.max_retries => return Err(error),
                Retry::After(Some(wait)) if wait > MAX_RETRY_AFTER => return Err(error),
                Retry::After(Some(wait)) => wait,
                Retry::After(None) => backoff_delay(retries),
                Retry::No => return Err(error),
            };
            tracing::warn!(
                error = %error,
                retry = retries + 1,
                of = self.max_retries,
                delay_ms = delay.as_millis() as u64,
                "upstream call failed; retrying"
            );
            tokio::time::sleep(delay).await;
            retries += 1;
        }
    }

    async fn send_once(
        &self,
        url: &reqwest::Url,
        url_text: &str,
        request: &UpstreamRequest<'_>,
        bearer: &Secret,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {}", bearer.expose()))
            .map_err(|_| ProviderError::InvalidCredential)?;
        authorization.set_sensitive(true);
        let mut builder = self
            .http
            .post(url.clone())
            .header(http::header::AUTHORIZATION, authorization)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(request.body.clone());
        if let Some(deadline) = request.deadline {
            builder = builder.timeout(deadline);
        }
        builder
            .send()
            .await
            .map_err(|source| classify(url_text, source))
    }
}

fn classify(url: &str, source: reqwest::Error) -> ProviderError {
    let url = url.to_owned();
    if source.is_timeout() {
        ProviderError::Timeout { url, source }
    } else if source.is_connect() {
        ProviderError::Connect { url, source }
    } else {
        ProviderError::Transport { url, source }
    }
}

/// Reads (the start of) an error response into a `Status` error.
async fn status_error(mut response: reqwest::Response) -> ProviderError {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_retry_after);
    let mut body = BytesMut::new();
    while body.len() < ERROR_BODY_LIMIT {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(ERROR_BODY_LIMIT);
    ProviderError::Status {
        status,
        body: Bytes::from(body),
        retry_after,
    }
}
