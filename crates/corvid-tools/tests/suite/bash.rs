use std::path::PathBuf;
use std::time::{Duration, Instant};

use corvid_tools::{Cancellation, ToolDetail, ToolError, ToolLimits, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::watch;

use super::support::{Project, eventually, project, project_with};

/// Runs `command` in `p`'s project.
async fn bash(p: &Project, command: &str) -> ToolOutput {
    p.run("bash", json!({"command": command})).await.unwrap()
}

/// The output of a command too long for its result, and the log it spilled to.
async fn spilled(p: &Project) -> (ToolOutput, PathBuf) {
    let output = bash(p, "seq 1 20000").await;
    let Some(ToolDetail::Command {
        log_path: Some(log),
        ..
    }) = output.detail.clone()
    else {
        panic!("expected a kept log: {:?}", output.detail);
    };
    (output, log)
}

/// After the 1 s a left-behind `(sleep 1; touch marker) &` child would take, `marker` is
/// still not there: the child was stopped.
async fn assert_still_missing(p: &Project, marker: &str) {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!p.path(marker).exists());
}

#[tokio::test]
async fn combined_output_and_exit_code() {
    let p = project();
    let output = bash(&p, "echo hello; echo oops >&2; exit 3").await;
    assert_eq!(output.text, "hello\noops\n\nExit code: 3");
    assert!(output.is_error);
    assert_eq!(
        output.detail,
        Some(ToolDetail::Command {
            exit_code: Some(3),
            timed_out: false,
            log_path: None
        })
    );
    assert!(
        p.logs().is_empty(),
        "a log that fit in the result is deleted"
    );
}

