//! The typed chunk reader against the tree: on any sequence of chunks — well-formed, of odd
//! field types, with errors, repeated keys, escapes — the decoder gives the same events as when
//! every chunk is read through the `Value` tree.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::StreamDecoder;
use super::super::stream_decode::tree_only;
use crate::model::{NameMap, StreamEvent, Tool};

pub(super) fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

pub(super) fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}".prop_map(String::from),
        prop::collection::vec(
            prop::sample::select(vec!['a', ' ', '"', '\\', '\n', 'é', '😀', '{', '\u{1}']),
            0..8
        )
        .prop_map(String::from_iter),
    ]
}

/// A value of a type a field may wrongly have.
pub(super) fn odd() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(-1)),
        Just(json!(0.0)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"a": "b"})),
        text().prop_map(Value::String),
    ]
}

/// A field: usually a string, sometimes absent or of another type.
pub(super) fn string_field() -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        5 => text().prop_map(|text| Some(Value::String(text))),
        2 => Just(None),
        1 => odd().prop_map(Some),
    ]
    .boxed()
}

/// A field usually absent, sometimes anything.
pub(super) fn rare_field() -> BoxedStrategy<Option<Value>> {
    prop_oneof![6 => Just(None), 1 => odd().prop_map(Some)].boxed()
}

pub(super) fn index_field() -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        4 => (0u64..3).prop_map(|index| Some(json!(index))),
        1 => Just(None),
        1 => odd().prop_map(Some),
    ]
    .boxed()
}

pub(super) fn object(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_owned(), value?)))
            .collect(),
    )
}

pub(super) fn function() -> BoxedStrategy<Value> {
    let arguments = prop_oneof![
        4 => text().prop_map(|text| Some(Value::String(text))),
        1 => Just(Some(json!({"path": "a\"b", "n": 1.50}))),
        1 => Just(None),
        1 => odd().prop_map(Some),
    ];
    (
        prop_oneof![3 => "[a-z_]{0,6}".prop_map(|name| Some(json!(name))), 1 => rare_field()],
        arguments,
    )
        .prop_map(|(name, arguments)| object(vec![("name", name), ("arguments", arguments)]))
        .boxed()
}

pub(super) fn call() -> BoxedStrategy<Value> {
    (
        index_field(),
        prop_oneof![2 => "call_[a-z]{0,3}".prop_map(|id| Some(json!(id))), 1 => rare_field()],
        prop_oneof![4 => function().prop_map(Some), 1 => rare_field()],
    )
        .prop_map(|(index, id, function)| {
            object(vec![("index", index), ("id", id), ("function", function)])
        })
        .boxed()
}

pub(super) fn delta() -> BoxedStrategy<Value> {
    (
        string_field(),
        prop_oneof![4 => Just(None), 1 => string_field()],
        prop_oneof![4 => Just(None), 1 => string_field()],
        rare_field(),
        prop_oneof![
            3 => Just(None),
            2 => prop::collection::vec(call(), 0..3).prop_map(|calls| Some(Value::Array(calls))),
            1 => rare_field(),
        ],
        prop_oneof![6 => Just(None), 1 => function().prop_map(Some), 1 => rare_field()],
    )
        .prop_map(
            |(content, reasoning_content, reasoning, refusal, tool_calls, function_call)| {
                object(vec![
                    ("content", content),
                    ("reasoning_content", reasoning_content),
                    ("reasoning", reasoning),
                    ("refusal", refusal),
                    ("tool_calls", tool_calls),
                    ("function_call", function_call),
                ])
            },
        )
        .boxed()
}

fn choice() -> BoxedStrategy<Value> {
    (
        index_field(),
        prop_oneof![5 => delta().prop_map(Some), 1 => rare_field()],
        prop_oneof![
            4 => Just(None),
            1 => prop::sample::select(vec!["stop", "length", "tool_calls", "content_filter"])
                .prop_map(|reason| Some(json!(reason))),
            1 => rare_field(),
        ],
    )
        .prop_map(|(index, delta, finish_reason)| {
            object(vec![
                ("index", index),
                ("delta", delta),
                ("finish_reason", finish_reason),
            ])
        })
        .boxed()
}

/// One chunk's payload text: usually an object, with the odd error, repeated key or
/// non-object.
fn payload() -> BoxedStrategy<String> {
    let chunk = (
        string_field(),
        string_field(),
        prop_oneof![
            5 => prop::collection::vec(choice(), 0..3).prop_map(|choices| Some(Value::Array(choices))),
            1 => rare_field(),
        ],
        prop_oneof![
            5 => Just(None),
            1 => Just(Some(json!({"prompt_tokens": 12, "completion_tokens": 3}))),
            1 => rare_field(),
        ],
        prop_oneof![
            8 => Just(None),
            1 => Just(Some(json!({"message": "overloaded", "code": 529}))),
            1 => rare_field(),
        ],
    )
        .prop_map(|(id, model, choices, usage, error)| {
            object(vec![
                ("id", id),
                ("model", model),
                ("choices", choices),
                ("usage", usage),
                ("error", error),
            ])
            .to_string()
        });
    prop_oneof![
        12 => chunk,
        1 => Just(r#"{"choices":[{"delta":{"content":"a"}}],"choices":[]}"#.to_owned()),
        1 => Just(r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#.to_owned()),
        1 => Just("[1,2]".to_owned()),
        1 => Just(r#"{"choices": [{"delta": {"content": "\u00e9\n"}}]}"#.to_owned()),
        1 => Just("{\"choices\":".to_owned()),
    ]
    .boxed()
}

fn decode(payloads: &[String], names: &NameMap) -> Vec<StreamEvent> {
    let mut decoder = StreamDecoder::new(names.clone());
    let mut events = Vec::new();
    for payload in payloads {
        decoder.feed(format!("data: {payload}\n\n").as_bytes(), &mut events);
    }
    decoder.feed(b"data: [DONE]\n\n", &mut events);
    decoder.finish(&mut events);
    events
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn typed_chunks_decode_as_the_tree_does(
        payloads in prop::collection::vec(payload(), 0..6),
    ) {
        let long = "a".repeat(70);
        let names = NameMap::new(&[Tool {
            name: long,
            description: None,
            parameters: json!({}).into(),
            strict: None,
        }]);
        let typed = decode(&payloads, &names);
        let tree = tree_only(|| decode(&payloads, &names));
        prop_assert_eq!(typed, tree);
    }
}

#[test]
fn well_formed_chunks_take_the_typed_path() {
    use super::super::stream_chunk::Chunk;
    let chunks = [
        r#"{"id":"c1","object":"chat.completion.chunk","model":"grok","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"there\""},"finish_reason":null}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"pa"}}]}}]}"#,
        r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":null}"#,
    ];
    for chunk in chunks {
        assert!(Chunk::read(chunk.as_bytes()).is_some(), "{chunk}");
    }
    for chunk in [
        r#"[1]"#,
        r#"{"error":{"message":"x"}}"#,
        r#"{"choices":[[0]]}"#,
    ] {
        assert!(Chunk::read(chunk.as_bytes()).is_none(), "{chunk}");
    }
}
