//! The NDJSON decoder alone: bytes in, canonical events out.

use std::time::Duration;

use corvid_test_support::zed_cloud::fixtures::{
    self, failed, provider_events, queued, started, stream_ended, wrapped,
};
use corvid_wire::model::{ErrorKind, NameMap, StreamEvent, WireError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::summarize;
use crate::Retry;
use crate::zed::{ZedFraming, ZedPlan, ZedProvider, ZedStatus, ZedStreamDecoder};

const REQUEST_ID: &str = "2f6e1c9a-3b7d-4c1e-9a55-0d7c2b8e4f10";

fn decoder(provider: ZedProvider, framing: ZedFraming) -> ZedStreamDecoder {
    ZedStreamDecoder::new(provider, framing, NameMap::default())
}

fn body(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Feeds `text` whole, then finishes.
fn decode(decoder: &mut ZedStreamDecoder, text: &str) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    decoder.feed(text.as_bytes(), &mut out);
    decoder.finish(&mut out);
    out
}

fn wrapped_reply(provider: &str, model: &str) -> Vec<Value> {
    let mut lines = vec![queued(2), started()];
    lines.extend(provider_events(provider, model).into_iter().map(wrapped));
    lines.push(stream_ended());
    lines
}

fn expected_summary() -> (String, Vec<(String, String, String)>, bool) {
    (
        "Hello".to_owned(),
        vec![(
            "toolu_1".to_owned(),
            fixtures::TOOL_NAME.to_owned(),
            fixtures::TOOL_ARGUMENTS.to_owned(),
        )],
        true,
    )
}

#[test]
fn every_provider_kind_decodes_text_and_a_tool_call() {
    for (provider, name, model, call_id) in [
        (
            ZedProvider::Anthropic,
            "anthropic",
            "claude-sonnet-4-6",
            "toolu_1",
        ),
        (ZedProvider::OpenAi, "open_ai", "gpt-5", "call_1"),
        (ZedProvider::XAi, "x_ai", "grok-4", "call_1"),
        (ZedProvider::Google, "google", "gemini-2.5-pro", ""),
    ] {
        let mut decoder = decoder(provider, ZedFraming::Wrapped);
        let events = decode(&mut decoder, &body(&wrapped_reply(name, model)));
        let (text, calls, finished) = summarize(&events);
        assert_eq!(text, "Hello", "{name}");
        assert_eq!(calls.len(), 1, "{name}");
        assert_eq!(calls[0].1, fixtures::TOOL_NAME, "{name}");
        assert_eq!(calls[0].2, fixtures::TOOL_ARGUMENTS, "{name}");
        if !call_id.is_empty() {
            assert_eq!(calls[0].0, call_id, "{name}");
        }
        assert!(finished, "{name}: finished with tool calls");
        assert!(decoder.is_complete(), "{name}");
        assert_eq!(decoder.status(), Some(ZedStatus::StreamEnded));
        assert!(
            matches!(events.first(), Some(StreamEvent::Start { .. })),
            "{name}"
        );
    }
}

#[test]
fn an_anthropic_reply_comes_out_as_these_events() {
    let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
    let events = decode(
        &mut decoder,
        &body(&wrapped_reply("anthropic", "claude-sonnet-4-6")),
    );
    let (text, calls, finished) = summarize(&events);
    assert_eq!((text, calls, finished), expected_summary());
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::Usage(usage) if usage.output == 12))
    );
}

#[test]
fn split_anywhere_gives_the_same_events() {
    let text = body(&wrapped_reply("x_ai", "grok-4"));
    let whole = decode(&mut decoder(ZedProvider::XAi, ZedFraming::Wrapped), &text);
    let mut byte_by_byte = decoder(ZedProvider::XAi, ZedFraming::Wrapped);
    let mut out = Vec::new();
    for byte in text.as_bytes() {
        byte_by_byte.feed(std::slice::from_ref(byte), &mut out);
    }
    byte_by_byte.finish(&mut out);
    assert_eq!(out, whole);
    // CRLF line ends and blank lines are tolerated.
    let crlf = text.replace('\n', "\r\n\r\n");
    assert_eq!(
        decode(&mut decoder(ZedProvider::XAi, ZedFraming::Wrapped), &crlf),
        whole
    );
}

