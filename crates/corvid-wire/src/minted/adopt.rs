//! A conversation that moves between providers mid-way (a route failing over, a sticky
//! target gone): the opaque values a client got straight from the old provider (a byte
//! pass-through mints nothing) are wrapped as if corvid had minted them from it, so that
//! [`super::settle`] treats them exactly as a session the user moved: given back only to the
//! provider that made them, removed everywhere else.

use super::{Kind, is_minted, mint, origin_label};
use crate::model::{ChatRequest, Part};

/// Marks every opaque value in `request` that carries no envelope as `origin`'s (a provider's
/// configured name). Gemini signatures on tool calls have no envelope form of their own
/// there; they are dropped, as settling drops another provider's.
pub fn adopt(request: &mut ChatRequest, origin: &str) {
    let origin = origin_label(origin);
    for message in &mut request.messages {
        for part in &mut message.parts {
            match part {
                Part::Reasoning(reasoning) => {
                    if let Some(signature) = reasoning
                        .signature
                        .as_mut()
                        .filter(|value| !value.is_empty() && !is_minted(value))
                    {
                        *signature = mint(&origin, Kind::Signature, signature);
                    }
                    let kind = if reasoning.id.is_some() {
                        Kind::Encrypted
                    } else {
                        Kind::Redacted
                    };
                    if let Some(data) = reasoning
                        .encrypted
                        .as_mut()
                        .filter(|value| !value.is_empty() && !is_minted(value))
                    {
                        *data = mint(&origin, kind, data);
                    }
                }
                Part::ToolCall(call) => call.signature = None,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Reasoning, Role, ToolCall};

    fn moved_request() -> ChatRequest {
        ChatRequest {
            messages: vec![Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "thought".into(),
                        signature: Some("sig-from-a".into()),
                        ..Reasoning::default()
                    }),
                    Part::Reasoning(Reasoning {
                        encrypted: Some("enc-from-a".into()),
                        id: Some("rs_1".into()),
                        ..Reasoning::default()
                    }),
                    Part::ToolCall(ToolCall {
                        id: "call_1".into(),
                        name: "f".into(),
                        arguments: "{}".into(),
                        signature: Some("gemini-sig".into()),
                    }),
                ],
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn what_the_old_provider_made_goes_back_only_to_it() {
        let mut to_other = moved_request();
        adopt(&mut to_other, "anthropic");
        crate::minted::settle(&mut to_other, "openai");
        let parts = &to_other.messages[0].parts;
        assert_eq!(
            parts.len(),
            2,
            "the encrypted-only reasoning is gone: {parts:?}"
        );
        let Part::Reasoning(kept) = &parts[0] else {
            panic!("{parts:?}")
        };
        assert_eq!(
            (kept.text.as_str(), kept.signature.as_deref()),
            ("thought", None)
        );
        let Part::ToolCall(call) = &parts[1] else {
            panic!("{parts:?}")
        };
        assert_eq!(call.signature, None);

        let mut back_home = moved_request();
        adopt(&mut back_home, "anthropic");
        crate::minted::settle(&mut back_home, "anthropic");
        let Part::Reasoning(signed) = &back_home.messages[0].parts[0] else {
            panic!()
        };
        assert_eq!(signed.signature.as_deref(), Some("sig-from-a"));
    }
}
