//! Requests crossing dialects: system turns in mid-conversation (issue 10.1), Claude Code's
//! billing line (10.4), Gemini function outputs (10.9).

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::model::{DecodeError, Part, Role, ToolResultContent};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// What Claude Code 2.1 sends for a model name it does not know: system turns inside
/// `messages`, one before the conversation and one in the middle.
fn claude_code_body() -> Vec<u8> {
    json!({
        "model": "grok-4.6",
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.1; cc_entrypoint=cli;"},
            {"type": "text", "text": "You are Claude Code."},
        ],
        "messages": [
            {"role": "system", "content": "Leading instructions."},
            {"role": "user", "content": "hello"},
            {"role": "system", "content": [{"type": "text", "text": "Mind the plan."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]},
            {"role": "user", "content": "go on"},
        ],
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

#[test]
fn claude_code_system_turns_decode_in_place() {
    let request = anthropic::decode_request(&claude_code_body()).unwrap();
    assert_eq!(request.system.last().unwrap(), "Leading instructions.");
    assert_eq!(request.messages.len(), 4);
    assert_eq!(request.messages[1].role, Role::User);
    assert_eq!(
        request.messages[1].parts,
        vec![Part::System {
            text: "Mind the plan.".to_owned()
        }]
    );
}

#[test]
fn system_turns_map_to_each_target() {
    let mut request = anthropic::decode_request(&claude_code_body()).unwrap();
    prepare(&mut request, "xai", Dialect::OpenAiChat);

    // Chat: a system message in place; the billing line is gone.
    let chat = openai_chat::encode_request(&request);
    let roles: Vec<&str> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "system", "assistant", "user"]);
    assert_eq!(
        chat["messages"][0]["content"],
        "You are Claude Code.\n\nLeading instructions."
    );
    assert_eq!(chat["messages"][2]["content"], "Mind the plan.");

    // Responses: a system message item in place.
    let responses = openai_responses::encode_request(&request);
    assert_eq!(responses["input"][1]["role"], "system");
    assert_eq!(
        responses["input"][1]["content"][0]["text"],
        "Mind the plan."
    );

    // Gemini: systemInstruction, the only place Gemini has for it.
    let gemini = gemini::encode_request(&request);
    let system: Vec<&str> = gemini["systemInstruction"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| part["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        system,
        [
            "You are Claude Code.",
            "Leading instructions.",
            "Mind the plan."
        ]
    );
    assert!(!gemini["contents"].to_string().contains("Mind the plan."));

    // Anthropic: leading turns join `system`; a later one stays in place as user text.
    let anthropic = anthropic::encode_request(&request);
    let messages = anthropic["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages[0]["content"],
        json!([{"type": "text", "text": "hello"}, {"type": "text", "text": "Mind the plan."}])
    );
}

#[test]
fn a_system_turn_first_in_messages_is_system_text_for_anthropic() {
    let mut request = anthropic::decode_request(&claude_code_body()).unwrap();
    // As another dialect's decoder could leave it: a system turn ahead of the conversation.
    request.messages.insert(
        0,
        crate::model::Message {
            role: Role::User,
            parts: vec![Part::System {
                text: "First.".to_owned(),
            }],
        },
    );
    let body = anthropic::encode_request(&request);
    assert_eq!(body["system"][3], json!({"type": "text", "text": "First."}));
    assert_eq!(body["messages"][0]["role"], "user");
}

#[test]
fn anthropic_refusals_read_as_anthropic_words_them() {
    let refuse = |body: Value| {
        let error = anthropic::decode_request(body.to_string().as_bytes()).unwrap_err();
        anthropic::request_error_message(&error)
    };
    assert_eq!(refuse(json!({"messages": []})), "model: Field required");
    assert_eq!(
        refuse(json!({"model": "m", "messages": [{"role": "user", "content": 3}]})),
        "messages.0.content: Input should be a string or an array of content blocks"
    );
    assert_eq!(
        refuse(json!({"model": "m", "messages": [{"role": "user",
            "content": [{"type": "tool_use", "name": "Read"}]}]})),
        "messages.0.content.0.id: Field required"
    );
    assert_eq!(
        refuse(json!({"model": "m", "messages": [], "max_tokens": "x"})),
        "max_tokens: Input should be a valid integer"
    );
    assert_eq!(
        refuse(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]})),
        "messages.0.role: Unexpected role \"tool\". Allowed roles are \"user\" or \"assistant\""
    );
    assert_eq!(
        anthropic::request_error_message(&DecodeError::Json("EOF at line 1".to_owned())),
        "The request body is not valid JSON: EOF at line 1"
    );
}

#[test]
fn the_billing_line_stays_with_anthropic() {
    let request = anthropic::decode_request(&claude_code_body()).unwrap();
    let mut anthropic = request.clone();
    prepare(&mut anthropic, "anthropic", Dialect::Anthropic);
    assert!(anthropic.system[0].starts_with("x-anthropic-billing-header"));
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
    ] {
        let mut other = request.clone();
        prepare(&mut other, "other", dialect);
        assert_eq!(other.system[0], "You are Claude Code.", "{dialect:?}");
    }
}

