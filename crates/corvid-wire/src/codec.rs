//! One entry point per codec operation, dispatching on the dialect, for callers that pick the
//! dialect at run time (the gateway, the providers' model client).

use crate::encoded::EncodedBody;
use crate::model::{
    ChatRequest, ChatResponse, DecodeError, NameMap, StreamEvent, Usage, WireError,
};
use crate::{anthropic, gemini, openai_chat, openai_responses};
use serde_json::Value;

mod watch;

#[cfg(test)]
mod tests;

pub use watch::{StreamWatch, Watch};

/// The API dialect a client or a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// OpenAI Chat Completions.
    #[default]
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl Dialect {
    /// A short stable name (`openai-chat`, `openai-responses`, `anthropic`, `gemini`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

/// The endpoint under a provider's base URL for a request in `dialect` (Gemini puts the model
/// and the streaming choice in the path; the model is one encoded segment, see
/// [`crate::url_path::segment`]).
pub fn endpoint_path(dialect: Dialect, model: &str, stream: bool) -> String {
    match dialect {
        Dialect::OpenAiChat => "chat/completions".to_owned(),
        Dialect::OpenAiResponses => "responses".to_owned(),
        Dialect::Anthropic => "messages".to_owned(),
        Dialect::Gemini => {
            let model = crate::url_path::segment(model);
            if stream {
                format!("models/{model}:streamGenerateContent?alt=sse")
            } else {
                format!("models/{model}:generateContent")
            }
        }
    }
}

/// A client request in `dialect` (Gemini's model comes from the URL path).
pub fn decode_request(
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

/// A client request in `dialect` read by its typed fast path alone: `Some` only for a body
/// that is valid JSON, an object without a repeated top-level key and with `model` a string,
/// which that path reads exactly as [`decode_request`] does; `None` otherwise (and for the
/// dialects without such a guarantee yet), and the caller takes the full path, which words any
/// error.
pub fn decode_plain_request(dialect: Dialect, body: &[u8]) -> Option<ChatRequest> {
    match dialect {
        Dialect::Anthropic => anthropic::decode_plain_request(body),
        Dialect::OpenAiResponses => openai_responses::decode_plain_request(body),
        Dialect::OpenAiChat | Dialect::Gemini => None,
    }
}

/// The message a client of `dialect` gets for a request that could not be decoded, in that
/// dialect's own wording (Anthropic clients match on Anthropic's).
pub fn request_error_message(dialect: Dialect, error: &DecodeError) -> String {
    match dialect {
        Dialect::Anthropic => anthropic::request_error_message(error),
        _ => error.to_string(),
    }
}

/// The body for a provider of `dialect`.
pub fn encode_request(dialect: Dialect, request: &ChatRequest) -> Value {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_request(request),
        Dialect::OpenAiResponses => openai_responses::encode_request(request),
        Dialect::Anthropic => anthropic::encode_request(request),
        Dialect::Gemini => gemini::encode_request(request),
    }
}

/// [`encode_request`] as an [`EncodedBody`]: written straight to JSON text for Chat (the
/// translation most clients take), from the value for the other dialects.
pub fn encode_body(dialect: Dialect, request: &ChatRequest) -> EncodedBody {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_body(request),
        _ => EncodedBody::from_value(&encode_request(dialect, request)),
    }
}

/// A whole upstream reply in `dialect`.
pub fn decode_response(
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

/// A whole reply for a client of `dialect`.
pub fn encode_response(dialect: Dialect, response: &ChatResponse, model: &str) -> Value {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_response(response, model),
        Dialect::OpenAiResponses => openai_responses::encode_response(response, model),
        Dialect::Anthropic => anthropic::encode_response(response, model),
        Dialect::Gemini => gemini::encode_response(response, model),
    }
}

/// [`encode_response`]'s body as JSON bytes; written straight from the reply for chat,
/// Anthropic and Responses clients (no `Value` in between), serialised from the value for
/// Gemini's.
pub fn encode_response_body(dialect: Dialect, response: &ChatResponse, model: &str) -> Vec<u8> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_response_body(response, model),
        Dialect::Anthropic => anthropic::encode_response_body(response, model),
        Dialect::OpenAiResponses => openai_responses::encode_response_body(response, model),
        _ => serde_json::to_vec(&encode_response(dialect, response, model)).unwrap_or_default(),
    }
}

/// An upstream error reply in `dialect`.
pub fn decode_error(dialect: Dialect, status: u16, body: &[u8]) -> WireError {
    match dialect {
        Dialect::OpenAiChat => openai_chat::decode_error(status, body),
        Dialect::OpenAiResponses => openai_responses::decode_error(status, body),
        Dialect::Anthropic => anthropic::decode_error(status, body),
        Dialect::Gemini => gemini::decode_error(status, body),
    }
}

