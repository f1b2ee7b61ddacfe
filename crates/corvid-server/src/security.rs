//! The page's guard. A local page that runs commands is a target for any other page the user
//! opens, so every request under the page's paths must be addressed to corvid by name (Host
//! allowlist: DNS rebinding), come from corvid's own origin when it changes state or opens the
//! WebSocket (exactly `http://<host>:<port>`, not any loopback origin: another local server's
//! page is another site), and, under `/api/`, carry this launch's token (a cookie the page got
//! from the URL `corvid serve` printed; or `Authorization: Bearer` for scripts). Bodies must be
//! JSON. Every answer carries a Content-Security-Policy that allows no inline script.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use corvid_gateway::ApiError;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use crate::PageState;

/// The cookie that carries the token after the first visit.
pub(crate) const COOKIE: &str = "corvid_token";

/// The page may load only its own scripts, styles and images, talk only to its own origin, and
/// never be framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A per-launch secret: 256 random bits, hex. Compared in constant time.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// A fresh token from the OS random source.
    pub fn generate() -> Self {
        let high = rand::random::<u128>();
        let low = rand::random::<u128>();
        Self(format!("{high:032x}{low:032x}"))
    }

    /// A given token (tests).
    pub fn from_text(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Token(<redacted>)")
    }
}

/// The URL `corvid serve` prints: the page, with the token to exchange for the cookie.
pub fn page_url(host: &str, port: u16, token: &Token) -> String {
    format!("http://{}/?token={}", authority(host, port), token.as_str())
}

fn authority(host: &str, port: u16) -> String {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    if bare.contains(':') {
        format!("[{bare}]:{port}")
    } else {
        format!("{bare}:{port}")
    }
}

/// The Host values the page answers: the loopback names with the bound port, and the configured
/// host (lower case).
pub(crate) fn allowed_hosts(configured: &str, port: u16) -> Vec<String> {
    let mut hosts: Vec<String> = ["127.0.0.1", "localhost", "::1", configured]
        .iter()
        .map(|host| authority(host, port).to_ascii_lowercase())
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Host and Origin, on every page path; then the security headers on the answer.
pub(crate) async fn page_guard(
    State(state): State<PageState>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = match refusal(&state.0.allowed_hosts, request.method(), request.headers()) {
        Some(error) => error.into_response(),
        None => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// Why a request is refused before any handler sees it, if it is.
fn refusal(allowed: &[String], method: &Method, headers: &HeaderMap) -> Option<ApiError> {
    // One Host, at most one Origin: with two, the checks below would read only the first
    // (RFC 9110 asks a server to refuse a request with more than one Host).
    if [header::HOST, header::ORIGIN]
        .iter()
        .any(|name| headers.get_all(name).iter().nth(1).is_some())
    {
        return Some(ApiError::forbidden(
            "refused: a request may carry one Host and one Origin",
        ));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_ascii_lowercase);
    let Some(host) = host.filter(|host| allowed.iter().any(|allowed| allowed == host)) else {
        return Some(ApiError::forbidden(format!(
            "refused: the page answers only requests addressed to {}",
            allowed.join(", ")
        )));
    };
    let origin = headers
        .get(header::ORIGIN)
        .map(|value| value.to_str().unwrap_or("?"));
    let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let upgrade = headers.contains_key(header::UPGRADE);
    match origin {
        // A request carrying another origin is refused whatever its method.
        Some(origin) if origin != format!("http://{host}") => Some(ApiError::forbidden(format!(
            "refused: Origin {origin:?} is not this page's origin (http://{host})"
        ))),
        // Browsers always send Origin on these; a script without one must present the token as
        // a bearer (checked by `api_guard`, which covers every state-changing route), which a
        // page cannot make a browser send cross-site.
        None if (changes_state || upgrade) && !headers.contains_key(header::AUTHORIZATION) => {
            Some(ApiError::forbidden(
                "refused: a request that changes state or opens the agent's socket must carry this page's Origin (or, from a script, Authorization: Bearer <token>)",
            ))
        }
        _ => None,
    }
}

/// The token on every `/api/` request, and JSON for every body.
pub(crate) async fn api_guard(
    State(state): State<PageState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if !presented_token(headers).is_some_and(|token| state.0.token.matches(token)) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong token: open the page at the URL `corvid serve` printed (`corvid open` opens it)",
        )
        .into_response();
    }
    if matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    ) && !is_json(headers)
    {
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        )
        .into_response();
    }
    next.run(request).await
}

/// The token from the cookie or an `Authorization: Bearer` header.
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    bearer.or_else(|| cookie(headers, COOKIE))
}

pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The answer to `/?token=…`: the cookie, and a redirect that takes the token out of the
/// address bar and the history.
pub(crate) fn exchange(state: &PageState, candidate: &str) -> Response {
    if !state.0.token.matches(candidate) {
        return (
            StatusCode::UNAUTHORIZED,
            "This link's token is not the one this corvid printed. Open the URL `corvid serve` printed (or run `corvid open`).",
        )
            .into_response();
    }
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        state.0.token.as_str()
    );
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let allowed = allowed_hosts("127.0.0.1", 8787);
        assert_eq!(allowed, ["127.0.0.1:8787", "[::1]:8787", "localhost:8787"]);
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, HeaderValue::from_str(value).unwrap());
            }
            map
        };
        let ok = headers(&[("host", "127.0.0.1:8787")]);
        assert!(refusal(&allowed, &Method::GET, &ok).is_none());
        let post = headers(&[
            ("host", "127.0.0.1:8787"),
            ("origin", "http://127.0.0.1:8787"),
        ]);
        assert!(refusal(&allowed, &Method::POST, &post).is_none());
        for bad in [
            headers(&[("host", "evil.com")]),
            headers(&[("host", "127.0.0.1:9999")]),
            headers(&[]),
        ] {
            assert!(refusal(&allowed, &Method::GET, &bad).is_some());
        }
        // Another loopback origin is another site.
        let other = headers(&[
            ("host", "127.0.0.1:8787"),
            ("origin", "http://127.0.0.1:3000"),
        ]);
        assert!(refusal(&allowed, &Method::POST, &other).is_some());
        assert!(refusal(&allowed, &Method::GET, &other).is_some());
        let bare_post = headers(&[("host", "localhost:8787")]);
        assert!(refusal(&allowed, &Method::DELETE, &bare_post).is_some());
        // A script with the bearer token needs no Origin (the token is checked later).
        let script = headers(&[("host", "localhost:8787"), ("authorization", "Bearer t")]);
        assert!(refusal(&allowed, &Method::DELETE, &script).is_none());
    }

    #[test]
    fn tokens() {
        let token = Token::generate();
        assert_eq!(token.as_str().len(), 64);
        assert!(token.matches(token.as_str()));
        assert!(!token.matches(""));
        assert!(!token.matches(&"0".repeat(64)));
        assert_ne!(Token::generate().as_str(), token.as_str());
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
        assert_eq!(
            page_url("::1", 8787, &Token::from_text("t")),
            "http://[::1]:8787/?token=t"
        );
    }
}
