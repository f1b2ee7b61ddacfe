//! The typed fast path against the tree decoder: on any body, `decode_request` answers what
//! the tree decoder alone answers (request or error), and on well-formed Claude Code-like
//! bodies the fast path is the one that answers.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::{decode_request, decode_tree};
use crate::anthropic::tests::fixture;

/// What the decoder answered before the fast path existed.
fn reference(body: &[u8]) -> Result<crate::model::ChatRequest, crate::model::DecodeError> {
    decode_tree(body).and_then(super::super::Decoded::finish)
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

/// Text with escapes in it (an owned string on the fast path) or without (borrowed).
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

/// A value of a type a field may wrongly have.
fn odd() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(7)),
        Just(json!(1.5)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
        text().prop_map(Value::String),
    ]
}

/// A string field, usually well-formed, sometimes absent or of the wrong type.
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

fn source(well_formed: bool) -> BoxedStrategy<Value> {
    let kinds = if well_formed {
        vec!["base64", "url"]
    } else {
        vec!["base64", "url", "file", "text"]
    };
    (
        prop::sample::select(kinds),
        field(well_formed),
        field(well_formed),
        field(well_formed),
    )
        .prop_map(|(kind, media_type, data, url)| match kind {
            "base64" => object(vec![
                ("type", Some(json!("base64"))),
                ("media_type", media_type),
                ("data", data),
            ]),
            "url" => object(vec![("type", Some(json!("url"))), ("url", url)]),
            other => json!({"type": other, "file_id": "file_1"}),
        })
        .boxed()
}

fn block(well_formed: bool) -> BoxedStrategy<Value> {
    let kinds = vec![
        "text",
        "image",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "server_tool_use",
    ];
    let result_content = prop_oneof![
        text().prop_map(Value::String),
        prop::collection::vec(
            prop_oneof![
                text().prop_map(|text| json!({"type": "text", "text": text})),
                source(well_formed).prop_map(|source| json!({"type": "image", "source": source})),
            ],
            0..3
        )
        .prop_map(Value::Array),
        Just(Value::Null),
    ];
    (
        prop::sample::select(kinds),
        (field(well_formed), field(well_formed), field(well_formed)),
        source(well_formed),
        result_content,
        prop_oneof![
            Just(None),
            Just(Some(json!(true))),
            Just(Some(json!(false))),
            Just(Some(json!(1)))
        ],
        prop_oneof![
            Just(Some(json!({"command": "ls -la", "timeout": 1.0, "n": 1e3}))),
            text().prop_map(|text| Some(json!({ "path": text }))),
            Just(Some(Value::Null)),
            Just(None),
        ],
        prop::bool::ANY,
    )
        .prop_map(
            |(kind, (first, second, third), source, content, is_error, input, cache)| {
                let mut block = match kind {
                    "text" => object(vec![("type", Some(json!("text"))), ("text", first)]),
                    "image" => json!({"type": "image", "source": source}),
                    "tool_use" => object(vec![
                        ("type", Some(json!("tool_use"))),
                        ("id", first),
                        ("name", second),
                        ("input", input),
                    ]),
                    "tool_result" => object(vec![
                        ("type", Some(json!("tool_result"))),
                        ("tool_use_id", first),
                        ("content", Some(content)),
                        ("is_error", is_error),
                    ]),
                    "thinking" => object(vec![
                        ("type", Some(json!("thinking"))),
                        ("thinking", first),
                        ("signature", second),
                    ]),
                    "redacted_thinking" => {
                        object(vec![("type", Some(json!("redacted_thinking"))), ("data", third)])
                    }
                    "document" => json!({"type": "document", "source": source, "title": "t"}),
                    _ => json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}),
                };
                if cache {
                    block["cache_control"] = json!({"type": "ephemeral"});
                }
                block
            },
        )
        .boxed()
}

fn content(well_formed: bool) -> BoxedStrategy<Value> {
    let mut options = vec![
        text().prop_map(Value::String).boxed(),
        prop::collection::vec(block(well_formed), 0..4)
            .prop_map(Value::Array)
            .boxed(),
    ];
    if !well_formed {
        options.push(odd().boxed());
        options.push(
            prop::collection::vec(odd(), 1..2)
                .prop_map(Value::Array)
                .boxed(),
        );
    }
    prop::strategy::Union::new(options).boxed()
}

