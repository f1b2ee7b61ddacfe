//! Zed's failures, before and during a stream, in corvid's vocabulary (reference §7): the
//! canonical [`ErrorKind`], the HTTP status to show an OpenAI or Anthropic client, whether a
//! retry may help, and a sentence a person understands for payment and plan limits.

use std::time::Duration;

use corvid_wire::model::{ErrorKind, WireError};
use http::HeaderMap;
use serde_json::Value;

use super::account::ZedPlan;
use crate::Retry;
use crate::error::{ProviderError, Refusal};
use crate::transport::{BoxError, SendError};

/// Where to manage a Zed account.
pub const ACCOUNT_URL: &str = "https://zed.dev/account";

/// Why a call to Zed failed before any output. Messages never carry a token.
#[derive(Debug, thiserror::Error)]
pub enum ZedError {
    /// The account API refused the sign-in (401): it was revoked or expired.
    #[error(
        "the Zed sign-in is no longer valid (Zed answered 401); run `corvid login zed` to sign in \
         again"
    )]
    SignedOut,
    /// The account has no organization, so no LLM token can be minted.
    #[error(
        "this Zed account has no organization to use hosted models under; check it at \
         {ACCOUNT_URL}"
    )]
    NoOrganization,
    /// 402, or an old-style plan limit: the plan has no (more) hosted-model access.
    #[error("{message}")]
    PaymentRequired {
        plan: Option<ZedPlan>,
        message: String,
    },
    /// Any other non-success reply.
    #[error("Zed answered {status}: {message}")]
    Status {
        /// The status the failure stands for (the upstream provider's when Zed relayed one).
        status: u16,
        kind: ErrorKind,
        /// Zed's error code (`upstream_http_429`, …), when the body had one.
        code: Option<String>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// Zed could not be reached (DNS, refused, TLS).
    #[error("could not reach Zed at {url}")]
    Connect {
        url: String,
        #[source]
        source: BoxError,
    },
    /// Zed took the request and sent no reply head in time. Not retried, as for every
    /// provider: Zed may be working on it.
    #[error("Zed at {url} did not answer in time")]
    Timeout { url: String },
    /// The request failed for another reason before the reply's head.
    #[error("the request to Zed at {url} failed")]
    Transport {
        url: String,
        #[source]
        source: BoxError,
    },
    /// A reply corvid cannot read.
    #[error("Zed sent a reply corvid cannot read ({what}): {message}")]
    Decode { what: &'static str, message: String },
    /// The credential holds characters that cannot go in a header.
    #[error(
        "the Zed sign-in holds characters that cannot be sent in a header; run `corvid login zed` again"
    )]
    InvalidCredential,
}

impl ZedError {
    /// The retry decision (reference §7.3). An exhaustive match: a new variant must decide.
    pub fn retry(&self) -> Retry {
        match self {
            Self::Status {
                status,
                kind,
                retry_after,
                ..
            } => {
                if retry_after.is_some() || is_retryable_status(*status) || is_retryable_kind(*kind)
                {
                    Retry::After(*retry_after)
                } else {
                    Retry::No
                }
            }
            Self::Connect { .. } => Retry::After(None),
            Self::Timeout { .. } | Self::Transport { .. } => Retry::No,
            Self::SignedOut
            | Self::NoOrganization
            | Self::PaymentRequired { .. }
            | Self::Decode { .. }
            | Self::InvalidCredential => Retry::No,
        }
    }

    /// The HTTP status to answer a client with.
    pub fn status(&self) -> u16 {
        match self {
            Self::SignedOut | Self::InvalidCredential => 401,
            Self::NoOrganization => 403,
            Self::PaymentRequired { .. } => 402,
            Self::Status { status, .. } => *status,
            Self::Timeout { .. } => 504,
            Self::Connect { .. } | Self::Transport { .. } | Self::Decode { .. } => 502,
        }
    }

    /// The canonical error, for a client in any dialect.
    pub fn to_wire_error(&self) -> WireError {
        let (kind, code) = match self {
            Self::SignedOut | Self::InvalidCredential => (ErrorKind::Authentication, None),
            Self::NoOrganization | Self::PaymentRequired { .. } => (ErrorKind::Permission, None),
            Self::Status { kind, code, .. } => (*kind, code.clone()),
            Self::Timeout { .. } => (ErrorKind::Timeout, None),
            Self::Connect { .. } | Self::Transport { .. } | Self::Decode { .. } => {
                (ErrorKind::Api, None)
            }
        };
        WireError::new(kind, self.to_string()).with_code(code)
    }
}

impl ZedError {
    /// A request that got no reply head, in Zed's words.
    pub(crate) fn from_send(url: &str, error: SendError) -> Self {
        let url = url.to_owned();
        match error {
            SendError::Connect(source) => Self::Connect { url, source },
            SendError::Timeout => Self::Timeout { url },
            SendError::Other(source) => Self::Transport { url, source },
        }
    }
}

