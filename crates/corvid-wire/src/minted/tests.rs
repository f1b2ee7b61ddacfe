//! Issue 10.2 and 10.10: what corvid mints is recognised, replayed only to the provider that
//! produced it, and stripped everywhere else.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::model::{ChatResponse, FinishReason, Usage};
use crate::{anthropic, gemini, openai_chat, openai_responses};

fn reply(parts: Vec<Part>) -> ChatResponse {
    ChatResponse {
        id: "msg_1".to_owned(),
        model: "m".to_owned(),
        created: 1,
        parts,
        finish: FinishReason::ToolCalls,
        usage: Usage::default(),
    }
}

fn call(id: &str, signature: Option<&str>) -> Part {
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        name: "read".to_owned(),
        arguments: r#"{"path":"a"}"#.to_owned(),
        signature: signature.map(str::to_owned),
    })
}

fn bytes(value: &Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

#[test]
fn tokens_open_as_they_were_minted() {
    let token = mint("xai", Kind::Encrypted, "gAAAA+/==");
    assert!(token.starts_with(MARKER));
    assert_eq!(
        open(&token),
        Some(Minted {
            origin: "xai".to_owned(),
            kind: Kind::Encrypted,
            value: "gAAAA+/==".to_owned()
        })
    );
    assert_eq!(open("EpcBCkgIBh"), None);
    assert_eq!(open(""), None);
    assert_eq!(origin_label("My-Gemini.2"), "mygemini2");

    let id = mint_id("gemini", "call_1.x", "Cq0+/A==");
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        "Anthropic's id rule: {id}"
    );
    assert_eq!(
        open_id(&id),
        Some(MintedId {
            origin: "gemini".to_owned(),
            id: "call_1.x".to_owned(),
            signature: "Cq0+/A==".to_owned()
        })
    );
    assert_eq!(open_id("toolu_01"), None);
    assert_eq!(open_id(&token), None);
}

/// A Responses upstream's encrypted reasoning reaches Claude Code as a thinking signature and
/// comes back to the same provider intact, and to no other.
#[test]
fn encrypted_reasoning_rides_through_claude_code() {
    let mut response = reply(vec![
        Part::Reasoning(Reasoning {
            text: "Need the file.".to_owned(),
            encrypted: Some("gAAAAencrypted".to_owned()),
            id: Some("rs_1".to_owned()),
            ..Reasoning::default()
        }),
        call("call_1", None),
    ]);
    Minter::new("openai", Dialect::Anthropic).response(&mut response);
    let message = anthropic::encode_response(&response, "grok");
    let thinking = &message["content"][0];
    assert_eq!(thinking["type"], "thinking");
    let signature = thinking["signature"].as_str().unwrap();
    assert_eq!(signature, mint("openai", Kind::Encrypted, "gAAAAencrypted"));

    let next = json!({
        "model": "m", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": message["content"]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "x"}]},
        ],
    });
    let request = anthropic::decode_request(&bytes(&next)).unwrap();

    let mut same = request.clone();
    settle(&mut same, "openai");
    let body = openai_responses::encode_request(&same);
    let item = &body["input"][1];
    assert_eq!(item["type"], "reasoning");
    assert_eq!(item["encrypted_content"], "gAAAAencrypted");

    let mut other = request;
    settle(&mut other, "xai");
    let body = openai_responses::encode_request(&other);
    assert!(!body.to_string().contains("encrypted"), "{body}");
    assert!(!body.to_string().contains(MARKER));
}

/// Anthropic's signature reaches Codex inside `encrypted_content`, minted, and goes back to
/// Anthropic signed; a Responses provider never gets it.
#[test]
fn anthropic_signatures_ride_through_codex() {
    let mut response = reply(vec![
        Part::Reasoning(Reasoning {
            text: "Think.".to_owned(),
            signature: Some("EpcBsig".to_owned()),
            ..Reasoning::default()
        }),
        call("toolu_1", None),
    ]);
    Minter::new("anthropic", Dialect::OpenAiResponses).response(&mut response);
    let body = openai_responses::encode_response(&response, "claude");
    let reasoning = &body["output"][0];
    assert_eq!(
        reasoning["encrypted_content"],
        mint("anthropic", Kind::Signature, "EpcBsig")
    );
    let mut input = vec![json!({"role": "user", "content": "go"})];
    input.extend(body["output"].as_array().unwrap().iter().cloned());
    input.push(json!({"type": "function_call_output", "call_id": "toolu_1", "output": "x"}));
    let request =
        openai_responses::decode_request(&bytes(&json!({"model": "m", "input": input}))).unwrap();

    let mut same = request.clone();
    settle(&mut same, "anthropic");
    let encoded = anthropic::encode_request(&same);
    assert_eq!(
        encoded["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Think.", "signature": "EpcBsig"})
    );

    let mut other = request;
    settle(&mut other, "xai");
    let encoded = openai_responses::encode_request(&other);
    assert!(!encoded.to_string().contains("EpcBsig"), "{encoded}");
}

