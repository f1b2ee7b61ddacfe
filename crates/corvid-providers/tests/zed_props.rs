//! Property tests for the Zed stream decoder (newline-delimited `{"event": …}` /
//! `{"status": …}` lines around each provider's events): random chunking and random damage
//! never panic, never yield a damaged stream reported as complete, and valid input decodes the
//! same however it is chunked. Provider events are made by corvid-wire's stream encoders from
//! random canonical replies. A long run:
//! `PROPTEST_CASES=100000 cargo test -p corvid-providers --test zed_props --release`.
//! The harness (case count, random replies, chunked feeding, damage) is
//! `corvid_test_support::props`, shared with corvid-wire's `props`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_providers::zed::{ZedFraming, ZedProvider, ZedStreamDecoder};
use corvid_test_support::props::{
    chunk_sizes, config, damage, damaged, encoded, failed, feed_in_pieces, lines, reply,
};
use corvid_wire::Dialect;
use corvid_wire::model::{NameMap, StreamEvent};
use proptest::prelude::*;

/// Each Zed provider and the dialect its events are in.
const PROVIDERS: [(ZedProvider, Dialect); 4] = [
    (ZedProvider::Anthropic, Dialect::Anthropic),
    (ZedProvider::OpenAi, Dialect::OpenAiResponses),
    (ZedProvider::Google, Dialect::Gemini),
    (ZedProvider::XAi, Dialect::OpenAiChat),
];

/// Zed's wrapped body for `events` from a provider of `dialect`.
fn zed_body(dialect: Dialect, events: &[StreamEvent]) -> Vec<u8> {
    let sse = encoded(dialect, events);
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
    feed_in_pieces(body, sizes, |chunk| decoder.feed(chunk, &mut events));
    decoder.finish(&mut events);
    events
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn valid_zed_streams_decode_the_same_however_they_are_chunked(
        events in reply(),
        sizes in chunk_sizes(),
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
        sizes in chunk_sizes(),
        which in any::<usize>(),
        damage in damage(),
        at in any::<usize>(),
    ) {
        for (provider, dialect) in PROVIDERS {
            let body = zed_body(dialect, &events);
            let whole = decode(provider, &body, &[]);
            let Some(damaged) = damaged(&body, &lines(&body), which, &damage) else { continue };
            let broken = decode(provider, &damaged, &sizes);
            prop_assert!(failed(&broken) || broken == whole, "{provider:?} {damage:?}: {broken:?}");
            let short = decode(provider, &body[..at % body.len()], &sizes);
            prop_assert!(failed(&short) || short == whole, "{provider:?} cut: {short:?}");
        }
    }

    #[test]
    fn random_bytes_never_panic_the_zed_decoder(
        garbage in prop::collection::vec(any::<u8>(), 0..512),
        sizes in chunk_sizes(),
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
