//! Property tests for the Zed stream decoder (newline-delimited `{"event": …}` /
//! `{"status": …}` lines around each provider's events): random chunking and random damage
//! never panic, never yield a damaged stream reported as complete, and valid input decodes the
//! same however it is chunked. Provider events are made by corvid-wire's stream encoders from
//! random canonical replies. A long run:
//! `PROPTEST_CASES=100000 cargo test -p corvid-providers --test zed_props --release`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_providers::zed::{ZedFraming, ZedProvider, ZedStreamDecoder};
use corvid_wire::Dialect;
use corvid_wire::codec::{Encoder, EncoderSetup};
use corvid_wire::model::{FinishReason, NameMap, StreamEvent, Usage};
use proptest::prelude::*;

/// Each Zed provider and the dialect its events are in.
const PROVIDERS: [(ZedProvider, Dialect); 4] = [
    (ZedProvider::Anthropic, Dialect::Anthropic),
    (ZedProvider::OpenAi, Dialect::OpenAiResponses),
    (ZedProvider::Google, Dialect::Gemini),
    (ZedProvider::XAi, Dialect::OpenAiChat),
];

fn config() -> ProptestConfig {
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

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 1..12).prop_map(String::from_iter)
}

fn reply() -> impl Strategy<Value = Vec<StreamEvent>> {
    (
        prop::collection::vec(text(), 1..5),
        any::<bool>(),
        0u64..900,
    )
        .prop_map(|(texts, call, output)| {
            let mut events = vec![StreamEvent::Start {
                id: "r1".to_owned(),
                model: "m".to_owned(),
            }];
            events.extend(
                texts
                    .into_iter()
                    .map(|text| StreamEvent::TextDelta { text }),
            );
            if call {
                events.push(StreamEvent::ToolCallStart {
                    index: 0,
                    id: "call_0".to_owned(),
                    name: "f".to_owned(),
                    signature: None,
                });
                events.push(StreamEvent::ToolCallArgs {
                    index: 0,
                    delta: r#"{"a":1}"#.to_owned(),
                });
                events.push(StreamEvent::ToolCallEnd { index: 0 });
            }
            events.push(StreamEvent::Usage(Usage {
                input: 3,
                output,
                ..Usage::default()
            }));
            events.push(StreamEvent::Finish(if call {
                FinishReason::ToolCalls
            } else {
                FinishReason::EndTurn
            }));
            events
        })
}

/// Zed's wrapped body for `events` from a provider of `dialect`.
fn zed_body(dialect: Dialect, events: &[StreamEvent]) -> Vec<u8> {
    let mut encoder = Encoder::new(
        dialect,
        EncoderSetup {
            model: "m".to_owned(),
            id: "r1".to_owned(),
            created: 1,
            include_usage: true,
            input_tokens: Some(3),
        },
    );
    let mut sse = Vec::new();
    for event in events {
        encoder.encode(event, &mut sse);
    }
    encoder.finish(&mut sse);
    let mut body = b"{\"status\":\"started\"}\n".to_vec();
    for line in sse.split(|&byte| byte == b'\n') {
        let Some(payload) = line.strip_prefix(b"data: ") else {
            continue;
        };
        // Chat chunks carry no `[DONE]` on this path.
        if payload.is_empty() || payload == b"[DONE]" {
            continue;
        }
        body.extend_from_slice(b"{\"event\":");
        body.extend_from_slice(payload);
        body.extend_from_slice(b"}\n");
    }
    body.extend_from_slice(b"{\"status\":\"stream_ended\"}\n");
    body
}

fn decode(provider: ZedProvider, body: &[u8], sizes: &[usize]) -> Vec<StreamEvent> {
    let mut decoder = ZedStreamDecoder::new(provider, ZedFraming::Wrapped, NameMap::default());
    let mut events = Vec::new();
    let mut rest = body;
    let mut size = sizes.iter().copied().cycle();
    while !rest.is_empty() {
        let take = size.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(take);
        decoder.feed(chunk, &mut events);
        rest = tail;
    }
    decoder.finish(&mut events);
    events
}

fn failed(events: &[StreamEvent]) -> bool {
    events
        .iter()
        .any(|event| matches!(event, StreamEvent::Error(_)))
}

/// `body` with one line (`which`, modulo their number) cut short or given an invalid byte.
fn damaged(body: &[u8], which: usize, at: usize, cut: bool) -> Vec<u8> {
    let lines: Vec<&[u8]> = body
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .collect();
    let target = which % lines.len();
    let mut out = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if index == target {
            if cut {
                out.extend_from_slice(&line[..1 + at % (line.len() - 1)]);
            } else {
                let at = at % (line.len() + 1);
                out.extend_from_slice(&line[..at]);
                out.push(0xff);
                out.extend_from_slice(&line[at..]);
            }
        } else {
            out.extend_from_slice(line);
        }
        out.push(b'\n');
    }
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn valid_zed_streams_decode_the_same_however_they_are_chunked(
        events in reply(),
        sizes in prop::collection::vec(1usize..48, 1..24),
    ) {
        for (provider, dialect) in PROVIDERS {
            let body = zed_body(dialect, &events);
            let whole = decode(provider, &body, &[]);
            prop_assert!(!failed(&whole), "{provider:?}: {whole:?}\n{}", String::from_utf8_lossy(&body));
            prop_assert_eq!(&decode(provider, &body, &sizes), &whole, "{:?}", provider);
            prop_assert_eq!(&decode(provider, &body, &[1]), &whole, "{:?} byte by byte", provider);
        }
    }

    #[test]
    fn a_damaged_or_cut_zed_stream_never_passes_for_complete(
        events in reply(),
        sizes in prop::collection::vec(1usize..48, 1..24),
        which in any::<usize>(),
        at in any::<usize>(),
        cut in any::<bool>(),
    ) {
        for (provider, dialect) in PROVIDERS {
            let body = zed_body(dialect, &events);
            let whole = decode(provider, &body, &[]);
            let broken = decode(provider, &damaged(&body, which, at, cut), &sizes);
            prop_assert!(failed(&broken) || broken == whole, "{provider:?}: {broken:?}");
            let short = decode(provider, &body[..at % body.len()], &sizes);
            prop_assert!(failed(&short) || short == whole, "{provider:?} cut: {short:?}");
        }
    }

    #[test]
    fn random_bytes_never_panic_the_zed_decoder(
        garbage in prop::collection::vec(any::<u8>(), 0..512),
        sizes in prop::collection::vec(1usize..48, 1..24),
    ) {
        for (provider, _) in PROVIDERS {
            decode(provider, &garbage, &sizes);
            let mut decoder = ZedStreamDecoder::new(provider, ZedFraming::Bare, NameMap::default());
            let mut events = Vec::new();
            decoder.feed(&garbage, &mut events);
            decoder.finish(&mut events);
        }
    }
}
