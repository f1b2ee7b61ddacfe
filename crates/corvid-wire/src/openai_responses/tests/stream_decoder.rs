use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::response::reasoning_tool_calls_reply;
use super::{build, decode_fixture, decode_stream, fixture};
use crate::model::{ErrorKind, FinishReason, NameMap, StreamEvent, Usage, WireError};
use crate::openai_responses::decode_response;

fn start(id: &str, model: &str) -> StreamEvent {
    StreamEvent::Start {
        id: id.to_owned(),
        model: model.to_owned(),
    }
}

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        text: text.to_owned(),
    }
}

fn thinking(text: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta {
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

fn end(index: u32) -> StreamEvent {
    StreamEvent::ToolCallEnd { index }
}

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input,
        output,
        ..Usage::default()
    })
}

/// SSE bytes for events given as JSON (`data:` lines only, which the decoder reads).
fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect::<String>()
        .into_bytes()
}

/// The reply a stream fixture's terminal event carries, decoded as a whole response.
fn terminal_reply(name: &str) -> crate::model::ChatResponse {
    let text = String::from_utf8(fixture(name)).unwrap();
    let completed = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|event| event["type"] == "response.completed" || event["type"] == "response.done")
        .unwrap();
    let mut reply = decode_response(
        completed["response"].to_string().as_bytes(),
        &NameMap::default(),
    )
    .unwrap();
    reply.created = 0; // a stream does not carry it
    reply
}

