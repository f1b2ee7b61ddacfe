//! Tests of the OpenAI Chat codec. Inputs are fixtures in `tests/fixtures/openai_chat/`;
//! decoders are checked with whole-value `assert_eq!`, encoders with insta JSON snapshots.

use serde_json::Value;

use super::{StreamDecoder, StreamEncoder, StreamOptions};
use crate::model::{NameMap, StreamEvent};

/// A JSON snapshot with map keys sorted, so the file does not depend on serde_json's
/// `preserve_order` feature.
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ sort_maps => true }, {
            insta::assert_json_snapshot!($name, $value);
        })
    };
}

mod errors;
mod pitfalls;
mod request;
mod response;
mod response_typed;
mod stream_chunk;
mod stream_decode;
mod stream_encode;

/// A fixture's bytes.
fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/openai_chat/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Decodes `body` in one piece, split in two at every byte boundary, and in 1-byte chunks,
/// asserts that all give the same events, and returns them.
fn decode_stream(body: &[u8], names: &NameMap) -> Vec<StreamEvent> {
    let decode = |chunks: &[&[u8]]| {
        let mut decoder = StreamDecoder::new(names.clone());
        let mut events = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut events);
        }
        decoder.finish(&mut events);
        events
    };
    let whole = decode(&[body]);
    for split in 0..=body.len() {
        let (a, b) = body.split_at(split);
        assert_eq!(decode(&[a, b]), whole, "split at byte {split}");
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(decode(&bytes), whole, "1-byte chunks");
    whole
}

/// Encodes `events` and closes the stream.
fn encode_stream(options: StreamOptions, events: &[StreamEvent]) -> Vec<u8> {
    let mut encoder = StreamEncoder::new(options);
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    out
}

fn options(include_usage: bool) -> StreamOptions {
    StreamOptions {
        model: "supergrok".to_owned(),
        id: "chatcmpl-corvid1".to_owned(),
        created: 1_767_000_000,
        include_usage,
    }
}

/// The payloads of an encoded stream, checking the framing Zed requires on the way: only
/// `data: <one line>` events separated by a blank line, JSON objects (or `[DONE]`).
fn payloads(stream: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(stream).expect("UTF-8");
    assert!(text.ends_with("\n\n"), "ends with a blank line: {text:?}");
    text[..text.len() - 2]
        .split("\n\n")
        .map(|event| {
            assert!(!event.contains('\n'), "one line per event: {event:?}");
            let payload = event.strip_prefix("data: ").expect("a data line");
            if payload == "[DONE]" {
                Value::String(payload.to_owned())
            } else {
                serde_json::from_str(payload).expect("JSON payload")
            }
        })
        .collect()
}

/// Asserts the strict shape (pitfalls 1 and 2, `zed-and-xai.md` §4.3) of a complete stream:
/// every chunk has `id`, `object`, `created`, `model`, `choices`; the first delta has the role;
/// exactly one finish chunk; with `include_usage` `"usage": null` everywhere but one final
/// `choices: []` chunk with integer counts, without it no `usage` key; `[DONE]` last.
fn assert_strict(stream: &[u8], include_usage: bool) {
    let payloads = payloads(stream);
    let (done, chunks) = payloads.split_last().expect("not empty");
    assert_eq!(done, "[DONE]");
    let (last, body) = if include_usage {
        let (last, body) = chunks.split_last().expect("a usage chunk");
        (Some(last), body)
    } else {
        (None, chunks)
    };
    for chunk in chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        for key in ["id", "created", "model", "choices"] {
            assert!(chunk.get(key).is_some(), "{key} missing in {chunk}");
        }
        assert!(chunk["created"].is_i64());
    }
    assert_eq!(
        body[0]["choices"][0]["delta"]["role"], "assistant",
        "first chunk"
    );
    let finishes = body
        .iter()
        .filter(|chunk| !chunk["choices"][0]["finish_reason"].is_null())
        .count();
    assert_eq!(finishes, 1, "one finish chunk");
    assert!(
        !body.last().expect("chunks")["choices"][0]["finish_reason"].is_null(),
        "the finish chunk is the last with choices"
    );
    for chunk in body {
        assert_eq!(chunk["choices"].as_array().map(Vec::len), Some(1));
        if include_usage {
            assert_eq!(chunk["usage"], Value::Null);
            assert!(chunk.get("usage").is_some(), "usage: null present");
        } else {
            assert!(chunk.get("usage").is_none(), "no usage key");
        }
    }
    if let Some(last) = last {
        assert_eq!(last["choices"], serde_json::json!([]));
        for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
            assert!(last["usage"][key].is_u64(), "integer {key} in {last}");
        }
    }
}

/// Short constructors for expected canonical values.
mod build {
    use serde_json::Value;

    use crate::model::{
        Image, ImageSource, Part, Reasoning, Tool, ToolCall, ToolResult, ToolResultContent,
    };

    pub(super) fn text(text: &str) -> Part {
        Part::Text {
            text: text.to_owned(),
        }
    }

    pub(super) fn reasoning(text: &str) -> Part {
        Part::Reasoning(Reasoning {
            text: text.to_owned(),
            ..Reasoning::default()
        })
    }

    pub(super) fn call(id: &str, name: &str, arguments: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            signature: None,
        })
    }

    pub(super) fn result(call_id: &str, content: Vec<ToolResultContent>, is_error: bool) -> Part {
        Part::ToolResult(ToolResult {
            call_id: call_id.to_owned(),
            name: None,
            content,
            is_error,
        })
    }

    pub(super) fn result_text(text: &str) -> ToolResultContent {
        ToolResultContent::Text {
            text: text.to_owned(),
        }
    }

    pub(super) fn png(data: &str) -> Image {
        Image {
            source: ImageSource::Base64 {
                media_type: "image/png".to_owned(),
                data: data.to_owned(),
            },
            detail: None,
        }
    }

    pub(super) fn tool(name: &str, description: Option<&str>, parameters: Value) -> Tool {
        Tool {
            name: name.to_owned(),
            description: description.map(str::to_owned),
            parameters: parameters.into(),
            strict: None,
        }
    }
}