#[test]
fn queued_and_started_are_statuses_not_events() {
    let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
    let mut out = Vec::new();
    decoder.feed(body(&[queued(3)]).as_bytes(), &mut out);
    assert_eq!(decoder.status(), Some(ZedStatus::Queued { position: 3 }));
    decoder.feed(
        body(&[started(), json!({"status": "some_new_unit"})]).as_bytes(),
        &mut out,
    );
    assert_eq!(decoder.status(), Some(ZedStatus::Started));
    assert_eq!(out, Vec::new());
    assert!(!decoder.is_done());
}

#[test]
fn a_reply_without_stream_ended_is_an_error() {
    let mut lines = wrapped_reply("anthropic", "claude-sonnet-4-6");
    lines.pop();
    let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
    let events = decode(&mut decoder, &body(&lines));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(WireError::new(
            ErrorKind::Api,
            "the Zed stream ended unexpectedly (no `stream_ended`): the reply was cut \
                      short"
                .to_owned()
        )))
    );
    assert!(!decoder.is_complete());
    // Only the one error.
    let errors = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::Error(_)))
        .count();
    assert_eq!(errors, 1);
}

/// Issue 10 item 19: the provider's own end (`Finish`) must not come out before
/// `stream_ended` says the reply is whole, or a client encoder closes it as a success.
#[test]
fn the_providers_end_waits_for_stream_ended() {
    for (provider, name, model) in [
        (ZedProvider::Anthropic, "anthropic", "claude-sonnet-4-6"),
        (ZedProvider::OpenAi, "open_ai", "gpt-5"),
        (ZedProvider::XAi, "x_ai", "grok-4"),
        (ZedProvider::Google, "google", "gemini-2.5-pro"),
    ] {
        let mut lines = wrapped_reply(name, model);
        let ended = lines.pop().unwrap();
        let mut decoder = decoder(provider, ZedFraming::Wrapped);
        let mut out = Vec::new();
        decoder.feed(body(&lines).as_bytes(), &mut out);
        assert!(
            !out.iter()
                .any(|event| matches!(event, StreamEvent::Finish(_))),
            "{name}: {out:?}"
        );
        // Whole: the finish comes out with `stream_ended`.
        let mut rest = Vec::new();
        decoder.feed(body(&[ended]).as_bytes(), &mut rest);
        assert!(
            rest.iter()
                .any(|event| matches!(event, StreamEvent::Finish(_))),
            "{name}: {rest:?}"
        );
        // Cut short: content and usage, then the error, never a finish.
        let mut decoder = self::decoder(provider, ZedFraming::Wrapped);
        let cut = decode(&mut decoder, &body(&lines));
        assert!(
            !cut.iter()
                .any(|event| matches!(event, StreamEvent::Finish(_))),
            "{name}: {cut:?}"
        );
        assert!(
            matches!(cut.last(), Some(StreamEvent::Error(_))),
            "{name}: {cut:?}"
        );
        assert_eq!(summarize_text(&cut), "Hello", "{name}");
    }
}

fn summarize_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_failure_mid_stream_is_an_error_with_its_retry_after() {
    let events = provider_events("anthropic", "claude-sonnet-4-6");
    let lines = vec![
        started(),
        wrapped(events[0].clone()),
        wrapped(events[1].clone()),
        failed("upstream_http_429", "rate limited", REQUEST_ID, Some(1.5)),
        wrapped(events[3].clone()),
        stream_ended(),
    ];
    let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
    let out = decode(&mut decoder, &body(&lines));
    assert_eq!(
        out.last(),
        Some(&StreamEvent::Error(
            WireError::new(
                ErrorKind::RateLimited,
                "Zed reported a failure (upstream_http_429): rate limited (retry after 1.5 s)"
                    .to_owned()
            )
            .with_code("upstream_http_429")
        ))
    );
    assert!(
        !out.iter()
            .any(|event| matches!(event, StreamEvent::TextDelta { .. })),
        "nothing after the failure is read"
    );
    let failure = decoder.failure().unwrap();
    assert_eq!(failure.status, Some(429));
    assert_eq!(failure.request_id.as_deref(), Some(REQUEST_ID));
    assert_eq!(failure.retry_after, Some(Duration::from_millis(1500)));
    assert_eq!(
        failure.retry(),
        Retry::After(Some(Duration::from_millis(1500)))
    );
    assert!(decoder.is_done() && !decoder.is_complete());
}

