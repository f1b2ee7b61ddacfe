//! The `POST /completions` body: `{thread_id, prompt_id, provider, model, provider_request}`,
//! where `provider_request` is written by corvid-wire's encoder for the model's provider, then
//! fitted to what Zed's cloud parses with its own Rust types (reference §6): a missing
//! required field fails there, so the few the encoders leave out are filled in.

use corvid_wire::model::ChatRequest;
use corvid_wire::{anthropic, gemini, openai_chat, openai_responses};
use serde_json::{Map, Value, json};

use super::models::{ZedModel, ZedProvider};

/// The one `include` value the cloud accepts.
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The whole `/completions` body. `thread_id` and `prompt_id` (UUIDs) are left out when absent.
pub fn completion_body(
    request: &ChatRequest,
    model: &ZedModel,
    thread_id: Option<&str>,
    prompt_id: Option<&str>,
) -> Value {
    let mut body = Map::new();
    if let Some(thread_id) = thread_id {
        body.insert("thread_id".to_owned(), json!(thread_id));
    }
    if let Some(prompt_id) = prompt_id {
        body.insert("prompt_id".to_owned(), json!(prompt_id));
    }
    body.insert("provider".to_owned(), json!(model.provider.as_str()));
    body.insert("model".to_owned(), json!(model.id));
    body.insert(
        "provider_request".to_owned(),
        provider_request(request, model, thread_id),
    );
    Value::Object(body)
}

/// The provider's own request for `model`. The client's untranslated `extra` fields are not
/// forwarded (the cloud accepts only the fields its types define).
pub fn provider_request(request: &ChatRequest, model: &ZedModel, thread_id: Option<&str>) -> Value {
    let mut request = request.clone();
    request.model = model.id.clone();
    request.extra.clear();
    request.stream = true;
    match model.provider {
        ZedProvider::Anthropic => {
            // The cloud takes `system` as one string only.
            let system = request
                .system
                .iter()
                .filter(|text| !text.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("\n\n");
            request.system = if system.is_empty() {
                Vec::new()
            } else {
                vec![system]
            };
            let mut body = anthropic::encode_request(&request);
            fit_anthropic(&mut body, model);
            body
        }
        ZedProvider::OpenAi => {
            let mut body = openai_responses::encode_request(&request);
            fit_responses(&mut body, thread_id);
            body
        }
        ZedProvider::XAi | ZedProvider::Baseten => {
            let mut body = openai_chat::encode_request(&request);
            fit_chat(&mut body);
            body
        }
        ZedProvider::Google => {
            let mut body = gemini::encode_request(&request);
            fit_google(&mut body, model);
            body
        }
    }
}

/// Anthropic: no `stream` (the cloud always streams), `is_error` and `content` on every
/// `tool_result`, a `description` on every tool, `max_tokens` within the model's limit.
fn fit_anthropic(body: &mut Value, model: &ZedModel) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    object.remove("stream");
    if !model.supports_fast_mode {
        object.remove("speed");
    }
    if let Some(messages) = object.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
                continue;
            };
            for block in blocks {
                if block["type"] == "tool_result"
                    && let Some(block) = block.as_object_mut()
                {
                    block.entry("is_error").or_insert(json!(false));
                    block.entry("content").or_insert(json!(""));
                }
            }
        }
    }
    if let Some(tools) = object.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            tool.entry("description").or_insert(json!(""));
        }
    }
    let limit = model.max_output_tokens;
    let max_tokens = object.get("max_tokens").and_then(Value::as_u64);
    if limit > 0
        && let Some(max_tokens) = max_tokens
        && max_tokens > limit
    {
        object.insert("max_tokens".to_owned(), json!(limit));
        // The thinking budget must stay below `max_tokens`.
        if let Some(budget) = object
            .get_mut("thinking")
            .and_then(|thinking| thinking.get_mut("budget_tokens"))
            && budget.as_u64().is_some_and(|budget| budget >= limit)
        {
            *budget = json!(limit / 2);
        }
    }
}

/// OpenAI Responses: `store: false`, `stream: true`, function tools only, `include` limited to
/// encrypted reasoning, a reasoning summary, the thread as `prompt_cache_key`.
fn fit_responses(body: &mut Value, thread_id: Option<&str>) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    object.insert("store".to_owned(), json!(false));
    object.insert("stream".to_owned(), json!(true));
    if let Some(tools) = object.get_mut("tools").and_then(Value::as_array_mut) {
        tools.retain(|tool| tool["type"] == "function");
        if tools.is_empty() {
            object.remove("tools");
            object.remove("tool_choice");
        }
    }
    if let Some(include) = object.get_mut("include").and_then(Value::as_array_mut) {
        include.retain(|item| item == ENCRYPTED_REASONING);
        if include.is_empty() {
            object.remove("include");
        }
    }
    if let Some(reasoning) = object.get_mut("reasoning").and_then(Value::as_object_mut) {
        reasoning.entry("summary").or_insert(json!("auto"));
    }
    match thread_id {
        Some(thread_id) => {
            object.insert("prompt_cache_key".to_owned(), json!(thread_id));
        }
        None => {
            object.remove("prompt_cache_key");
        }
    }
}

/// xAI and Baseten chat completions: streamed with usage, `max_completion_tokens` never
/// `max_tokens`, no `prompt_cache_key`.
fn fit_chat(body: &mut Value) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    object.insert("stream".to_owned(), json!(true));
    object.insert("stream_options".to_owned(), json!({"include_usage": true}));
    if let Some(max_tokens) = object.remove("max_tokens") {
        object.entry("max_completion_tokens").or_insert(max_tokens);
    }
    object.remove("prompt_cache_key");
}

/// Google: the prefixed model inside the request, and what Zed's own Gemini types read: the
/// calling mode in lowercase (`"any"`, as Zed's client writes it; Gemini's own `"ANY"` does
/// not parse there), a `description` on every function declaration.
fn fit_google(body: &mut Value, model: &ZedModel) {
    let Some(object) = body.as_object_mut() else {
        return;
    };
    // Inside the provider request the model has its prefix; outside it has none.
    object.insert("model".to_owned(), json!(format!("models/{}", model.id)));
    if let Some(mode) = object
        .get_mut("toolConfig")
        .and_then(|config| config.get_mut("functionCallingConfig"))
        .and_then(|calling| calling.get_mut("mode"))
        && let Some(text) = mode.as_str()
    {
        *mode = json!(text.to_ascii_lowercase());
    }
    if let Some(tools) = object.get_mut("tools").and_then(Value::as_array_mut) {
        for declaration in tools
            .iter_mut()
            .filter_map(|tool| tool.get_mut("functionDeclarations"))
            .filter_map(Value::as_array_mut)
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            declaration.entry("description").or_insert(json!(""));
        }
    }
}
