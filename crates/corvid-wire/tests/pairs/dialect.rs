//! The four dialects behind one enum, driven the way the gateway drives them
//! (`corvid-gateway/src/codec.rs` and `translate.rs`).

use std::path::PathBuf;

use corvid_wire::model::{ChatRequest, ChatResponse, DecodeError, NameMap, StreamEvent, WireError};
use corvid_wire::{anthropic, gemini, openai_chat, openai_responses};
use serde_json::Value;

/// A wire dialect, as a client speaks it (A) or a provider answers in it (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

pub(crate) const ALL: [Dialect; 4] = [
    Dialect::Chat,
    Dialect::Responses,
    Dialect::Anthropic,
    Dialect::Gemini,
];

/// Every (client A, provider B) pair, A = B included.
pub(crate) fn pairs() -> impl Iterator<Item = (Dialect, Dialect)> {
    ALL.into_iter()
        .flat_map(|a| ALL.into_iter().map(move |b| (a, b)))
}

/// The snapshot name of a scenario for a pair: `{scenario}__{a}_to_{b}`.
pub(crate) fn snapshot_name(scenario: &str, a: Dialect, b: Dialect) -> String {
    format!("{scenario}__{}_to_{}", a.name(), b.name())
}

/// The client stream's `created` (and Responses `created_at`) in every stream test.
pub(crate) const CREATED: i64 = 1_767_000_100;

/// What the gateway gives an Anthropic client's `message_start` before the upstream counts
/// are known (`count_tokens_estimate` of the request).
pub(crate) const INPUT_ESTIMATE: u64 = 12;

impl Dialect {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Responses => "responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The directory of the codec's own fixtures under `tests/fixtures/`.
    pub(crate) fn fixture_dir(self) -> &'static str {
        match self {
            Self::Chat => "openai_chat",
            Self::Responses => "openai_responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The model name the client asked for (echoed in replies).
    pub(crate) fn client_model(self) -> &'static str {
        match self {
            Self::Chat => "client-gpt",
            Self::Responses => "client-codex",
            Self::Anthropic => "client-claude",
            Self::Gemini => "client-gemini",
        }
    }