#[tokio::test]
async fn runs_in_the_project_folder_with_empty_stdin() {
    let p = project();
    let output = bash(&p, "pwd; cat; echo done").await;
    assert_eq!(
        output.text,
        format!("{}\ndone\n\nExit code: 0", p.root.display())
    );
    assert!(!output.is_error);
    let output = bash(&p, "true").await;
    assert_eq!(output.text, "(no output)\n\nExit code: 0");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_tree() {
    let p = project();
    let started = Instant::now();
    let output = p
        .run(
            "bash",
            json!({
                "command": "(sleep 1; touch late-marker) & echo started; sleep 30",
                "timeout_ms": 500
            }),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        output.text,
        "started\n\nTimed out after 0.5 s; the command and everything it started were stopped."
    );
    assert!(output.is_error);
    assert!(matches!(
        output.detail,
        Some(ToolDetail::Command {
            timed_out: true,
            exit_code: None,
            ..
        })
    ));
    // The `sleep 1; touch` child died with its shell.
    assert_still_missing(&p, "late-marker").await;
}

#[tokio::test]
async fn processes_left_behind_by_a_finished_command_are_stopped() {
    let p = project();
    let output = bash(&p, "(sleep 1; touch left-marker) & echo quick").await;
    assert_eq!(output.text, "quick\n\nExit code: 0");
    assert_still_missing(&p, "left-marker").await;
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_spills_to_a_file() {
    let p = project();
    let (output, log) = spilled(&p).await;
    assert!(
        matches!(
            output.detail,
            Some(ToolDetail::Command {
                exit_code: Some(0),
                ..
            })
        ),
        "{:?}",
        output.detail
    );
    assert!(log.starts_with(&p.logs), "{}", log.display());
    assert!(
        output.text.starts_with("1\n2\n3\n"),
        "{}",
        &output.text[..40]
    );
    assert!(
        output.text.contains(&format!(
            "bytes omitted; the full output (108894 bytes) is in {} …]",
            log.display()
        )),
        "{}",
        output.text
    );
    assert!(output.text.ends_with("19999\n20000\n\nExit code: 0"));
    assert!(output.text.len() < 31 * 1024, "{}", output.text.len());
    assert_eq!(std::fs::read(log).unwrap().len(), 108_894);
}

#[tokio::test]
async fn output_past_the_log_cap_is_counted_not_kept() {
    let p = project_with(ToolLimits {
        output_bytes: 100,
        log_bytes: 1000,
        ..ToolLimits::default()
    });
    let output = bash(&p, "seq 1 2000").await;
    assert!(
        output.text.contains(
            "[the output went past 1000 bytes; the log keeps the first 1000 bytes of 8893 bytes]"
        ),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn cancel_kills_a_running_command() {
    let p = project();
    let (cancel, receiver) = watch::channel(false);
    let tools = p.tools.clone();
    let task = tokio::spawn(async move {
        tools
            .execute(
                "bash",
                json!({"command": "echo begun; touch began; (sleep 1; touch cancel-marker) & sleep 30"}),
                Cancellation::new(receiver),
            )
            .await
    });
    let began = p.path("began");
    assert!(eventually(Duration::from_secs(5), || began.exists()).await);
    let cancelled_at = Instant::now();
    cancel.send(true).unwrap();
    let result = task.await.unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    match result {
        Err(ToolError::Cancelled { output }) => assert_eq!(output, "begun\n"),
        other => panic!("expected Cancelled, got {other:?}"),
    }
    assert_still_missing(&p, "cancel-marker").await;
}

#[tokio::test]
async fn timeouts_above_the_maximum_are_lowered() {
    let p = project();
    let output = p
        .run("bash", json!({"command": "true", "timeout_ms": 700_000}))
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "(no output)\n\nExit code: 0\n(The timeout asked for was above the maximum, 600 s.)"
    );
    let error = p
        .prepare("bash", json!({"command": "  "}))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("the command is empty"),
        "{error}"
    );
}

#[tokio::test]
async fn dropping_a_running_call_kills_the_tree() {
    let p = project();
    let tools = p.tools.clone();
    let task = tokio::spawn(async move {
        tools
            .execute(
                "bash",
                json!({"command": "touch began; (sleep 1; touch abandoned-marker) & sleep 30"}),
                Cancellation::never(),
            )
            .await
    });
    let began = p.path("began");
    assert!(eventually(Duration::from_secs(5), || began.exists()).await);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_still_missing(&p, "abandoned-marker").await;
}

#[tokio::test]
async fn the_spilled_log_can_be_read_but_not_written() {
    let p = project();
    let (_, log) = spilled(&p).await;
    let read = p
        .run("read", json!({"path": log, "offset": 19_999}))
        .await
        .unwrap();
    assert_eq!(read.text, " 19999\t19999\n 20000\t20000\n");
    let grep = p
        .run("grep", json!({"pattern": "^12345$", "path": log}))
        .await
        .unwrap();
    assert!(grep.text.ends_with(":12345: 12345\n"), "{}", grep.text);
    let error = p
        .prepare("write", json!({"path": log, "content": "x"}))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("outside the project folder"),
        "{error}"
    );
}

#[tokio::test]
async fn nothing_starts_once_cancelled() {
    let p = project();
    let (cancel, receiver) = watch::channel(false);
    cancel.send(true).unwrap();
    let error = p
        .tools
        .execute(
            "bash",
            json!({"command": "touch ran"}),
            Cancellation::new(receiver),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Cancelled { .. }), "{error:?}");
    assert!(!p.path("ran").exists());
}

/// A running command's output reaches the sink while it runs, not only when it ends.
#[tokio::test]
async fn output_streams_while_the_command_runs() {
    let p = project();
    let (sender, mut receiver) = tokio::sync::mpsc::channel(16);
    let prepared = p
        .prepare("bash", json!({"command": "echo early; sleep 2; echo late"}))
        .await
        .unwrap();
    let started = Instant::now();
    let run = p.tools.apply_streaming(
        prepared.plan,
        Cancellation::never(),
        Some(corvid_tools::OutputSink::new(sender)),
    );
    tokio::pin!(run);
    let first = tokio::select! {
        text = receiver.recv() => text.unwrap(),
        _ = &mut run => panic!("the command ended before any output was streamed"),
    };
    assert_eq!(first, "early\n");
    assert!(started.elapsed() < Duration::from_millis(1500));
    let output = run.await.unwrap();
    assert_eq!(output.text, "early\nlate\n\nExit code: 0");
    let mut rest = String::new();
    while let Ok(text) = receiver.try_recv() {
        rest.push_str(&text);
    }
    assert_eq!(rest, "late\n");
}
