//! A failure in the canonical vocabulary: what every dialect's error decoder reads into and
//! what its one encoder (`codec::encode_error`, and the in-stream error of each stream
//! encoder) writes out of. The gateway's own refusals are `WireError`s too, so every error
//! body corvid writes is rendered in one place per dialect (an upstream's error already in the
//! caller's dialect is relayed as it came, not rewritten).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A failure, with the upstream's wording kept. Built with [`WireError::new`] (or
/// [`WireError::for_status`]) and the `with_*` methods, so that a new detail does not touch
/// every place that makes one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireError {
    pub kind: ErrorKind,
    pub message: String,
    /// The provider's own error code, when it gave one, as it gave it (OpenAI's are strings,
    /// vLLM's numbers). Boxed: a `Value` is large, and errors ride in every `StreamEvent`.
    pub code: Option<Box<Value>>,
    /// The request field at fault (OpenAI's `error.param`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<Cow<'static, str>>,
    /// The exact HTTP status to answer with, when one is known (a gateway refusal, an
    /// upstream's own status). It must belong to `kind`; without it each dialect answers the
    /// status its table gives the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

impl WireError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            code: None,
            param: None,
            status: None,
        }
    }

    /// A provider-side failure without a code of its own (a broken or truncated stream).
    pub fn api(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Api, message)
    }

    /// A failure answered with exactly `status`, of the kind the status means
    /// ([`ErrorKind::for_answer`]).
    pub fn for_status(status: u16, message: impl Into<String>) -> Self {
        Self {
            status: Some(status),
            ..Self::new(ErrorKind::for_answer(status), message)
        }
    }

    /// With the provider's code: a string, a number, any JSON; `null` or `None` leaves it unset.
    pub fn with_code(mut self, code: impl Into<Value>) -> Self {
        let code = code.into();
        self.code = (!code.is_null()).then(|| Box::new(code));
        self
    }

    /// With the request field at fault.
    pub fn with_param(mut self, param: impl Into<Cow<'static, str>>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// The code when it is text (the form every dialect compares against).
    pub fn code_str(&self) -> Option<&str> {
        self.code.as_deref().and_then(Value::as_str)
    }
}

/// Error categories shared by all dialects (reference `wire-formats.md` §6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    InvalidRequest,
    Authentication,
    Permission,
    NotFound,
    RequestTooLarge,
    RateLimited,
    /// The upstream is overloaded or unavailable (Anthropic 529, HTTP 502/503).
    Overloaded,
    Timeout,
    /// Anything else on the server side.
    Api,
}

impl ErrorKind {
    /// The kind for an HTTP status an upstream answered (an unusual 4xx is `Api`, so that a
    /// decoder can refine it by the body).
    pub fn from_status(status: u16) -> Self {
        match status {
            400 | 409 | 422 => Self::InvalidRequest,
            401 => Self::Authentication,
            402 | 403 => Self::Permission,
            404 => Self::NotFound,
            413 => Self::RequestTooLarge,
            429 => Self::RateLimited,
            502 | 503 | 529 => Self::Overloaded,
            408 | 504 => Self::Timeout,
            _ => Self::Api,
        }
    }

    /// The kind of an answer with `status` and nothing else to go by: as
    /// [`ErrorKind::from_status`], except that any other 4xx (405, 415, 410, …) is the
    /// caller's mistake, an invalid request, never the server's.
    pub fn for_answer(status: u16) -> Self {
        match Self::from_status(status) {
            Self::Api if (400..500).contains(&status) => Self::InvalidRequest,
            kind => kind,
        }
    }

    /// The status that answers this kind by OpenAI's table (§6.8); the Anthropic and Gemini
    /// encoders differ where their providers do (529, and no 413 at Google).
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidRequest => 400,
            Self::Authentication => 401,
            Self::Permission => 403,
            Self::NotFound => 404,
            Self::RequestTooLarge => 413,
            Self::RateLimited => 429,
            Self::Api => 500,
            Self::Overloaded => 503,
            Self::Timeout => 504,
        }
    }
}

#[cfg(test)]
mod tests;

/// What kind of failure stopped a model call, so a caller can say what to do next: one
/// classification for the gateway and the agent, before a reply and inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureClass {
    /// No provider is set up for the model (no key, unknown model or provider).
    NotConfigured,
    /// The provider refused the credential (401, 403).
    AuthenticationRejected,
    /// Too many requests (429) after the retries.
    RateLimited,
    /// The provider failed (5xx, overloaded) after the retries.
    ServerError,
    /// The provider could not be reached, or stopped answering.
    Network,
    /// The provider answered something corvid cannot use (another 4xx, an unreadable reply).
    UnexpectedResponse,
}

impl FailureClass {
    /// The class of an upstream's error status.
    pub fn of_status(status: u16) -> Self {
        match status {
            401 | 403 => Self::AuthenticationRejected,
            402 => Self::NotConfigured,
            429 => Self::RateLimited,
            500..=599 => Self::ServerError,
            _ => Self::UnexpectedResponse,
        }
    }

    /// The class of an error that ended a stream already under way.
    pub fn of_stream_error(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Authentication | ErrorKind::Permission => Self::AuthenticationRejected,
            ErrorKind::RateLimited => Self::RateLimited,
            ErrorKind::Overloaded | ErrorKind::Api => Self::ServerError,
            ErrorKind::Timeout => Self::Network,
            ErrorKind::InvalidRequest | ErrorKind::NotFound | ErrorKind::RequestTooLarge => {
                Self::UnexpectedResponse
            }
        }
    }
}
