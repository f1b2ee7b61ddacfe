//! One POST to the token endpoint, classified into tokens, a rejection, or a transient failure.
//!
//! Bodies quoted in errors are stripped of the secrets we sent and cut to 240 characters; the
//! body of a successful reply is never quoted (it holds tokens).

use std::time::Duration;

use serde::Deserialize;

use crate::tokens::TokenReply;
use crate::{Secret, redact};

/// How long one token-endpoint call may take, connection included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest token-endpoint body quoted in a message.
const BODY_LIMIT: usize = 240;

/// A transient failure of one token-endpoint call, described without secrets (and without the
/// URL's details: `describe` keeps a reqwest error's causes only).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenEndpointError {
    #[error("could not reach the token endpoint: {0}")]
    Unreachable(String),
    #[error("the token endpoint's reply was cut off: {0}")]
    CutOff(String),
    #[error("the token endpoint did not answer within {} s", REQUEST_TIMEOUT.as_secs())]
    Timeout,
    /// serde's message gives a position, never the input (the body holds tokens).
    #[error("the token endpoint answered {status} with unexpected JSON: {source}")]
    UnexpectedJson {
        status: reqwest::StatusCode,
        #[source]
        source: serde_json::Error,
    },
    /// A 5xx (or other non-4xx failure); `body` is redacted and cut.
    #[error("the token endpoint answered {status}: {body}")]
    Status {
        status: reqwest::StatusCode,
        body: String,
    },
}

/// What the token endpoint said.
pub(crate) enum TokenOutcome {
    Tokens(TokenReply),
    /// A 4xx answer.
    Rejected(Rejection),
}

/// A 4xx answer from the token endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Rejection {
    pub(crate) status: u16,
    /// The OAuth `error` code (`invalid_grant`, `authorization_pending`, ...).
    pub(crate) error: Option<String>,
    pub(crate) description: Option<String>,
    /// The body, redacted and truncated.
    pub(crate) body: String,
}

impl Rejection {
    /// 400/401/403: the grant is dead; anything else may pass.
    pub(crate) fn is_fatal_for_refresh(&self) -> bool {
        matches!(self.status, 400 | 401 | 403)
    }

    /// `invalid_grant: the refresh token was revoked` or the status and body.
    pub(crate) fn summary(&self) -> String {
        match (&self.error, &self.description) {
            (Some(error), Some(description)) => {
                format!("{} {error}: {}", self.status, truncate(description))
            }
            (Some(error), None) => format!("{} {error}", self.status),
            _ => format!("{} {}", self.status, self.body),
        }
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    error_description: Option<String>,
}

/// POSTs `form` to `url` with `Accept: application/json`. `Err` is a transient failure (network,
/// timeout, 5xx, a malformed success) described without secrets; `secrets` are the values sent
/// in the form, masked wherever the server echoes them.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    url: &str,
    form: &[(&str, &str)],
    secrets: &[&Secret],
) -> Result<TokenOutcome, TokenEndpointError> {
    let call = async {
        let response = http
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .form(form)
            .send()
            .await
            .map_err(|err| TokenEndpointError::Unreachable(describe(err)))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|err| TokenEndpointError::CutOff(describe(err)))?;
        Ok::<_, TokenEndpointError>((status, body))
    };
    let (status, body) = tokio::time::timeout(REQUEST_TIMEOUT, call)
        .await
        .map_err(|_| TokenEndpointError::Timeout)??;

    if status.is_success() {
        return serde_json::from_str::<TokenReply>(&body)
            .map(TokenOutcome::Tokens)
            .map_err(|source| TokenEndpointError::UnexpectedJson { status, source });
    }
    let quoted = truncate(&redact(&body, secrets));
    if status.is_client_error() {
        let parsed = serde_json::from_str::<ErrorBody>(&body).ok();
        let (error, description) = parsed
            .map(|parsed| {
                let error = parsed.error.and_then(|value| match value {
                    serde_json::Value::String(code) => Some(redact(&code, secrets)),
                    _ => None,
                });
                let description = parsed.error_description.map(|text| redact(&text, secrets));
                (error, description)
            })
            .unwrap_or_default();
        return Ok(TokenOutcome::Rejected(Rejection {
            status: status.as_u16(),
            error,
            description,
            body: quoted,
        }));
    }
    Err(TokenEndpointError::Status {
        status,
        body: quoted,
    })
}

/// A reqwest error with its causes (`error sending request: connection refused`), without the
/// URL (it names only the endpoint, but the causes say more).
pub(crate) fn describe(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `text` trimmed and cut to 240 characters.
pub(crate) fn truncate(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(BODY_LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
