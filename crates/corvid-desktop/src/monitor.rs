//! The providers failing now, read from the gateway's own registry (the same upstreams the
//! page's Status tab reports on), cut to a few words for a menu line.

use corvid_providers::{LastFailure, Registry};

use crate::view::Failing;

/// The most characters of a failure's message shown in the menu.
const REASON_CHARS: usize = 80;

/// Every enabled provider whose last call failed with none succeeding since.
pub(crate) fn failing(registry: &Registry) -> Vec<Failing> {
    registry
        .providers()
        .iter()
        .filter(|provider| provider.is_available())
        .filter_map(|provider| {
            let upstream = provider.upstream().failing();
            let account = provider
                .zed_service()
                .and_then(corvid_providers::ZedService::failing);
            let failure = upstream
                .into_iter()
                .chain(account)
                .max_by_key(|failure| failure.at_ms)?;
            Some(Failing {
                provider: provider.name().to_owned(),
                reason: reason(&failure),
            })
        })
        .collect()
}

/// `502 the upstream said …`, or `connect: …`: the status or cause, then the message, short.
pub(crate) fn reason(failure: &LastFailure) -> String {
    let head = match failure.status {
        Some(status) => status.to_string(),
        None => failure.cause.to_owned(),
    };
    let text = if failure.message.is_empty() {
        head
    } else if failure.status.is_some() {
        format!("{head} {}", failure.message)
    } else {
        format!("{head}: {}", failure.message)
    };
    match text.char_indices().nth(REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: Option<u16>, cause: &'static str, message: &str) -> LastFailure {
        LastFailure {
            at_ms: 1,
            status,
            cause,
            message: message.to_owned(),
        }
    }

    #[test]
    fn a_reason_is_the_status_or_the_cause_then_the_message_cut_short() {
        assert_eq!(
            reason(&failure(Some(502), "status", "bad gateway")),
            "502 bad gateway"
        );
        assert_eq!(reason(&failure(Some(500), "status", "")), "500");
        assert_eq!(
            reason(&failure(None, "connect", "connection refused")),
            "connect: connection refused"
        );
        let long = reason(&failure(None, "transport", &"x".repeat(200)));
        assert_eq!(long.chars().count(), REASON_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
