//! The typed fast path against the tree decoder: on any body, `decode_request` answers what
//! the tree decoder alone answers, and on well-formed Codex-like bodies the fast path answers.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::{decode_request, decode_tree, finish};

fn reference(body: &[u8]) -> Result<crate::model::ChatRequest, crate::model::DecodeError> {
    decode_tree(body).and_then(|(fields, conversation, tools)| finish(fields, conversation, tools))
}

fn config() -> ProptestConfig {
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

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}".prop_map(String::from),
        prop::collection::vec(
            prop::sample::select(vec!['a', ' ', '"', '\\', '\n', 'é', '😀', '/', '\u{1}']),
            0..10
        )
        .prop_map(String::from_iter),
    ]
}

fn odd() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(7)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
        text().prop_map(Value::String),
    ]
}

fn field(well_formed: bool) -> BoxedStrategy<Option<Value>> {
    if well_formed {
        text().prop_map(|text| Some(Value::String(text))).boxed()
    } else {
        prop_oneof![
            4 => text().prop_map(|text| Some(Value::String(text))),
            1 => Just(None),
            1 => odd().prop_map(Some),
        ]
        .boxed()
    }
}

fn object(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_owned(), value?)))
            .collect(),
    )
}

fn part(well_formed: bool) -> BoxedStrategy<Value> {
    let kinds = if well_formed {
        vec!["input_text", "output_text", "text", "refusal", "input_file"]
    } else {
        vec![
            "input_text",
            "output_text",
            "refusal",
            "input_image",
            "input_file",
        ]
    };
    (prop::sample::select(kinds), field(well_formed))
        .prop_map(|(kind, text)| match kind {
            "refusal" => object(vec![("type", Some(json!("refusal"))), ("refusal", text)]),
            "input_image" => object(vec![
                ("type", Some(json!("input_image"))),
                ("image_url", text),
            ]),
            "input_file" => json!({"type": "input_file", "file_id": "file_1"}),
            kind => object(vec![("type", Some(json!(kind))), ("text", text)]),
        })
        .boxed()
}

fn contents(well_formed: bool) -> BoxedStrategy<Value> {
    let mut options = vec![
        text().prop_map(Value::String).boxed(),
        prop::collection::vec(part(well_formed), 0..3)
            .prop_map(Value::Array)
            .boxed(),
    ];
    if !well_formed {
        options.push(odd().boxed());
        options.push(Just(json!({"content": "old shape", "success": false})).boxed());
    }
    prop::strategy::Union::new(options).boxed()
}

fn item(well_formed: bool) -> BoxedStrategy<Value> {
    let roles = if well_formed {
        vec!["user", "assistant", "system", "developer"]
    } else {
        vec!["user", "assistant", "system", "tool"]
    };
    (
        prop::sample::select(vec![
            "message",
            "easy",
            "call",
            "output",
            "reasoning",
            "other",
        ]),
        prop::sample::select(roles),
        contents(well_formed),
        (field(well_formed), field(well_formed), field(well_formed)),
        prop::sample::select(vec!["call_1", "call_2", "call_3"]),
        prop::bool::ANY,
    )
        .prop_map(
            |(kind, role, content, (first, second, third), id, namespaced)| match kind {
                "message" => json!({"type": "message", "role": role, "content": content}),
                "easy" => json!({"role": role, "content": content}),
                "call" => {
                    let mut call = object(vec![
                        ("type", Some(json!("function_call"))),
                        ("call_id", Some(json!(id))),
                        ("name", first),
                        ("arguments", second),
                    ]);
                    if namespaced {
                        call["namespace"] = json!("mcp__fs");
                    }
                    call
                }
                "output" => {
                    json!({"type": "function_call_output", "call_id": id, "output": content})
                }
                "reasoning" => object(vec![
                    ("type", Some(json!("reasoning"))),
                    (
                        "summary",
                        Some(json!([{"type": "summary_text", "text": "thought"}])),
                    ),
                    ("encrypted_content", third),
                ]),
                _ => json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
            },
        )
        .boxed()
}

fn tool(well_formed: bool) -> BoxedStrategy<Value> {
    let kinds = if well_formed {
        vec!["function"]
    } else {
        vec!["function", "web_search", "namespace"]
    };
    (
        prop::sample::select(kinds),
        field(well_formed),
        prop_oneof![Just(None), text().prop_map(|text| Some(json!(text)))],
        prop_oneof![
            Just(Some(json!({"type": "object", "properties": {"cmd": {"type": "string"}}}))),
            Just(Some(Value::Null)),
            Just(None),
        ],
        if well_formed {
            prop_oneof![Just(None), Just(Some(json!(false)))].boxed()
        } else {
            prop_oneof![Just(None), Just(Some(json!(false))), Just(Some(json!("no")))].boxed()
        },
    )
        .prop_map(|(kind, name, description, parameters, strict)| match kind {
            "web_search" => json!({"type": "web_search"}),
            "namespace" => json!({"type": "namespace", "name": "mcp", "tools": [{"type": "function", "name": "read", "parameters": {}}]}),
            _ => object(vec![
                ("type", Some(json!("function"))),
                ("name", name),
                ("description", description),
                ("parameters", parameters),
                ("strict", strict),
            ]),
        })
        .boxed()
}

