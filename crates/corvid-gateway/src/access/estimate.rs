//! What a request may cost, before it is sent: its model (from the body, or Gemini's path) and
//! its tokens — the body's bytes over three for the input (more than any tokenizer counts for
//! text, so the hold errs high), plus its output cap or the configured default.

use crate::top_level::TopLevel;

/// The model a generation request names: the body's `model`, or the path's for Gemini.
pub(super) fn model_of(path: &str, top: Option<&TopLevel<'_>>) -> Option<String> {
    if let Some(rest) = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))
    {
        return Some(rest.split(':').next().unwrap_or(rest).to_owned());
    }
    top.and_then(|top| top.str("model"))
        .map(|model| model.into_owned())
}

/// The output cap the request sets, under any dialect's name for it.
pub(super) fn output_cap(top: &TopLevel<'_>) -> Option<u64> {
    for name in ["max_tokens", "max_completion_tokens", "max_output_tokens"] {
        if let Some(raw) = top.raw(name)
            && let Ok(cap) = std::str::from_utf8(raw)
                .unwrap_or_default()
                .trim()
                .parse::<u64>()
        {
            return Some(cap);
        }
    }
    let config = top.raw("generationConfig")?;
    let config: serde_json::Value = serde_json::from_slice(config).ok()?;
    config.get("maxOutputTokens")?.as_u64()
}

/// Input tokens, estimated high from the body's size.
pub(super) fn input_tokens(body: &[u8]) -> u64 {
    (body.len() as u64).div_ceil(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_and_caps_come_from_each_dialect() {
        let body = br#"{"model":"grok-4","max_tokens":64}"#;
        let top = TopLevel::parse(body).unwrap();
        assert_eq!(
            model_of("/v1/chat/completions", Some(&top)).as_deref(),
            Some("grok-4")
        );
        assert_eq!(output_cap(&top), Some(64));
        let gemini = br#"{"generationConfig":{"maxOutputTokens":32}}"#;
        let top = TopLevel::parse(gemini).unwrap();
        assert_eq!(
            model_of("/v1beta/models/gemini-2.5:generateContent", Some(&top)).as_deref(),
            Some("gemini-2.5")
        );
        assert_eq!(output_cap(&top), Some(32));
        assert_eq!(input_tokens(&[0; 10]), 4);
    }
}
