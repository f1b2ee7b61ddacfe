//! Provider replies built per finish reason, whole and streamed, for the §6.2 table test.

use serde_json::{Value, json};

use super::dialect::Dialect;

/// What the reply holds besides its finish reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    Text,
    ToolCall,
    /// An OpenAI refusal (`refusal` field / part).
    Refusal,
    /// No content at all (an empty text).
    Empty,
    /// Gemini: the prompt was blocked (`promptFeedback.blockReason`, no candidates).
    Blocked,
}

/// One row: a provider reply in `provider` saying `wire` (Responses: `status`, with
/// `detail` as `incomplete_details.reason`), and what each client must read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Case {
    pub(crate) provider: Dialect,
    pub(crate) wire: &'static str,
    pub(crate) detail: Option<&'static str>,
    pub(crate) body: Body,
    /// Per client, in `ALL` order: Chat `finish_reason`, Responses `status[/reason]`,
    /// Anthropic `stop_reason`, Gemini `finishReason`.
    pub(crate) expected: [&'static str; 4],
}

const STOP: [&str; 4] = ["stop", "completed", "end_turn", "STOP"];
const LENGTH: [&str; 4] = [
    "length",
    "incomplete/max_output_tokens",
    "max_tokens",
    "MAX_TOKENS",
];
const TOOLS: [&str; 4] = ["tool_calls", "completed", "tool_use", "STOP"];
const FILTER: [&str; 4] = [
    "content_filter",
    "incomplete/content_filter",
    "refusal",
    "SAFETY",
];
const OVERFLOW: [&str; 4] = [
    "length",
    "incomplete",
    "model_context_window_exceeded",
    "MAX_TOKENS",
];

/// The §6.2 rows, for every provider, plus each provider's own extra values.
pub(crate) fn cases() -> Vec<Case> {
    let case = |provider, wire, detail, body, expected| Case {
        provider,
        wire,
        detail,
        body,
        expected,
    };
    use Body::{Blocked, Empty, Refusal, Text, ToolCall};
    use Dialect::{Anthropic, Chat, Gemini, Responses};
    vec![
        // stop, length, tool calls, content filter: every provider.
        case(Chat, "stop", None, Text, STOP),
        case(Chat, "length", None, Text, LENGTH),
        case(Chat, "tool_calls", None, ToolCall, TOOLS),
        case(Chat, "content_filter", None, Text, FILTER),
        case(Responses, "completed", None, Text, STOP),
        case(
            Responses,
            "incomplete",
            Some("max_output_tokens"),
            Text,
            LENGTH,
        ),
        case(Responses, "completed", None, ToolCall, TOOLS),
        case(
            Responses,
            "incomplete",
            Some("content_filter"),
            Text,
            FILTER,
        ),
        case(Anthropic, "end_turn", None, Text, STOP),
        case(Anthropic, "max_tokens", None, Text, LENGTH),
        case(Anthropic, "tool_use", None, ToolCall, TOOLS),
        case(Anthropic, "refusal", None, Text, FILTER),
        case(Gemini, "STOP", None, Text, STOP),
        case(Gemini, "MAX_TOKENS", None, Text, LENGTH),
        case(Gemini, "STOP", None, ToolCall, TOOLS),
        case(Gemini, "SAFETY", None, Text, FILTER),
        // Tool calls under a natural end are tool calls (pitfall 3).
        case(Chat, "stop", None, ToolCall, TOOLS),
        case(Anthropic, "end_turn", None, ToolCall, TOOLS),
        // Refusals count as filtered.
        case(Chat, "stop", None, Refusal, FILTER),
        case(Responses, "completed", None, Refusal, FILTER),
        // Provider-specific values.
        case(Responses, "incomplete", None, Text, OVERFLOW),
        case(
            Anthropic,
            "stop_sequence",
            None,
            Text,
            ["stop", "completed", "stop_sequence", "STOP"],
        ),
        case(
            Anthropic,
            "pause_turn",
            None,
            Text,
            ["stop", "completed", "pause_turn", "STOP"],
        ),
        case(
            Anthropic,
            "model_context_window_exceeded",
            None,
            Text,
            OVERFLOW,
        ),
        case(Gemini, "RECITATION", None, Text, FILTER),
        case(Gemini, "", None, Blocked, FILTER),
        // Nothing said at all: still a well-formed reply in every dialect.
        case(Chat, "stop", None, Empty, STOP),
        case(Responses, "completed", None, Empty, STOP),
        case(Anthropic, "end_turn", None, Empty, STOP),
        case(Gemini, "STOP", None, Empty, STOP),
        case(
            Gemini,
            "MALFORMED_FUNCTION_CALL",
            None,
            Text,
            ["stop", "completed", "end_turn", "MALFORMED_FUNCTION_CALL"],
        ),
    ]
}