fn message(well_formed: bool) -> BoxedStrategy<Value> {
    let roles = if well_formed {
        vec!["user", "assistant", "system"]
    } else {
        vec!["user", "assistant", "system", "developer", "tool"]
    };
    (prop::sample::select(roles), content(well_formed))
        .prop_map(|(role, content)| json!({"role": role, "content": content}))
        .boxed()
}

fn tool(well_formed: bool) -> BoxedStrategy<Value> {
    (
        prop::sample::select(vec!["function", "custom", "server"]),
        field(well_formed),
        prop_oneof![Just(None), text().prop_map(|text| Some(json!(text))), Just(Some(json!(3)))],
        prop_oneof![
            Just(Some(json!({"type": "object", "properties": {"path": {"type": "string", "description": "a \"path\""}}, "required": ["path"]}))),
            Just(Some(Value::Null)),
            Just(None),
        ],
        prop_oneof![Just(None), Just(Some(json!(true))), Just(Some(json!("yes")))],
    )
        .prop_map(|(kind, name, description, schema, strict)| match kind {
            "server" => json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5,
                "description": description, "input_schema": schema}),
            kind => {
                let mut tool = object(vec![
                    ("name", name),
                    ("description", description),
                    ("input_schema", schema),
                    ("strict", strict),
                ]);
                if kind == "custom" {
                    tool["type"] = json!("custom");
                }
                tool
            }
        })
        .boxed()
}

fn system(well_formed: bool) -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        Just(None),
        text().prop_map(|text| Some(Value::String(text))),
        prop::collection::vec(
            prop_oneof![
                field(well_formed)
                    .prop_map(|text| object(vec![("type", Some(json!("text"))), ("text", text)])),
                Just(json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}})),
                Just(json!({"type": "image", "source": {"type": "url", "url": "u"}})),
            ],
            0..3
        )
        .prop_map(|blocks| Some(Value::Array(blocks))),
    ]
    .boxed()
}

fn body(well_formed: bool) -> BoxedStrategy<Value> {
    (
        field(well_formed),
        system(well_formed),
        prop::collection::vec(message(well_formed), 0..5),
        prop_oneof![
            Just(None),
            prop::collection::vec(tool(well_formed), 0..4)
                .prop_map(|tools| Some(Value::Array(tools)))
        ],
        prop_oneof![
            Just(None),
            Just(Some(json!(1024))),
            Just(Some(json!("many")))
        ],
        prop_oneof![Just(None), Just(Some(json!(true))), Just(Some(Value::Null))],
        prop_oneof![
            Just(None),
            Just(Some(
                json!({"type": "auto", "disable_parallel_tool_use": true})
            )),
            Just(Some(json!({"type": "tool"})))
        ],
        small_fields(well_formed),
    )
        .prop_map(
            |(model, system, messages, tools, max_tokens, stream, choice, small)| {
                let mut body = object(vec![
                    ("model", model),
                    ("system", system),
                    ("messages", Some(Value::Array(messages))),
                    ("tools", tools),
                    ("max_tokens", max_tokens),
                    ("stream", stream),
                    ("tool_choice", choice),
                    ("metadata", Some(json!({"user_id": "u"}))),
                ]);
                if let Value::Object(fields) = &mut body {
                    fields.extend(small);
                }
                body
            },
        )
        .boxed()
}

