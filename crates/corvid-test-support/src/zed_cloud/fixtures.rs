//! Wire fixtures of the mock Zed cloud: the `/client/users/me` and `/models` bodies, and one
//! streamed reply per provider kind (text "Hello", then a `get_weather({"city":"Paris"})`
//! tool call), each line a provider event exactly as the cloud relays it.

use serde_json::{Value, json};

/// The tool call every fixture ends with.
pub const TOOL_NAME: &str = "get_weather";
/// Its arguments.
pub const TOOL_ARGUMENTS: &str = r#"{"city":"Paris"}"#;

/// `GET /client/users/me` for user 42 in its personal organization.
pub fn users_me(plan: &str, models_enabled: bool) -> Value {
    json!({
        "user": {
            "id_v2": "u_abc", "legacy_user_id": 42, "metrics_id": "m_1", "username": "mona",
            "avatar_url": "https://example.invalid/a.png", "github_login": "mona", "name": null,
            "is_staff": false, "accepted_tos_at": "2025-01-01T00:00:00.000Z",
            "has_connected_to_collab_once": true
        },
        "feature_flags": [],
        "organizations": [
            {"id": "org_team", "name": "Team", "is_personal": false},
            {"id": "org_personal", "name": "mona", "is_personal": true}
        ],
        "default_organization_id": "org_personal",
        "plans_by_organization": {"org_personal": plan, "org_team": "zed_business"},
        "configuration_by_organization": {
            "org_personal": {
                "is_zed_model_provider_enabled": models_enabled,
                "is_agent_thread_feedback_enabled": true,
                "is_collaboration_enabled": true,
                "edit_prediction": {"is_enabled": true, "is_feedback_enabled": true}
            }
        },
        "plan": {
            "plan_v3": plan,
            "subscription_period": {
                "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-02-01T00:00:00Z"
            },
            "usage": {"edit_predictions": {"used": 250, "limit": "unlimited"}},
            "trial_started_at": null,
            "is_account_too_young": false,
            "has_overdue_invoices": false
        }
    })
}

fn model(provider: &str, id: &str, display_name: &str, disabled: bool) -> Value {
    json!({
        "provider": provider, "id": id, "display_name": display_name, "is_latest": true,
        "max_token_count": 200000, "max_token_count_in_max_mode": null,
        "max_output_tokens": 64000, "supports_tools": true, "supports_images": true,
        "supports_thinking": provider != "x_ai", "supports_disabling_thinking": true,
        "supports_fast_mode": false, "supports_server_side_compaction": false,
        "supported_effort_levels": [{"name": "High", "value": "high", "is_default": true}],
        "supports_streaming_tools": true, "supports_parallel_tool_calls": false,
        "is_disabled": disabled,
        "disabled_reason": if disabled { json!("Not on your plan") } else { Value::Null }
    })
}

/// `GET /models`: one model per provider kind, one disabled model, and default and
/// recommended ids that include one the list does not have.
pub fn models() -> Value {
    json!({
        "models": [
            model("anthropic", "claude-sonnet-4-6", "Claude Sonnet 4.6", false),
            model("open_ai", "gpt-5", "GPT-5", false),
            model("google", "gemini-2.5-pro", "Gemini 2.5 Pro", false),
            model("x_ai", "grok-4", "Grok 4", false),
            model("anthropic", "claude-opus-4-1", "Claude Opus 4.1", true),
        ],
        "default_model": "claude-sonnet-4-6",
        "default_fast_model": "claude-haiku-9",
        "recommended_models": ["claude-sonnet-4-6", "claude-opus-4-1", "gone-model"]
    })
}

/// The provider events of a text + tool call reply for a provider kind (`anthropic`,
/// `open_ai`, `x_ai` or `baseten`, `google`); empty for anything else.
pub fn provider_events(provider: &str, model: &str) -> Vec<Value> {
    match provider {
        "anthropic" => anthropic(model),
        "open_ai" => responses(model),
        "x_ai" | "baseten" => chat(model),
        "google" => gemini(model),
        _ => Vec::new(),
    }
}

fn anthropic(model: &str) -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Hello"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": {}}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "\"Paris\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]
}

fn chat(model: &str) -> Vec<Value> {
    let chunk = |choices: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": model, "choices": choices})
    };
    vec![
        chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": "Hello"}}])),
        chunk(
            json!([{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
            "type": "function", "function": {"name": TOOL_NAME, "arguments": "{\"city\":"}}]}}]),
        ),
        chunk(json!([{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": "\"Paris\"}"}}]}}])),
        chunk(json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": model, "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}}),
    ]
}

fn responses(model: &str) -> Vec<Value> {
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello", "annotations": []}]});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": TOOL_NAME, "arguments": TOOL_ARGUMENTS, "status": "completed"});
    vec![
        json!({"type": "response.created", "sequence_number": 0, "response": {
            "id": "resp_1", "object": "response", "created_at": 1, "model": model,
            "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant",
                "status": "in_progress", "content": []}}),
        json!({"type": "response.content_part.added", "sequence_number": 2,
            "item_id": "msg_1", "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "delta": "Hello"}),
        json!({"type": "response.output_text.done", "sequence_number": 4, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "text": "Hello"}),
        json!({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0,
            "item": message}),
        json!({"type": "response.output_item.added", "sequence_number": 6, "output_index": 1,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": TOOL_NAME, "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 7,
            "item_id": "fc_1", "output_index": 1, "delta": TOOL_ARGUMENTS}),
        json!({"type": "response.function_call_arguments.done", "sequence_number": 8,
            "item_id": "fc_1", "output_index": 1, "arguments": TOOL_ARGUMENTS}),
        json!({"type": "response.output_item.done", "sequence_number": 9, "output_index": 1,
            "item": call}),
        json!({"type": "response.completed", "sequence_number": 10, "response": {
            "id": "resp_1", "object": "response", "created_at": 1, "model": model,
            "status": "completed", "output": [message, call],
            "usage": {"input_tokens": 10, "output_tokens": 12, "total_tokens": 22}}}),
    ]
}

fn gemini(model: &str) -> Vec<Value> {
    vec![
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]},
            "index": 0}], "modelVersion": model, "responseId": "r1"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {
            "name": TOOL_NAME, "args": {"city": "Paris"}}}]}, "finishReason": "STOP",
            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 12,
                "totalTokenCount": 22},
            "modelVersion": model, "responseId": "r1"}),
    ]
}

/// `{"status":{"queued":{"position":n}}}`.
pub fn queued(position: u64) -> Value {
    json!({"status": {"queued": {"position": position}}})
}

/// `{"status":"started"}`.
pub fn started() -> Value {
    json!({"status": "started"})
}

/// `{"status":"stream_ended"}`.
pub fn stream_ended() -> Value {
    json!({"status": "stream_ended"})
}

/// `{"event": event}`.
pub fn wrapped(event: Value) -> Value {
    json!({"event": event})
}

/// `{"status":{"failed":{…}}}`.
pub fn failed(code: &str, message: &str, request_id: &str, retry_after: Option<f64>) -> Value {
    json!({"status": {"failed": {
        "code": code, "message": message, "request_id": request_id, "retry_after": retry_after
    }}})
}
