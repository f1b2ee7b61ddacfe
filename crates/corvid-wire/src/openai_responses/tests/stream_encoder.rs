use pretty_assertions::assert_eq;
use serde_json::Value;

use super::response::reasoning_tool_calls_reply;
use super::{build, decode_stream, encode_stream, options, parse_sse};
use crate::model::{
    ErrorKind, FinishReason, NameMap, ResponseBuilder, StreamEvent, Usage, WireError,
};
use crate::openai_responses::StreamOptions;

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        text: text.to_owned(),
    }
}

fn call_start(index: u32, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.to_owned(),
        name: name.to_owned(),
        signature: None,
    }
}

fn args(index: u32, delta: &str) -> StreamEvent {
    StreamEvent::ToolCallArgs {
        index,
        delta: delta.to_owned(),
    }
}

fn start() -> StreamEvent {
    StreamEvent::Start {
        id: "msg_upstream".to_owned(),
        model: "upstream-model".to_owned(),
    }
}

fn usage() -> StreamEvent {
    StreamEvent::Usage(Usage {
        input: 10,
        cache_read: 90,
        cache_write: 0,
        output: 20,
        reasoning: 5,
    })
}

/// Checks what the SDKs' stream helpers check, then returns the parsed events: each
/// `output_item.added` has one `output_item.done` with the same item type and id; no item is
/// empty; deltas name an item that is open; the terminal response lists every done item in
/// `output_index` order.
pub(super) fn checked(text: &str) -> Vec<Value> {
    let events = parse_sse(text);
    let mut open: Vec<(u64, Value)> = Vec::new();
    let mut done: Vec<(u64, Value)> = Vec::new();
    for event in &events {
        let data = &event["data"];
        let kind = data["type"].as_str().unwrap();
        let index = data["output_index"].as_u64();
        match kind {
            "response.output_item.added" => {
                assert!(
                    open.iter().all(|(i, _)| Some(*i) != index),
                    "one add per index"
                );
                open.push((index.unwrap(), data["item"].clone()));
            }
            "response.output_item.done" => {
                let position = open.iter().position(|(i, _)| Some(*i) == index).unwrap();
                let (index, added) = open.remove(position);
                let item = &data["item"];
                assert_eq!(added["type"], item["type"]);
                assert_eq!(added["id"], item["id"]);
                let empty = match item["type"].as_str().unwrap() {
                    "message" => item["content"][0]["text"] == "",
                    "reasoning" => {
                        item["summary"] == serde_json::json!([])
                            && item["encrypted_content"].is_null()
                    }
                    _ => item["name"] == "",
                };
                assert!(!empty, "no empty item: {item}");
                done.push((index, item.clone()));
            }
            "response.completed" | "response.incomplete" => {
                assert!(open.is_empty(), "every item closed before {kind}");
                done.sort_by_key(|(index, _)| *index);
                let items: Vec<Value> = done.iter().map(|(_, item)| item.clone()).collect();
                assert_eq!(data["response"]["output"], Value::Array(items));
            }
            _ if kind.ends_with(".delta") => {
                assert!(
                    open.iter().any(|(i, _)| Some(*i) == index),
                    "delta of an open item"
                );
            }
            _ => {}
        }
    }
    events
}

#[test]
fn text_only() {
    let events = [
        start(),
        text("Hi"),
        text(" there."),
        StreamEvent::Finish(FinishReason::EndTurn),
        usage(),
    ];
    insta::assert_json_snapshot!(checked(&encode_stream(&events, options())));
}

#[test]
fn reasoning_text_and_tool_calls() {
    let events = ResponseBuilder::events(&reasoning_tool_calls_reply());
    insta::assert_json_snapshot!(checked(&encode_stream(&events, options())));
}

#[test]
fn parallel_tool_calls_with_interleaved_deltas() {
    let events = [
        start(),
        call_start(0, "call_a", "read_file"),
        call_start(1, "call_b", "grep"),
        args(1, "{\"pattern\":"),
        args(0, "{\"path\":"),
        args(0, "\"a.rs\"}"),
        StreamEvent::ToolCallEnd { index: 0 },
        args(1, "\"x\"}"),
        StreamEvent::ToolCallEnd { index: 1 },
        StreamEvent::Finish(FinishReason::ToolCalls),
    ];
    insta::assert_json_snapshot!(checked(&encode_stream(&events, options())));
}

#[test]
fn output_limit_is_response_incomplete() {
    let events = [
        start(),
        text("Once upon"),
        usage(),
        StreamEvent::Finish(FinishReason::MaxTokens),
    ];
    let parsed = checked(&encode_stream(&events, options()));
    let last = &parsed.last().unwrap()["data"];
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["status"], "incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
}

