//! Which failures another target or another key could fix. Decided once here, for the
//! gateway's routes and the key pools: a refusal that would be the same anywhere (an invalid
//! request, a content policy) is never sent elsewhere.

use std::time::Duration;

use http::StatusCode;

use crate::error::ProviderError;

/// Words of an error body that say an account's quota or credit is spent (OpenAI's
/// `insufficient_quota`, Anthropic's "credit balance is too low", plan limits).
const QUOTA_WORDS: [&str; 4] = ["insufficient_quota", "credit balance", "quota", "billing"];

/// Whether another target could answer where this failure happened before any output:
/// rate limited or quota spent (429, 402), the provider broken or overloaded (5xx, 529), the
/// model not there (404), the credential missing or refused (401), the connection failing.
/// Never a 400 (the request itself, unless it says the credit is spent), 403 (a policy) or
/// 413/422.
pub fn fails_over(error: &ProviderError) -> bool {
    match error {
        ProviderError::Status { status, body, .. } => {
            status_fails_over(*status) || says_quota(body)
        }
        ProviderError::Refused(refusal) => {
            refusal.retryable
                || status_fails_over(refusal.status)
                || says_quota(refusal.message.as_bytes())
                || refusal
                    .code
                    .as_deref()
                    .is_some_and(|code| says_quota(code.as_bytes()) || code.contains("limit"))
        }
        ProviderError::Connect { .. }
        | ProviderError::Timeout { .. }
        | ProviderError::Transport { .. }
        | ProviderError::InvalidUrl { .. }
        | ProviderError::InvalidCredential
        | ProviderError::Auth(_) => true,
        // Another key of the same provider routes no differently.
        ProviderError::Route(_) => false,
    }
}

/// `Some(wait)` when this failure means the key should rest (rate limited, quota spent),
/// with the provider's `Retry-After` when it gave one.
pub fn rests_key(error: &ProviderError) -> Option<Option<Duration>> {
    match error {
        ProviderError::Status {
            status,
            body,
            retry_after,
        } => match status.as_u16() {
            429 | 402 => Some(*retry_after),
            400 | 403 if says_quota(body) => Some(*retry_after),
            _ => None,
        },
        ProviderError::Refused(refusal) if matches!(refusal.status.as_u16(), 429 | 402) => {
            Some(refusal.retry_after)
        }
        _ => None,
    }
}

fn status_fails_over(status: StatusCode) -> bool {
    matches!(status.as_u16(), 401 | 402 | 404 | 408 | 429 | 529) || status.is_server_error()
}

fn says_quota(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    QUOTA_WORDS.iter().any(|word| text.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn status(code: u16, body: &str) -> ProviderError {
        ProviderError::Status {
            status: StatusCode::from_u16(code).unwrap(),
            body: Bytes::from(body.to_owned()),
            retry_after: Some(Duration::from_secs(7)),
        }
    }

    #[test]
    fn what_another_target_could_fix_fails_over() {
        for code in [401, 402, 404, 429, 500, 502, 503, 529] {
            assert!(fails_over(&status(code, "{}")), "{code}");
        }
        for code in [400, 403, 413, 422] {
            assert!(!fails_over(&status(code, "{\"error\":\"bad\"}")), "{code}");
        }
        assert!(fails_over(&status(
            400,
            r#"{"error":{"message":"Your credit balance is too low"}}"#
        )));
        assert!(fails_over(&ProviderError::Timeout { url: "u".into() }));
    }

    #[test]
    fn rate_limits_and_spent_quota_rest_the_key() {
        assert_eq!(
            rests_key(&status(429, "{}")),
            Some(Some(Duration::from_secs(7)))
        );
        assert!(rests_key(&status(400, r#"{"code":"insufficient_quota"}"#)).is_some());
        assert!(rests_key(&status(500, "{}")).is_none());
        assert!(rests_key(&status(400, "{}")).is_none());
    }
}