/// The other top-level fields the decoder reads (and some it keeps in `extra`), well-formed or
/// of odd types.
fn small_fields(well_formed: bool) -> BoxedStrategy<Vec<(String, Value)>> {
    let number = || {
        prop_oneof![
            Just(json!(1)),
            Just(json!(0.7)),
            Just(json!(-2)),
            Just(json!(1e3)),
            Just(Value::Null)
        ]
    };
    let stop = prop_oneof![
        Just(json!(["\n\nHuman:", "END"])),
        Just(json!([])),
        Just(Value::Null)
    ];
    let thinking = prop_oneof![
        Just(json!({"type": "enabled", "budget_tokens": 2048})),
        Just(json!({"type": "adaptive"})),
        Just(json!({"type": "disabled"})),
        Just(Value::Null)
    ];
    let output_config = prop_oneof![
        Just(json!({"effort": "low"})),
        Just(json!({"effort": "max", "other": 1})),
        Just(json!({"format": {"type": "json_schema", "schema": {"type": "object"}}})),
        Just(Value::Null)
    ];
    let mut entries: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    let named = |name: &'static str, values: BoxedStrategy<Value>| {
        prop_oneof![
            Just(None),
            values.prop_map(move |value| Some((name.to_owned(), value)))
        ]
        .boxed()
    };
    entries.push(named("temperature", number().boxed()));
    entries.push(named("top_p", number().boxed()));
    entries.push(named("stop_sequences", stop.boxed()));
    entries.push(named("thinking", thinking.boxed()));
    entries.push(named("output_config", output_config.boxed()));
    entries.push(named(
        "context_management",
        Just(json!({"edits": []})).boxed(),
    ));
    entries.push(named("service_tier", Just(Value::Null).boxed()));
    if !well_formed {
        entries.push(named("temperature", odd().boxed()));
        entries.push(named("stop_sequences", odd().boxed()));
        entries.push(named("thinking", odd().boxed()));
        entries.push(named("output_config", odd().boxed()));
        entries.push(named("stream", odd().boxed()));
        entries.push(named("model", odd().boxed()));
    }
    entries
        .prop_map(|entries| entries.into_iter().flatten().collect())
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
    fn a_well_formed_body_takes_the_fast_path(body in body(true)) {
        let bytes = body.to_string();
        let fast = super::decode(bytes.as_bytes());
        let reference = reference(bytes.as_bytes());
        // Bodies the tree refuses (a `tool` choice without a name…) fall back to word it.
        prop_assert_eq!(fast.is_some(), reference.is_ok(), "on {}", bytes);
        if let Some(fast) = fast {
            prop_assert_eq!(Ok(fast), reference);
        }
    }
}

#[test]
fn the_claude_code_fixture_takes_the_fast_path_and_decodes_as_before() {
    let body = fixture("claude_code_request.json");
    assert!(super::decode(&body).is_some());
    assert_eq!(decode_request(&body), reference(&body));
}

#[test]
fn pretty_printed_and_escaped_bodies_decode_as_before() {
    let body = json!({
        "model": "m\u{e9}",
        "system": [{"type": "text", "text": "a \"quoted\" \\ line\n"}],
        "messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"b": 2, "a": [1.0, 1e3, "\u{1}"]}}
        ]}],
    });
    let pretty = serde_json::to_string_pretty(&body).unwrap();
    assert!(super::decode(pretty.as_bytes()).is_some());
    assert_eq!(
        decode_request(pretty.as_bytes()),
        reference(pretty.as_bytes())
    );
    // Written with escapes the serialiser would not use.
    let escaped = br#"{"model":"m\u00e9","messages":[{"role":"user","content":"a\/b \u0041"}]}"#;
    assert_eq!(decode_request(escaped), reference(escaped));
    assert!(super::decode(escaped).is_some());
}

#[test]
fn repeated_fields_fall_back_to_the_tree_decoder() {
    let body = br#"{"model":"m","messages":[],"messages":[{"role":"user","content":"x"}]}"#;
    assert!(super::decode(body).is_none());
    assert_eq!(decode_request(body), reference(body));
    assert_eq!(decode_request(body).unwrap().messages.len(), 1);
}

#[test]
fn tools_with_repeated_keys_or_odd_descriptions_decode_as_before() {
    let repeated =
        br#"{"model":"m","messages":[],"tools":[{"name":"a","name":"b","input_schema":{}}]}"#;
    assert!(super::decode(repeated).is_none());
    assert_eq!(decode_request(repeated), reference(repeated));
    let odd = br#"{"model":"m","messages":[],"tools":[{"name":"a","description":{"x":[1,2.5]},"input_schema":{"type":"object"}},{"type":"bash_20250124","name":"bash","description":[true,null]}]}"#;
    assert!(super::decode(odd).is_some());
    assert_eq!(decode_request(odd), reference(odd));
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
        crate::repeated_keys::check_plain_path(&body, repeat, escaped, crate::anthropic::decode_plain_request, decode_request)?;
    }
}
