//! The watch per dialect: the end event, the usage, and the same answer however the stream is
//! cut into chunks.

use pretty_assertions::assert_eq;

use super::*;

fn watched(dialect: Dialect, stream: &str) -> Watch {
    let mut watch = StreamWatch::new(dialect);
    watch.feed(stream.as_bytes())
}

/// `stream` fed whole, and one byte at a time, gives the same watch.
fn same_however_cut(dialect: Dialect, stream: &str) -> Watch {
    let whole = watched(dialect, stream);
    let mut watch = StreamWatch::new(dialect);
    for byte in stream.as_bytes() {
        watch.feed(std::slice::from_ref(byte));
    }
    assert_eq!(watch.seen(), whole, "{dialect:?}");
    whole
}

fn usage(input: u64, cache_read: u64, output: u64, reasoning: u64) -> Option<Usage> {
    Some(Usage {
        input,
        cache_read,
        cache_write: 0,
        output,
        reasoning,
    })
}

#[test]
fn chat_ends_at_done_and_keeps_the_usage_chunk() {
    let body = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n\
                data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"prompt_cache_hit_tokens\":4}}\n\n";
    assert_eq!(
        same_however_cut(Dialect::OpenAiChat, body),
        Watch {
            finished: false,
            usage: usage(5, 4, 2, 0)
        }
    );
    let done = format!("{body}data: [DONE]\n\n");
    assert!(same_however_cut(Dialect::OpenAiChat, &done).finished);
}

#[test]
fn responses_ends_at_a_terminal_event_with_its_usage() {
    let created = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"usage\":null}}\n\n";
    assert_eq!(watched(Dialect::OpenAiResponses, created), Watch::default());
    let completed = format!(
        "{created}event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"usage\":{{\"input_tokens\":7,\"output_tokens\":3}}}}}}\n\n"
    );
    assert_eq!(
        same_however_cut(Dialect::OpenAiResponses, &completed),
        Watch {
            finished: true,
            usage: usage(7, 0, 3, 0)
        }
    );
    for kind in ["response.incomplete", "response.failed", "response.done"] {
        let event = format!("data: {{\"type\":\"{kind}\",\"response\":{{}}}}\n\n");
        assert!(watched(Dialect::OpenAiResponses, &event).finished, "{kind}");
    }
}

#[test]
fn anthropic_merges_start_and_delta_and_ends_at_message_stop() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":4,\"cache_read_input_tokens\":6,\"output_tokens\":1}}}\n\n\
                event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":8,\"output_tokens_details\":{\"thinking_tokens\":3}}}\n\n";
    assert_eq!(
        same_however_cut(Dialect::Anthropic, body),
        Watch {
            finished: false,
            usage: usage(4, 6, 8, 3)
        }
    );
    let stopped = format!("{body}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n");
    assert!(same_however_cut(Dialect::Anthropic, &stopped).finished);
}

#[test]
fn gemini_ends_at_a_finish_reason_and_keeps_the_last_metadata() {
    let body = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}],\"usageMetadata\":{\"promptTokenCount\":3}}\r\n\r\n\
                data: {\"candidates\":[{\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"thoughtsTokenCount\":1}}\r\n\r\n";
    assert_eq!(
        same_however_cut(Dialect::Gemini, body),
        Watch {
            finished: true,
            usage: usage(3, 0, 3, 1)
        }
    );
}

#[test]
fn a_chunk_cut_inside_a_line_is_mid_line() {
    let mut watch = StreamWatch::new(Dialect::OpenAiChat);
    watch.feed(b"data: {\"choi");
    assert!(watch.mid_line());
    watch.feed(b"ces\":[]}\n\n");
    assert!(!watch.mid_line());
}