/// A Gemini thought signature rides in the call id of a Chat client, whose tool calls have no
/// field for it, and goes back to Gemini as the real signature, not the sentinel.
#[test]
fn gemini_signatures_ride_in_chat_call_ids() {
    let mut response = reply(vec![call("call_1", Some("Cq0+/A=="))]);
    Minter::new("gemini", Dialect::OpenAiChat).response(&mut response);
    let message = openai_chat::encode_response(&response, "gemini-3-pro");
    let id = message["choices"][0]["message"]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with(MARKER), "{id}");

    let next = json!({
        "model": "gemini-3-pro",
        "messages": [
            {"role": "user", "content": "read a"},
            message["choices"][0]["message"],
            {"role": "tool", "tool_call_id": id, "content": "x"},
        ],
    });
    let request = openai_chat::decode_request(&bytes(&next)).unwrap();

    let mut same = request.clone();
    settle(&mut same, "gemini");
    let body = gemini::encode_request(&same);
    assert_eq!(
        body["contents"][1]["parts"][0]["thoughtSignature"],
        "Cq0+/A=="
    );

    let mut other = request;
    settle(&mut other, "anthropic");
    let body = anthropic::encode_request(&other);
    let calls = &body["messages"][1]["content"][0];
    assert_eq!(calls["id"], "call_1", "the original id comes back");
    assert_eq!(
        body["messages"][2]["content"][0]["tool_use_id"], "call_1",
        "the result stays paired"
    );
    assert!(!body.to_string().contains(MARKER));
}

#[test]
fn streamed_events_are_minted_too() {
    let mut minter = Minter::new("xai", Dialect::Anthropic);
    let mut encrypted = StreamEvent::ReasoningEncrypted {
        data: "blob".to_owned(),
        id: Some("rs_1".to_owned()),
    };
    minter.event(&mut encrypted);
    assert_eq!(
        encrypted,
        StreamEvent::ReasoningEncrypted {
            data: mint("xai", Kind::Encrypted, "blob"),
            id: Some("rs_1".to_owned())
        }
    );
    // Minting twice changes nothing.
    let again = encrypted.clone();
    minter.event(&mut encrypted);
    assert_eq!(encrypted, again);

    let mut start = StreamEvent::ToolCallStart {
        index: 0,
        id: "call_1".to_owned(),
        name: "read".to_owned(),
        signature: Some("sig".to_owned()),
    };
    minter.event(&mut start);
    let StreamEvent::ToolCallStart { id, signature, .. } = &start else {
        unreachable!()
    };
    assert_eq!(open_id(id).unwrap().signature, "sig");
    assert_eq!(signature, &None);

    // A Gemini client has a field for the signature: its call keeps it.
    let mut start = StreamEvent::ToolCallStart {
        index: 0,
        id: "call_1".to_owned(),
        name: "read".to_owned(),
        signature: Some("sig".to_owned()),
    };
    Minter::new("zed", Dialect::Gemini).event(&mut start);
    assert!(matches!(&start, StreamEvent::ToolCallStart { id, .. } if id == "call_1"));
}

fn strip_json(dialect: Dialect, target: &str, conversation: &Value) -> Option<(Value, bool)> {
    strip(dialect, target, &bytes(conversation)).map(|stripped| {
        (
            serde_json::from_str(&stripped.conversation).unwrap(),
            stripped.thinking_allowed,
        )
    })
}

