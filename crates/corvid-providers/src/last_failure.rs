//! Each upstream's last failed call, for the status page: when, the HTTP status or the cause,
//! and a short message. Noted where every HTTP call to a provider ends (`Upstream::call`), so
//! the gateway's requests and the agent's model calls land in the same place. What is kept is
//! cut to one short line with anything that looks like a key masked and URLs stripped of their
//! user and query parts: never a secret, never a request body (only the start of the
//! upstream's own error message).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::ProviderError;

/// The most characters of a failure's message kept.
const MESSAGE_CHARS: usize = 300;

/// A provider's last failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastFailure {
    /// When it failed, Unix milliseconds.
    pub at_ms: i64,
    /// The upstream's HTTP status, when it answered one.
    pub status: Option<u16>,
    /// `status`, `connect`, `timeout`, `transport`, `url` or `credential`.
    pub cause: &'static str,
    /// One line for people, cleaned (see the module comment).
    pub message: String,
}

/// The last failure of one upstream, and whether the call that ended last failed; shared by
/// every clone of it.
#[derive(Debug, Default)]
pub(crate) struct FailureLog {
    last: Mutex<Option<LastFailure>>,
    failing: AtomicBool,
}

impl FailureLog {
    pub(crate) fn note(&self, error: &ProviderError) {
        let failure = describe(error);
        *self.last.lock() = Some(failure);
        self.failing.store(true, Ordering::Relaxed);
    }

    /// A call succeeded: the provider is no longer failing (its last failure stays on record).
    pub(crate) fn succeeded(&self) {
        self.failing.store(false, Ordering::Relaxed);
    }

    pub(crate) fn last(&self) -> Option<LastFailure> {
        self.last.lock().clone()
    }

    /// The last failure, when no call has succeeded since (the provider is failing now).
    pub(crate) fn current(&self) -> Option<LastFailure> {
        if self.failing.load(Ordering::Relaxed) {
            self.last()
        } else {
            None
        }
    }
}

fn describe(error: &ProviderError) -> LastFailure {
    let (status, cause, message) = match error {
        ProviderError::Status { status, body, .. } => {
            let message = upstream_message(body).unwrap_or_default();
            (Some(status.as_u16()), "status", message)
        }
        ProviderError::Refused(refusal) => (
            Some(refusal.status.as_u16()),
            "status",
            refusal.message.clone(),
        ),
        ProviderError::Connect { .. } => (None, "connect", crate::error_chain(error)),
        ProviderError::Timeout { .. } => (None, "timeout", error.to_string()),
        ProviderError::Transport { .. } => (None, "transport", crate::error_chain(error)),
        ProviderError::InvalidUrl { .. } => (None, "url", error.to_string()),
        ProviderError::Route(_) => (None, "route", error.to_string()),
        ProviderError::InvalidCredential | ProviderError::Auth(_) => {
            (None, "credential", error.to_string())
        }
    };
    LastFailure {
        at_ms: now_ms(),
        status,
        cause,
        message: clean(&message),
    }
}

/// The message an error body carries (`error.message`, `message`, `error`, `detail`): every
/// dialect's error shape has one of them. Anything else in the body is not kept.
fn upstream_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let value = value
        .as_array()
        .and_then(|all| all.first())
        .unwrap_or(&value);
    [
        value.pointer("/error/message"),
        value.get("message"),
        value.get("error"),
        value.get("detail"),
    ]
    .into_iter()
    .flatten()
    .find_map(|found| found.as_str().map(str::to_owned))
}

/// One line, at most `MESSAGE_CHARS`, key-like words masked, URLs without user or query.
pub(crate) fn clean(text: &str) -> String {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|word| {
            if word.contains("://") {
                strip_url(word)
            } else if looks_like_key(word) {
                "****".to_owned()
            } else {
                word.to_owned()
            }
        })
        .collect();
    let line = words.join(" ");
    match line.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// A key's known prefixes, or a long run of key characters (API keys are 32 and more).
fn looks_like_key(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let prefixed = ["sk-", "xai-", "AIza", "gsk_", "Bearer"]
        .iter()
        .any(|prefix| word.starts_with(prefix) && word.len() > prefix.len() + 3);
    let keyish = word.len() >= 32
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    prefixed || keyish
}

fn strip_url(word: &str) -> String {
    let Some((scheme, rest)) = word.split_once("://") else {
        return word.to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let rest = match rest.split_once('/') {
        Some((authority, path)) => {
            let host = authority.rsplit('@').next().unwrap_or_default();
            format!("{host}/{path}")
        }
        None => rest.rsplit('@').next().unwrap_or_default().to_owned(),
    };
    format!("{scheme}://{rest}")
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests;
