use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat_request;
use crate::zed::{ZedModel, ZedProvider, completion_body};

const THREAD: &str = "2f6e1c9a-3b7d-4c1e-9a55-0d7c2b8e4f10";
const PROMPT: &str = "a81e0c9a-3b7d-4c1e-9a55-0d7c2b8e4f11";

fn model(provider: ZedProvider, id: &str) -> ZedModel {
    let mut model = ZedModel::unlisted(id, provider);
    model.max_output_tokens = 64000;
    model
}

#[test]
fn the_envelope_has_snake_case_provider_and_the_bare_model() {
    let body = completion_body(
        &chat_request(),
        &model(ZedProvider::XAi, "grok-4"),
        Some(THREAD),
        Some(PROMPT),
    );
    assert_eq!(body["thread_id"], THREAD);
    assert_eq!(body["prompt_id"], PROMPT);
    assert_eq!(body["provider"], "x_ai");
    assert_eq!(body["model"], "grok-4");
    let without_ids = completion_body(
        &chat_request(),
        &model(ZedProvider::OpenAi, "gpt-5"),
        None,
        None,
    );
    let keys: Vec<&String> = without_ids.as_object().unwrap().keys().collect();
    let mut keys: Vec<&str> = keys.iter().map(|key| key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, vec!["model", "provider", "provider_request"]);
    assert_eq!(without_ids["provider"], "open_ai");
}

#[test]
fn anthropic_requests_fit_zeds_types() {
    let body = completion_body(
        &chat_request(),
        &model(ZedProvider::Anthropic, "claude-sonnet-4-6"),
        Some(THREAD),
        None,
    );
    let request = &body["provider_request"];
    assert_eq!(request["model"], "claude-sonnet-4-6");
    assert!(request.get("stream").is_none(), "the cloud always streams");
    assert_eq!(request["system"], "Be brief.\n\nUse tools.");
    assert_eq!(request["max_tokens"], 1000);
    assert!(
        request.get("metadata").is_none(),
        "client extras are not forwarded"
    );
    let result = &request["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["content"], "sunny");
    assert_eq!(request["tools"][0]["description"], "");
}

#[test]
fn anthropic_max_tokens_stay_within_the_model() {
    let mut request = chat_request();
    request.params.max_output_tokens = Some(500_000);
    let body = completion_body(
        &request,
        &model(ZedProvider::Anthropic, "claude-sonnet-4-6"),
        None,
        None,
    );
    assert_eq!(body["provider_request"]["max_tokens"], 64000);
}

#[test]
fn xai_requests_are_streamed_chat_completions() {
    let body = completion_body(
        &chat_request(),
        &model(ZedProvider::XAi, "grok-4"),
        Some(THREAD),
        None,
    );
    let request = &body["provider_request"];
    assert_eq!(request["model"], "grok-4");
    assert_eq!(request["stream"], true);
    assert_eq!(request["stream_options"], json!({"include_usage": true}));
    assert_eq!(request["max_completion_tokens"], 1000);
    assert!(request.get("max_tokens").is_none());
    assert!(request.get("prompt_cache_key").is_none());
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(request["tools"][0]["function"]["name"], "get_weather");
}

#[test]
fn openai_requests_are_stateless_responses_keyed_by_thread() {
    let mut request = chat_request();
    request.params.reasoning = Some(corvid_wire::model::ReasoningConfig::Effort(
        corvid_wire::model::Effort::High,
    ));
    let body = completion_body(
        &request,
        &model(ZedProvider::OpenAi, "gpt-5"),
        Some(THREAD),
        None,
    );
    let request = &body["provider_request"];
    assert_eq!(request["model"], "gpt-5");
    assert_eq!(request["store"], false);
    assert_eq!(request["stream"], true);
    assert_eq!(request["prompt_cache_key"], THREAD);
    assert_eq!(request["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(request["reasoning"]["summary"], "auto");
    let tools = request["tools"].as_array().unwrap();
    assert!(tools.iter().all(|tool| tool["type"] == "function"));
}

#[test]
fn google_requests_carry_the_prefixed_model_inside_only() {
    let body = completion_body(
        &chat_request(),
        &model(ZedProvider::Google, "gemini-2.5-pro"),
        None,
        None,
    );
    assert_eq!(body["model"], "gemini-2.5-pro");
    let request = &body["provider_request"];
    assert_eq!(request["model"], "models/gemini-2.5-pro");
    assert!(request["contents"].is_array());
    assert!(request["systemInstruction"].is_object());
    assert_eq!(
        request["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
    assert!(request.get("metadata").is_none());
    let _: &Value = request;
}

/// Issue 10, item 22: a forced tool choice to a Gemini model goes out as Zed's own client
/// writes it (lowercase `any`), and every declaration has the `description` Zed's type needs.
#[test]
fn google_tool_choice_is_written_as_zed_writes_it() {
    use corvid_wire::model::ToolChoice;
    for (choice, mode) in [
        (ToolChoice::Required, "any"),
        (ToolChoice::Named("get_weather".to_owned()), "any"),
        (ToolChoice::Auto, "auto"),
        (ToolChoice::None, "none"),
    ] {
        let mut request = chat_request();
        request.tool_choice = Some(choice);
        let body = completion_body(
            &request,
            &model(ZedProvider::Google, "gemini-2.5-pro"),
            None,
            None,
        );
        let provider_request = &body["provider_request"];
        assert_eq!(
            provider_request["toolConfig"]["functionCallingConfig"]["mode"], mode,
            "{provider_request}"
        );
        assert_eq!(
            provider_request["tools"][0]["functionDeclarations"][0]["description"],
            ""
        );
    }
}
