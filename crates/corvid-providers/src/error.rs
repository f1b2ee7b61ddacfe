//! Why an upstream call failed, whether a retry may help ([`ProviderError::retry`]) and what
//! kind of failure it was for a person ([`ProviderError::class`]): one error type for every
//! backend — an HTTP provider's and the Zed account's — so each failure is decided once.

use std::time::Duration;

use bytes::Bytes;
use corvid_auth::AuthError;
use corvid_wire::model::ErrorKind;
use corvid_wire::{Dialect, codec};

use crate::transport::BoxError;
use http::StatusCode;

/// Why a model could not be routed. Messages list what would work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("unknown provider `{provider}` in model `{model}`; configured providers: {}", available.join(", "))]
    UnknownProvider {
        provider: String,
        model: String,
        available: Vec<String>,
    },
    #[error("provider `{provider}` is not set up: {reason}")]
    Unavailable { provider: String, reason: String },
    #[error("model `{model}` is offered by several providers; name one of: {}", candidates.join(", "))]
    Ambiguous {
        model: String,
        candidates: Vec<String>,
    },
    #[error("no provider serves model `{model}`; use provider/model with one of: {}", available.join(", "))]
    UnknownModel {
        model: String,
        available: Vec<String>,
    },
}

/// Why an upstream call failed. Every variant says where it happened and whether a retry is
/// safe (see [`ProviderError::retry`]).
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The upstream answered with a non-success status (after any retries).
    #[error("upstream answered {status}")]
    Status {
        status: StatusCode,
        /// The start of the upstream's error body (capped), for rewrapping in the caller's
        /// dialect.
        body: Bytes,
        retry_after: Option<Duration>,
    },
    /// The upstream could not be reached (DNS, refused, TLS).
    #[error("could not reach the upstream at {url}")]
    Connect {
        url: String,
        #[source]
        source: BoxError,
    },
    /// The upstream took the request and sent no response headers in time. Not retried: the
    /// upstream may be working on it, and sending it again would repeat that work (and the
    /// wait) — a connect timeout is a [`ProviderError::Connect`] and is retried.
    #[error("the upstream at {url} did not answer in time")]
    Timeout { url: String },
    /// The request could not be sent for another reason.
    #[error("request to the upstream at {url} failed")]
    Transport {
        url: String,
        #[source]
        source: BoxError,
    },
    /// The configured upstream URL cannot be parsed.
    #[error("the upstream URL {url} is not valid")]
    InvalidUrl { url: String },
    /// The credential holds characters that cannot be sent in an HTTP header.
    #[error("the configured credential contains characters that cannot be sent in a header")]
    InvalidCredential,
    /// No usable credential.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// A backend that reads its upstream's answers itself (the Zed account) refused the call,
    /// in words already meant for the caller.
    #[error("{}", .0.message)]
    Refused(Refusal),
    /// The model could not be routed to a provider (the in-process model client's calls; the
    /// gateway answers those itself before calling). Nothing was sent.
    #[error(transparent)]
    Route(#[from] RouteError),
}

/// A refusal a backend has already read: the status to answer with, the canonical kind, the
/// upstream's code, the sentence for the caller, and whether and when to try again.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub status: StatusCode,
    pub kind: ErrorKind,
    pub code: Option<String>,
    pub message: String,
    pub retry_after: Option<Duration>,
    /// The backend's own rule says a retry may help (Zed's: 5xx, 408, 425, 429, a
    /// `retry_after`, a transient kind).
    pub retryable: bool,
}

/// What kind of failure stopped a model call (defined beside `ErrorKind` in corvid-wire, so the
/// agent classifies a reply that broke off by the same rule as the gateway).
pub use corvid_wire::model::FailureClass;

/// A failed call and how many requests it sent (0 when none left corvid: no credential, a bad
/// URL), for the ledger. It reads as the [`ProviderError`] it carries.
#[derive(Debug)]
pub struct CallError {
    pub error: ProviderError,
    pub attempts: u32,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(out)
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl std::ops::Deref for CallError {
    type Target = ProviderError;

    fn deref(&self) -> &ProviderError {
        &self.error
    }
}

impl CallError {
    /// A model that could not be routed: no request left corvid.
    pub fn route(error: RouteError) -> Self {
        Self {
            error: ProviderError::Route(error),
            attempts: 0,
        }
    }

