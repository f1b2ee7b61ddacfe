//! Whole replies: `GenerateContentResponse` ↔ [`ChatResponse`], and the reading of one
//! response object, shared with the stream decoder (each SSE line is a whole response).

use serde_json::{Map, Value, json};

use super::{
    finish_from_gemini, finish_to_gemini, reply_call_id, request::arguments_text,
    usage_from_gemini, usage_to_gemini,
};
use crate::model::{
    ChatResponse, DecodeError, FinishReason, Image, ImageSource, NameMap, Part, Reasoning,
    ToolCall, Usage,
};

/// One piece of a candidate's content, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Thought(String),
    Call(ToolCall),
    Image(Image),
}

/// What one `GenerateContentResponse` (a whole reply or one stream chunk) says.
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    pub(crate) response_id: String,
    pub(crate) model: String,
    pub(crate) pieces: Vec<Piece>,
    /// The candidate's `finishReason`, mapped, before the tool-call override; a blocked
    /// prompt (`promptFeedback.blockReason`, no candidates) counts as `ContentFilter`.
    pub(crate) finish: Option<FinishReason>,
    pub(crate) usage: Option<Usage>,
}

impl Chunk {
    /// Reads a response object. `calls_before` counts the calls of this reply already seen
    /// (earlier stream chunks): synthesised ids use the call's index in the reply.
    pub(crate) fn read(value: &Value, names: &NameMap, calls_before: usize) -> Self {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let mut chunk = Self {
            response_id: text("responseId"),
            model: text("modelVersion"),
            usage: value.get("usageMetadata").map(usage_from_gemini),
            ..Self::default()
        };
        let candidates = value
            .get("candidates")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        // Only the first candidate is read (`candidateCount` > 1 is not carried).
        let candidate = candidates
            .iter()
            .find(|candidate| candidate.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
        let Some(candidate) = candidate else {
            let blocked = value
                .get("promptFeedback")
                .and_then(|feedback| feedback.get("blockReason"))
                .is_some();
            if blocked {
                chunk.finish = Some(FinishReason::ContentFilter);
            }
            return chunk;
        };
        chunk.finish = candidate
            .get("finishReason")
            .and_then(Value::as_str)
            .map(finish_from_gemini);
        let parts = candidate
            .get("content")
            .and_then(|content| content.get("parts"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for part in parts {
            let index = calls_before + chunk.calls();
            if let Some(piece) = read_part(part, names, &chunk.response_id, index) {
                chunk.pieces.push(piece);
            }
        }
        chunk
    }

    fn calls(&self) -> usize {
        self.pieces
            .iter()
            .filter(|piece| matches!(piece, Piece::Call(_)))
            .count()
    }
}

/// One part of a reply; `index` is the position a call in it would have in the reply.
fn read_part(part: &Value, names: &NameMap, response_id: &str, index: usize) -> Option<Piece> {
    if let Some(call) = part.get("functionCall") {
        let name = names.original(call.get("name").and_then(Value::as_str).unwrap_or(""));
        let arguments = arguments_text(call.get("args"));
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => reply_call_id(response_id, &name, &arguments, index),
        };
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|signature| !signature.is_empty())
            .map(str::to_owned);
        return Some(Piece::Call(ToolCall {
            id,
            name,
            arguments,
            signature,
        }));
    }
    if let Some(data) = part.get("inlineData") {
        let get = |key: &str| {
            data.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        return Some(Piece::Image(Image {
            source: ImageSource::Base64 {
                media_type: get("mimeType"),
                data: get("data"),
            },
            detail: None,
        }));
    }
    // `thoughtSignature` on a text part has no canonical home (LOSSES.md); empty text parts
    // that only carry one are skipped.
    let text = part.get("text").and_then(Value::as_str)?;
    if text.is_empty() {
        return None;
    }
    Some(if part.get("thought") == Some(&Value::Bool(true)) {
        Piece::Thought(text.to_owned())
    } else {
        Piece::Text(text.to_owned())
    })
}

/// Reads a whole `generateContent` reply. Names the encoder shortened are restored through
/// `names`; calls without an id get a deterministic one. A reply with a `functionCall`
/// finishes with `ToolCalls` whatever its `finishReason` (Gemini says `STOP`, pitfall 3), and a
/// blocked prompt (`promptFeedback.blockReason`, no candidates) with `ContentFilter`.
pub fn decode_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, DecodeError> {
    let value: Value = serde_json::from_slice(body)?;
    if !value.is_object() {
        return Err(DecodeError::field("body", "must be a JSON object"));
    }
    if let Some(error) = value.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("an error");
        return Err(DecodeError::field("error", format!("reports {message}")));
    }
    let chunk = Chunk::read(&value, names, 0);
    let mut parts: Vec<Part> = Vec::with_capacity(chunk.pieces.len());
    let mut made_calls = false;
    for piece in chunk.pieces {
        match (piece, parts.last_mut()) {
            (Piece::Text(text), Some(Part::Text { text: last })) => last.push_str(&text),
            (Piece::Text(text), _) => parts.push(Part::Text { text }),
            (Piece::Thought(text), Some(Part::Reasoning(last))) => last.text.push_str(&text),
            (Piece::Thought(text), _) => parts.push(Part::Reasoning(Reasoning {
                text,
                ..Reasoning::default()
            })),
            (Piece::Call(call), _) => {
                made_calls = true;
                parts.push(Part::ToolCall(call));
            }
            (Piece::Image(image), _) => parts.push(Part::Image(image)),
        }
    }
    let finish = match chunk.finish {
        _ if made_calls => FinishReason::ToolCalls,
        Some(reason) => reason,
        None => FinishReason::EndTurn,
    };
    Ok(ChatResponse {
        id: chunk.response_id,
        model: chunk.model,
        created: 0,
        parts,
        finish,
        usage: chunk.usage.unwrap_or_default(),
    })
}

/// A whole reply for a Gemini client: one candidate (content, `finishReason`, index 0),
/// `usageMetadata`, `modelVersion` (`model`, the name the client asked for) and `responseId`.
pub fn encode_response(response: &ChatResponse, model: &str) -> Value {
    let parts: Vec<Value> = response.parts.iter().filter_map(client_part).collect();
    let mut body = Map::new();
    body.insert(
        "candidates".into(),
        json!([{
            "content": { "role": "model", "parts": parts },
            "finishReason": finish_to_gemini(response.finish),
            "index": 0,
        }]),
    );
    body.insert("usageMetadata".into(), usage_to_gemini(&response.usage));
    body.insert("modelVersion".into(), model.into());
    if !response.id.is_empty() {
        body.insert("responseId".into(), response.id.clone().into());
    }
    Value::Object(body)
}

/// A reply part as a Gemini client sees it; `None` for what a reply cannot hold.
fn client_part(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } if !text.is_empty() => Some(json!({ "text": text })),
        Part::Reasoning(reasoning) => {
            // Another provider's opaque reasoning, minted by corvid, rides as the thought
            // part's `thoughtSignature`, which Gemini clients send back with the part.
            let token = [&reasoning.signature, &reasoning.encrypted]
                .into_iter()
                .flatten()
                .find(|token| crate::minted::is_minted(token));
            let mut part = json!({ "text": reasoning.text, "thought": true });
            if let Some(token) = token {
                part["thoughtSignature"] = json!(token);
            } else if reasoning.text.is_empty() {
                return None;
            }
            Some(part)
        }
        Part::ToolCall(call) => Some(call_part(
            &call.id,
            &call.name,
            &call.arguments,
            call.signature.as_deref(),
        )),
        Part::Image(image) => Some(match &image.source {
            ImageSource::Base64 { media_type, data } => {
                json!({ "inlineData": { "mimeType": media_type, "data": data } })
            }
            ImageSource::Url { url } => json!({ "fileData": { "fileUri": url } }),
        }),
        Part::Text { .. } | Part::ToolResult(_) | Part::System { .. } => None,
    }
}

/// A `functionCall` part for a client: id, name and the arguments as an object (`{}` when
/// they are empty or not an object), with the call's `thoughtSignature`.
pub(crate) fn call_part(id: &str, name: &str, arguments: &str, signature: Option<&str>) -> Value {
    let args = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(args)) => Value::Object(args),
        _ => json!({}),
    };
    let mut part = json!({ "functionCall": { "id": id, "name": name, "args": args } });
    if let Some(signature) = signature {
        part["thoughtSignature"] = signature.into();
    }
    part
}

#[cfg(test)]
mod tests;
