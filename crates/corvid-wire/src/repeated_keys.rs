//! Test bodies with a top-level key written twice, for the typed decoders' "plain" paths, which
//! must never read one.

use serde_json::Value;

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
