//! The harness the decoder property tests share (corvid-wire's `props`, corvid-providers'
//! `zed_props`): how many cases, random text, random well-formed canonical replies and a
//! provider's bytes for them, feeding bytes in random pieces, and damage to one span (an
//! event's payload, a line) that no decoder can mistake for a valid event. For tests only.

use corvid_wire::Dialect;
use corvid_wire::codec::{Encoder, EncoderSetup};
use corvid_wire::model::{FinishReason, StreamEvent, Usage};
use proptest::prelude::*;
use serde_json::json;

/// Cases per property in the normal suite (24), unless `PROPTEST_CASES` says otherwise.
pub fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(24);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text with anything in it: quotes, backslashes, newlines, control characters, emoji.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 1..16).prop_map(String::from_iter),
        prop::collection::vec(
            prop::sample::select(vec!['a', ' ', '"', '\\', '\n', 'é', '😀', '{', '}', ':']),
            1..16
        )
        .prop_map(String::from_iter),
    ]
}

/// One tool call: a name and its arguments object, sent in pieces.
fn tool_call() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        "[a-z][a-z_]{0,10}".prop_map(String::from),
        text(),
        1usize..4,
    )
        .prop_map(|(name, value, pieces)| {
            let arguments = json!({ "value": value, "n": 1 }).to_string();
            let chars: Vec<char> = arguments.chars().collect();
            let size = chars.len().div_ceil(pieces);
            let parts = chars.chunks(size.max(1)).map(String::from_iter).collect();
            (name, parts)
        })
}

/// A well-formed canonical reply: reasoning, text and tool calls, usage, the finish.
pub fn reply() -> impl Strategy<Value = Vec<StreamEvent>> {
    (
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(text(), 0..5),
        prop::collection::vec(tool_call(), 0..3),
        (0u64..5000, 0u64..500, 0u64..2000),
    )
        .prop_map(|(reasoning, texts, tools, (input, cached, output))| {
            let mut events = vec![StreamEvent::Start {
                id: "reply-1".to_owned(),
                model: "model-1".to_owned(),
            }];
            events.extend(
                reasoning
                    .into_iter()
                    .map(|text| StreamEvent::ReasoningDelta { text }),
            );
            events.extend(
                texts
                    .into_iter()
                    .map(|text| StreamEvent::TextDelta { text }),
            );
            let called = !tools.is_empty();
            for (index, (name, parts)) in (0u32..).zip(tools) {
                events.push(StreamEvent::ToolCallStart {
                    index,
                    id: format!("call_{index}"),
                    name,
                    signature: None,
                });
                events.extend(
                    parts
                        .into_iter()
                        .map(|delta| StreamEvent::ToolCallArgs { index, delta }),
                );
                events.push(StreamEvent::ToolCallEnd { index });
            }
            events.push(StreamEvent::Usage(Usage {
                input,
                cache_read: cached,
                output,
                ..Usage::default()
            }));
            events.push(StreamEvent::Finish(if called {
                FinishReason::ToolCalls
            } else {
                FinishReason::EndTurn
            }));
            events
        })
}

/// What a provider of `dialect` would stream for `events` (its own encoder writes what its
/// decoder reads).
pub fn encoded(dialect: Dialect, events: &[StreamEvent]) -> Vec<u8> {
    let mut encoder = Encoder::new(
        dialect,
        EncoderSetup {
            model: "model-1".to_owned(),
            id: "reply-1".to_owned(),
            created: 1,
            include_usage: true,
            input_tokens: Some(1),
        },
    );
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    out
}

/// Piece sizes for [`feed_in_pieces`].
pub fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..48, 1..24)
}

/// Hands `bytes` to `feed` in pieces of the given sizes (cycled; none: all at once).
pub fn feed_in_pieces(bytes: &[u8], sizes: &[usize], mut feed: impl FnMut(&[u8])) {
    let mut rest = bytes;
    let mut size = sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let take = size.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(take);
        feed(chunk);
        rest = tail;
    }
}

/// Whether a decoded stream reported a failure.
pub fn failed(events: &[StreamEvent]) -> bool {
    events
        .iter()
        .any(|event| matches!(event, StreamEvent::Error(_)))
}

/// Where each `data:` payload of an SSE body starts and ends.
pub fn sse_payloads(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut start = 0;
    for line in bytes.split(|&byte| byte == b'\n') {
        let end = start + line.len();
        if let Some(payload) = line.strip_prefix(b"data: ") {
            let payload_end = end - usize::from(line.ends_with(b"\r"));
            if !payload.is_empty() {
                found.push((end - payload.len(), payload_end));
            }
        }
        start = end + 1;
    }
    found
}

/// Where each non-empty line of a newline-delimited body starts and ends.
pub fn lines(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut start = 0;
    for line in bytes.split(|&byte| byte == b'\n') {
        if !line.is_empty() {
            found.push((start, start + line.len()));
        }
        start += line.len() + 1;
    }
    found
}

/// A way to damage one span that no decoder can mistake for a valid event.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Cut the span short (keeping at least one byte), as a truncated write would.
    Cut(usize),
    /// Put a byte that is never valid UTF-8 somewhere in it.
    Invalid(usize, u8),
}

pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Cut),
        (
            any::<usize>(),
            prop::sample::select(vec![0xff_u8, 0xfe, 0xc0, 0xc1, 0xf8])
        )
            .prop_map(|(at, byte)| Damage::Invalid(at, byte)),
    ]
}

/// `bytes` with one of `spans` (`which`, modulo their number) damaged; `None` when there is
/// no span, or it is too short to cut.
pub fn damaged(
    bytes: &[u8],
    spans: &[(usize, usize)],
    which: usize,
    damage: &Damage,
) -> Option<Vec<u8>> {
    let &(start, end) = spans.get(which % spans.len().max(1))?;
    let length = end - start;
    let mut out = bytes[..start].to_vec();
    match *damage {
        Damage::Cut(at) => {
            if length < 2 {
                return None;
            }
            out.extend_from_slice(&bytes[start..start + 1 + at % (length - 1)]);
        }
        Damage::Invalid(at, byte) => {
            let at = start + at % (length + 1);
            out.extend_from_slice(&bytes[start..at]);
            out.push(byte);
            out.extend_from_slice(&bytes[at..end]);
        }
    }
    out.extend_from_slice(&bytes[end..]);
    Some(out)
}

/// A whole body damaged so that it is no longer one valid JSON value (for request decoders).
pub fn damaged_body(body: &[u8], damage: &Damage) -> Vec<u8> {
    match *damage {
        Damage::Cut(at) => body[..at % body.len().max(1)].to_vec(),
        Damage::Invalid(at, byte) => {
            let at = at % (body.len() + 1);
            [&body[..at], &[byte], &body[at..]].concat()
        }
    }
}
