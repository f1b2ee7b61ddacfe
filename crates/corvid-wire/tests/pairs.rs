//! The cross-dialect matrix: every client dialect A against every provider dialect B (A = B
//! included, through the canonical model), along the gateway's paths:
//!
//! 1. request: client body in A → `A::decode_request` → (`extra` cleared when A ≠ B) →
//!    `B::encode_request`, checked against what B refuses (`pairs/valid.rs`);
//! 2. whole reply: provider body in B → `B::decode_response` → `A::encode_response`;
//! 3. stream: provider bytes in B, fed in small pieces → `B::StreamDecoder` →
//!    `A::StreamEncoder` → `finish()`, with A's framing checked;
//! 4. errors: before the first byte (`B::decode_error` → `A::encode_error`) and after it (an
//!    in-stream error, which must end A's stream with A's error event).
//!
//! Snapshots are named `{scenario}__{a}_to_{b}` (`tests/snapshots/pairs__…`), one per scenario,
//! pair and path. Besides them, every reply checks that nothing was lost by accident (text,
//! reasoning text and tool calls read back by A's own decoder equal what B said) and that the
//! token arithmetic holds (A's total input, cache reads and output equal B's). Finish reasons
//! and error statuses are table tests; the codecs' own fixtures and some odd event sequences
//! run through every pair without snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod pairs {
    pub(crate) mod dialect;
    pub(crate) mod finish;
    pub(crate) mod framing;
    pub(crate) mod history;
    pub(crate) mod valid;
}

use corvid_wire::gemini::SKIP_SIGNATURE;
use corvid_wire::model::{
    ChatResponse, ErrorKind, NameMap, Part, ResponseBuilder, StreamEvent, WireError,
};
use insta::{assert_json_snapshot, assert_snapshot};
use pairs::dialect::{
    ALL, Dialect, codec_fixture, pairs, pairs_fixture, snapshot_name, translate_request,
    translate_stream,
};
use pairs::framing::{self, Counts, Ending};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// What a reply says, independent of dialect.

/// The content a client can act on: reasoning text, text, and tool calls (name and arguments
/// as JSON; ids may be rewritten for the client's dialect).
#[derive(Debug, PartialEq)]
struct Content {
    reasoning: String,
    text: String,
    calls: Vec<(String, Value)>,
}

impl Content {
    fn of(response: &ChatResponse) -> Self {
        let mut content = Self {
            reasoning: String::new(),
            text: String::new(),
            calls: Vec::new(),
        };
        for part in &response.parts {
            match part {
                Part::Text { text } => content.text.push_str(text),
                Part::Reasoning(reasoning) => content.reasoning.push_str(&reasoning.text),
                Part::ToolCall(call) => content.calls.push((
                    call.name.clone(),
                    serde_json::from_str(&call.arguments).unwrap(),
                )),
                Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => {}
            }
        }
        content
    }

    /// The same with the calls in name order: Gemini clients get each call whole when it
    /// ends, so calls that end out of order arrive out of order.
    fn calls_sorted(mut self) -> Self {
        self.calls.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }
}

fn counts(response: &ChatResponse) -> Counts {
    Counts {
        total_input: response.usage.total_input(),
        cache_read: response.usage.cache_read,
        output: response.usage.output,
    }
}

fn collect(events: &[StreamEvent]) -> ChatResponse {
    let mut builder = ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    match builder.finish() {
        Ok(response) => response,
        Err(error) => panic!("the stream failed: {error:?}"),
    }
}

/// A client stream in A read back by A's own decoder.
fn read_back_stream(client: Dialect, text: &str) -> ChatResponse {
    let events = pairs::dialect::decode_stream(client, text.as_bytes(), &NameMap::default(), 5);
    collect(&events)
}

// ---------------------------------------------------------------------------------------------
// 1. Requests.

/// The gateway's request path for `request_{scenario}.json` of every client dialect.
fn request_scenario(scenario: &str) {
    for (a, b) in pairs() {
        let body = pairs_fixture(a, &format!("request_{scenario}.json"));
        let sent = translate_request(a, b, &body);
        assert_json_snapshot!(snapshot_name(&format!("request_{scenario}"), a, b), sent);
    }
}

#[test]
fn request_text() {
    request_scenario("text");
}