#[test]
fn pass_through_to_anthropic_strips_what_it_did_not_sign() {
    let grok = mint("xai", Kind::Encrypted, "blob");
    let own = mint("anthropic", Kind::Signature, "EpcBreal");
    let id = mint_id("gemini", "call_1", "sig");
    let messages = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "a", "signature": ""},
            {"type": "text", "text": "one"}]},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "b", "signature": own},
            {"type": "text", "text": "two"}]},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "c", "signature": grok},
            {"type": "tool_use", "id": id, "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x"}]},
    ]);
    assert!(may_hold_minted(Dialect::Anthropic, &bytes(&messages)));
    let (stripped, thinking_allowed) =
        strip_json(Dialect::Anthropic, "anthropic", &messages).unwrap();
    assert_eq!(
        stripped,
        json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "one"}]},
            {"role": "user", "content": "more"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "b", "signature": "EpcBreal"},
                {"type": "text", "text": "two"}]},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "x"}]},
        ])
    );
    assert!(
        !thinking_allowed,
        "the open tool loop lost its thinking block: thinking must go"
    );
}

#[test]
fn pass_through_to_a_responses_provider_strips_foreign_reasoning() {
    let input = json!([
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [],
         "encrypted_content": mint("anthropic", Kind::Signature, "EpcB")},
        {"type": "reasoning", "summary": [], "encrypted_content": "corvid-anthropic-signature:old"},
        {"type": "reasoning", "summary": [], "encrypted_content": mint("xai", Kind::Encrypted, "mine")},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAnative"},
        {"type": "function_call", "id": format!("fc_{}", mint_id("gemini", "call_1", "s")),
         "call_id": mint_id("gemini", "call_1", "s"), "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": mint_id("gemini", "call_1", "s"), "output": "x"},
    ]);
    let (stripped, _) = strip_json(Dialect::OpenAiResponses, "xai", &input).unwrap();
    assert_eq!(
        stripped,
        json!([
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "summary": [], "encrypted_content": "mine"},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAnative"},
            {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "x"},
        ])
    );
}

#[test]
fn pass_through_to_chat_restores_call_ids() {
    let id = mint_id("gemini", "call_1", "s");
    let messages = json!([
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": id, "content": "x"},
    ]);
    let (stripped, _) = strip_json(Dialect::OpenAiChat, "openai", &messages).unwrap();
    assert_eq!(stripped[0]["tool_calls"][0]["id"], "call_1");
    assert_eq!(stripped[1]["tool_call_id"], "call_1");
}

#[test]
fn nothing_minted_means_nothing_rewritten() {
    let messages = json!([{"role": "user", "content": "what does corvid1_ mean?"}]);
    assert!(may_hold_minted(Dialect::OpenAiChat, &bytes(&messages)));
    assert_eq!(strip_json(Dialect::OpenAiChat, "openai", &messages), None);
    let plain = json!([{"role": "assistant", "content": [
        {"type": "thinking", "thinking": "a", "signature": "EpcBreal"}]}]);
    assert!(!may_hold_minted(Dialect::Anthropic, &bytes(&plain)));
    let gemini =
        json!([{"role": "model", "parts": [{"text": "hi", "thoughtSignature": "Cq0native"}]}]);
    assert!(!may_hold_minted(Dialect::Gemini, &bytes(&gemini)));
    assert_eq!(strip_json(Dialect::Gemini, "gemini", &gemini), None);
}

/// A Gemini client has a field for opaque reasoning — the thought part's `thoughtSignature` —
/// so Anthropic's signature rides there, comes back to Anthropic, and never reaches Gemini.
#[test]
fn anthropic_signatures_ride_through_a_gemini_client() {
    let mut response = reply(vec![
        Part::Reasoning(Reasoning {
            text: "Think.".to_owned(),
            signature: Some("EpcBsig".to_owned()),
            ..Reasoning::default()
        }),
        call("toolu_1", None),
    ]);
    Minter::new("anthropic", Dialect::Gemini).response(&mut response);
    let body = gemini::encode_response(&response, "claude-sonnet-4-5");
    let parts = body["candidates"][0]["content"]["parts"].clone();
    // google-genai types `thoughtSignature` as bytes: the token is valid base64 there.
    let token = base64::engine::general_purpose::STANDARD.encode(mint(
        "anthropic",
        Kind::Signature,
        "EpcBsig",
    ));
    assert!(token.starts_with(MARKER_BASE64));
    assert_eq!(
        parts[0],
        json!({"text": "Think.", "thought": true, "thoughtSignature": token})
    );
    assert_eq!(
        open(&token).map(|minted| (minted.origin, minted.value)),
        Some(("anthropic".to_owned(), "EpcBsig".to_owned()))
    );

    // Streamed: a thought part that carries the token.
    let mut encoder = gemini::StreamEncoder::new(gemini::StreamOptions {
        model: "claude-sonnet-4-5".to_owned(),
    });
    let mut out = Vec::new();
    let mut signature = StreamEvent::ReasoningSignature {
        signature: "EpcBsig".to_owned(),
    };
    Minter::new("anthropic", Dialect::Gemini).event(&mut signature);
    encoder.encode(&signature, &mut out);
    assert!(String::from_utf8(out).unwrap().contains(&token));

    let next = json!({"contents": [
        {"role": "user", "parts": [{"text": "read a"}]},
        {"role": "model", "parts": parts},
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "x"}}}]},
    ]});
    let request = gemini::decode_request(&bytes(&next), "claude-sonnet-4-5").unwrap();
    let mut same = request.clone();
    settle(&mut same, "anthropic");
    let encoded = anthropic::encode_request(&same);
    assert_eq!(
        encoded["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Think.", "signature": "EpcBsig"})
    );

    // Moved to a Gemini model: a pass-through, which drops the token.
    let contents = next["contents"].clone();
    assert!(may_hold_minted(Dialect::Gemini, &bytes(&contents)));
    let (stripped, _) = strip_json(Dialect::Gemini, "gemini", &contents).unwrap();
    assert_eq!(
        stripped[1]["parts"][0],
        json!({"text": "Think.", "thought": true})
    );
    assert!(!stripped.to_string().contains(MARKER));
    assert!(!stripped.to_string().contains(MARKER_BASE64));
}

