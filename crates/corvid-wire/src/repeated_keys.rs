//! Test bodies with a top-level key written twice, for the typed decoders' "plain" paths, which
//! must never read one.

use proptest::prelude::*;
use serde_json::Value;

use crate::model::{ChatRequest, DecodeError};

/// `body`'s fields as JSON text, with field `repeat` written a second time (under an escaped
/// spelling of its name when `escaped`) after the others.
pub(crate) fn with_repeated_field(body: &Value, repeat: usize, escaped: bool) -> Option<String> {
    let fields = body.as_object()?;
    let (name, value) = fields.iter().nth(repeat % fields.len().max(1))?;
    let mut text: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("{}:{value}", Value::from(name.as_str())))
        .collect();
    let spelled = if escaped {
        let mut chars = name.chars();
        let first = chars.next()?;
        format!("\"\\u{:04x}{}\"", u32::from(first), chars.as_str())
    } else {
        Value::from(name.as_str()).to_string()
    };
    text.push(format!("{spelled}:{value}"));
    Some(format!("{{{}}}", text.join(",")))
}

/// What the gateway relies on to skip its pre-scan, for one dialect's `plain` reader against
/// its full `decode`: a body the plain path reads has `model` a string and reads as `decode`
/// reads it; the same body with a top-level key written twice is never read.
pub(crate) fn check_plain_path(
    body: &Value,
    repeat: usize,
    escaped: bool,
    plain: fn(&[u8]) -> Option<ChatRequest>,
    decode: fn(&[u8]) -> Result<ChatRequest, DecodeError>,
) -> Result<(), TestCaseError> {
    let text = body.to_string();
    if let Some(request) = plain(text.as_bytes()) {
        prop_assert_eq!(
            body.get("model").and_then(Value::as_str),
            Some(request.model.as_str())
        );
        prop_assert_eq!(Ok(request), decode(text.as_bytes()));
    }
    if let Some(repeated) = with_repeated_field(body, repeat, escaped) {
        prop_assert!(plain(repeated.as_bytes()).is_none(), "read {}", repeated);
    }
    Ok(())
}
