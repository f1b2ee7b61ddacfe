//! The hand writers against serde's derived serialisers: the same bytes for any message and
//! tool.

use std::borrow::Cow;

use proptest::prelude::*;

use super::super::{
    CallFunction, CallOut, Content, FunctionOut, ImageUrl, MessageOut, ToolOut, UserPart,
};
use crate::model::RawJson;

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z ]{0,24}".prop_map(String::from),
        prop::collection::vec(
            prop::sample::select(vec![
                'a', ' ', '"', '\\', '\n', 'é', '😀', '{', '\u{1}', '\u{7f}'
            ]),
            0..24
        )
        .prop_map(String::from_iter),
    ]
    .boxed()
}

/// The strings a message borrows, generated first.
#[derive(Debug, Clone)]
struct Texts {
    role: &'static str,
    id: Option<String>,
    content: u8,
    text: String,
    parts: Vec<(bool, String, Option<String>)>,
    reasoning: Option<String>,
    calls: Vec<(String, String, String)>,
}

fn texts() -> impl Strategy<Value = Texts> {
    (
        prop::sample::select(vec!["system", "user", "assistant", "tool"]),
        prop::option::of(text()),
        0u8..3,
        text(),
        prop::collection::vec((any::<bool>(), text(), prop::option::of(text())), 0..3),
        prop::option::of(text()),
        prop::collection::vec((text(), text(), text()), 0..3),
    )
        .prop_map(|(role, id, content, text, parts, reasoning, calls)| Texts {
            role,
            id,
            content,
            text,
            parts,
            reasoning,
            calls,
        })
}

fn message(texts: &Texts) -> MessageOut<'_> {
    let content = match texts.content {
        0 => Content::Null,
        1 => Content::Text(Cow::Borrowed(&texts.text)),
        _ => Content::Parts(
            texts
                .parts
                .iter()
                .map(|(is_text, text, detail)| {
                    if *is_text {
                        UserPart::Text { text }
                    } else {
                        UserPart::ImageUrl {
                            image_url: ImageUrl {
                                url: text.clone(),
                                detail: detail.as_deref(),
                            },
                        }
                    }
                })
                .collect(),
        ),
    };
    MessageOut {
        role: texts.role,
        tool_call_id: texts.id.as_deref(),
        content,
        reasoning_content: texts.reasoning.clone(),
        tool_calls: texts
            .calls
            .iter()
            .map(|(id, name, arguments)| CallOut {
                id,
                kind: "function",
                function: CallFunction {
                    name: Cow::Borrowed(name),
                    arguments,
                },
            })
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn messages_are_written_as_serde_writes_them(all in prop::collection::vec(texts(), 0..4)) {
        let messages: Vec<MessageOut<'_>> = all.iter().map(message).collect();
        let mut out = Vec::new();
        super::array(&mut out, &messages, super::message);
        prop_assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&messages).unwrap()
        );
    }

    #[test]
    fn tools_are_written_as_serde_writes_them(
        tools in prop::collection::vec(
            (text(), prop::option::of(text()), prop::option::of(any::<bool>()), 0usize..3),
            0..4,
        ),
    ) {
        let schemas = [
            RawJson::parse(r#"{"type":"object","properties":{"path":{"type":"string"}}}"#).unwrap(),
            RawJson::parse("{ \"type\" : \"object\" ,\n \"required\": [] }").unwrap(),
            RawJson::null(),
        ];
        let tools: Vec<ToolOut<'_>> = tools
            .iter()
            .map(|(name, description, strict, schema)| ToolOut {
                kind: "function",
                function: FunctionOut {
                    name: Cow::Borrowed(name),
                    description: description.as_deref(),
                    parameters: &schemas[*schema],
                    strict: *strict,
                },
            })
            .collect();
        let mut out = Vec::new();
        super::array(&mut out, &tools, super::tool);
        prop_assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&tools).unwrap()
        );
    }
}