/// A Chat client on a Claude model with thinking and tools: Chat has no field for the signed
/// thinking, so it rides in the first tool call's id and is put back first in that turn when
/// the conversation returns to Anthropic (which refuses the tool loop without it); any other
/// provider gets the plain id and no thinking.
#[test]
fn signed_thinking_rides_in_a_chat_clients_call_id() {
    let thinking = Reasoning {
        text: "Read a first.".to_owned(),
        signature: Some("EpcBsig+/=".to_owned()),
        ..Reasoning::default()
    };
    let mut response = reply(vec![
        Part::Reasoning(thinking.clone()),
        call("toolu_1", None),
    ]);
    Minter::new("anthropic", Dialect::OpenAiChat).response(&mut response);
    let body = openai_chat::encode_response(&response, "claude-sonnet-4-5");
    let id = body["choices"][0]["message"]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("corvid1_anthropic_t"), "{id}");
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    );
    // The same through a stream: deltas, the signature, then the call.
    let mut minter = Minter::new("anthropic", Dialect::OpenAiChat);
    let mut events = vec![
        StreamEvent::ReasoningDelta {
            text: "Read a ".to_owned(),
        },
        StreamEvent::ReasoningDelta {
            text: "first.".to_owned(),
        },
        StreamEvent::ReasoningSignature {
            signature: "EpcBsig+/=".to_owned(),
        },
        StreamEvent::ToolCallStart {
            index: 0,
            id: "toolu_1".to_owned(),
            name: "read".to_owned(),
            signature: None,
        },
    ];
    for event in &mut events {
        minter.event(event);
    }
    let StreamEvent::ToolCallStart { id: streamed, .. } = &events[3] else {
        panic!()
    };
    assert_eq!(streamed, &id);

    let next = json!({"model": "m", "messages": [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
        {"role": "tool", "tool_call_id": id, "content": "x"},
    ]});
    let request = openai_chat::decode_request(&bytes(&next)).unwrap();
    let mut home = request.clone();
    settle(&mut home, "anthropic");
    let encoded = anthropic::encode_request(&home);
    assert_eq!(
        encoded["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Read a first.", "signature": "EpcBsig+/="})
    );
    assert_eq!(encoded["messages"][1]["content"][1]["id"], "toolu_1");
    assert_eq!(
        encoded["messages"][2]["content"][0]["tool_use_id"],
        "toolu_1"
    );

    let mut elsewhere = request;
    settle(&mut elsewhere, "xai");
    let encoded = openai_chat::encode_request(&elsewhere);
    assert_eq!(encoded["messages"][1]["tool_calls"][0]["id"], "toolu_1");
    assert!(!encoded.to_string().contains("EpcBsig"), "{encoded}");
    // The pass-through to a chat provider restores the plain ids too.
    let (stripped, _) = strip_json(Dialect::OpenAiChat, "xai", &next["messages"]).unwrap();
    assert_eq!(stripped[1]["tool_calls"][0]["id"], "toolu_1");
    assert_eq!(stripped[2]["tool_call_id"], "toolu_1");
}