/// The Zed account is one more backend: its failures are [`ProviderError`]s, decided and
/// classified like every provider's. Transport failures keep their causes; a refusal keeps
/// Zed's wording (a dead sign-in says to run `corvid login zed`), status and retry rule.
impl From<ZedError> for ProviderError {
    fn from(error: ZedError) -> Self {
        let retryable = matches!(error.retry(), Retry::After(_));
        match error {
            ZedError::Connect { url, source } => ProviderError::Connect { url, source },
            ZedError::Timeout { url } => ProviderError::Timeout { url },
            ZedError::Transport { url, source } => ProviderError::Transport { url, source },
            other => {
                let wire = other.to_wire_error();
                let retry_after = match &other {
                    ZedError::Status { retry_after, .. } => *retry_after,
                    _ => None,
                };
                ProviderError::Refused(Refusal {
                    status: http::StatusCode::from_u16(other.status())
                        .unwrap_or(http::StatusCode::BAD_GATEWAY),
                    kind: wire.kind,
                    code: wire.code_str().map(str::to_owned),
                    message: wire.message,
                    retry_after,
                    retryable,
                })
            }
        }
    }
}

/// A failure Zed reported inside a stream (`{"status":{"failed":…}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct ZedFailure {
    pub code: String,
    /// Zed's (or the upstream provider's) own wording.
    pub message: String,
    pub request_id: Option<String>,
    pub retry_after: Option<Duration>,
    pub kind: ErrorKind,
    /// The HTTP status the failure stands for, when the code names one.
    pub status: Option<u16>,
    /// The plan has no (more) hosted-model access.
    pub payment_required: bool,
}

impl ZedFailure {
    /// The failure as the error of a call that produced no output: its status (502 when the
    /// code names none), kind, code and `retry_after`; a payment failure keeps its wording.
    pub fn into_error(self, plan: Option<ZedPlan>) -> ZedError {
        if self.payment_required {
            return payment_required(plan, &self.message);
        }
        ZedError::Status {
            status: self.status.unwrap_or(502),
            kind: self.kind,
            message: format!("{} ({})", self.message, self.code),
            code: Some(self.code),
            retry_after: self.retry_after,
        }
    }

    /// Whether the request may be sent again (only before any output reached the client).
    pub fn retry(&self) -> Retry {
        if self.payment_required {
            return Retry::No;
        }
        if self.retry_after.is_some()
            || self.status.is_some_and(is_retryable_status)
            || is_retryable_kind(self.kind)
        {
            Retry::After(self.retry_after)
        } else {
            Retry::No
        }
    }
}

/// Statuses Zed's agent retries: 5xx, 408, 425, 429 (and 529, which is 5xx).
fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 425 | 429) || (500..600).contains(&status)
}

fn is_retryable_kind(kind: ErrorKind) -> bool {
    match kind {
        ErrorKind::RateLimited | ErrorKind::Overloaded | ErrorKind::Timeout | ErrorKind::Api => {
            true
        }
        ErrorKind::InvalidRequest
        | ErrorKind::Authentication
        | ErrorKind::Permission
        | ErrorKind::NotFound
        | ErrorKind::RequestTooLarge => false,
    }
}

/// The category of a failure code (reference §7.2) and the status it stands for. `message`
/// may be rewritten (an `upstream_http_error` wraps the upstream's JSON).
pub(crate) fn classify_code(code: &str, message: &mut String) -> (ErrorKind, Option<u16>) {
    let numbered = |prefix: &str| {
        code.strip_prefix(prefix)
            .and_then(|digits| digits.parse::<u16>().ok())
    };
    let (kind, status) = if code == "upstream_http_error" {
        let inner: Option<Value> = serde_json::from_str(message).ok();
        let status = inner
            .as_ref()
            .and_then(|inner| inner["upstream_status"].as_u64())
            .and_then(|status| u16::try_from(status).ok());
        if let Some(text) = inner.as_ref().and_then(|inner| inner["message"].as_str()) {
            *message = text.to_owned();
        }
        match status {
            Some(status) => (kind_from_status(status), Some(status)),
            None => (ErrorKind::Api, None),
        }
    } else if let Some(status) = numbered("upstream_http_").or_else(|| numbered("http_")) {
        (kind_from_status(status), Some(status))
    } else {
        match code {
            "context_length_exceeded" | "request_too_large" => {
                (ErrorKind::RequestTooLarge, Some(413))
            }
            "invalid_request_error" | "invalid_encrypted_content" => {
                (ErrorKind::InvalidRequest, Some(400))
            }
            "authentication_error" => (ErrorKind::Authentication, Some(401)),
            "permission_error" => (ErrorKind::Permission, Some(403)),
            "billing_error" | "payment_required_error" | "payment_required" => {
                (ErrorKind::Permission, Some(402))
            }
            "not_found_error" => (ErrorKind::NotFound, Some(404)),
            "conflict_error" => (ErrorKind::InvalidRequest, Some(409)),
            "rate_limit_error" | "rate_limit_exceeded" => (ErrorKind::RateLimited, Some(429)),
            "timeout_error" | "request_timed_out" => (ErrorKind::Timeout, Some(504)),
            "api_error" | "internal_server_error" => (ErrorKind::Api, Some(500)),
            "overloaded_error" => (ErrorKind::Overloaded, Some(529)),
            _ => (ErrorKind::Api, None),
        }
    };
    if is_prompt_too_long(message) {
        return (ErrorKind::RequestTooLarge, status.or(Some(413)));
    }
    (kind, status)
}

