//! One entry point per codec operation, dispatching on the dialect. The gateway never reads a
//! dialect's JSON itself: everything goes through `corvid-wire`.

use corvid_wire::model::{ChatRequest, ChatResponse, DecodeError, NameMap, StreamEvent, WireError};
use corvid_wire::{anthropic, gemini, openai_chat, openai_responses};
use serde_json::Value;

use crate::dialect::Dialect;

/// A client request in `dialect` (Gemini's model comes from the URL path).
pub(crate) fn decode_request(
    dialect: Dialect,
    body: &[u8],
    path_model: &str,
) -> Result<ChatRequest, DecodeError> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::decode_request(body),
        Dialect::OpenAiResponses => openai_responses::decode_request(body),
        Dialect::Anthropic => anthropic::decode_request(body),
        Dialect::Gemini => gemini::decode_request(body, path_model),
    }
}

/// The body for a provider of `dialect`.
pub(crate) fn encode_request(dialect: Dialect, request: &ChatRequest) -> Value {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_request(request),
        Dialect::OpenAiResponses => openai_responses::encode_request(request),
        Dialect::Anthropic => anthropic::encode_request(request),
        Dialect::Gemini => gemini::encode_request(request),
    }
}

pub(crate) fn decode_response(
    dialect: Dialect,
    body: &[u8],
    names: &NameMap,
) -> Result<ChatResponse, DecodeError> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::decode_response(body, names),
        Dialect::OpenAiResponses => openai_responses::decode_response(body, names),
        Dialect::Anthropic => anthropic::decode_response(body, names),
        Dialect::Gemini => gemini::decode_response(body, names),
    }
}

pub(crate) fn encode_response(dialect: Dialect, response: &ChatResponse, model: &str) -> Value {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_response(response, model),
        Dialect::OpenAiResponses => openai_responses::encode_response(response, model),
        Dialect::Anthropic => anthropic::encode_response(response, model),
        Dialect::Gemini => gemini::encode_response(response, model),
    }
}

pub(crate) fn decode_error(dialect: Dialect, status: u16, body: &[u8]) -> WireError {
    match dialect {
        Dialect::OpenAiChat => openai_chat::decode_error(status, body),
        Dialect::OpenAiResponses => openai_responses::decode_error(status, body),
        Dialect::Anthropic => anthropic::decode_error(status, body),
        Dialect::Gemini => gemini::decode_error(status, body),
    }
}

pub(crate) fn encode_error(dialect: Dialect, error: &WireError) -> (u16, Value) {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_error(error),
        Dialect::OpenAiResponses => openai_responses::encode_error(error),
        Dialect::Anthropic => anthropic::encode_error(error),
        Dialect::Gemini => gemini::encode_error(error),
    }
}

/// A provider's stream, bytes in, canonical events out.
pub(crate) enum Decoder {
    Chat(openai_chat::StreamDecoder),
    Responses(openai_responses::StreamDecoder),
    Anthropic(anthropic::StreamDecoder),
    Gemini(gemini::StreamDecoder),
}

impl Decoder {
    pub(crate) fn new(dialect: Dialect, names: NameMap) -> Self {
        match dialect {
            Dialect::OpenAiChat => Self::Chat(openai_chat::StreamDecoder::new(names)),
            Dialect::OpenAiResponses => {
                Self::Responses(openai_responses::StreamDecoder::new(names))
            }
            Dialect::Anthropic => Self::Anthropic(anthropic::StreamDecoder::new(names)),
            Dialect::Gemini => Self::Gemini(gemini::StreamDecoder::new(names)),
        }
    }

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

/// What a client stream encoder needs to know up front.
#[derive(Debug, Clone, Default)]
pub(crate) struct EncoderSetup {
    /// The model name the client asked for.
    pub(crate) model: String,
    pub(crate) id: String,
    /// Unix seconds.
    pub(crate) created: i64,
    /// OpenAI chat: the client asked for `stream_options.include_usage`.
    pub(crate) include_usage: bool,
    /// Anthropic: the input token count for `message_start`.
    pub(crate) input_tokens: Option<u64>,
}

/// Canonical events in, the client's stream bytes out.
pub(crate) enum Encoder {
    Chat(openai_chat::StreamEncoder),
    Responses(openai_responses::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Gemini(gemini::StreamEncoder),
}

impl Encoder {
    pub(crate) fn new(dialect: Dialect, setup: EncoderSetup) -> Self {
        match dialect {
            Dialect::OpenAiChat => Self::Chat(openai_chat::StreamEncoder::new(
                openai_chat::StreamOptions {
                    model: setup.model,
                    id: setup.id,
                    created: setup.created,
                    include_usage: setup.include_usage,
                },
            )),
            Dialect::OpenAiResponses => Self::Responses(openai_responses::StreamEncoder::new(
                openai_responses::StreamOptions {
                    model: setup.model,
                    id: setup.id,
                    created_at: setup.created,
                },
            )),
            Dialect::Anthropic => {
                Self::Anthropic(anthropic::StreamEncoder::new(anthropic::StreamOptions {
                    model: setup.model,
                    id: setup.id,
                    input_tokens: setup.input_tokens,
                }))
            }
            Dialect::Gemini => Self::Gemini(gemini::StreamEncoder::new(gemini::StreamOptions {
                model: setup.model,
            })),
        }
    }

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
