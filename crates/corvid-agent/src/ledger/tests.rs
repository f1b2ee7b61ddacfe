use super::*;

#[test]
fn a_call_becomes_a_ledger_row_with_its_front_end_route_and_tokens() {
    let mut meter = CallMeter::start("grok");
    meter.replied(1);
    meter.saw(&StreamEvent::TextDelta {
        text: "hi".to_owned(),
    });
    meter.saw(&StreamEvent::Usage(Usage {
        input: 40,
        cache_read: 10,
        output: 7,
        reasoning: 2,
        ..Usage::default()
    }));
    let route = crate::ModelRoute {
        provider: "xai".to_owned(),
        model: "grok-4.6".to_owned(),
    };
    let record = meter.record(CallEnd::Answered, "exec", Some(route));
    assert_eq!(record.front_end, "exec");
    assert_eq!(record.route, "agent");
    assert_eq!(
        (record.provider.as_str(), record.model.as_str()),
        ("xai", "grok-4.6")
    );
    assert_eq!((record.status, record.outcome), (200, Outcome::Ok));
    assert!(record.ttfb_ms.is_some());
    assert_eq!(
        record.tokens,
        Tokens {
            input: 40,
            cache_read: 10,
            cache_write: 0,
            output: 7,
            reasoning: 2
        }
    );
    assert!(record.prompt.is_none());
}

#[test]
fn failures_before_and_after_the_reply_started_are_told_apart() {
    let before = CallMeter::start("m");
    let failed = before.record(CallEnd::Failed, "chat", None);
    assert_eq!((failed.status, failed.outcome), (0, Outcome::Error));
    assert_eq!((failed.provider.as_str(), failed.model.as_str()), ("", "m"));
    let mut after = CallMeter::start("m");
    after.replied(1);
    assert_eq!(
        after.record(CallEnd::Failed, "chat", None).outcome,
        Outcome::StreamError
    );
    assert_eq!(
        after.record(CallEnd::Cancelled, "chat", None).outcome,
        Outcome::Cancelled
    );
}

#[test]
fn the_rows_attempts_are_the_requests_the_client_sent() {
    let mut retried = CallMeter::start("m");
    retried.replied(3);
    assert_eq!(retried.record(CallEnd::Answered, "chat", None).attempts, 3);
    let mut gave_up = CallMeter::start("m");
    gave_up.failed(4);
    assert_eq!(gave_up.record(CallEnd::Failed, "chat", None).attempts, 4);
    let mut never_sent = CallMeter::start("m");
    never_sent.failed(0);
    assert_eq!(never_sent.record(CallEnd::Failed, "chat", None).attempts, 0);
}
