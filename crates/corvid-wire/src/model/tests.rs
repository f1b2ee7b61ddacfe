use pretty_assertions::assert_eq;

use super::*;

#[test]
fn data_urls_become_base64_images_and_back() {
    let source = ImageSource::from_url("data:image/png;base64,iVBORw0K");
    assert_eq!(
        source,
        ImageSource::Base64 {
            media_type: "image/png".to_owned(),
            data: "iVBORw0K".to_owned()
        }
    );
    assert_eq!(source.to_url(), "data:image/png;base64,iVBORw0K");
    assert_eq!(
        ImageSource::from_url("https://example.com/a.png"),
        ImageSource::Url {
            url: "https://example.com/a.png".to_owned()
        }
    );
}

#[test]
fn effort_and_budget_conversions() {
    assert_eq!(Effort::Low.to_budget(), Some(1024));
    assert_eq!(Effort::Medium.to_budget(), Some(2048));
    assert_eq!(Effort::XHigh.to_budget(), Some(4096));
    assert_eq!(Effort::None.to_budget(), None);
    assert_eq!(Effort::from_budget(0), Effort::None);
    assert_eq!(Effort::from_budget(1024), Effort::Low);
    assert_eq!(Effort::from_budget(8192), Effort::Medium);
    assert_eq!(Effort::from_budget(16000), Effort::High);
    assert_eq!(Effort::parse("max"), Some(Effort::XHigh));
}

#[test]
fn usage_rebuilds_each_dialects_totals() {
    let usage = Usage::from_openai(100, 30, 10, 50, 20);
    assert_eq!(usage.input, 60);
    assert_eq!(usage.total_input(), 100);
    assert_eq!(usage.visible_output(), 30);
    assert_eq!(usage.total(), 150);
}

#[test]
fn builder_collects_a_stream_and_replays_it() {
    let events = vec![
        StreamEvent::Start {
            id: "m1".into(),
            model: "x".into(),
        },
        StreamEvent::ReasoningDelta {
            text: "think".into(),
        },
        StreamEvent::ReasoningDelta { text: "ing".into() },
        StreamEvent::ReasoningSignature {
            signature: "sig".into(),
        },
        StreamEvent::TextDelta { text: "Hel".into() },
        StreamEvent::TextDelta { text: "lo".into() },
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_1".into(),
            name: "read".into(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "{\"pa".into(),
        },
        StreamEvent::ToolCallStart {
            index: 1,
            id: "call_2".into(),
            name: "ls".into(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "th\":1}".into(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::ToolCallEnd { index: 1 },
        StreamEvent::Finish(FinishReason::EndTurn),
        StreamEvent::Usage(Usage {
            input: 5,
            output: 7,
            ..Usage::default()
        }),
    ];
    let mut builder = ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    let response = builder.finish().unwrap();
    assert_eq!(
        response.finish,
        FinishReason::ToolCalls,
        "tool calls win over the stated reason"
    );
    assert_eq!(
        response.parts,
        vec![
            Part::Reasoning(Reasoning {
                text: "thinking".into(),
                signature: Some("sig".into()),
                ..Reasoning::default()
            }),
            Part::Text {
                text: "Hello".into()
            },
            Part::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: "{\"path\":1}".into(),
                signature: None
            }),
            Part::ToolCall(ToolCall {
                id: "call_2".into(),
                name: "ls".into(),
                arguments: "{}".into(),
                signature: None
            }),
        ]
    );
    let mut again = ResponseBuilder::new();
    ResponseBuilder::events(&response)
        .iter()
        .for_each(|event| again.push(event));
    assert_eq!(again.finish().unwrap(), response);
}

#[test]
fn a_stream_error_is_the_result() {
    let mut builder = ResponseBuilder::new();
    builder.push(&StreamEvent::TextDelta {
        text: "partial".into(),
    });
    builder.push(&StreamEvent::Error(WireError::new(
        ErrorKind::Overloaded,
        "busy",
    )));
    assert_eq!(builder.finish().unwrap_err().kind, ErrorKind::Overloaded);
}

#[test]
fn a_message_lists_its_call_ids_and_a_result_its_text() {
    let call = |id: &str| {
        Part::ToolCall(ToolCall {
            id: id.to_owned(),
            name: "read".to_owned(),
            arguments: "{}".to_owned(),
            signature: None,
        })
    };
    let message = Message {
        role: Role::Assistant,
        parts: vec![
            call("call_1"),
            Part::Text {
                text: "and".to_owned(),
            },
            call("call_2"),
        ],
    };
    assert_eq!(message.call_ids(), ["call_1", "call_2"]);
    assert_eq!(
        Message::text(Role::User, "hi").call_ids(),
        Vec::<String>::new()
    );

    let image = Image {
        source: ImageSource::from_url("https://example.com/a.png"),
        detail: None,
    };
    let result = ToolResult {
        call_id: "call_1".to_owned(),
        name: None,
        content: vec![
            ToolResultContent::Text {
                text: "one".to_owned(),
            },
            ToolResultContent::Image(image.clone()),
            ToolResultContent::Text {
                text: "two".to_owned(),
            },
        ],
        is_error: false,
    };
    assert_eq!(result.text(), "one\ntwo");
    let only_image = ToolResult {
        content: vec![ToolResultContent::Image(image)],
        ..result
    };
    assert_eq!(only_image.text(), "");
}
