//! Framing invariants of each dialect's client stream (reference §8 pitfalls 1, 2, 6, 7), and
//! readers for what a client would take from a stream or a whole reply: the finish reason,
//! the usage and the in-stream error.

use serde_json::Value;

use super::dialect::Dialect;

/// One SSE event: its `event:` name when it has one, and its `data:` payload.
#[derive(Debug, Clone)]
pub(crate) struct Sse {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

impl Sse {
    /// The payload as JSON (`None` for `[DONE]`).
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }
}

/// Splits a stream into events. Every event must be complete (end in a blank line), have one
/// `data:` line, and at most one `event:` line.
pub(crate) fn parse(text: &str) -> Vec<Sse> {
    let text = text.replace("\r\n", "\n");
    assert!(
        text.is_empty() || text.ends_with("\n\n"),
        "stream does not end with a complete event: {text:?}"
    );
    text.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    assert!(event.is_none(), "two event lines in {block:?}");
                    event = Some(name.to_owned());
                } else if let Some(payload) = line.strip_prefix("data: ") {
                    assert!(data.is_none(), "data spread over lines in {block:?}");
                    data = Some(payload.to_owned());
                } else {
                    panic!("unexpected line {line:?} in {block:?}");
                }
            }
            let Some(data) = data else {
                panic!("event without data: {block:?}")
            };
            Sse { event, data }
        })
        .collect()
}

/// How a client stream is expected to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// With the dialect's normal end (`[DONE]`, `message_stop`, `response.completed`…).
    Normal,
    /// With the dialect's in-stream error event, and nothing after it.
    Error,
}

/// Checks the framing of a client stream in `dialect`; returns its events.
pub(crate) fn check(dialect: Dialect, text: &str, ending: Ending) -> Vec<Sse> {
    let events = parse(text);
    assert!(!events.is_empty(), "empty {} stream", dialect.name());
    match dialect {
        Dialect::Chat => check_chat(&events, ending),
        Dialect::Responses => check_responses(&events, ending),
        Dialect::Anthropic => check_anthropic(&events, ending),
        Dialect::Gemini => check_gemini(&events, ending),
    }
    events
}

/// OpenAI Chat: no `event:` lines; every data line is one chunk object with `id`, `object`,
/// `created`, `model` and `choices`; the first has `delta.role`; one finish chunk; every chunk
/// has `"usage": null` but the last, which has `"choices": []` and integer counts; `[DONE]`.
/// Tool-call indices are dense from 0, `id`/`name` only in a call's first delta. After an
/// error: `data: {"error":…}` is the last line, with no `[DONE]`.
fn check_chat(events: &[Sse], ending: Ending) {
    assert!(events.iter().all(|sse| sse.event.is_none()), "event lines");
    let (body, last) = match ending {
        Ending::Normal => {
            let (last, body) = events.split_last().unwrap();
            assert_eq!(last.data, "[DONE]", "ends with [DONE]");
            (body, None)
        }
        Ending::Error => {
            let (last, body) = events.split_last().unwrap();
            let error = last.json().unwrap();
            assert!(error["error"]["message"].is_string(), "error line: {error}");
            assert!(error.get("choices").is_none());
            (body, Some(error))
        }
    };
    let chunks: Vec<Value> = body.iter().map(|sse| sse.json().unwrap()).collect();
    assert!(
        !chunks.is_empty() || last.is_some(),
        "a stream with no chunks"
    );
    let mut finishes = 0;
    let mut calls_seen = 0_u64;
    for (position, chunk) in chunks.iter().enumerate() {
        assert!(chunk.is_object(), "chunk is an object: {chunk}");
        for key in ["id", "created", "model"] {
            assert!(!chunk[key].is_null(), "chunk without {key}: {chunk}");
        }
        assert_eq!(chunk["object"], "chat.completion.chunk");
        let choices = chunk["choices"].as_array().unwrap();
        if position == 0 {
            assert_eq!(choices[0]["delta"]["role"], "assistant", "first chunk role");
        }
        if choices.is_empty() {
            assert_eq!(position, chunks.len() - 1, "the usage chunk is the last");
            assert_eq!(ending, Ending::Normal);
            for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
                assert!(chunk["usage"][key].is_u64(), "usage.{key}: {chunk}");
            }
            continue;
        }
        assert!(chunk["usage"].is_null(), "usage null on content chunks");
        let choice = &choices[0];
        if !choice["finish_reason"].is_null() {
            finishes += 1;
        }
        for call in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = call["index"].as_u64().unwrap();
            if index == calls_seen {
                calls_seen += 1;
                assert!(call["id"].is_string() && call["function"]["name"].is_string());
            } else {
                assert!(index < calls_seen, "tool index {index} skips ahead");
                assert!(call.get("id").is_none() && call["function"].get("name").is_none());
            }
        }
    }
    if ending == Ending::Normal {
        assert_eq!(finishes, 1, "one finish chunk");
        let usage = chunks.last().unwrap();
        assert_eq!(
            usage["choices"],
            Value::Array(Vec::new()),
            "usage chunk last"
        );
    }
}