#[test]
fn failure_codes_map_to_categories() {
    for (code, message, kind, status) in [
        (
            "upstream_http_503",
            "busy",
            ErrorKind::Overloaded,
            Some(503),
        ),
        ("http_401", "no", ErrorKind::Authentication, Some(401)),
        (
            "upstream_http_error",
            r#"{"upstream_status":529,"message":"overloaded"}"#,
            ErrorKind::Overloaded,
            Some(529),
        ),
        (
            "context_length_exceeded",
            "too long",
            ErrorKind::RequestTooLarge,
            Some(413),
        ),
        (
            "rate_limit_exceeded",
            "slow down",
            ErrorKind::RateLimited,
            Some(429),
        ),
        ("overloaded_error", "busy", ErrorKind::Overloaded, Some(529)),
        (
            "invalid_request_error",
            "prompt is too long: 220000 tokens > 200000",
            ErrorKind::RequestTooLarge,
            Some(400),
        ),
        ("something_new", "?", ErrorKind::Api, None),
    ] {
        let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
        decode(
            &mut decoder,
            &body(&[failed(code, message, REQUEST_ID, None)]),
        );
        let failure = decoder.failure().unwrap();
        assert_eq!((failure.kind, failure.status), (kind, status), "{code}");
    }
}

#[test]
fn a_billing_failure_names_the_plan_and_what_to_do() {
    let mut decoder =
        decoder(ZedProvider::XAi, ZedFraming::Wrapped).with_plan(Some(ZedPlan::ProTrial));
    let out = decode(
        &mut decoder,
        &body(&[failed(
            "billing_error",
            "credit exhausted",
            REQUEST_ID,
            None,
        )]),
    );
    let StreamEvent::Error(error) = &out[0] else {
        panic!("{out:?}");
    };
    assert_eq!(error.kind, ErrorKind::Permission);
    assert!(
        error.message.contains("credit exhausted"),
        "{}",
        error.message
    );
    assert!(error.message.contains("Pro Trial"), "{}", error.message);
    assert!(
        error.message.contains("https://zed.dev/account"),
        "{}",
        error.message
    );
    assert_eq!(decoder.failure().unwrap().retry(), Retry::No);
}

#[test]
fn malformed_status_lines_are_errors() {
    for (line, what) in [
        (
            failed("upstream_http_429", "x", "not-a-uuid", None),
            "request_id is not a UUID",
        ),
        (
            json!({"status": {"brand_new": {"x": 1}}}),
            "an unknown status",
        ),
        (json!({"Status": "stream_ended"}), "an unreadable line"),
        (json!({"Event": {"type": "ping"}}), "an unreadable line"),
        (
            json!({"status": "stream_ended", "event": {}}),
            "not exactly one of `event` and `status`",
        ),
    ] {
        let mut decoder = decoder(ZedProvider::Anthropic, ZedFraming::Wrapped);
        let out = decode(&mut decoder, &body(std::slice::from_ref(&line)));
        let StreamEvent::Error(error) = &out[0] else {
            panic!("{line}: {out:?}");
        };
        assert!(error.message.contains(what), "{line}: {}", error.message);
        assert_eq!(out.len(), 1, "{line}");
    }
}

#[test]
fn bare_mode_reads_provider_events_and_their_own_end() {
    let events = provider_events("x_ai", "grok-4");
    let mut decoder = decoder(ZedProvider::XAi, ZedFraming::Bare);
    let out = decode(&mut decoder, &body(&events));
    assert_eq!(summarize(&out).0, "Hello");
    assert!(summarize(&out).2);
    assert!(decoder.is_complete());

    // A bare Anthropic reply cut before message_stop: the Anthropic decoder says so.
    let mut events = provider_events("anthropic", "claude-sonnet-4-6");
    events.truncate(4);
    let mut decoder = self::decoder(ZedProvider::Anthropic, ZedFraming::Bare);
    let out = decode(&mut decoder, &body(&events));
    assert!(matches!(out.last(), Some(StreamEvent::Error(_))));

    // A bare chat reply without its finish reason is cut short too.
    let mut events = provider_events("x_ai", "grok-4");
    events.truncate(2);
    let mut decoder = self::decoder(ZedProvider::XAi, ZedFraming::Bare);
    let out = decode(&mut decoder, &body(&events));
    assert!(matches!(out.last(), Some(StreamEvent::Error(_))));
}

#[test]
fn framing_follows_the_server_header() {
    let mut headers = http::HeaderMap::new();
    assert_eq!(ZedFraming::from_headers(&headers), ZedFraming::Bare);
    headers.insert(
        "x-zed-server-supports-status-messages",
        http::HeaderValue::from_static("true"),
    );
    assert_eq!(ZedFraming::from_headers(&headers), ZedFraming::Wrapped);
}