/// The canonical kind of an HTTP status; 402 counts as a permission problem.
pub(crate) fn kind_from_status(status: u16) -> ErrorKind {
    match status {
        402 => ErrorKind::Permission,
        425 => ErrorKind::RateLimited,
        other => ErrorKind::from_status(other),
    }
}

fn is_prompt_too_long(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("prompt is too long") || lower.contains("context window")
}

/// Reads a non-success reply before streaming (reference §7.1) into a [`ZedError`].
pub(crate) fn error_from_reply(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    plan: Option<ZedPlan>,
) -> ZedError {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        json.as_ref()
            .and_then(|json| json[name].as_str())
            .map(str::to_owned)
    };
    let code = field("code");
    let mut message = field("message")
        .or_else(|| field("error"))
        .unwrap_or_else(|| body_text(status, body));
    let plan_limit = headers.contains_key("x-zed-llm-max-monthly-spend-reached")
        || headers.contains_key("x-zed-subscription-limit-resource");
    if status == 402 || (status == 403 && plan_limit) {
        return payment_required(plan, &message);
    }
    let mut mapped = status;
    // Zed's body `retry_after` wins; an HTTP `Retry-After` counts too.
    let mut retry_after = headers
        .get(http::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(crate::parse_retry_after);
    if let Some(code) = code
        .as_deref()
        .filter(|code| code.starts_with("upstream_http_"))
    {
        let upstream = json
            .as_ref()
            .and_then(|json| json["upstream_status"].as_u64())
            .and_then(|status| u16::try_from(status).ok());
        mapped = match upstream {
            Some(upstream) => upstream,
            None if code.ends_with("_error") => status,
            None => code
                .trim_start_matches("upstream_http_")
                .parse()
                .unwrap_or(status),
        };
        if let Some(after) = json
            .as_ref()
            .and_then(|json| json["retry_after"].as_f64())
            .and_then(seconds)
        {
            retry_after = Some(after);
        }
    }
    let kind = if is_prompt_too_long(&message) {
        ErrorKind::RequestTooLarge
    } else {
        kind_from_status(mapped)
    };
    if code.as_deref() == Some("payment_required") || mapped == 402 {
        return payment_required(plan, &message);
    }
    if message.is_empty() {
        message = body_text(mapped, b"");
    }
    ZedError::Status {
        status: mapped,
        kind,
        code,
        message,
        retry_after,
    }
}

/// A number of seconds as a duration, when it is a sane one.
pub(crate) fn seconds(value: f64) -> Option<Duration> {
    (0.0..86_400.0)
        .contains(&value)
        .then(|| Duration::from_secs_f64(value))
}

/// The start of a non-JSON body, else the status's name.
fn body_text(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return http::StatusCode::from_u16(status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .unwrap_or("error")
            .to_owned();
    }
    text.chars().take(300).collect()
}

/// The 402 error, worded for a person: what Zed said, the plan, what to do.
pub(crate) fn payment_required(plan: Option<ZedPlan>, zed_said: &str) -> ZedError {
    ZedError::PaymentRequired {
        plan,
        message: payment_message(plan, zed_said),
    }
}

/// "Zed declined the request (payment required): …. Your Zed plan is Pro: …".
pub(crate) fn payment_message(plan: Option<ZedPlan>, zed_said: &str) -> String {
    let said = zed_said.trim().trim_end_matches('.');
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    };
    let advice = match plan {
        Some(plan) => format!(
            "Your Zed plan is {}: {}",
            plan.label(),
            plan.payment_advice()
        ),
        None => format!(
            "Check your Zed plan and spending limit at {ACCOUNT_URL}; hosted models need Zed Pro \
             (or a trial, Student or Business plan) with credit left"
        ),
    };
    format!("Zed declined the request (payment required){said}. {advice}.")
}
