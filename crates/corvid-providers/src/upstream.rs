use std::time::Duration;

use bytes::{Bytes, BytesMut};
use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use std::sync::{Arc, Mutex, PoisonError};

use corvid_config::ProviderKind;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;

use crate::backoff::{Retries, parse_retry_after};
use crate::error::{CallError, ProviderError};
use crate::last_failure::{FailureLog, LastFailure};
use crate::transport::{BoxError, SendError, Transport, UpstreamBody};

/// How much of an upstream error body is kept for the caller's error message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Builds the transport for `config.upstream`: connect timeout, and the request timeout as an
/// idle timeout (headers, then every gap in the body), never a total deadline. A system proxy
/// from the process environment is honoured.
pub fn build_transport(config: &Config) -> Result<Transport, BoxError> {
    Transport::new(
        config.connect_timeout,
        config.request_timeout,
        &config.upstream,
        |name| std::env::var(name).ok(),
    )
}

/// One POST to the upstream.
#[derive(Debug, Clone, Default)]
pub struct UpstreamRequest<'a> {
    /// Path under the base URL, without a leading slash: `chat/completions`, `responses`.
    pub path: &'a str,
    /// The JSON body, sent as is (cloning `Bytes` shares the buffer).
    pub body: Bytes,
    /// A total deadline for this call, when it must be shorter than the idle timeout (FIM).
    pub deadline: Option<Duration>,
    /// Headers for this request only (e.g. a client's `anthropic-beta` for Anthropic).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// At most this many retries on this upstream, when not its configured `max_retries`
    /// (0 when a route has another target to move to: it moves rather than waits).
    pub retries: Option<u32>,
}

/// How a provider wants its credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStyle {
    /// `Authorization: Bearer <key>` (OpenAI, xAI, OpenAI-compatible servers).
    Bearer,
    /// `x-api-key: <key>` and `anthropic-version` (Anthropic).
    AnthropicKey,
    /// `x-goog-api-key: <key>` (Gemini).
    GoogleKey,
}

impl AuthStyle {
    /// The style each API kind uses.
    pub fn for_kind(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses | ProviderKind::Zed => {
                Self::Bearer
            }
            ProviderKind::Anthropic => Self::AnthropicKey,
            ProviderKind::Gemini => Self::GoogleKey,
        }
    }
}

/// The `anthropic-version` corvid speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A successful upstream response, its body not yet read.
#[derive(Debug)]
pub struct UpstreamResponse {
    pub response: http::Response<UpstreamBody>,
    /// Attempts made, 1 when the first one succeeded.
    pub attempts: u32,
}

/// An OpenAI-compatible upstream (xAI by default) with its credential.
#[derive(Debug, Clone)]
pub struct Upstream {
    transport: Transport,
    base_url: String,
    credential: Credential,
    max_retries: u32,
    auth: AuthStyle,
    /// Sent on every request (configured provider headers).
    headers: Arc<[(HeaderName, HeaderValue)]>,
    prepared: Arc<Prepared>,
    /// The last failed call, for the status page.
    failures: Arc<FailureLog>,
    /// A member of a key pool: a 429 goes back at once, for another key to serve, instead
    /// of being waited out on this one.
    hands_off_rate_limits: bool,
}

/// What is the same for almost every request and cost more to build each time than the rest
/// of preparing one: the parsed URL of each path, and the credential header of the current
/// secret (an OAuth token changes it; the cached header then follows).
#[derive(Debug, Default)]
struct Prepared {
    urls: Mutex<Vec<(Box<str>, http::Uri)>>,
    credential: Mutex<Option<(Secret, HeaderValue)>>,
}

/// Paths are few (Gemini's name the model); past this many, URLs are parsed per request.
const MAX_PREPARED_URLS: usize = 64;

impl Upstream {
    pub fn new(
        transport: Transport,
        base_url: &str,
        credential: Credential,
        max_retries: u32,
    ) -> Self {
        Self {
            transport,
            base_url: base_url.trim_end_matches('/').to_owned(),
            credential,
            max_retries,
            auth: AuthStyle::Bearer,
            headers: Arc::from(Vec::new()),
            prepared: Arc::default(),
            failures: Arc::default(),
            hands_off_rate_limits: false,
        }
    }

    /// The same upstream with another credential (another key of a pool): its own cached
    /// credential header, the rest shared.
    pub fn with_credential(&self, credential: Credential) -> Self {
        Self {
            credential,
            prepared: Arc::default(),
            ..self.clone()
        }
    }