#[test]
fn error_mid_stream() {
    let events = [
        start(),
        text("Partial"),
        StreamEvent::Error(WireError::new(ErrorKind::Overloaded, "Overloaded")),
        text("ignored"),
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    insta::assert_json_snapshot!(parse_sse(&encode_stream(&events, options())));
}

#[test]
fn usage_before_or_after_finish_gives_the_same_stream() {
    let before = [
        start(),
        text("Hi"),
        usage(),
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    let after = [
        start(),
        text("Hi"),
        StreamEvent::Finish(FinishReason::EndTurn),
        usage(),
    ];
    assert_eq!(
        encode_stream(&before, options()),
        encode_stream(&after, options())
    );
}

#[test]
fn encrypted_reasoning_alone_keeps_the_upstream_item_id() {
    let events = [
        start(),
        StreamEvent::ReasoningEncrypted {
            data: "enc".to_owned(),
            id: Some("rs_upstream".to_owned()),
        },
        text("Done."),
    ];
    let parsed = checked(&encode_stream(&events, options()));
    let output = &parsed.last().unwrap()["data"]["response"]["output"];
    assert_eq!(
        output[0],
        serde_json::json!({ "type": "reasoning", "id": "rs_upstream", "summary": [], "encrypted_content": "enc" })
    );
}

#[test]
fn a_signature_without_text_is_a_reasoning_item_and_a_call_without_arguments_gets_an_empty_object()
{
    let events = [
        StreamEvent::ReasoningSignature {
            signature: "sig".to_owned(),
        },
        call_start(0, "toolu_1", "now"),
        StreamEvent::ToolCallEnd { index: 0 },
    ];
    let parsed = checked(&encode_stream(&events, options()));
    let response = &parsed.last().unwrap()["data"]["response"];
    assert_eq!(
        response["output"][0],
        serde_json::json!({ "type": "reasoning", "id": "rs_client1_0", "summary": [],
                            "encrypted_content": "corvid-anthropic-signature:sig" })
    );
    assert_eq!(response["output"][1]["arguments"], "{}");
    assert_eq!(response["status"], "completed");
}

#[test]
fn signed_thinking_then_redacted_thinking_are_two_items() {
    let events = [
        StreamEvent::ReasoningDelta {
            text: "Think.".to_owned(),
        },
        StreamEvent::ReasoningSignature {
            signature: "sig".to_owned(),
        },
        StreamEvent::ReasoningEncrypted {
            data: "redacted".to_owned(),
            id: None,
        },
        StreamEvent::ReasoningDelta {
            text: "More.".to_owned(),
        },
        text("Answer."),
    ];
    let parsed = checked(&encode_stream(&events, options()));
    let output = &parsed.last().unwrap()["data"]["response"]["output"];
    let items: Vec<(Value, Value)> = output
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["summary"].clone(), item["encrypted_content"].clone()))
        .collect();
    assert_eq!(
        items,
        vec![
            (
                serde_json::json!([{ "type": "summary_text", "text": "Think." }]),
                serde_json::json!("corvid-anthropic-signature:sig")
            ),
            (
                serde_json::json!([]),
                serde_json::json!("corvid-anthropic-redacted:redacted")
            ),
            (
                serde_json::json!([{ "type": "summary_text", "text": "More." }]),
                Value::Null
            ),
            (Value::Null, Value::Null),
        ]
    );
}