#[test]
fn gemini_function_outputs_are_unwrapped() {
    let body = |response: Value| {
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": response}}]},
            ]
        })
        .to_string()
    };
    let result = |response: Value| {
        let request = gemini::decode_request(body(response).as_bytes(), "gemini-3-pro").unwrap();
        match &request.messages[2].parts[0] {
            Part::ToolResult(result) => (result.content.clone(), result.is_error),
            other => panic!("{other:?}"),
        }
    };
    let text = |text: &str| {
        vec![ToolResultContent::Text {
            text: text.to_owned(),
        }]
    };
    assert_eq!(
        result(json!({"output": "fn main() {}"})),
        (text("fn main() {}"), false)
    );
    assert_eq!(
        result(json!({"output": {"lines": 3}})),
        (text(r#"{"lines":3}"#), false)
    );
    assert_eq!(result(json!({"result": "ok"})), (text("ok"), false));
    assert_eq!(
        result(json!({"error": "no such file"})),
        (text("no such file"), true)
    );
    assert_eq!(
        result(json!({"output": "partial", "error": "timed out"})),
        (text("timed out"), true)
    );
    assert_eq!(
        result(json!({"content": "x"})),
        (text(r#"{"content":"x"}"#), false)
    );
}

/// Issue 10.3: Codex's namespaced tools reach providers without namespaces flattened, and
/// come back to Codex with their namespace, whole and streamed.
#[test]
fn codex_namespaced_tools_flatten_and_come_back() {
    use crate::model::{NameMap, ResponseBuilder};
    let body = json!({
        "model": "claude-sonnet-4-5",
        "input": [
            {"role": "user", "content": "spawn one"},
            {"type": "function_call", "call_id": "call_0", "name": "spawn_agent",
             "namespace": "collaboration", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "spawned"},
        ],
        "tools": [
            {"type": "namespace", "name": "collaboration", "description": "Agents.", "tools": [
                {"type": "function", "name": "spawn_agent", "parameters": {"type": "object"}},
                {"type": "function", "name": "send_message", "parameters": {"type": "object"}}]},
            {"type": "function", "name": "shell", "parameters": {"type": "object"}},
        ],
    });
    let request = openai_responses::decode_request(body.to_string().as_bytes()).unwrap();
    let names: Vec<&str> = request
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "collaboration.spawn_agent",
            "collaboration.send_message",
            "shell"
        ]
    );

    let upstream = anthropic::encode_request(&request);
    let sent: Vec<&str> = upstream["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sent,
        [
            "collaboration__spawn_agent",
            "collaboration__send_message",
            "shell"
        ]
    );
    assert_eq!(
        upstream["messages"][1]["content"][0]["name"],
        "collaboration__spawn_agent"
    );
    let chat = openai_chat::encode_request(&request);
    assert_eq!(
        chat["tools"][1]["function"]["name"],
        "collaboration__send_message"
    );

    let reply = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "collaboration__send_message",
                     "input": {"to": "a"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
    });
    let names = NameMap::new(&request.tools);
    let reply = anthropic::decode_response(reply.to_string().as_bytes(), &names).unwrap();
    let whole = openai_responses::encode_response(&reply, "claude-sonnet-4-5");
    assert_eq!(whole["output"][0]["name"], "send_message");
    assert_eq!(whole["output"][0]["namespace"], "collaboration");

    let mut encoder = openai_responses::StreamEncoder::new(openai_responses::StreamOptions {
        model: "claude-sonnet-4-5".to_owned(),
        id: "resp_1".to_owned(),
        created_at: 1,
    });
    let mut out = Vec::new();
    for event in ResponseBuilder::events(&reply) {
        encoder.encode(&event, &mut out);
    }
    encoder.finish(&mut out);
    let text = String::from_utf8(out).unwrap();
    let added = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str::<Value>(data).unwrap())
        .find(|event| event["type"] == "response.output_item.added")
        .unwrap();
    assert_eq!(added["item"]["name"], "send_message");
    assert_eq!(added["item"]["namespace"], "collaboration");
}

/// A system turn Claude Code puts between a call and its result must not split them for Chat,
/// whose `tool` messages follow the calls directly.
#[test]
fn a_system_turn_inside_a_tool_round_follows_the_results_in_chat() {
    let body = json!({
        "model": "grok-4.6", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a"}}]},
            {"role": "system", "content": "The file may be large."},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "text"}]},
        ],
    });
    let request = anthropic::decode_request(body.to_string().as_bytes()).unwrap();
    let chat = openai_chat::encode_request(&request);
    let roles: Vec<&str> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "system"]);
    assert_eq!(chat["messages"][2]["content"], "text");
    // Anthropic keeps the result first in its user turn.
    let upstream = anthropic::encode_request(&request);
    assert_eq!(upstream["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(
        upstream["messages"][2]["content"][1]["text"],
        "The file may be large."
    );
}

/// The shape Claude Code 2.1.197 sends for a model name it does not know (captured against a
/// local mock; texts replaced): the conversation ends with a system turn after the user's.
#[test]
fn claude_code_2_1_on_an_unknown_model() {
    let path = format!(
        "{}/tests/fixtures/anthropic/claude_code_unknown_model.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut request = anthropic::decode_request(&std::fs::read(path).unwrap()).unwrap();
    prepare(&mut request, "xai", Dialect::OpenAiChat);
    let chat = openai_chat::encode_request(&request);
    let messages = chat["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "system"]);
    assert_eq!(
        messages[0]["content"],
        "You are a coding agent.\n\nHelp with software engineering tasks."
    );
    assert_eq!(
        messages[2]["content"],
        "Agent types available to the Agent tool: general, explore."
    );
}