    /// The upstream model name routing picked.
    pub(crate) fn provider_model(self) -> &'static str {
        match self {
            Self::Chat => "gpt-4.1",
            Self::Responses => "gpt-5",
            Self::Anthropic => "claude-sonnet-4-5",
            Self::Gemini => "gemini-2.5-pro",
        }
    }

    /// The client's stream id the gateway would mint (`new_id`).
    fn client_id(self) -> &'static str {
        match self {
            Self::Chat => "chatcmpl-client",
            Self::Responses => "resp_client",
            Self::Anthropic => "msg_client",
            Self::Gemini => "",
        }
    }

    /// A client request body. Gemini's model is in the URL, and its stream flag in the method
    /// name: the gateway sets both.
    pub(crate) fn decode_request(self, body: &[u8]) -> ChatRequest {
        let decoded = match self {
            Self::Chat => openai_chat::decode_request(body),
            Self::Responses => openai_responses::decode_request(body),
            Self::Anthropic => anthropic::decode_request(body),
            Self::Gemini => gemini::decode_request(body, self.client_model()).map(|mut request| {
                request.stream = true;
                request
            }),
        };
        match decoded {
            Ok(request) => request,
            Err(error) => panic!("{} request does not decode: {error}", self.name()),
        }
    }

    pub(crate) fn encode_request(self, request: &ChatRequest) -> Value {
        match self {
            Self::Chat => openai_chat::encode_request(request),
            Self::Responses => openai_responses::encode_request(request),
            Self::Anthropic => anthropic::encode_request(request),
            Self::Gemini => gemini::encode_request(request),
        }
    }

    pub(crate) fn try_decode_response(
        self,
        body: &[u8],
        names: &NameMap,
    ) -> Result<ChatResponse, DecodeError> {
        match self {
            Self::Chat => openai_chat::decode_response(body, names),
            Self::Responses => openai_responses::decode_response(body, names),
            Self::Anthropic => anthropic::decode_response(body, names),
            Self::Gemini => gemini::decode_response(body, names),
        }
    }

    pub(crate) fn decode_response(self, body: &[u8], names: &NameMap) -> ChatResponse {
        match self.try_decode_response(body, names) {
            Ok(response) => response,
            Err(error) => panic!("{} reply does not decode: {error}", self.name()),
        }
    }

    pub(crate) fn encode_response(self, response: &ChatResponse) -> Value {
        let model = self.client_model();
        match self {
            Self::Chat => openai_chat::encode_response(response, model),
            Self::Responses => openai_responses::encode_response(response, model),
            Self::Anthropic => anthropic::encode_response(response, model),
            Self::Gemini => gemini::encode_response(response, model),
        }
    }

    pub(crate) fn decode_error(self, status: u16, body: &[u8]) -> WireError {
        match self {
            Self::Chat => openai_chat::decode_error(status, body),
            Self::Responses => openai_responses::decode_error(status, body),
            Self::Anthropic => anthropic::decode_error(status, body),
            Self::Gemini => gemini::decode_error(status, body),
        }
    }

    pub(crate) fn encode_error(self, error: &WireError) -> (u16, Value) {
        match self {
            Self::Chat => openai_chat::encode_error(error),
            Self::Responses => openai_responses::encode_error(error),
            Self::Anthropic => anthropic::encode_error(error),
            Self::Gemini => gemini::encode_error(error),
        }
    }

    /// A provider stream decoder.
    pub(crate) fn decoder(self, names: NameMap) -> Decoder {
        match self {
            Self::Chat => Decoder::Chat(openai_chat::StreamDecoder::new(names)),
            Self::Responses => Decoder::Responses(openai_responses::StreamDecoder::new(names)),
            Self::Anthropic => Decoder::Anthropic(anthropic::StreamDecoder::new(names)),
            Self::Gemini => Decoder::Gemini(gemini::StreamDecoder::new(names)),
        }
    }

    /// A client stream encoder set up as the gateway sets it up (`EncoderSetup`): the client's
    /// model, a fresh id, `include_usage` for Chat, the input estimate for Anthropic.
    pub(crate) fn encoder(self) -> Encoder {
        let model = self.client_model().to_owned();
        let id = self.client_id().to_owned();
        match self {
            Self::Chat => Encoder::Chat(openai_chat::StreamEncoder::new(
                openai_chat::StreamOptions {
                    model,
                    id,
                    created: CREATED,
                    include_usage: true,
                },
            )),
            Self::Responses => Encoder::Responses(openai_responses::StreamEncoder::new(
                openai_responses::StreamOptions {
                    model,
                    id,
                    created_at: CREATED,
                },
            )),
            Self::Anthropic => {
                Encoder::Anthropic(anthropic::StreamEncoder::new(anthropic::StreamOptions {
                    model,
                    id,
                    input_tokens: Some(INPUT_ESTIMATE),
                }))
            }
            Self::Gemini => {
                Encoder::Gemini(gemini::StreamEncoder::new(gemini::StreamOptions { model }))
            }
        }
    }
}

pub(crate) enum Decoder {
    Chat(openai_chat::StreamDecoder),
    Responses(openai_responses::StreamDecoder),
    Anthropic(anthropic::StreamDecoder),
    Gemini(gemini::StreamDecoder),
}

impl Decoder {
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        match self {
            Self::Chat(decoder) => decoder.feed(chunk, out),
            Self::Responses(decoder) => decoder.feed(chunk, out),
            Self::Anthropic(decoder) => decoder.feed(chunk, out),
            Self::Gemini(decoder) => decoder.feed(chunk, out),
        }
    }

    pub(crate) fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        match self {
            Self::Chat(decoder) => decoder.finish(out),
            Self::Responses(decoder) => decoder.finish(out),
            Self::Anthropic(decoder) => decoder.finish(out),
            Self::Gemini(decoder) => decoder.finish(out),
        }
    }
}

