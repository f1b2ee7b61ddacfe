use super::*;

#[test]
fn request_is_about_one_and_a_half_kilobytes() {
    let length = chat_request(Stream::Disabled).len();
    assert!((1300..=1800).contains(&length), "request is {length} bytes");
}

#[test]
fn completion_is_about_six_hundred_bytes() {
    let length = chat_completion().len();
    assert!(
        (500..=750).contains(&length),
        "completion is {length} bytes"
    );
}

#[test]
fn stream_ends_with_usage_then_done() {
    let events = chat_stream_events();
    assert_eq!(events.len(), STREAM_WORDS.len() + 2);
    assert!(events[events.len() - 2].starts_with(b"data: {"));
    assert!(String::from_utf8_lossy(&events[events.len() - 2]).contains("\"choices\":[]"));
    assert_eq!(&events[events.len() - 1][..], b"data: [DONE]\n\n");
}

#[test]
fn detects_stream_flag() {
    assert!(wants_stream(&chat_request(Stream::Enabled)));
    assert!(!wants_stream(&chat_request(Stream::Disabled)));
    assert!(wants_stream(br#"{"model":"m", "stream" : true}"#));
    assert!(!wants_stream(
        br#"{"content":"\"stream\" is a word","stream":false}"#
    ));
    assert!(!wants_stream(b"{}"));
}

#[test]
fn messages_request_carries_the_same_conversation() {
    for stream in [Stream::Disabled, Stream::Enabled] {
        let chat: Value = serde_json::from_slice(&chat_request(stream)).unwrap();
        let messages: Value = serde_json::from_slice(&messages_request(stream)).unwrap();
        assert_eq!(messages["system"], chat["messages"][0]["content"]);
        assert_eq!(
            messages["messages"].as_array().unwrap()[..],
            chat["messages"].as_array().unwrap()[1..]
        );
        assert_eq!(messages["model"], "grok");
        assert_eq!(
            wants_stream(&messages_request(stream)),
            stream == Stream::Enabled
        );
    }
}

#[test]
fn dialects_pick_path_body_and_stream_end() {
    assert_eq!(Dialect::OpenAiChat.path(), "/v1/chat/completions");
    assert_eq!(Dialect::AnthropicMessages.path(), "/v1/messages");
    assert_eq!(
        Dialect::AnthropicMessages.request(Shape::Short, Stream::Enabled),
        messages_request(Stream::Enabled)
    );
    assert_eq!(
        Dialect::OpenAiChat.request(Shape::Short, Stream::Disabled),
        chat_request(Stream::Disabled)
    );
    let done: Vec<u8> = chat_stream_events().concat();
    assert!(Dialect::OpenAiChat.stream_complete(&done));
    assert!(!Dialect::OpenAiChat.stream_complete(&done[..done.len() - 4]));
    let stopped = b"event: message_delta\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    assert!(Dialect::AnthropicMessages.stream_complete(stopped));
    let cut =
        b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: error\ndata: {}\n\n";
    assert!(!Dialect::AnthropicMessages.stream_complete(cut));
    assert!(!Dialect::AnthropicMessages.stream_complete(&done));
}

#[test]
fn answers_are_checked_for_their_dialect() {
    let completion = chat_completion();
    assert!(Dialect::OpenAiChat.answers_in_kind(&completion));
    assert!(!Dialect::AnthropicMessages.answers_in_kind(&completion));
    let message = br#"{"id":"msg_1","type":"message","role":"assistant","model":"grok","content":[{"type":"text","text":"Use an enum."}],"stop_reason":"end_turn"}"#;
    assert!(Dialect::AnthropicMessages.answers_in_kind(message));
    assert!(!Dialect::OpenAiChat.answers_in_kind(message));
    assert!(!Dialect::AnthropicMessages.answers_in_kind(b"not json"));
}

#[test]
fn claude_code_request_is_about_four_point_seven_kilobytes_in_each_dialect() {
    let anthropic = Dialect::AnthropicMessages.request(Shape::ClaudeCode, Stream::Disabled);
    assert!(
        (4300..=5100).contains(&anthropic.len()),
        "the Anthropic request is {} bytes",
        anthropic.len()
    );
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::AnthropicMessages,
        Dialect::OpenAiResponses,
    ] {
        for stream in [Stream::Disabled, Stream::Enabled] {
            let body = dialect.request(Shape::ClaudeCode, stream);
            let value: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(value["model"], "grok");
            assert_eq!(value["tools"].as_array().unwrap().len(), 3, "{dialect:?}");
            assert_eq!(wants_stream(&body), stream == Stream::Enabled);
        }
    }
}

#[test]
fn the_long_request_is_the_same_turn_sixteen_rounds_in_at_about_56_kilobytes() {
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::AnthropicMessages,
        Dialect::OpenAiResponses,
    ] {
        let short = dialect.request(Shape::ClaudeCode, Stream::Disabled);
        let long = dialect.request(Shape::ClaudeCodeLong, Stream::Disabled);
        let value: Value = serde_json::from_slice(&long).unwrap();
        assert_eq!(value["tools"].as_array().unwrap().len(), 48, "{dialect:?}");
        assert!(
            (45_000..=65_000).contains(&long.len()),
            "{dialect:?}: {} bytes",
            long.len()
        );
        assert!(long.len() > 10 * short.len(), "{dialect:?}");
        // Every tool's name is its own (a chat tool's sits under `function`).
        let names: std::collections::HashSet<_> = value["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                tool.get("name")
                    .unwrap_or(&tool["function"]["name"])
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(names.len(), 48);
    }
    let anthropic = Dialect::AnthropicMessages.request(Shape::ClaudeCodeLong, Stream::Disabled);
    let value: Value = serde_json::from_slice(&anthropic).unwrap();
    let messages = value["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1 + 2 * 16);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.windows(2).all(|pair| pair[0] != pair[1]),
        "roles alternate"
    );
}

#[test]
fn a_held_request_carries_the_marker_in_its_question_in_every_dialect() {
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::AnthropicMessages,
        Dialect::OpenAiResponses,
    ] {
        let body = dialect.request(Shape::ClaudeCode, Stream::Enabled);
        assert!(!wants_hold(&body));
        let held = held(&body);
        assert!(wants_hold(&held), "{dialect:?}");
        assert_eq!(held.len(), body.len() + HOLD_MARKER.len() + 1);
        let value: Value = serde_json::from_slice(&held).unwrap();
        assert!(
            value
                .to_string()
                .contains("[bench-hold] The config loader panics")
        );
    }
}

#[test]
fn a_responses_stream_ends_with_its_completed_event() {
    let tail = b"event: response.output_text.done\ndata: {}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\"}\n\n";
    assert!(Dialect::OpenAiResponses.stream_complete(tail));
    assert!(
        !Dialect::OpenAiResponses
            .stream_complete(b"event: response.created\ndata: {\"type\":\"response.created\"}\n\n")
    );
}
