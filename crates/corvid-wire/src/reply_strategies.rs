//! Proptest strategies for whole canonical replies (`ChatResponse`), shared by the property
//! tests that hold each dialect's bytes writer to its `Value` encoder; and the stream of deltas
//! the stream encoders' hand-written delta events are held to their values with.

use proptest::prelude::*;

use crate::minted::{Kind, mint};
use crate::model::{ChatResponse, FinishReason, Part, Reasoning, StreamEvent, ToolCall, Usage};

/// A reasoning delta, a text delta and an argument delta of one tool call (`call_1`, `read`,
/// index 0) for each of `pieces`, in that order: every kind of delta a stream encoder writes.
pub(crate) fn deltas_of_each_kind(pieces: &[&str]) -> Vec<StreamEvent> {
    let reasoning = pieces.iter().map(|piece| StreamEvent::ReasoningDelta {
        text: (*piece).to_owned(),
    });
    let text = pieces.iter().map(|piece| StreamEvent::TextDelta {
        text: (*piece).to_owned(),
    });
    let call = StreamEvent::ToolCallStart {
        index: 0,
        id: "call_1".to_owned(),
        name: "read".to_owned(),
        signature: None,
    };
    let arguments = pieces.iter().map(|piece| StreamEvent::ToolCallArgs {
        index: 0,
        delta: (*piece).to_owned(),
    });
    reasoning
        .chain(text)
        .chain([call])
        .chain(arguments)
        .collect()
}

/// Short text with the characters that need escaping (quotes, backslashes, control and
/// non-ASCII ones).
pub(crate) fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}".prop_map(String::from),
        prop::collection::vec(
            prop::sample::select(vec![
                'a', ' ', '"', '\\', '\n', 'é', '😀', '{', '\u{1}', '\u{7f}'
            ]),
            0..8
        )
        .prop_map(String::from_iter),
    ]
}

fn optional(strategy: impl Strategy<Value = String> + 'static) -> BoxedStrategy<Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        strategy.prop_map(Some)
    ]
    .boxed()
}

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"path":"a\"b","n":1.50,"deep":{"x":[1,2,{"y":null}]}}"#.to_owned()),
        Just(r#"{ "spaced" : true , "k": "v" }"#.to_owned()),
        Just("{}".to_owned()),
        Just("[1]".to_owned()),
        Just("not json".to_owned()),
        Just(String::new()),
        text(),
    ]
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        text().prop_map(|text| Part::Text { text }),
        (
            text(),
            optional(text()),
            prop_oneof![
                Just(None),
                Just(Some(String::new())),
                text().prop_map(Some),
                text().prop_map(|data| Some(mint("xai", Kind::Encrypted, &data))),
            ],
            optional("rs_[a-z]{0,3}"),
        )
            .prop_map(
                |(text, signature, encrypted, id)| Part::Reasoning(Reasoning {
                    text,
                    signature,
                    encrypted,
                    id,
                })
            ),
        (
            prop_oneof![Just(String::new()), "call_[a-z0-9]{0,4}", text()],
            prop_oneof!["[a-zA-Z_]{0,6}", "[a-z]{0,3}\\.[a-z_]{0,4}"],
            arguments(),
        )
            .prop_map(|(id, name, arguments)| Part::ToolCall(ToolCall {
                id,
                name,
                arguments,
                signature: None,
            })),
        text().prop_map(|text| Part::System { text }),
    ]
}

pub(crate) fn response() -> impl Strategy<Value = ChatResponse> {
    (
        prop_oneof![Just(String::new()), "msg_[a-z0-9]{0,6}", text()],
        prop::collection::vec(part(), 0..5),
        prop::sample::select(vec![
            FinishReason::EndTurn,
            FinishReason::StopSequence,
            FinishReason::MaxTokens,
            FinishReason::ToolCalls,
            FinishReason::ContentFilter,
            FinishReason::ContextOverflow,
            FinishReason::PauseTurn,
            FinishReason::MalformedToolCall,
        ]),
        (0u64..5, 0u64..5, 0u64..5, 0u64..9, 0u64..3),
    )
        .prop_map(
            |(id, parts, finish, (input, cache_read, cache_write, output, reasoning))| {
                ChatResponse {
                    id,
                    model: "upstream".to_owned(),
                    created: 1_765_000_000,
                    parts,
                    finish,
                    usage: Usage {
                        input,
                        cache_read,
                        cache_write,
                        output,
                        reasoning,
                    },
                }
            },
        )
}
