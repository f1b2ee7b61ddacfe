//! Refuses requests a web page could forge against a loopback server: a `Host` that is not a
//! loopback name (DNS rebinding) or an `Origin` that is not a loopback origin (cross-site POST).
//! Editors and SDKs send loopback hosts and no `Origin`, so they pass.

use std::convert::Infallible;
use std::net::IpAddr;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::{Either, Ready, ready};
use http::HeaderMap;

use crate::error::ApiError;

/// The guard as a plain tower layer: the check is synchronous, so a passing request goes
/// straight to the router's own future (no boxing, no `Next`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardLayer {
    /// Configured `allow_remote`: any `Host` is then accepted (Origin is still checked).
    pub(crate) allow_remote: bool,
}

impl<S> tower::Layer<S> for GuardLayer {
    type Service = Guard<S>;

    fn layer(&self, inner: S) -> Guard<S> {
        Guard {
            inner,
            allow_remote: self.allow_remote,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Guard<S> {
    inner: S,
    allow_remote: bool,
}

impl<S> tower::Service<Request> for Guard<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match refusal(request.headers(), self.allow_remote) {
            Some(error) => Either::Left(ready(Ok(error.into_response()))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

/// Why a request with these headers is refused, if it is.
fn refusal(headers: &HeaderMap, allow_remote: bool) -> Option<ApiError> {
    if !allow_remote && let Some(host) = headers.get(http::header::HOST) {
        let host = host.to_str().unwrap_or_default();
        if !is_loopback_authority(host) {
            return Some(ApiError::forbidden(format!(
                "refused: Host {host:?} is not a loopback name (corvid only answers requests addressed to 127.0.0.1 or localhost)"
            )));
        }
    }
    if let Some(origin) = headers.get(http::header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !is_loopback_origin(origin) {
            return Some(ApiError::forbidden(format!(
                "refused: cross-site request from Origin {origin:?} (only loopback pages may call corvid)"
            )));
        }
    }
    None
}

/// `localhost`, `*.localhost`, `127.x.x.x` or `[::1]`, with an optional port.
pub(crate) fn is_loopback_authority(authority: &str) -> bool {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((host, port)) if port.is_empty() || is_port(port) => host,
            _ => return false,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => authority,
        }
    };
    is_loopback_host(host)
}

fn is_port(text: &str) -> bool {
    text.strip_prefix(':')
        .unwrap_or(text)
        .parse::<u16>()
        .is_ok()
}

fn is_loopback_host(host: &str) -> bool {
    const SUFFIX: &[u8] = b".localhost";
    let host = host.trim_end_matches('.');
    let bytes = host.as_bytes();
    if bytes.eq_ignore_ascii_case(b"localhost")
        || (bytes.len() > SUFFIX.len()
            && bytes[bytes.len() - SUFFIX.len()..].eq_ignore_ascii_case(SUFFIX))
    {
        return true;
    }
    host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `http(s)://<loopback authority>`; `null` (sandboxed or file pages) is refused.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    is_loopback_authority(authority.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_authorities() {
        for good in [
            "127.0.0.1:8787",
            "localhost",
            "LOCALHOST:1",
            "[::1]:8787",
            "[::1]",
            "127.1.2.3",
            "app.localhost:80",
            "localhost.",
        ] {
            assert!(is_loopback_authority(good), "{good}");
        }
        for bad in [
            "evil.com",
            "evil.com:8787",
            "192.168.1.10:8787",
            "0.0.0.0:8787",
            "127.0.0.1.evil.com",
            "[::2]:1",
            "localhost:notaport",
            "[::1]x",
            "",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
    }

    #[test]
    fn loopback_origins() {
        assert!(is_loopback_origin("http://localhost:3000"));
        assert!(is_loopback_origin("https://127.0.0.1"));
        assert!(!is_loopback_origin("https://evil.com"));
        assert!(!is_loopback_origin("null"));
        assert!(!is_loopback_origin("file://"));
    }
}
