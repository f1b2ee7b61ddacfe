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
