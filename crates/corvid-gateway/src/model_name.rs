//! The edge check on a model name a client sent, before corvid routes it or lets it near an
//! upstream URL (Gemini's model is a path segment) or a log line: short, no control
//! characters, nothing that reads as URL syntax (`?`, `#`, `\`), no `.` or `..` segment.
//! Anything else — `provider/model`, `llama3:8b`, spaces, non-ASCII — is a name to route.

use corvid_wire::Dialect;

use crate::error::ApiError;

/// The longest model name accepted; real ones are far shorter.
pub(crate) const MAX_LEN: usize = 256;

/// `Ok` when `name` may be routed; otherwise a 400 in the caller's dialect saying why.
pub(crate) fn check(name: &str, inbound: Dialect) -> Result<(), ApiError> {
    match problem(name) {
        None => Ok(()),
        Some(why) => Err(ApiError::invalid_request(format!(
            "`model` is not a valid model name: {why}"
        ))
        .in_dialect(inbound)),
    }
}

/// Why `name` is refused, if it is.
fn problem(name: &str) -> Option<&'static str> {
    if name.len() > MAX_LEN {
        return Some("it is longer than 256 bytes");
    }
    if name.chars().any(char::is_control) {
        return Some("it contains a control character");
    }
    if name.contains(['?', '#', '\\']) {
        return Some("it contains `?`, `#` or `\\`");
    }
    if name.split('/').any(|segment| matches!(segment, "." | "..")) {
        return Some("it contains a `.` or `..` path segment");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn routable_names_pass_and_url_or_log_syntax_does_not() {
        for good in [
            "",
            "grok-4",
            "xai/grok-4",
            "openrouter/anthropic/claude-sonnet-4",
            "llama3:8b",
            "my model",
            "modèle",
            "a..b",
            &"m".repeat(256),
        ] {
            assert_eq!(problem(good), None, "{good:?}");
        }
        for bad in [
            "..",
            "../../v1/files",
            "gemini/./x",
            "x/..",
            "m?key=abc",
            "m#frag",
            "a\\..\\b",
            "m\0",
            "m\nINFO forged",
            "m\u{1b}[31m",
            "m\u{7f}",
            "m\u{85}",
            &"m".repeat(257),
        ] {
            assert!(problem(bad).is_some(), "{bad:?}");
        }
    }
}