    /// How long the upstream (or a backend's refusal) asked to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        match &self.error {
            ProviderError::Status { retry_after, .. } => *retry_after,
            ProviderError::Refused(refusal) => refusal.retry_after,
            _ => None,
        }
    }

    /// The sentence a person is shown: an upstream's error body is read in its own `dialect`
    /// (`None` only when the model has no route, and then the failure says so); a network
    /// failure names its causes.
    pub fn message(&self, dialect: Option<Dialect>) -> String {
        let error = &self.error;
        match error {
            ProviderError::Status { status, body, .. } => {
                let wire = codec::decode_error(dialect.unwrap_or_default(), status.as_u16(), body);
                format!("{} ({})", wire.message, status.as_u16())
            }
            ProviderError::Refused(refusal) => refusal.message.clone(),
            ProviderError::Connect { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Transport { .. } => crate::error_chain(error),
            ProviderError::Auth(_)
            | ProviderError::InvalidCredential
            | ProviderError::InvalidUrl { .. }
            | ProviderError::Route(_) => error.to_string(),
        }
    }
}

impl From<CallError> for ProviderError {
    fn from(failed: CallError) -> Self {
        failed.error
    }
}

/// Whether a failed call may be tried again at the same URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    No,
    /// Yes, after the upstream's `Retry-After` if it gave one.
    After(Option<Duration>),
}

impl ProviderError {
    /// The retry decision. Callers also refuse once the first byte has gone downstream.
    pub fn retry(&self) -> Retry {
        match self {
            Self::Status {
                status,
                retry_after,
                ..
            } if is_retryable_status(*status) => Retry::After(*retry_after),
            Self::Status { .. }
            | Self::Timeout { .. }
            | Self::Transport { .. }
            | Self::InvalidCredential
            | Self::InvalidUrl { .. }
            | Self::Route(_) => Retry::No,
            Self::Connect { .. } => Retry::After(None),
            Self::Auth(err) if err.is_retryable() => Retry::After(None),
            Self::Auth(_) => Retry::No,
            Self::Refused(refusal) if refusal.retryable => Retry::After(refusal.retry_after),
            Self::Refused(_) => Retry::No,
        }
    }

    /// The one classification of a failed call, for the agent and every other caller that
    /// says what to do next. Exhaustive, like [`ProviderError::retry`].
    pub fn class(&self) -> FailureClass {
        match self {
            Self::Status { status, .. } => FailureClass::of_status(status.as_u16()),
            // A backend's own lookup found no such model (Zed: not on the account's list).
            Self::Refused(refusal) if refusal.status == StatusCode::NOT_FOUND => {
                FailureClass::NotConfigured
            }
            Self::Refused(refusal) => FailureClass::of_status(refusal.status.as_u16()),
            Self::Connect { .. } | Self::Timeout { .. } | Self::Transport { .. } => {
                FailureClass::Network
            }
            Self::Auth(auth) if auth.is_retryable() => FailureClass::Network,
            Self::Auth(_) | Self::InvalidCredential | Self::InvalidUrl { .. } | Self::Route(_) => {
                FailureClass::NotConfigured
            }
        }
    }

    /// The status the upstream answered (or a backend's refusal stands for); 0 when none came.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::Status { status, .. } => status.as_u16(),
            Self::Refused(refusal) => refusal.status.as_u16(),
            Self::Connect { .. }
            | Self::Timeout { .. }
            | Self::Transport { .. }
            | Self::InvalidUrl { .. }
            | Self::InvalidCredential
            | Self::Auth(_)
            | Self::Route(_) => 0,
        }
    }
}

/// The statuses the seed retries — rate limited, bad gateway, unavailable, gateway timeout —
/// plus Anthropic's 529 "overloaded" (no other provider uses 529).
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504 | 529)
}

/// An error and its causes, outermost first (`could not reach …: dns error: …`), for logs and
/// client messages: the top line alone never says why a connection failed. A cause whose text
/// the one above it already ends with is left out (hyper and reqwest repeat themselves).
/// corvid's errors carry no secret in their text, and neither do the transport's causes.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !line.is_empty() && !text.ends_with(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}