/// Anthropic: every event's `event:` equals `data.type`; one `message_start` first; content
/// blocks one at a time with dense indices, never empty, closed before `message_delta`; tool
/// inputs that parse; `message_delta` then one `message_stop` last. After an error: `error`
/// is the last event and there is no `message_stop`.
fn check_anthropic(events: &[Sse], ending: Ending) {
    let data: Vec<Value> = events
        .iter()
        .map(|sse| {
            let json = sse.json().unwrap();
            assert_eq!(sse.event.as_deref(), json["type"].as_str(), "event = type");
            json
        })
        .collect();
    let kinds: Vec<&str> = data.iter().map(|d| d["type"].as_str().unwrap()).collect();
    let count = |kind: &str| kinds.iter().filter(|k| **k == kind).count();
    match ending {
        Ending::Normal => {
            assert_eq!(kinds[0], "message_start");
            assert_eq!(count("message_start"), 1);
            assert_eq!(count("message_stop"), 1);
            assert_eq!(kinds[kinds.len() - 1], "message_stop");
            assert_eq!(kinds[kinds.len() - 2], "message_delta");
            assert_eq!(count("message_delta"), 1);
            assert_eq!(count("error"), 0);
        }
        Ending::Error => {
            assert_eq!(kinds[kinds.len() - 1], "error");
            assert_eq!(count("error"), 1);
            assert!(count("message_start") <= 1);
            assert_eq!(count("message_stop"), 0);
            if count("message_start") == 1 {
                assert_eq!(kinds[0], "message_start");
            }
        }
    }
    let mut next = 0;
    let mut open: Option<(u64, Value, String)> = None;
    for event in &data {
        match event["type"].as_str().unwrap() {
            "content_block_start" => {
                assert!(open.is_none(), "a block opened while another is open");
                assert_eq!(event["index"], next, "dense block indices");
                next += 1;
                open = Some((
                    event["index"].as_u64().unwrap(),
                    event["content_block"].clone(),
                    String::new(),
                ));
            }
            "content_block_delta" => {
                let Some((index, block, content)) = &mut open else {
                    panic!("delta outside a block: {event}")
                };
                assert_eq!(event["index"], *index);
                let delta = &event["delta"];
                match (block["type"].as_str(), delta["type"].as_str()) {
                    (Some("text"), Some("text_delta")) => {
                        content.push_str(delta["text"].as_str().unwrap());
                    }
                    (Some("thinking"), Some("thinking_delta")) => {
                        content.push_str(delta["thinking"].as_str().unwrap());
                    }
                    (Some("thinking"), Some("signature_delta")) => {}
                    (Some("tool_use"), Some("input_json_delta")) => {
                        content.push_str(delta["partial_json"].as_str().unwrap());
                    }
                    other => panic!("delta {other:?} in the wrong block: {event}"),
                }
            }
            "content_block_stop" => {
                let Some((index, block, content)) = open.take() else {
                    panic!("stop outside a block: {event}")
                };
                assert_eq!(event["index"], index);
                match block["type"].as_str() {
                    Some("text") => assert!(!content.is_empty(), "empty text block"),
                    Some("tool_use") if !content.is_empty() => {
                        let input: Value = serde_json::from_str(&content).unwrap();
                        assert!(input.is_object(), "tool input {content}");
                    }
                    _ => {}
                }
            }
            "message_delta" => assert!(open.is_none(), "block open at message_delta"),
            _ => {}
        }
    }
}

