use std::sync::Mutex;

use corvid_wire::model::{
    ChatRequest, Message, Part, Role, StreamEvent, ToolCall, ToolResult, ToolResultContent,
};

use super::*;
use crate::model::{EventStream, ModelClient, StreamFuture};

/// Answers every request with a summary naming the request number; records the requests.
#[derive(Default)]
struct Summarizer {
    requests: Mutex<Vec<ChatRequest>>,
}

impl ModelClient for Summarizer {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        let mut requests = self.requests.lock().unwrap();
        requests.push(request);
        let text = format!("SUMMARY #{}", requests.len());
        Box::pin(async move {
            let events = vec![StreamEvent::TextDelta { text }];
            Ok(Box::pin(futures_util::stream::iter(events)) as EventStream)
        })
    }
}

fn user(text: &str) -> Message {
    Message::text(Role::User, text)
}

fn assistant(text: &str) -> Message {
    Message::text(Role::Assistant, text)
}

/// One turn with a tool call: user, call, result, answer.
fn tool_turn(index: usize, output: &str) -> Vec<Message> {
    let id = format!("call-{index}");
    vec![
        user(&format!("request {index}")),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.clone(),
                name: "write".to_owned(),
                arguments: format!(r#"{{"path":"file{index}.txt","content":"x"}}"#),
                signature: None,
            })],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id,
                name: Some("write".to_owned()),
                content: vec![ToolResultContent::Text {
                    text: output.to_owned(),
                }],
                is_error: false,
            })],
        },
        assistant(&format!("done {index}")),
    ]
}

fn history(turns: usize, output: &str) -> Vec<Message> {
    (0..turns)
        .flat_map(|index| tool_turn(index, output))
        .collect()
}

#[test]
fn the_cut_is_always_at_a_turn_start() {
    let history = history(6, &"o".repeat(400));
    for keep in [0, 50, 200, 400, 1_000, 100_000] {
        for protected in 0..=history.len() {
            if let Some(split) = split_point(&history, protected, keep) {
                assert!(
                    starts_turn(&history[split]),
                    "keep {keep} protected {protected}"
                );
                assert!(split <= protected.max(4), "the running turn stays");
            }
        }
    }
    assert_eq!(
        split_point(&history, 20, 0),
        Some(20),
        "only the running turn is kept"
    );
    assert_eq!(split_point(&history, 4, 0), Some(4));
    assert_eq!(
        split_point(&history, 0, 0),
        None,
        "nothing before the first turn"
    );
    assert_eq!(
        split_point(&history, 20, 1_000_000),
        None,
        "everything fits"
    );
}

#[tokio::test]
async fn compaction_keeps_the_task_the_files_and_the_recent_turns() {
    let model = Summarizer::default();
    let mut old = vec![user("TASK: port the parser to Rust"), assistant("on it")];
    old.extend(history(5, &"output line\n".repeat(50)));
    let protected = old.len() - 4;
    let compacted = compact(&model, "m", &old, protected, 0, 100_000, None)
        .await
        .unwrap();
    assert_eq!(compacted.summarized, protected);
    assert_eq!(compacted.history.len(), 2 + 4);
    assert_eq!(
        compacted.history[2..],
        old[protected..],
        "the latest turn is verbatim"
    );
    let summary = crate::history::text_of(&compacted.history[0]);
    assert!(summary.starts_with(SUMMARY_HEADER));
    assert!(
        summary.contains("TASK: port the parser to Rust"),
        "{summary}"
    );
    assert!(summary.contains("SUMMARY #1"), "{summary}");
    assert!(summary.contains("- file3.txt\n"), "{summary}");
    assert!(
        !summary.contains("- file4.txt\n"),
        "file4 is in the kept turn: {summary}"
    );
    let requests = model.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    let prompt = crate::history::text_of(&requests[0].messages[0]);
    assert!(prompt.contains("TASK: port the parser to Rust"));
    assert!(prompt.contains("ASSISTANT CALLED `write`"));
    assert!(requests[0].tools.is_empty());

    // A second compaction carries the first request and the files over from the summary.
    let mut again = compacted.history.clone();
    again.extend(history(3, "short"));
    let protected = again.len() - 4;
    let second = compact(&model, "m", &again, protected, 0, 100_000, None)
        .await
        .unwrap();
    let summary = crate::history::text_of(&second.history[0]);
    assert!(
        summary.contains("TASK: port the parser to Rust"),
        "{summary}"
    );
    assert!(summary.contains("- file3.txt\n"), "{summary}");
    assert!(summary.contains("SUMMARY #2"), "{summary}");
    // Only a summary before the running turn: nothing left to compact.
    let only_summary = &second.history;
    assert!(matches!(
        compact(&model, "m", only_summary, 2, 0, 100_000, None).await,
        Err(CompactError::NothingToCompact)
    ));
}

#[tokio::test]
async fn a_transcript_larger_than_one_request_is_summarised_in_pieces() {
    let model = Summarizer::default();
    let old = history(12, &"z".repeat(1_500));
    let window = 4_000;
    let compacted = compact(&model, "m", &old, old.len() - 4, 0, window, None)
        .await
        .unwrap();
    let requests = model.requests.lock().unwrap().clone();
    assert!(requests.len() > 1, "{} requests", requests.len());
    for request in &requests {
        let tokens = estimate_tokens(&request.system, &request.messages, &request.tools);
        assert!(tokens < window, "a summary request of {tokens} tokens");
    }
    let second = crate::history::text_of(&requests[1].messages[0]);
    assert!(
        second.contains("SUMMARY #1"),
        "each piece carries the summary so far"
    );
    let summary = crate::history::text_of(&compacted.history[0]);
    assert!(summary.contains(&format!("SUMMARY #{}", requests.len())));
}

#[test]
fn the_trigger_is_a_share_of_the_window() {
    assert!(!needs_compaction(79, 100));
    assert!(needs_compaction(80, 100));
    assert!(needs_compaction(u64::MAX, 100));
}