#[test]
fn request_tool_results_with_errors() {
    request_scenario("tool_results");
}

#[test]
fn request_image() {
    request_scenario("image");
}

/// The provider reply with reasoning (and a tool call) for the replay scenarios.
fn reasoning_reply(provider: Dialect) -> Vec<u8> {
    match provider {
        Dialect::Responses => codec_fixture(provider, "response_reasoning_tool_calls.json"),
        _ => pairs_fixture(provider, "response_reasoning.json"),
    }
}

/// Reasoning with signatures / encrypted content in the history, as the client really sends
/// it: B's reply with reasoning goes to client A, A appends it (and the tool results) to its
/// history unchanged, and the next request goes back to B.
#[test]
fn request_reasoning_replay() {
    for (a, b) in pairs() {
        let base = pairs_fixture(a, "request_reasoning.json");
        let names = NameMap::new(&a.decode_request(&base).tools);
        let reply = b.decode_response(&reasoning_reply(b), &names);
        let shown = a.encode_response(&reply);
        let history = pairs::history::next_turn(a, serde_json::from_slice(&base).unwrap(), &shown);
        let sent = translate_request(a, b, history.to_string().as_bytes());
        let text = sent.to_string();
        // What must come back to B unchanged (pitfalls 13, 14; CODECS.md deviations).
        match b {
            Dialect::Anthropic => {
                // Signed thinking returns through Anthropic clients and, marked inside
                // `encrypted_content`, through Responses clients; nobody else can carry it.
                let kept = matches!(a, Dialect::Anthropic | Dialect::Responses);
                assert_eq!(text.contains("EpcBAnthropicSig=="), kept, "{a:?}→{b:?}");
                assert_eq!(text.contains("EmwKAnthropicRedacted"), kept, "{a:?}→{b:?}");
            }
            Dialect::Responses => {
                let kept = a == Dialect::Responses;
                assert_eq!(text.contains("gAAAAABo-encrypted-r1"), kept, "{a:?}→{b:?}");
            }
            Dialect::Gemini => {
                let signature = sent["contents"][1]["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find_map(|part| part.get("functionCall").and(part.get("thoughtSignature")))
                    .cloned();
                let expected = if a == Dialect::Gemini {
                    "CqwBGeminiSig=="
                } else {
                    SKIP_SIGNATURE
                };
                assert_eq!(signature, Some(json!(expected)), "{a:?}→{b:?}");
            }
            Dialect::Chat => {
                // DeepSeek-style upstreams need the reasoning text back in tool loops.
                assert!(text.contains("Need the file."), "{a:?}→{b:?}: {text}");
            }
        }
        assert_json_snapshot!(snapshot_name("request_reasoning_replay", a, b), sent);
    }
}

/// The codecs' own client fixtures (Claude Code, Zed, Codex, google-genai bodies with images,
/// signed thinking, redacted thinking, server tools, errors in results…) translated for every
/// provider: each body must be one the provider accepts (`pairs/valid.rs`). No snapshots: the
/// codec tests snapshot these for their own dialect.
#[test]
fn codec_request_fixtures_are_valid_for_every_provider() {
    let fixtures = [
        (Dialect::Anthropic, "claude_code_request.json"),
        (Dialect::Chat, "request_zed_tool_loop.json"),
        (Dialect::Chat, "request_params.json"),
        (Dialect::Chat, "request_text.json"),
        (Dialect::Responses, "request_full.json"),
        (Dialect::Responses, "request_interleaved_outputs.json"),
        (Dialect::Gemini, "request_full.json"),
        (Dialect::Gemini, "request_snake_case.json"),
    ];
    for (a, file) in fixtures {
        for b in ALL {
            translate_request(a, b, &codec_fixture(a, file));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Whole replies.

/// B's whole reply through A: snapshot, plus no accidental loss and the usage arithmetic.
fn reply_scenario(scenario: &str, fixture: fn(Dialect) -> Vec<u8>) {
    for (a, b) in pairs() {
        let body = fixture(b);
        let upstream = b.decode_response(&body, &NameMap::default());
        let shown = a.encode_response(&upstream);
        let read_back = a.decode_response(shown.to_string().as_bytes(), &NameMap::default());
        assert_eq!(
            Content::of(&read_back),
            Content::of(&upstream),
            "{scenario} {a:?}→{b:?}"
        );
        assert_eq!(read_back.finish, upstream.finish, "{scenario} {a:?}→{b:?}");
        let provider: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            framing::usage_whole(a, &shown),
            framing::usage_whole(b, &provider),
            "{scenario} {a:?}→{b:?}: usage"
        );
        assert_json_snapshot!(snapshot_name(&format!("reply_{scenario}"), a, b), shown);
    }
}

#[test]
fn reply_text() {
    reply_scenario("text", |b| match b {
        Dialect::Anthropic => pairs_fixture(b, "response_text.json"),
        _ => codec_fixture(b, "response_text.json"),
    });
}

#[test]
fn reply_parallel_tool_calls() {
    reply_scenario("parallel_tools", |b| match b {
        Dialect::Chat | Dialect::Gemini => codec_fixture(b, "response_tool_calls.json"),
        _ => pairs_fixture(b, "response_parallel_tools.json"),
    });
}

#[test]
fn reply_reasoning() {
    reply_scenario("reasoning", reasoning_reply);
}

// ---------------------------------------------------------------------------------------------
// 3. Streams.

/// B's stream through A: framing, no accidental loss, usage arithmetic, snapshot.
fn stream_scenario(scenario: &str, fixture: fn(Dialect) -> Vec<u8>) {
    for (a, b) in pairs() {
        let body = fixture(b);
        let (text, events) = translate_stream(a, b, &body, &NameMap::default());
        let sse = framing::check(a, &text, Ending::Normal);
        let upstream = collect(&events);
        let read_back = read_back_stream(a, &text);
        assert_eq!(
            Content::of(&read_back),
            Content::of(&upstream),
            "{scenario} {a:?}→{b:?}"
        );
        assert_eq!(read_back.finish, upstream.finish, "{scenario} {a:?}→{b:?}");
        let provider = framing::parse(std::str::from_utf8(&body).unwrap());
        assert_eq!(
            framing::usage_stream(a, &sse),
            framing::usage_stream(b, &provider),
            "{scenario} {a:?}→{b:?}: usage"
        );
        assert_eq!(counts(&read_back), counts(&upstream));
        assert_snapshot!(
            snapshot_name(&format!("stream_{scenario}"), a, b),
            text.replace("\r\n", "\n")
        );
    }
}

fn stream_text_fixture(b: Dialect) -> Vec<u8> {
    codec_fixture(b, "stream_text.sse")
}

#[test]
fn stream_text() {
    stream_scenario("text", stream_text_fixture);
}

#[test]
fn stream_tool_call_arguments_in_many_deltas() {
    stream_scenario("tool_args", |b| match b {
        Dialect::Chat => codec_fixture(b, "stream_tool_args.sse"),
        _ => pairs_fixture(b, "stream_tool_args.sse"),
    });
}

#[test]
fn stream_parallel_tool_calls() {
    stream_scenario("parallel_tools", |b| match b {
        Dialect::Chat | Dialect::Anthropic => codec_fixture(b, "stream_parallel_tools.sse"),
        Dialect::Responses => codec_fixture(b, "stream_parallel_interleaved.sse"),
        Dialect::Gemini => pairs_fixture(b, "stream_parallel_tools.sse"),
    });
}

#[test]
fn stream_reasoning() {
    stream_scenario("reasoning", |b| match b {
        Dialect::Chat => codec_fixture(b, "stream_xai_tool.sse"),
        Dialect::Responses => codec_fixture(b, "stream_reasoning_tool_calls.sse"),
        Dialect::Anthropic => codec_fixture(b, "stream_thinking_tool.sse"),
        Dialect::Gemini => codec_fixture(b, "stream_thinking_tools.sse"),
    });
}

/// Every stream fixture of the codecs' own tests (odd shapes, xAI quirks, arguments only at
/// `.done`, refusals, blocked prompts, truncations, failures…) through every client encoder:
/// valid framing, and either the same content, finish and counts read back by the client's
/// own decoder, or an in-stream error at the end. No snapshots (the codec tests have them).
#[test]
fn codec_stream_fixtures_through_every_client() {
    for b in ALL {
        for file in pairs::dialect::codec_fixture_names(b, ".sse") {
            let body = codec_fixture(b, &file);
            for a in ALL {
                let (text, events) = translate_stream(a, b, &body, &NameMap::default());
                let context = format!("{file}: {a:?}→{b:?}");
                if matches!(events.last(), Some(StreamEvent::Error(_))) {
                    framing::check(a, &text, Ending::Error);
                    continue;
                }
                framing::check(a, &text, Ending::Normal);
                let upstream = collect(&events);
                let read_back = read_back_stream(a, &text);
                assert_eq!(Content::of(&read_back), Content::of(&upstream), "{context}");
                assert_eq!(read_back.finish, upstream.finish, "{context}");
                assert_eq!(counts(&read_back), counts(&upstream), "{context}");
            }
        }
    }
}

/// Every whole-reply fixture of the codecs' own tests through every client: the same
/// content, finish and counts read back by the client's own decoder.
#[test]
fn codec_reply_fixtures_through_every_client() {
    for b in ALL {
        for file in pairs::dialect::codec_fixture_names(b, ".json") {
            if !file.starts_with("response_") {
                continue;
            }
            let Ok(upstream) = b.try_decode_response(&codec_fixture(b, &file), &NameMap::default())
            else {
                continue;
            };
            for a in ALL {
                let context = format!("{file}: {a:?}→{b:?}");
                let shown = a.encode_response(&upstream);
                let read_back =
                    a.decode_response(shown.to_string().as_bytes(), &NameMap::default());
                assert_eq!(Content::of(&read_back), Content::of(&upstream), "{context}");
                assert_eq!(read_back.finish, upstream.finish, "{context}");
                assert_eq!(counts(&read_back), counts(&upstream), "{context}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Usage with cached tokens.

/// Every provider reports 2006 input tokens of which 1920 were read from the cache (Anthropic:
/// 6 fresh + 1920 read + 80 written) and 300 output tokens of which 256 reasoning (Anthropic
/// does not split them). Every client, whole or streamed, must rebuild the same totals.
#[test]
fn usage_with_cached_tokens() {
    let expected = Counts {
        total_input: 2006,
        cache_read: 1920,
        output: 300,
    };
    for (a, b) in pairs() {
        let body = pairs_fixture(b, "response_usage.json");
        let provider: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            framing::usage_whole(b, &provider),
            expected,
            "fixture {b:?}"
        );
        let shown = a.encode_response(&b.decode_response(&body, &NameMap::default()));
        assert_eq!(
            framing::usage_whole(a, &shown),
            expected,
            "whole {a:?}→{b:?}"
        );

        let body = pairs_fixture(b, "stream_usage.sse");
        let provider = framing::parse(std::str::from_utf8(&body).unwrap());
        assert_eq!(
            framing::usage_stream(b, &provider),
            expected,
            "fixture {b:?}"
        );
        let (text, _) = translate_stream(a, b, &body, &NameMap::default());
        let sse = framing::check(a, &text, Ending::Normal);
        assert_eq!(
            framing::usage_stream(a, &sse),
            expected,
            "stream {a:?}→{b:?}"
        );

        assert_json_snapshot!(
            snapshot_name("usage_cached", a, b),
            json!({
                "whole": framing::usage_object(a, &shown),
                "stream": framing::usage_stream_object(a, &sse),
            })
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Finish reasons (§6.2), as a table.

#[test]
fn finish_reasons() {
    let mut wrong = Vec::new();
    for case in pairs::finish::cases() {
        let (whole, stream) = case.provider_reply();
        let b = case.provider;
        for (position, a) in ALL.into_iter().enumerate() {
            let expected = case.expected[position];
            let shown = a.encode_response(&b.decode_response(&whole, &NameMap::default()));
            let got = framing::finish_whole(a, &shown);
            if got != expected {
                wrong.push(format!(
                    "{} → {a:?} whole: {got}, want {expected}",
                    case.label()
                ));
            }
            let (text, _) = translate_stream(a, b, &stream, &NameMap::default());
            let sse = framing::check(a, &text, Ending::Normal);
            let got = framing::finish_stream(a, &sse);
            if got != expected {
                wrong.push(format!(
                    "{} → {a:?} stream: {got}, want {expected}",
                    case.label()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "finish reasons:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 4. Errors.

/// An upstream error reply before the first byte: status and body for the client.
#[test]
fn error_before_first_byte() {
    for (a, b) in pairs() {
        let errors: Vec<Value> = serde_json::from_slice(&pairs_fixture(b, "errors.json")).unwrap();
        let mut shown = Vec::new();
        for error in &errors {
            let status = error["status"].as_u64().unwrap() as u16;
            let wire = b.decode_error(status, error["body"].to_string().as_bytes());
            let (client_status, body) = a.encode_error(&wire);
            // The client reads back the same kind and the upstream's wording (§7).
            let read_back = a.decode_error(client_status, body.to_string().as_bytes());
            assert_eq!(read_back.kind, wire.kind, "{a:?}→{b:?} {status}");
            assert_eq!(read_back.message, wire.message, "{a:?}→{b:?} {status}");
            let upstream_message = error["body"]["error"]["message"].as_str().unwrap();
            assert_eq!(wire.message, upstream_message, "{b:?} {status}");
            shown.push(json!({"upstream_status": status, "status": client_status, "body": body}));
        }
        assert_json_snapshot!(snapshot_name("error_before_first_byte", a, b), shown);
    }
}

/// Every §6.8 status, from every provider, gets the status the reference gives the client:
/// kept, except overload (502/503/529), which Anthropic clients get as 529 and the others as
/// 503, and what a dialect has no kind for (LOSSES.md).
#[test]
fn error_statuses() {
    // Each provider's own wording for the status; a 502 is a proxy's HTML page.
    let body = |b: Dialect, status: u16| -> String {
        let message = format!("upstream said {status}");
        if status == 502 {
            return format!("<html><body>{message}</body></html>");
        }
        match b {
            Dialect::Chat | Dialect::Responses => {
                let kind = match status {
                    400 | 413 => "invalid_request_error",
                    429 => "tokens",
                    _ => "server_error",
                };
                json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
            }
            Dialect::Anthropic => {
                let kind = match status {
                    400 => "invalid_request_error",
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    413 => "request_too_large",
                    429 => "rate_limit_error",
                    503 | 529 => "overloaded_error",
                    504 => "timeout_error",
                    _ => "api_error",
                };
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
            Dialect::Gemini => {
                let google = match status {
                    400 => "INVALID_ARGUMENT",
                    401 => "UNAUTHENTICATED",
                    403 => "PERMISSION_DENIED",
                    404 => "NOT_FOUND",
                    429 => "RESOURCE_EXHAUSTED",
                    503 | 529 => "UNAVAILABLE",
                    504 => "DEADLINE_EXCEEDED",
                    _ => "INTERNAL",
                };
                json!({"error": {"code": status, "message": message, "status": google}})
            }
        }
        .to_string()
    };
    let mut wrong = Vec::new();
    for (a, b) in pairs() {
        for status in [400, 401, 403, 404, 413, 429, 500, 502, 503, 504, 529] {
            let wire = b.decode_error(status, body(b, status).as_bytes());
            let (got, json) = a.encode_error(&wire);
            let expected = match (a, status) {
                (Dialect::Anthropic, 502 | 503 | 529) => 529,
                (_, 502 | 503 | 529) => 503,
                (Dialect::Gemini, 413) => 400,
                _ => status,
            };
            if got != expected {
                wrong.push(format!("{b:?} {status} → {a:?}: {got}, want {expected}"));
            }
            if !json
                .to_string()
                .contains(&format!("upstream said {status}"))
            {
                wrong.push(format!("{b:?} {status} → {a:?}: message lost: {json}"));
            }
        }
    }
    assert!(wrong.is_empty(), "error statuses:\n{}", wrong.join("\n"));
}

/// The stream of B that fails after its first bytes.
fn stream_error_fixture(b: Dialect) -> Vec<u8> {
    match b {
        Dialect::Responses => codec_fixture(b, "stream_error_event.sse"),
        _ => codec_fixture(b, "stream_error.sse"),
    }
}

/// An upstream error after the first byte: the client got the partial text, then its own
/// dialect's in-stream error event, and nothing after it.
#[test]
fn error_after_first_byte() {
    for (a, b) in pairs() {
        let (text, events) = translate_stream(a, b, &stream_error_fixture(b), &NameMap::default());
        let Some(StreamEvent::Error(error)) = events.last() else {
            panic!("{b:?} stream error not decoded: {events:?}")
        };
        framing::check(a, &text, Ending::Error);
        let partial = if b == Dialect::Gemini {
            "Let me"
        } else {
            "Partial"
        };
        assert!(text.contains(partial), "{a:?}→{b:?}: partial text lost");
        assert!(text.contains(&error.message), "{a:?}→{b:?}: wording lost");
        assert_snapshot!(
            snapshot_name("error_after_first_byte", a, b),
            text.replace("\r\n", "\n")
        );
    }
}

/// Issue 10, item 19: every client encoder writes an `Error` that arrives after the
/// provider's finish and usage (a reply cut before its real end) as its in-stream error, with
/// nothing after it — never a success end that hides it.
#[test]
fn a_late_error_after_finish_and_usage_is_an_error_in_every_dialect() {
    let events = [
        StreamEvent::Start {
            id: "up_1".into(),
            model: "m".into(),
        },
        StreamEvent::TextDelta {
            text: "Partial".into(),
        },
        StreamEvent::Finish(corvid_wire::model::FinishReason::EndTurn),
        StreamEvent::Usage(corvid_wire::model::Usage {
            input: 3,
            output: 1,
            ..Default::default()
        }),
        StreamEvent::Error(WireError::api("the reply was cut short")),
    ];
    for client in ALL {
        let mut encoder = client.encoder();
        let mut out = Vec::new();
        for event in &events {
            encoder.encode(event, &mut out);
        }
        encoder.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        framing::check(client, &text, Ending::Error);
        assert!(
            text.contains("the reply was cut short"),
            "{client:?}: {text}"
        );
    }
}

/// A stream cut in the middle of a line, with no end marker and no error event, is a failure,
/// never a silent truncation (pitfall 19).
#[test]
fn truncated_stream_ends_with_an_error() {
    for (a, b) in pairs() {
        let mut body = stream_text_fixture(b);
        body.truncate(body.len() * 6 / 10);
        let (text, events) = translate_stream(a, b, &body, &NameMap::default());
        assert!(
            matches!(events.last(), Some(StreamEvent::Error(_))),
            "{a:?}→{b:?}: {events:?}"
        );
        framing::check(a, &text, Ending::Error);
    }
}

/// A stream whose first event is an error: the client's stream is just its error event
/// (after the Responses lifecycle events), with the upstream's wording.
#[test]
fn error_as_first_stream_event() {
    let message = "Overloaded right now";
    for (a, b) in pairs() {
        let body = match b {
            Dialect::Chat => format!(
                "data: {}\n\n",
                json!({"error": {"message": message, "type": "server_error"}})
            ),
            Dialect::Responses => format!(
                "event: error\ndata: {}\n\n",
                json!({"type": "error", "code": "server_error", "message": message,
                    "param": null, "sequence_number": 0})
            ),
            Dialect::Anthropic => format!(
                "event: error\ndata: {}\n\n",
                json!({"type": "error",
                    "error": {"type": "overloaded_error", "message": message}})
            ),
            Dialect::Gemini => format!(
                "data: {}\r\n\r\n",
                json!({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})
            ),
        };
        let (text, events) = translate_stream(a, b, body.as_bytes(), &NameMap::default());
        assert!(
            matches!(events.last(), Some(StreamEvent::Error(_))),
            "{a:?}→{b:?}: {events:?}"
        );
        framing::check(a, &text, Ending::Error);
        assert!(text.contains(message), "{a:?}→{b:?}: {text}");
    }
}

/// Canonical sequences no single fixture produces, through every client encoder: valid
/// framing, and the same content read back (CODECS.md: "valid framing for any well-formed
/// canonical sequence").
#[test]
fn odd_canonical_sequences_through_every_client() {
    use corvid_wire::model::{FinishReason, Usage};
    let start = || StreamEvent::Start {
        id: "up_1".into(),
        model: "up-model".into(),
    };
    let text = |t: &str| StreamEvent::TextDelta { text: t.into() };
    let think = |t: &str| StreamEvent::ReasoningDelta { text: t.into() };
    let sign = |s: &str| StreamEvent::ReasoningSignature {
        signature: s.into(),
    };
    let call = |index: u32, id: &str, name: &str| StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
        signature: None,
    };
    let args = |index: u32, delta: &str| StreamEvent::ToolCallArgs {
        index,
        delta: delta.into(),
    };
    let end = |index: u32| StreamEvent::ToolCallEnd { index };
    let usage = StreamEvent::Usage(Usage {
        input: 10,
        cache_read: 5,
        cache_write: 1,
        output: 20,
        reasoning: 4,
    });
    let sequences: Vec<(&str, Vec<StreamEvent>)> = vec![
        (
            "interleaved thinking",
            vec![
                start(),
                think("First."),
                sign("sig-1"),
                call(0, "c1", "read_file"),
                args(0, r#"{"path":"a"}"#),
                end(0),
                think("Second."),
                sign("sig-2"),
                text("Done."),
                StreamEvent::Finish(FinishReason::EndTurn),
                usage.clone(),
            ],
        ),
        (
            "usage first, text after tools, calls ending out of order",
            vec![
                usage.clone(),
                start(),
                text("Let me."),
                call(0, "c1", "read_file"),
                call(1, "c2", "grep"),
                args(1, r#"{"q":"#),
                args(0, r#"{"path":"#),
                args(1, r#""x"}"#),
                end(1),
                args(0, r#""a"}"#),
                end(0),
                text("Both started."),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ],
        ),
        (
            "call without arguments, no finish",
            vec![start(), call(0, "c1", "list"), end(0), usage.clone()],
        ),
        (
            "encrypted reasoning only",
            vec![
                start(),
                StreamEvent::ReasoningEncrypted {
                    data: "enc".into(),
                    id: Some("rs_1".into()),
                },
                text("Hi."),
                StreamEvent::Finish(FinishReason::EndTurn),
            ],
        ),
        (
            "redacted thinking then thinking",
            vec![
                start(),
                StreamEvent::ReasoningEncrypted {
                    data: "redacted".into(),
                    id: None,
                },
                think("Plan."),
                sign("sig"),
                text("Hi."),
                usage.clone(),
                StreamEvent::Finish(FinishReason::MaxTokens),
            ],
        ),
        ("nothing at all", vec![]),
    ];
    for (label, events) in &sequences {
        // An error at any point ends every client's stream with its error event, even after
        // `Finish` and `Usage` (issue 10, item 19: Anthropic used to close with `message_stop`
        // there and drop the error).
        for cut in 0..=events.len() {
            let mut failed = events[..cut].to_vec();
            failed.push(StreamEvent::Error(WireError::new(
                ErrorKind::Overloaded,
                "gone",
            )));
            for a in ALL {
                let mut encoder = a.encoder();
                let mut out = Vec::new();
                failed
                    .iter()
                    .for_each(|event| encoder.encode(event, &mut out));
                encoder.finish(&mut out);
                let text = String::from_utf8(out).unwrap();
                framing::check(a, &text, Ending::Error);
                assert!(text.contains("gone"), "{label} cut at {cut}: {a:?}\n{text}");
            }
        }
    }
    for (label, events) in sequences {
        let upstream = collect(&events);
        for a in ALL {
            let mut encoder = a.encoder();
            let mut out = Vec::new();
            for event in &events {
                encoder.encode(event, &mut out);
            }
            encoder.finish(&mut out);
            let text = String::from_utf8(out).unwrap();
            framing::check(a, &text, Ending::Normal);
            let read_back = read_back_stream(a, &text);
            let context = format!("{label}: {a:?}\n{text}");
            assert_eq!(
                Content::of(&read_back).calls_sorted(),
                Content::of(&upstream).calls_sorted(),
                "{context}"
            );
            assert_eq!(read_back.finish, upstream.finish, "{context}");
            // Without upstream counts an Anthropic client is shown the estimate.
            if events.iter().any(|e| matches!(e, StreamEvent::Usage(_))) {
                assert_eq!(counts(&read_back), counts(&upstream), "{context}");
            }
        }
    }
}

/// Histories a client sends after a cancelled tool run (calls never answered before the next
/// message): every provider still gets a body it accepts. (Results
/// that answer no call at all become text only toward Anthropic; the other encoders send them
/// as results, which strict upstreams refuse. Not covered here.)
#[test]
fn unanswered_calls_are_valid_for_every_provider() {
    let tool = json!({"type": "function", "function": {"name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}});
    let call = |id: &str| {
        json!({"id": id, "type": "function",
        "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}})
    };
    let bodies = [
        // Zed stopped the run after one result: the next message is the user's.
        (
            Dialect::Chat,
            json!({"model": "m", "tools": [tool], "messages": [
            {"role": "user", "content": "Read a.rs"},
            {"role": "assistant", "content": null, "tool_calls": [call("call_1"), call("call_2")]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn a() {}"},
            {"role": "user", "content": "Stop, never mind."}]}),
        ),
        // Two tool loops in a row, the first one unanswered.
        (
            Dialect::Chat,
            json!({"model": "m", "tools": [tool], "messages": [
            {"role": "user", "content": "Read a.rs twice"},
            {"role": "assistant", "content": "", "tool_calls": [call("call_1")]},
            {"role": "assistant", "content": null, "tool_calls": [call("call_2")]},
            {"role": "tool", "tool_call_id": "call_2", "content": "two"}]}),
        ),
        (
            Dialect::Anthropic,
            json!({"model": "m", "max_tokens": 100, "messages": [
            {"role": "user", "content": "Read a.rs"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
            {"role": "user", "content": "Actually, stop."}]}),
        ),
        (
            Dialect::Responses,
            json!({"model": "m", "input": [
            {"role": "user", "content": "Read a.rs"},
            {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
            {"role": "user", "content": "Cancelled."}]}),
        ),
        (
            Dialect::Gemini,
            json!({"contents": [
            {"role": "user", "parts": [{"text": "Read a.rs and b.rs"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "read_file", "args": {"path": "a.rs"}}},
                {"functionCall": {"name": "read_file", "args": {"path": "b.rs"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read_file", "response": {"result": "a"}}}]},
            {"role": "user", "parts": [{"text": "Only one came back."}]}]}),
        ),
    ];
    for (a, body) in bodies {
        for b in ALL {
            translate_request(a, b, body.to_string().as_bytes());
        }
    }
}

/// A Chat history whose first call was never answered (the user stopped the tool run), then
/// the user's next message.
fn history_with_an_unanswered_call() -> Vec<u8> {
    let call = |id: &str, path: &str| {
        json!({"id": id, "type": "function",
        "function": {"name": "read_file", "arguments": json!({"path": path}).to_string()}})
    };
    json!({"model": "m", "messages": [
        {"role": "user", "content": "Read a.rs and b.rs"},
        {"role": "assistant", "content": null,
            "tool_calls": [call("call_1", "a.rs"), call("call_2", "b.rs")]},
        {"role": "tool", "tool_call_id": "call_2", "content": "fn b() {}"},
        {"role": "user", "content": "Skip a.rs."}],
        "tools": [{"type": "function", "function": {"name": "read_file",
            "parameters": {"type": "object"}}}]})
    .to_string()
    .into_bytes()
}

/// Found by the matrix: a call nobody answered reached a Responses upstream without a
/// `function_call_output`, which it refuses ("No tool output found for function call …"); the
/// Chat and Anthropic encoders already answer such calls with a placeholder.
#[test]
fn responses_upstream_gets_an_output_for_every_call() {
    let sent = translate_request(
        Dialect::Chat,
        Dialect::Responses,
        &history_with_an_unanswered_call(),
    );
    let outputs: Vec<(&str, &str)> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| {
            (
                item["call_id"].as_str().unwrap(),
                item["output"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outputs,
        [
            ("call_1", "No result was returned for this tool call."),
            ("call_2", "fn b() {}"),
        ]
    );
}

/// Found by the matrix: Gemini refuses a function-call turn whose next turn does not answer
/// every call ("the number of function response parts should be equal to the number of
/// function call parts"), and pairs responses with calls by name and position: a call nobody
/// answered gets an error response, in call order.
#[test]
fn gemini_upstream_answers_every_call_in_call_order() {
    let sent = translate_request(
        Dialect::Chat,
        Dialect::Gemini,
        &history_with_an_unanswered_call(),
    );
    assert_eq!(
        sent["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "read_file",
                "response": {"error": "No result was returned for this tool call."}}},
            {"functionResponse": {"name": "read_file", "response": {"result": "fn b() {}"}}},
            {"text": "Skip a.rs."},
        ]})
    );
}