#[test]
fn text_only() {
    assert_eq!(
        decode_fixture("stream_text.sse"),
        vec![
            start("resp_t1", "gpt-5"),
            text("Hi"),
            text(" there."),
            usage(14, 4),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn reasoning_summary_parts_encrypted_content_text_and_tool_calls() {
    let events = decode_fixture("stream_reasoning_tool_calls.sse");
    assert_eq!(
        events,
        vec![
            start("resp_r1", "gpt-5"),
            thinking("**Planning**\n\n"),
            thinking("Need the "),
            thinking("file."),
            thinking("\n\nAlso list "),
            thinking("the directory."),
            StreamEvent::ReasoningEncrypted {
                data: "gAAAAABo-encrypted-r1".to_owned(),
                id: Some("rs_r1".to_owned()),
            },
            text("Let me "),
            text("look."),
            call_start(0, "call_A1", "read_file"),
            args(0, "{\"pa"),
            args(0, "th\":\"src/"),
            args(0, "lib.rs\"}"),
            end(0),
            call_start(1, "call_B2", "list_dir"),
            args(1, "{\"dir\":"),
            args(1, "\"src\"}"),
            end(1),
            StreamEvent::Usage(Usage {
                input: 176,
                cache_read: 1024,
                cache_write: 0,
                output: 300,
                reasoning: 256,
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
    let mut expected = reasoning_tool_calls_reply();
    expected.created = 0;
    assert_eq!(build(&events), expected);
}

#[test]
fn parallel_tool_calls_with_interleaved_deltas() {
    assert_eq!(
        decode_fixture("stream_parallel_interleaved.sse"),
        vec![
            start("resp_p1", "gpt-4.1"),
            call_start(0, "call_one", "read_file"),
            call_start(1, "call_two", "grep"),
            args(1, "{\"pattern\":"),
            args(0, "{\"path\":"),
            args(1, "\"fn main\"}"),
            args(0, "\"a.rs\"}"),
            end(0),
            end(1),
            usage(90, 40),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn output_limit() {
    assert_eq!(
        decode_fixture("stream_incomplete.sse"),
        vec![
            start("resp_i1", "gpt-5"),
            text("Once upon"),
            text(" a time"),
            usage(10, 16),
            StreamEvent::Finish(FinishReason::MaxTokens),
        ]
    );
}

#[test]
fn refusal() {
    assert_eq!(
        decode_fixture("stream_refusal.sse"),
        vec![
            start("resp_n1", "gpt-5"),
            text("I can't help with that."),
            usage(12, 7),
            StreamEvent::Finish(FinishReason::ContentFilter),
        ]
    );
}

#[test]
fn error_event_mid_stream() {
    assert_eq!(
        decode_fixture("stream_error_event.sse"),
        vec![
            start("resp_e1", "gpt-5"),
            text("Partial"),
            StreamEvent::Error(
                WireError::new(
                    ErrorKind::RateLimited,
                    "Rate limit reached for gpt-5 on tokens per min (TPM)."
                )
                .with_code("rate_limit_exceeded")
            ),
        ]
    );
}

#[test]
fn failed_response_mid_stream() {
    assert_eq!(
        decode_fixture("stream_failed.sse"),
        vec![
            start("resp_f1", "gpt-5"),
            text("Partial"),
            StreamEvent::Error(
                WireError::new(
                    ErrorKind::Api,
                    "The server had an error while processing your request."
                )
                .with_code("server_error")
            ),
        ]
    );
}

#[test]
fn a_stream_cut_short_is_an_error() {
    assert_eq!(
        decode_fixture("stream_truncated.sse"),
        vec![
            start("resp_c1", "gpt-5"),
            text("Partial"),
            StreamEvent::Error(WireError::new(
                ErrorKind::Api,
                "the upstream stream ended before the response was complete"
            )),
        ]
    );
}

#[test]
fn unknown_events_comments_builtin_items_and_done_markers_are_ignored() {
    assert_eq!(
        decode_fixture("stream_unknown_events.sse"),
        vec![
            start("resp_u1", "gpt-5"),
            text("Found it."),
            usage(30, 5),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn a_body_that_ends_without_a_final_line_end_is_complete() {
    let bytes = fixture("stream_text.sse");
    let cut = String::from_utf8(bytes.clone()).unwrap().trim_end().len();
    assert_eq!(
        decode_stream(&bytes[..cut], &NameMap::default()),
        decode_fixture("stream_text.sse")
    );
}

#[test]
fn streams_build_the_reply_their_terminal_event_carries() {
    for name in [
        "stream_text.sse",
        "stream_reasoning_tool_calls.sse",
        "stream_parallel_interleaved.sse",
        "stream_xai_complete_arguments.sse",
        "stream_xai_response_done.sse",
        "stream_arguments_at_done.sse",
        "stream_refusal.sse",
        "stream_unknown_events.sse",
    ] {
        assert_eq!(build(&decode_fixture(name)), terminal_reply(name), "{name}");
    }
}

#[test]
fn items_only_in_the_terminal_response_are_emitted() {
    let response = json!({
        "id": "resp_q", "model": "m", "status": "completed",
        "output": [
            { "type": "reasoning", "id": "rs_q", "summary": [{ "type": "summary_text", "text": "Hmm." }],
              "encrypted_content": "enc" },
            { "type": "message", "id": "msg_q", "role": "assistant",
              "content": [{ "type": "output_text", "text": "Answer." }] },
            { "type": "function_call", "id": "fc_q", "call_id": "call_q", "name": "f", "arguments": "{}" },
        ],
        "usage": { "input_tokens": 3, "output_tokens": 2, "total_tokens": 5 },
    });
    let events = decode_stream(
        &sse(&[json!({ "type": "response.completed", "response": response })]),
        &NameMap::default(),
    );
    assert_eq!(
        events,
        vec![
            start("resp_q", "m"),
            thinking("Hmm."),
            StreamEvent::ReasoningEncrypted {
                data: "enc".to_owned(),
                id: Some("rs_q".to_owned()),
            },
            text("Answer."),
            call_start(0, "call_q", "f"),
            args(0, "{}"),
            end(0),
            usage(3, 2),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn argument_deltas_without_item_ids_find_their_call() {
    let events = decode_stream(
        &sse(&[
            json!({ "type": "response.output_item.added", "output_index": 0,
                    "item": { "type": "function_call", "call_id": "call_x", "name": "f", "arguments": "" } }),
            json!({ "type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\":" }),
            json!({ "type": "response.function_call_arguments.delta", "delta": "1}" }),
            json!({ "type": "response.completed", "response": { "status": "completed" } }),
        ]),
        &NameMap::default(),
    );
    assert_eq!(
        events,
        vec![
            start("", ""),
            call_start(0, "call_x", "f"),
            args(0, "{\"a\":"),
            args(0, "1}"),
            end(0),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn an_error_event_with_a_nested_error_object() {
    let events = decode_stream(
        &sse(&[json!({ "type": "error",
                       "error": { "type": "server_error", "code": "server_overloaded", "message": "Busy." } })]),
        &NameMap::default(),
    );
    assert_eq!(
        events,
        vec![StreamEvent::Error(
            WireError::new(ErrorKind::Overloaded, "Busy.").with_code("server_overloaded")
        )]
    );
}