const TEXT: &str = "Partial answer";
const REFUSAL: &str = "I can't help with that.";
const ARGUMENTS: &str = r#"{"path":"a.rs"}"#;

impl Case {
    pub(crate) fn label(&self) -> String {
        let detail = self.detail.map(|d| format!("/{d}")).unwrap_or_default();
        format!(
            "{} {}{detail} {:?}",
            self.provider.name(),
            self.wire,
            self.body
        )
    }

    /// The whole reply and the stream a provider would send.
    pub(crate) fn provider_reply(&self) -> (Vec<u8>, Vec<u8>) {
        match self.provider {
            Dialect::Chat => self.chat(),
            Dialect::Responses => self.responses(),
            Dialect::Anthropic => self.anthropic(),
            Dialect::Gemini => self.gemini(),
        }
    }

    fn chat(&self) -> (Vec<u8>, Vec<u8>) {
        let mut message = json!({"role": "assistant", "content": TEXT});
        let call = json!({"id": "call_f", "type": "function",
            "function": {"name": "read_file", "arguments": ARGUMENTS}});
        let delta = match self.body {
            Body::Text | Body::Blocked => json!({"content": TEXT}),
            Body::Empty => {
                message["content"] = json!("");
                json!({"content": ""})
            }
            Body::ToolCall => {
                message["content"] = Value::Null;
                message["tool_calls"] = json!([call]);
                let mut streamed = call.clone();
                streamed["index"] = json!(0);
                json!({"tool_calls": [streamed]})
            }
            Body::Refusal => {
                message["content"] = Value::Null;
                message["refusal"] = json!(REFUSAL);
                json!({"refusal": REFUSAL})
            }
        };
        let usage = json!({"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7});
        let whole = json!({"id": "chatcmpl-f", "object": "chat.completion",
            "created": 1_767_000_000, "model": "gpt-4.1",
            "choices": [{"index": 0, "message": message, "logprobs": null,
                "finish_reason": self.wire}],
            "usage": usage});
        let chunk = |choices: Value, usage: Value| {
            json!({"id": "chatcmpl-f", "object": "chat.completion.chunk",
                "created": 1_767_000_000, "model": "gpt-4.1", "choices": choices, "usage": usage})
        };
        let choice = |delta: Value, finish: Value| json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
        let stream = sse(
            &[
                chunk(
                    choice(json!({"role": "assistant", "content": ""}), Value::Null),
                    Value::Null,
                ),
                chunk(choice(delta, Value::Null), Value::Null),
                chunk(choice(json!({}), json!(self.wire)), Value::Null),
                chunk(json!([]), usage),
            ],
            false,
        ) + "data: [DONE]\n\n";
        (whole.to_string().into_bytes(), stream.into_bytes())
    }

    fn responses(&self) -> (Vec<u8>, Vec<u8>) {
        let (item, added, progress) = match self.body {
            Body::ToolCall => {
                let item = json!({"type": "function_call", "id": "fc_f", "call_id": "call_f",
                    "name": "read_file", "arguments": ARGUMENTS, "status": "completed"});
                let mut added = item.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                let progress = vec![json!({"type": "response.function_call_arguments.delta",
                    "item_id": "fc_f", "output_index": 0, "delta": ARGUMENTS})];
                (item, added, progress)
            }
            Body::Text | Body::Refusal | Body::Empty | Body::Blocked => {
                let text = if self.body == Body::Empty { "" } else { TEXT };
                let (part, delta) = if self.body != Body::Refusal {
                    (
                        json!({"type": "output_text", "text": text, "annotations": []}),
                        json!({"type": "response.output_text.delta", "item_id": "msg_f",
                            "output_index": 0, "content_index": 0, "delta": text}),
                    )
                } else {
                    (
                        json!({"type": "refusal", "refusal": REFUSAL}),
                        json!({"type": "response.refusal.delta", "item_id": "msg_f",
                            "output_index": 0, "content_index": 0, "delta": REFUSAL}),
                    )
                };
                let item = json!({"type": "message", "id": "msg_f", "status": "completed",
                    "role": "assistant", "content": [part]});
                let added = json!({"type": "message", "id": "msg_f", "status": "in_progress",
                    "role": "assistant", "content": []});
                (item, added, vec![delta])
            }
        };
        let details = match self.detail {
            Some(reason) => json!({"reason": reason}),
            None => Value::Null,
        };
        let response = |status: &str, output: Value, usage: Value| {
            let details = if status == "in_progress" {
                Value::Null
            } else {
                details.clone()
            };
            json!({"id": "resp_f", "object": "response", "created_at": 1_767_000_000,
                "status": status, "incomplete_details": details,
                "model": "gpt-5", "output": output, "usage": usage})
        };
        let usage = json!({"input_tokens": 5, "output_tokens": 2, "total_tokens": 7});
        let whole = response(self.wire, json!([item]), usage.clone());
        let terminal = if self.wire == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        let mut events = vec![
            json!({"type": "response.created",
                "response": response("in_progress", json!([]), Value::Null)}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        ];
        events.extend(progress);
        events.push(
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": item.clone()}),
        );
        events.push(json!({"type": terminal, "response": whole.clone()}));
        for (sequence, event) in events.iter_mut().enumerate() {
            event["sequence_number"] = json!(sequence);
        }
        (
            whole.to_string().into_bytes(),
            sse(&events, true).into_bytes(),
        )
    }

    fn anthropic(&self) -> (Vec<u8>, Vec<u8>) {
        let (block, start, delta) = match self.body {
            Body::ToolCall => (
                json!({"type": "tool_use", "id": "toolu_f", "name": "read_file",
                    "input": {"path": "a.rs"}}),
                json!({"type": "tool_use", "id": "toolu_f", "name": "read_file", "input": {}}),
                json!({"type": "input_json_delta", "partial_json": ARGUMENTS}),
            ),
            Body::Text | Body::Refusal | Body::Blocked => (
                json!({"type": "text", "text": TEXT}),
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": TEXT}),
            ),
            Body::Empty => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": ""}),
            ),
        };
        let whole = json!({"id": "msg_f", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [block], "stop_reason": self.wire,
            "stop_sequence": null, "usage": {"input_tokens": 5, "output_tokens": 2}});
        let events = [
            json!({"type": "message_start", "message": {"id": "msg_f", "type": "message",
                "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 5, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta",
                "delta": {"stop_reason": self.wire, "stop_sequence": null},
                "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ];
        (
            whole.to_string().into_bytes(),
            sse(&events, true).into_bytes(),
        )
    }

    fn gemini(&self) -> (Vec<u8>, Vec<u8>) {
        let part = match self.body {
            Body::ToolCall => {
                json!({"functionCall": {"name": "read_file", "args": {"path": "a.rs"}}})
            }
            Body::Text | Body::Refusal | Body::Blocked => json!({"text": TEXT}),
            Body::Empty => json!({"text": ""}),
        };
        let mut whole = json!({"candidates": [{"content": {"role": "model", "parts": [part]},
                "finishReason": self.wire, "index": 0}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2,
                "totalTokenCount": 7},
            "modelVersion": "gemini-2.5-pro", "responseId": "gf"});
        if self.body == Body::Blocked {
            whole = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
                "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5},
                "modelVersion": "gemini-2.5-pro", "responseId": "gf"});
        }
        let stream = sse(std::slice::from_ref(&whole), false);
        (whole.to_string().into_bytes(), stream.into_bytes())
    }
}

/// Events as SSE, with `event:` lines (equal to `type`) when `named`.
fn sse(events: &[Value], named: bool) -> String {
    events
        .iter()
        .map(|event| match (named, event["type"].as_str()) {
            (true, Some(kind)) => format!("event: {kind}\ndata: {event}\n\n"),
            _ => format!("data: {event}\n\n"),
        })
        .collect()
}