#[test]
fn an_empty_stream_still_completes() {
    let parsed = checked(&encode_stream(&[], options()));
    let kinds: Vec<&str> = parsed
        .iter()
        .map(|event| event["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
}

#[test]
fn ids_and_model_come_from_start_when_the_options_leave_them_out() {
    let parsed = parse_sse(&encode_stream(
        &[start(), text("x")],
        StreamOptions::default(),
    ));
    let response = &parsed[0]["data"]["response"];
    assert_eq!(response["id"], "resp_msg_upstream");
    assert_eq!(response["model"], "upstream-model");
}

#[test]
fn encoded_streams_decode_to_the_same_reply() {
    let reply = reasoning_tool_calls_reply();
    let text = encode_stream(&ResponseBuilder::events(&reply), options());
    let decoded = build(&decode_stream(text.as_bytes(), &NameMap::default()));
    let mut expected = reply;
    expected.id = "resp_client1".to_owned();
    expected.created = 0;
    // The reasoning item streamed text before its encrypted content, so it keeps the id the
    // client saw first.
    if let crate::model::Part::Reasoning(reasoning) = &mut expected.parts[0] {
        reasoning.id = Some("rs_client1_0".to_owned());
    }
    assert_eq!(decoded, expected);
}

/// Text, reasoning summary and argument deltas are written by hand: each is the text of the
/// value `events::text_delta`, `summary_delta` or `arguments_delta` builds, with its
/// `sequence_number` last.
#[test]
fn deltas_are_written_as_their_value_would_be() {
    use crate::openai_responses::StreamEncoder;
    use crate::openai_responses::events::{self, At};
    let pieces = ["Hi", " \"quoted\" \\ ", "line\nnext\t\u{1}", "é 😀", ""];
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    encoder.encode(&start(), &mut out);
    for event in crate::reply_strategies::deltas_of_each_kind(&pieces) {
        encoder.encode(&event, &mut out);
    }
    encoder.finish(&mut out);
    let text = String::from_utf8(out).unwrap();
    let mut seen = Vec::new();
    for event in text.split("\n\n").filter(|event| !event.is_empty()) {
        let (head, data) = event.split_once("\ndata: ").unwrap();
        let kind = head.strip_prefix("event: ").unwrap();
        let builder = match kind {
            "response.output_text.delta" => events::text_delta,
            "response.reasoning_summary_text.delta" => events::summary_delta,
            "response.function_call_arguments.delta" => events::arguments_delta,
            _ => continue,
        };
        let parsed: Value = serde_json::from_str(data).unwrap();
        let at = At {
            item_id: parsed["item_id"].as_str().unwrap(),
            output_index: parsed["output_index"].as_u64().unwrap() as usize,
        };
        let mut expected = builder(at, parsed["delta"].as_str().unwrap());
        expected["sequence_number"] = parsed["sequence_number"].clone();
        assert_eq!(data, expected.to_string());
        seen.push(kind.to_owned());
    }
    for kind in [
        "response.output_text.delta",
        "response.reasoning_summary_text.delta",
        "response.function_call_arguments.delta",
    ] {
        assert_eq!(
            seen.iter().filter(|seen| *seen == kind).count(),
            4,
            "{kind}"
        );
    }
}

/// Lifecycle events are written from the typed envelope: each is the text of the value
/// `events::lifecycle` makes of `envelope`'s, with its `sequence_number` last, in progress
/// (no output, no usage), completed and incomplete; the final output is the finished items.
#[test]
fn lifecycle_events_are_written_as_their_value_would_be() {
    use crate::openai_responses::events;
    use crate::openai_responses::response::envelope;
    use crate::openai_responses::{StreamEncoder, status_for, usage_to_wire};
    for finish in [FinishReason::EndTurn, FinishReason::MaxTokens] {
        let mut encoder = StreamEncoder::new(options());
        let mut out = Vec::new();
        // A reply that made calls finishes as tool calls, so the cut-short one makes none.
        let calls_made = finish == FinishReason::EndTurn;
        let calls = if calls_made {
            vec![
                call_start(0, "call_1", "read"),
                args(0, "{\"path\":\"a\"}"),
                StreamEvent::ToolCallEnd { index: 0 },
            ]
        } else {
            Vec::new()
        };
        let events = [start(), text("Hi \"there\"\n")]
            .into_iter()
            .chain(calls)
            .chain([usage(), StreamEvent::Finish(finish)]);
        for event in events {
            encoder.encode(&event, &mut out);
        }
        encoder.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        let mut kinds = Vec::new();
        // The final `output` must be the items the stream finished, in order, as an SDK
        // assembles them: taken from the `output_item.done` events, not from the envelope.
        let mut done_items = Vec::new();
        for event in text.split("\n\n").filter(|event| !event.is_empty()) {
            let (head, data) = event.split_once("\ndata: ").unwrap();
            let kind = head.strip_prefix("event: ").unwrap();
            if kind == "response.output_item.done" {
                let parsed: Value = serde_json::from_str(data).unwrap();
                done_items.push(parsed["item"].clone());
                continue;
            }
            if !kind.starts_with("response.") || kind.matches('.').count() != 1 {
                continue;
            }
            let parsed: Value = serde_json::from_str(data).unwrap();
            let response = &parsed["response"];
            let (status, details, output, usage) =
                if kind == "response.created" || kind == "response.in_progress" {
                    ("in_progress", Value::Null, Vec::new(), Value::Null)
                } else {
                    let (status, details) = status_for(finish);
                    let output = done_items.clone();
                    assert_eq!(output.len(), if calls_made { 2 } else { 1 });
                    let usage = usage_to_wire(&Usage {
                        input: 10,
                        cache_read: 90,
                        cache_write: 0,
                        output: 20,
                        reasoning: 5,
                    });
                    (status, details, output, usage)
                };
            let mut expected = events::lifecycle(
                kind,
                envelope(
                    response["id"].as_str().unwrap(),
                    response["model"].as_str().unwrap(),
                    response["created_at"].as_i64().unwrap(),
                    status,
                    details,
                    output,
                    usage,
                ),
            );
            expected["sequence_number"] = parsed["sequence_number"].clone();
            assert_eq!(data, expected.to_string());
            kinds.push(kind.to_owned());
        }
        let last = match finish {
            FinishReason::EndTurn => "response.completed",
            _ => "response.incomplete",
        };
        assert_eq!(kinds, ["response.created", "response.in_progress", last]);
    }
}