/// Responses: every event's `event:` equals `data.type`; `sequence_number`s count from 0;
/// `response.created` then `response.in_progress`; each `output_item.done` matches its
/// `.added`; streamed arguments add up to `.done`'s; the last event is `response.completed`
/// or `response.incomplete` (or `error` after a failure).
fn check_responses(events: &[Sse], ending: Ending) {
    let data: Vec<Value> = events
        .iter()
        .map(|sse| {
            let json = sse.json().unwrap();
            assert_eq!(sse.event.as_deref(), json["type"].as_str(), "event = type");
            json
        })
        .collect();
    for (position, event) in data.iter().enumerate() {
        assert_eq!(event["sequence_number"], position, "sequence numbers");
    }
    let kinds: Vec<&str> = data.iter().map(|d| d["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[0], "response.created");
    assert_eq!(kinds[1], "response.in_progress");
    let last = kinds[kinds.len() - 1];
    match ending {
        Ending::Normal => assert!(
            matches!(last, "response.completed" | "response.incomplete"),
            "last event {last}"
        ),
        Ending::Error => assert_eq!(last, "error"),
    }
    let mut added: Vec<Option<Value>> = Vec::new();
    let mut arguments: Vec<String> = Vec::new();
    for event in &data {
        let index = event["output_index"].as_u64().unwrap_or(0) as usize;
        match event["type"].as_str().unwrap() {
            "response.output_item.added" => {
                assert_eq!(index, added.len(), "output indices in order");
                added.push(Some(event["item"].clone()));
                arguments.push(String::new());
            }
            "response.output_item.done" => {
                let Some(Some(item)) = added.get_mut(index).map(Option::take) else {
                    panic!("done without added: {event}")
                };
                assert_eq!(item["id"], event["item"]["id"]);
                assert_eq!(item["type"], event["item"]["type"]);
            }
            "response.function_call_arguments.delta" => {
                arguments[index].push_str(event["delta"].as_str().unwrap());
            }
            "response.function_call_arguments.done" => {
                assert_eq!(event["arguments"].as_str().unwrap(), arguments[index]);
                let parsed: Value = serde_json::from_str(&arguments[index]).unwrap();
                assert!(parsed.is_object());
            }
            _ => {}
        }
    }
    if ending == Ending::Normal {
        assert!(added.iter().all(Option::is_none), "an item left open");
        let response = &data[data.len() - 1]["response"];
        let output = response["output"].as_array().unwrap();
        assert_eq!(output.len(), added.len(), "every item in the final output");
    }
}

/// Gemini: bare data lines; every one a response with `candidates`; the last has a
/// `finishReason` (or is `{"error":…}` after a failure).
fn check_gemini(events: &[Sse], ending: Ending) {
    assert!(events.iter().all(|sse| sse.event.is_none()), "event lines");
    let data: Vec<Value> = events.iter().map(|sse| sse.json().unwrap()).collect();
    let (last, body) = data.split_last().unwrap();
    for chunk in body {
        assert!(
            chunk["candidates"].is_array(),
            "chunk without candidates: {chunk}"
        );
    }
    match ending {
        Ending::Normal => {
            assert!(last["candidates"][0]["finishReason"].is_string());
        }
        Ending::Error => {
            assert!(last["error"]["message"].is_string(), "error line {last}");
            assert!(last.get("candidates").is_none());
        }
    }
}

/// The finish reason a client reads from a whole reply, as one string (Responses:
/// `status` or `status/incomplete reason`).
pub(crate) fn finish_whole(dialect: Dialect, reply: &Value) -> String {
    match dialect {
        Dialect::Chat => reply["choices"][0]["finish_reason"]
            .as_str()
            .unwrap()
            .into(),
        Dialect::Responses => responses_status(reply),
        Dialect::Anthropic => reply["stop_reason"].as_str().unwrap().into(),
        Dialect::Gemini => reply["candidates"][0]["finishReason"]
            .as_str()
            .unwrap()
            .into(),
    }
}

fn responses_status(response: &Value) -> String {
    let status = response["status"].as_str().unwrap();
    match response["incomplete_details"]["reason"].as_str() {
        Some(reason) => format!("{status}/{reason}"),
        None => status.to_owned(),
    }
}

/// The finish reason a client reads from a stream.
pub(crate) fn finish_stream(dialect: Dialect, events: &[Sse]) -> String {
    let data: Vec<Value> = events.iter().filter_map(Sse::json).collect();
    match dialect {
        Dialect::Chat => data
            .iter()
            .filter_map(|chunk| chunk["choices"][0]["finish_reason"].as_str())
            .next_back()
            .unwrap()
            .into(),
        Dialect::Responses => responses_status(&data.last().unwrap()["response"]),
        Dialect::Anthropic => data
            .iter()
            .filter_map(|event| event["delta"]["stop_reason"].as_str())
            .next_back()
            .unwrap()
            .into(),
        Dialect::Gemini => data.last().unwrap()["candidates"][0]["finishReason"]
            .as_str()
            .unwrap()
            .into(),
    }
}

/// Token counts as a client reads them, in the arithmetic every dialect can rebuild: all input
/// (fresh + cache read + cache write), the cache-read share, all output (reasoning included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) total_input: u64,
    pub(crate) cache_read: u64,
    pub(crate) output: u64,
}

fn n(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// Counts from a dialect's usage object (§6.5).
fn counts(dialect: Dialect, usage: &Value) -> Counts {
    // xAI leaves reasoning out of the output: `total = input + output + reasoning` (§6.5).
    let openai = |input: u64, cached: u64, output: u64, reasoning: u64| {
        let xai = reasoning > 0 && n(&usage["total_tokens"]) == input + output + reasoning;
        Counts {
            total_input: input,
            cache_read: cached,
            output: if xai { output + reasoning } else { output },
        }
    };
    match dialect {
        Dialect::Chat => openai(
            n(&usage["prompt_tokens"]),
            n(&usage["prompt_tokens_details"]["cached_tokens"]),
            n(&usage["completion_tokens"]),
            n(&usage["completion_tokens_details"]["reasoning_tokens"]),
        ),
        Dialect::Responses => openai(
            n(&usage["input_tokens"]),
            n(&usage["input_tokens_details"]["cached_tokens"]),
            n(&usage["output_tokens"]),
            n(&usage["output_tokens_details"]["reasoning_tokens"]),
        ),
        Dialect::Anthropic => Counts {
            total_input: n(&usage["input_tokens"])
                + n(&usage["cache_read_input_tokens"])
                + n(&usage["cache_creation_input_tokens"]),
            cache_read: n(&usage["cache_read_input_tokens"]),
            output: n(&usage["output_tokens"]),
        },
        Dialect::Gemini => Counts {
            total_input: n(&usage["promptTokenCount"]),
            cache_read: n(&usage["cachedContentTokenCount"]),
            output: n(&usage["candidatesTokenCount"]) + n(&usage["thoughtsTokenCount"]),
        },
    }
}

/// The usage object of a whole reply (client's or provider's: the shapes are the same).
pub(crate) fn usage_object(dialect: Dialect, reply: &Value) -> Value {
    match dialect {
        Dialect::Chat | Dialect::Responses | Dialect::Anthropic => reply["usage"].clone(),
        Dialect::Gemini => reply["usageMetadata"].clone(),
    }
}

pub(crate) fn usage_whole(dialect: Dialect, reply: &Value) -> Counts {
    counts(dialect, &usage_object(dialect, reply))
}

/// The final usage object of a stream (client's or provider's). Anthropic's is
/// `message_start`'s usage with `message_delta`'s fields on top (the latter are cumulative and
/// may repeat the input counts).
pub(crate) fn usage_stream_object(dialect: Dialect, events: &[Sse]) -> Value {
    let data: Vec<Value> = events.iter().filter_map(Sse::json).collect();
    let last_with = |pointer: &str| {
        data.iter()
            .filter_map(|event| event.pointer(pointer))
            .rfind(|usage| usage.is_object())
            .cloned()
            .unwrap_or(Value::Null)
    };
    match dialect {
        Dialect::Chat => last_with("/usage"),
        Dialect::Responses => last_with("/response/usage"),
        Dialect::Gemini => last_with("/usageMetadata"),
        Dialect::Anthropic => {
            let mut usage = last_with("/message/usage");
            if let (Some(start), Value::Object(delta)) =
                (usage.as_object_mut(), last_with("/usage"))
            {
                start.extend(delta);
            }
            usage
        }
    }
}

pub(crate) fn usage_stream(dialect: Dialect, events: &[Sse]) -> Counts {
    counts(dialect, &usage_stream_object(dialect, events))
}
