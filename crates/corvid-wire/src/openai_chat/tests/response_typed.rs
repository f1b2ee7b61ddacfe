//! The typed reader of a whole `chat.completion` against the tree: on any reply — well-formed,
//! of odd field types, with repeated keys, escapes, content parts — `decode_response` gives
//! what the `Value` tree reader gives, error included.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::response::{decode_tree, typed};
use super::stream_chunk::{config, delta, index_field, object, rare_field, string_field};
use crate::model::{NameMap, Tool};

fn choice() -> BoxedStrategy<Value> {
    (
        index_field(),
        prop_oneof![
            6 => delta().prop_map(Some),
            1 => Just(Some(json!({"content": [{"type": "text", "text": "a"}, {"text": "b"}]}))),
            1 => rare_field(),
        ],
        prop_oneof![
            2 => Just(None),
            3 => prop::sample::select(vec!["stop", "length", "tool_calls", "content_filter"])
                .prop_map(|reason| Some(json!(reason))),
            1 => rare_field(),
        ],
    )
        .prop_map(|(index, message, finish_reason)| {
            object(vec![
                ("index", index),
                ("message", message),
                ("finish_reason", finish_reason),
            ])
        })
        .boxed()
}

fn reply() -> BoxedStrategy<String> {
    let whole = (
        string_field(),
        string_field(),
        prop_oneof![
            4 => Just(Some(json!(1_765_000_000))),
            1 => Just(Some(json!(-3))),
            1 => Just(Some(json!(1.5))),
            1 => Just(Some(json!(u64::MAX))),
            1 => rare_field(),
        ],
        prop_oneof![
            6 => prop::collection::vec(choice(), 0..3).prop_map(|choices| Some(Value::Array(choices))),
            1 => rare_field(),
        ],
        prop_oneof![
            3 => Just(Some(json!({"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}))),
            1 => Just(Some(json!({"prompt_tokens": 9, "completion_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": 4},
                "completion_tokens_details": {"reasoning_tokens": 5}}))),
            1 => rare_field(),
        ],
        prop_oneof![6 => Just(None), 1 => Just(Some(json!({"message": "overloaded"})))],
    )
        .prop_map(|(id, model, created, choices, usage, error)| {
            object(vec![
                ("id", id),
                ("object", Some(json!("chat.completion"))),
                ("created", created),
                ("model", model),
                ("choices", choices),
                ("usage", usage),
                ("error", error),
            ])
            .to_string()
        });
    prop_oneof![
        12 => whole,
        1 => Just(r#"{"choices":[{"message":{"content":"a"}}],"choices":[]}"#.to_owned()),
        1 => Just(r#"{"choices":[{"message":{"content":"a","content":"b"}}]}"#.to_owned()),
        1 => Just(r#"{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens":1,"prompt_tokens":7}}"#.to_owned()),
        1 => Just("[1,2]".to_owned()),
        1 => Just(r#"{"choices": [{"message": {"content": "\u00e9\n"}}]}"#.to_owned()),
        1 => Just("{\"choices\":".to_owned()),
    ]
    .boxed()
}

fn names() -> NameMap {
    NameMap::new(&[Tool {
        name: "a".repeat(70),
        description: None,
        parameters: json!({}).into(),
        strict: None,
    }])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn typed_replies_decode_as_the_tree_does(body in reply()) {
        let names = names();
        let tree = decode_tree(body.as_bytes(), &names);
        let whole = super::super::decode_response(body.as_bytes(), &names);
        prop_assert_eq!(&whole, &tree);
        if let Some(typed) = typed::decode(body.as_bytes(), &names) {
            prop_assert_eq!(Ok(typed), tree);
        }
    }
}

#[test]
fn well_formed_replies_take_the_typed_path() {
    let names = names();
    let replies = [
        r#"{"id":"c1","object":"chat.completion","created":1765000000,"model":"grok","choices":[{"index":0,"message":{"role":"assistant","content":"Hi \"there\"","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#,
        r#"{"id":"c2","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"c3","choices":[{"index":0,"message":{"reasoning_content":"think","content":"ok"},"finish_reason":"length"}]}"#,
    ];
    for reply in replies {
        let typed = typed::decode(reply.as_bytes(), &names);
        assert!(typed.is_some(), "{reply}");
        assert_eq!(typed.map(Ok), Some(decode_tree(reply.as_bytes(), &names)));
    }
    for reply in [
        r#"[1]"#,
        r#"{"error":{"message":"x"}}"#,
        r#"{"choices":[]}"#,
        r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"}]}}]}"#,
        r#"{"choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}}}]}"#,
    ] {
        assert!(typed::decode(reply.as_bytes(), &names).is_none(), "{reply}");
    }
}