/// An error for a client of `dialect`: status and body. The one renderer of an error body:
/// the gateway's own refusals and an upstream's translated error alike (an exact status the
/// error carries is kept; see `model::WireError`).
pub fn encode_error(dialect: Dialect, error: &WireError) -> (u16, Value) {
    match dialect {
        Dialect::OpenAiChat => openai_chat::encode_error(error),
        Dialect::OpenAiResponses => openai_responses::encode_error(error),
        Dialect::Anthropic => anthropic::encode_error(error),
        Dialect::Gemini => gemini::encode_error(error),
    }
}

/// A provider's stream, bytes in, canonical events out.
pub enum Decoder {
    Chat(openai_chat::StreamDecoder),
    Responses(openai_responses::StreamDecoder),
    Anthropic(anthropic::StreamDecoder),
    Gemini(gemini::StreamDecoder),
}

impl Decoder {
    /// A decoder for a provider stream in `dialect`.
    pub fn new(dialect: Dialect, names: NameMap) -> Self {
        match dialect {
            Dialect::OpenAiChat => Self::Chat(openai_chat::StreamDecoder::new(names)),
            Dialect::OpenAiResponses => {
                Self::Responses(openai_responses::StreamDecoder::new(names))
            }
            Dialect::Anthropic => Self::Anthropic(anthropic::StreamDecoder::new(names)),
            Dialect::Gemini => Self::Gemini(gemini::StreamDecoder::new(names)),
        }
    }

    /// Feeds the next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        match self {
            Self::Chat(decoder) => decoder.feed(chunk, out),
            Self::Responses(decoder) => decoder.feed(chunk, out),
            Self::Anthropic(decoder) => decoder.feed(chunk, out),
            Self::Gemini(decoder) => decoder.feed(chunk, out),
        }
    }

    /// The provider's dialect said the stream is over (Anthropic's `message_stop`, chat's
    /// `[DONE]`, a Responses terminal event, an error event): nothing more will be read, so
    /// the caller ends its stream without waiting for the body to close.
    pub fn ended(&self) -> bool {
        match self {
            Self::Chat(decoder) => decoder.ended(),
            Self::Responses(decoder) => decoder.ended(),
            Self::Anthropic(decoder) => decoder.ended(),
            Self::Gemini(decoder) => decoder.ended(),
        }
    }

    /// The body ended.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
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
pub struct EncoderSetup {
    /// The model name the client asked for.
    pub model: String,
    pub id: String,
    /// Unix seconds.
    pub created: i64,
    /// OpenAI chat: the client asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// Anthropic: the input token count for `message_start`.
    pub input_tokens: Option<u64>,
}

/// Canonical events in, the client's stream bytes out.
pub enum Encoder {
    Chat(openai_chat::StreamEncoder),
    Responses(openai_responses::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Gemini(gemini::StreamEncoder),
}

impl Encoder {
    /// An encoder for a client stream in `dialect`.
    pub fn new(dialect: Dialect, setup: EncoderSetup) -> Self {
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

    /// Writes one event.
    pub fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        match self {
            Self::Chat(encoder) => encoder.encode(event, out),
            Self::Responses(encoder) => encoder.encode(event, out),
            Self::Anthropic(encoder) => encoder.encode(event, out),
            Self::Gemini(encoder) => encoder.encode(event, out),
        }
    }

    /// Ends the stream (always call it: some encoders write their last event here).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            Self::Chat(encoder) => encoder.finish(out),
            Self::Responses(encoder) => encoder.finish(out),
            Self::Anthropic(encoder) => encoder.finish(out),
            Self::Gemini(encoder) => encoder.finish(out),
        }
    }
}

/// The usage of a whole (non-streamed) reply in `dialect`, read without parsing the rest of it.
pub fn usage_from_body(dialect: Dialect, body: &[u8]) -> Option<Usage> {
    match dialect {
        Dialect::OpenAiChat => openai_chat::usage::from_body(body),
        Dialect::OpenAiResponses => openai_responses::usage::from_body(body),
        Dialect::Anthropic => anthropic::usage::from_body(body),
        Dialect::Gemini => gemini::usage::from_body(body),
    }
}

/// The one error event that ends a stream of `dialect` already under way (the upstream broke
/// after the client's 200), written as that dialect's own stream encoder writes an error.
pub fn encode_stream_error(dialect: Dialect, error: &WireError, out: &mut Vec<u8>) {
    match dialect {
        Dialect::OpenAiChat => openai_chat::stream_error(error, out),
        Dialect::OpenAiResponses => openai_responses::stream_error(error, out),
        Dialect::Anthropic => anthropic::stream_error(error, out),
        Dialect::Gemini => gemini::stream_error(error, out),
    }
}