pub(crate) enum Encoder {
    Chat(openai_chat::StreamEncoder),
    Responses(openai_responses::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Gemini(gemini::StreamEncoder),
}

impl Encoder {
    pub(crate) fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        match self {
            Self::Chat(encoder) => encoder.encode(event, out),
            Self::Responses(encoder) => encoder.encode(event, out),
            Self::Anthropic(encoder) => encoder.encode(event, out),
            Self::Gemini(encoder) => encoder.encode(event, out),
        }
    }

    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            Self::Chat(encoder) => encoder.finish(out),
            Self::Responses(encoder) => encoder.finish(out),
            Self::Anthropic(encoder) => encoder.finish(out),
            Self::Gemini(encoder) => encoder.finish(out),
        }
    }
}

/// The names of the files in `tests/fixtures/<dialect>/` ending in `suffix`, sorted.
pub(crate) fn codec_fixture_names(dialect: Dialect, suffix: &str) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dialect.fixture_dir());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// The bytes of `tests/fixtures/{path}`.
pub(crate) fn fixture(path: &str) -> Vec<u8> {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    match std::fs::read(&full) {
        Ok(bytes) => bytes,
        Err(error) => panic!("fixture {}: {error}", full.display()),
    }
}

/// A fixture of `dialect` in its codec's own directory (`tests/fixtures/<dialect>/`).
pub(crate) fn codec_fixture(dialect: Dialect, file: &str) -> Vec<u8> {
    fixture(&format!("{}/{file}", dialect.fixture_dir()))
}

/// A fixture of `dialect` written for these tests (`tests/fixtures/pairs/<dialect>/`).
pub(crate) fn pairs_fixture(dialect: Dialect, file: &str) -> Vec<u8> {
    fixture(&format!("pairs/{}/{file}", dialect.fixture_dir()))
}

/// The canonical events of a provider stream fed in `chunk`-byte pieces, then `finish()`.
pub(crate) fn decode_stream(
    provider: Dialect,
    body: &[u8],
    names: &NameMap,
    chunk: usize,
) -> Vec<StreamEvent> {
    let mut decoder = provider.decoder(names.clone());
    let mut events = Vec::new();
    for piece in body.chunks(chunk.max(1)) {
        decoder.feed(piece, &mut events);
    }
    decoder.finish(&mut events);
    events
}

/// The gateway's streaming path: provider bytes in small pieces → `B::StreamDecoder` →
/// events → `A::StreamEncoder` (events encoded as soon as they are decoded) → `finish()`.
/// Returns the client's stream text and the canonical events in between.
pub(crate) fn translate_stream(
    client: Dialect,
    provider: Dialect,
    body: &[u8],
    names: &NameMap,
) -> (String, Vec<StreamEvent>) {
    let mut decoder = provider.decoder(names.clone());
    let mut encoder = client.encoder();
    let mut pending = Vec::new();
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for piece in body.chunks(7) {
        decoder.feed(piece, &mut pending);
        for event in pending.drain(..) {
            encoder.encode(&event, &mut out);
            seen.push(event);
        }
    }
    decoder.finish(&mut pending);
    for event in pending.drain(..) {
        encoder.encode(&event, &mut out);
        seen.push(event);
    }
    encoder.finish(&mut out);
    // Chunking must not change what the decoder reports.
    for chunk in [1, 64, body.len()] {
        assert_eq!(
            decode_stream(provider, body, names, chunk),
            seen,
            "{} stream decoded in {chunk}-byte pieces differs",
            provider.name()
        );
    }
    let text = match String::from_utf8(out) {
        Ok(text) => text,
        Err(error) => panic!("{} client stream is not UTF-8: {error}", client.name()),
    };
    (text, seen)
}

/// The gateway's request path: client body in A → canonical → (`extra` cleared and the
/// upstream model set) → the body a B provider gets.
pub(crate) fn translate_request(client: Dialect, provider: Dialect, body: &[u8]) -> Value {
    let mut request = client.decode_request(body);
    request.model = provider.provider_model().to_owned();
    if client != provider {
        request.extra.clear();
    }
    let sent = provider.encode_request(&request);
    let context = format!("{}→{}", client.name(), provider.name());
    super::valid::check_request(provider, &sent, &context);
    sent
}