    /// The same upstream (transport, credential, headers) at another base URL: a server's
    /// root beside its `/v1` (llama.cpp's `/props`). Its failures are not this upstream's.
    pub fn at_base(&self, base_url: &str) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            prepared: Arc::default(),
            failures: Arc::default(),
            max_retries: 0,
            ..self.clone()
        }
    }

    /// A 429 is answered at once rather than retried on this key (the pool tries another).
    pub fn handing_off_rate_limits(mut self) -> Self {
        self.hands_off_rate_limits = true;
        self
    }

    /// Uses `auth` to send the credential.
    pub fn with_auth(mut self, auth: AuthStyle) -> Self {
        self.auth = auth;
        // The cached credential header was written in the old style.
        self.prepared = Arc::default();
        self
    }

    /// Sends these headers on every request.
    pub fn with_headers(mut self, headers: Vec<(HeaderName, HeaderValue)>) -> Self {
        self.headers = Arc::from(headers);
        self
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
    /// A timeout after the request went out is not retried (the upstream may be working on
    /// it); a failure says how many requests were sent.
    pub async fn post(&self, request: UpstreamRequest<'_>) -> Result<UpstreamResponse, CallError> {
        self.call(Method::POST, request).await
    }

    /// POSTs a request corvid encoded itself (a translation). An upstream that refuses
    /// `stream_options` — a 400 naming it: older vLLM, some proxies — is asked once more
    /// without it; usage then comes only if the server sends it anyway.
    /// `retries` as in [`UpstreamRequest::retries`].
    pub async fn post_encoded(
        &self,
        path: &str,
        encoded: &corvid_wire::encoded::EncodedBody,
        retries: Option<u32>,
    ) -> Result<UpstreamResponse, CallError> {
        let post = |body: Vec<u8>| {
            self.post(UpstreamRequest {
                path,
                body: Bytes::from(body),
                retries,
                ..UpstreamRequest::default()
            })
        };
        let sent = post(encoded.to_bytes()).await;
        if let Err(error) = &sent
            && refuses_stream_options(error)
            && encoded.contains("stream_options")
        {
            tracing::info!("the upstream refused stream_options; retrying without it");
            let before = error.attempts;
            let mut without = encoded.clone();
            without.remove("stream_options");
            return match post(without.to_bytes()).await {
                Ok(mut response) => {
                    response.attempts += before;
                    Ok(response)
                }
                Err(mut failed) => {
                    failed.attempts += before;
                    Err(failed)
                }
            };
        }
        sent
    }

    /// A GET (model lists), with the same retries and credential.
    pub async fn get(&self, path: &str) -> Result<UpstreamResponse, CallError> {
        let request = UpstreamRequest {
            path,
            deadline: Some(Duration::from_secs(15)),
            ..UpstreamRequest::default()
        };
        self.call(Method::GET, request).await
    }

    /// The last call of this upstream that failed (from any caller: the gateway, the agent, a
    /// model list), cleaned for showing; `None` when none has.
    pub fn last_failure(&self) -> Option<LastFailure> {
        self.failures.last()
    }

    /// The last failure when no call has succeeded since: the upstream is failing now (the
    /// desktop app's tray shows it).
    pub fn failing(&self) -> Option<LastFailure> {
        self.failures.current()
    }

    /// Notes a failure as a call would (tests of what keeps it).
    #[cfg(test)]
    pub(crate) fn note_failure(&self, error: &crate::error::ProviderError) {
        self.failures.note(error);
    }

    /// Every call ends here, so a failure is noted once, whoever made the call.
    async fn call(
        &self,
        method: Method,
        request: UpstreamRequest<'_>,
    ) -> Result<UpstreamResponse, CallError> {
        let result = self.call_retrying(method, request).await;
        match &result {
            Ok(_) => self.failures.succeeded(),
            Err(failed) => self.failures.note(&failed.error),
        }
        result
    }

    async fn call_retrying(
        &self,
        method: Method,
        request: UpstreamRequest<'_>,
    ) -> Result<UpstreamResponse, CallError> {
        let mut attempts = 0u32;
        let failed = |error: ProviderError, attempts: u32| CallError { error, attempts };
        let url = self.url(request.path).map_err(|error| failed(error, 0))?;
        let mut retries = Retries::new(request.retries.unwrap_or(self.max_retries));
        let mut renewed_after_401 = false;
        let mut bearer = self
            .credential
            .bearer()
            .await
            .map_err(|error| failed(error.into(), 0))?;
        loop {
            attempts += 1;
            let outcome = self.send_once(&method, &url, &request, &bearer).await;
            let error = match outcome {
                Ok(response) if response.status().is_success() => {
                    return Ok(UpstreamResponse { response, attempts });
                }
                Ok(response)
                    if response.status() == StatusCode::UNAUTHORIZED && !renewed_after_401 =>
                {
                    renewed_after_401 = true;
                    let renewed = self
                        .credential
                        .after_unauthorized(&bearer)
                        .await
                        .map_err(|error| failed(error.into(), attempts))?;
                    match renewed {
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
            if self.hands_off_rate_limits && crate::failover::rests_key(&error).is_some() {
                return Err(failed(error, attempts));
            }
            match retries.after(&error) {
                Some(delay) => tokio::time::sleep(delay).await,
                None => return Err(failed(error, attempts)),
            }
        }
    }

    /// The URL of `path` under the base URL, parsed once per path.
    fn url(&self, path: &str) -> Result<http::Uri, ProviderError> {
        let mut urls = self
            .prepared
            .urls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, url)) = urls.iter().find(|(known, _)| **known == *path) {
            return Ok(url.clone());
        }
        let text = self.url_text(path);
        if !stays_under_base(path) {
            return Err(ProviderError::InvalidUrl { url: text });
        }
        let url = text
            .parse::<http::Uri>()
            .map_err(|_| ProviderError::InvalidUrl { url: text })?;
        if urls.len() < MAX_PREPARED_URLS {
            urls.push((path.into(), url.clone()));
        }
        Ok(url)
    }

    /// The URL of `path` as text, for error messages.
    fn url_text(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path)
    }

    /// The header that carries `secret` in this provider's style, built once per secret.
    fn credential_header(
        &self,
        secret: &Secret,
    ) -> Result<(HeaderName, HeaderValue), ProviderError> {
        let name = match self.auth {
            AuthStyle::Bearer => http::header::AUTHORIZATION,
            AuthStyle::AnthropicKey => HeaderName::from_static("x-api-key"),
            AuthStyle::GoogleKey => HeaderName::from_static("x-goog-api-key"),
        };
        let mut prepared = self
            .prepared
            .credential
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((known, value)) = prepared.as_ref()
            && known == secret
        {
            return Ok((name, value.clone()));
        }
        let text = match self.auth {
            AuthStyle::Bearer => format!("Bearer {}", secret.expose()),
            AuthStyle::AnthropicKey | AuthStyle::GoogleKey => secret.expose().to_owned(),
        };
        let mut value =
            HeaderValue::from_str(&text).map_err(|_| ProviderError::InvalidCredential)?;
        value.set_sensitive(true);
        *prepared = Some((secret.clone(), value.clone()));
        Ok((name, value))
    }

    async fn send_once(
        &self,
        method: &Method,
        url: &http::Uri,
        request: &UpstreamRequest<'_>,
        bearer: &Secret,
    ) -> Result<http::Response<UpstreamBody>, ProviderError> {
        // Built in place: the typed names and values need none of the builder's conversions,
        // and the map is sized once.
        let mut outgoing = http::Request::new(request.body.clone());
        *outgoing.method_mut() = method.clone();
        *outgoing.uri_mut() = url.clone();
        let headers = outgoing.headers_mut();
        headers.reserve(4 + self.headers.len() + request.headers.len());
        headers.append(
            http::header::USER_AGENT,
            HeaderValue::from_static(USER_AGENT),
        );
        if *method == Method::POST {
            headers.append(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        if !self.credential.is_none() {
            let (name, value) = self.credential_header(bearer)?;
            headers.append(name, value);
        }
        if self.auth == AuthStyle::AnthropicKey
            && !request
                .headers
                .iter()
                .any(|(name, _)| name == "anthropic-version")
        {
            headers.append(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
        for (name, value) in self.headers.iter().chain(&request.headers) {
            headers.append(name.clone(), value.clone());
        }
        self.transport
            .send(outgoing, request.deadline)
            .await
            .map_err(|error| {
                let url = self.url_text(request.path);
                match error {
                    SendError::Connect(source) => ProviderError::Connect { url, source },
                    SendError::Timeout => ProviderError::Timeout { url },
                    SendError::Other(source) => ProviderError::Transport { url, source },
                }
            })
    }
}

const USER_AGENT: &str = concat!("corvid/", env!("CARGO_PKG_VERSION"));

/// Whether `path` names a place under the base URL and nothing else: no `.` or `..` segment,
/// no empty segment, no fragment, no control character or backslash. Names in a path are
/// encoded by `corvid_wire::url_path::segment`; this refuses whatever slipped past it, so a
/// credentialed request is never aimed elsewhere on the provider's host.
fn stays_under_base(path: &str) -> bool {
    let (segments, query) = path.split_once('?').unwrap_or((path, ""));
    let clean = |text: &str| {
        !text
            .bytes()
            .any(|byte| byte.is_ascii_control() || matches!(byte, b'#' | b'\\' | b'?'))
    };
    clean(segments)
        && clean(query)
        && segments
            .split('/')
            .all(|segment| !matches!(segment, "" | "." | ".."))
}

static STREAM_OPTIONS: corvid_wire::sse::Marker = corvid_wire::sse::Marker::new(b"stream_options");

/// A 400 that names `stream_options`.
fn refuses_stream_options(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Status { status, body, .. }
        if *status == StatusCode::BAD_REQUEST && STREAM_OPTIONS.is_in(body))
}

/// Reads (the start of) an error response into a `Status` error.
async fn status_error(response: http::Response<UpstreamBody>) -> ProviderError {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_retry_after);
    let mut body = response.into_body();
    let mut collected = BytesMut::new();
    while collected.len() < ERROR_BODY_LIMIT {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    collected.extend_from_slice(&data);
                }
            }
            Some(Err(_)) | None => break,
        }
    }
    collected.truncate(ERROR_BODY_LIMIT);
    // Gemini sends no `Retry-After`: its hint is a `google.rpc.RetryInfo` in the body.
    let retry_after = retry_after
        .or_else(|| corvid_wire::gemini::retry_after_seconds(&collected).map(Duration::from_secs));
    ProviderError::Status {
        status,
        body: collected.freeze(),
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(auth: AuthStyle) -> Upstream {
        let transport = Transport::new(
            Duration::from_secs(1),
            Duration::from_secs(1),
            "http://127.0.0.1:9/v1",
            |_| None,
        )
        .unwrap();
        Upstream::new(
            transport,
            "http://127.0.0.1:9/v1/",
            Credential::ApiKey(Secret::new("k")),
            0,
        )
        .with_auth(auth)
    }

    #[test]
    fn the_credential_header_follows_the_secret() {
        let upstream = upstream(AuthStyle::Bearer);
        let (name, first) = upstream.credential_header(&Secret::new("one")).unwrap();
        assert_eq!(name, http::header::AUTHORIZATION);
        assert_eq!(first, "Bearer one");
        assert!(first.is_sensitive());
        let (_, again) = upstream.credential_header(&Secret::new("one")).unwrap();
        assert_eq!(again, "Bearer one");
        let (_, renewed) = upstream.credential_header(&Secret::new("two")).unwrap();
        assert_eq!(renewed, "Bearer two", "a renewed token gets a new header");

        let anthropic = upstream.clone().with_auth(AuthStyle::AnthropicKey);
        let (name, value) = anthropic.credential_header(&Secret::new("two")).unwrap();
        assert_eq!(name, "x-api-key");
        assert_eq!(
            value, "two",
            "a clone in another style does not reuse the header"
        );
        assert!(matches!(
            upstream.credential_header(&Secret::new("bad\nkey")),
            Err(ProviderError::InvalidCredential)
        ));
    }

    #[test]
    fn urls_are_parsed_once_per_path_and_still_refused_when_invalid() {
        let upstream = upstream(AuthStyle::Bearer);
        let chat = upstream.url("chat/completions").unwrap();
        assert_eq!(chat, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(
            upstream.url("responses").unwrap(),
            "http://127.0.0.1:9/v1/responses"
        );
        assert_eq!(upstream.url("chat/completions").unwrap(), chat);
        assert!(matches!(
            upstream.url("bad path"),
            Err(ProviderError::InvalidUrl { url }) if url == "http://127.0.0.1:9/v1/bad path"
        ));
        assert!(
            upstream
                .url("models/gemini-2.5-flash:streamGenerateContent?alt=sse")
                .is_ok()
        );
        for elsewhere in [
            "models/../../v1/files",
            "models/./x",
            "models//x",
            "/models",
            "models/x?key=1?alt=sse",
            "models/x#frag",
            "models/a\\..\\b",
            "models/a\u{0}b",
        ] {
            assert!(
                matches!(
                    upstream.url(elsewhere),
                    Err(ProviderError::InvalidUrl { .. })
                ),
                "{elsewhere}"
            );
        }
    }
}