fn body(well_formed: bool) -> BoxedStrategy<Value> {
    (
        field(well_formed),
        prop_oneof![Just(None), text().prop_map(|text| Some(json!(text)))],
        prop_oneof![
            1 => text().prop_map(|text| Some(json!(text))),
            4 => prop::collection::vec(item(well_formed), 0..6).prop_map(|items| Some(Value::Array(items))),
        ],
        prop_oneof![
            Just(None),
            prop::collection::vec(tool(well_formed), 0..3).prop_map(|tools| Some(Value::Array(tools)))
        ],
        prop_oneof![Just(None), Just(Some(json!(true))), Just(Some(json!("yes")))],
        prop_oneof![Just(None), Just(Some(json!("auto"))), Just(Some(json!({"type": "allowed_tools", "mode": "auto", "tools": []})))],
    )
        .prop_map(|(model, instructions, input, tools, stream, choice)| {
            object(vec![
                ("model", model),
                ("instructions", instructions),
                ("input", input),
                ("tools", tools),
                ("stream", stream),
                ("tool_choice", choice),
                ("store", Some(json!(false))),
            ])
        })
        .boxed()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_body_decodes_as_the_tree_decoder_decodes_it(body in body(false)) {
        let bytes = body.to_string();
        prop_assert_eq!(decode_request(bytes.as_bytes()), reference(bytes.as_bytes()));
    }

    #[test]
    fn a_well_formed_body_without_reasoning_is_read_in_one_pass(body in body(true)) {
        let bytes = body.to_string();
        prop_assume!(!bytes.contains("\"reasoning\""));
        let top = serde_json::from_str::<super::TypedTop<'_>>(&bytes);
        prop_assert!(top.is_ok(), "the one-pass read refused {}", bytes);
        let Ok(super::Decoded::Parts((fields, conversation, tools))) = top.map(super::decode_typed)
        else {
            return Err(TestCaseError::fail(format!("the one-pass read left {bytes} to another reader")));
        };
        prop_assert_eq!(finish(fields, conversation, tools), reference(bytes.as_bytes()));
    }

    #[test]
    fn a_well_formed_body_takes_the_fast_path(body in body(true)) {
        let bytes = body.to_string();
        prop_assert!(super::decode(bytes.as_bytes()).is_some(), "fell back on {}", bytes);
        prop_assert_eq!(decode_request(bytes.as_bytes()), reference(bytes.as_bytes()));
    }
}

#[test]
fn a_codex_turn_with_reasoning_takes_the_fast_path_and_decodes_as_before() {
    let body = json!({
        "model": "gpt-5-codex",
        "instructions": "You are Codex.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox: on"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB"},
            {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":[\"ls\"]}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a\nb"},
        ],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}, "strict": false}],
        "store": false,
        "stream": true,
    })
    .to_string();
    assert!(super::decode(body.as_bytes()).is_some());
    assert_eq!(decode_request(body.as_bytes()), reference(body.as_bytes()));
}

#[test]
fn an_item_given_as_an_array_is_read_as_the_tree_decoder_reads_it() {
    // serde's derived structs read an array field by field; the tree decoder sees no object.
    let body = json!({
        "model": "m",
        "input": [["message", "user", "hi"], {"role": "user", "content": "hello"}],
    })
    .to_string();
    assert_eq!(decode_request(body.as_bytes()), reference(body.as_bytes()));
}

proptest! {
    #![proptest_config(config())]

    /// See `repeated_keys::check_plain_path`.
    #[test]
    fn the_plain_path_reads_no_body_with_a_repeated_top_level_key(
        body in body(false),
        repeat in 0usize..16,
        escaped in any::<bool>(),
    ) {
        crate::repeated_keys::check_plain_path(&body, repeat, escaped, crate::openai_responses::decode_plain_request, decode_request)?;
    }

    #[test]
    fn a_well_formed_body_takes_the_plain_path(body in body(true)) {
        let bytes = body.to_string();
        let plain = crate::openai_responses::decode_plain_request(bytes.as_bytes());
        prop_assert_eq!(plain.clone().ok_or(()), reference(bytes.as_bytes()).map_err(|_| ()), "on {}", bytes);
    }
}
