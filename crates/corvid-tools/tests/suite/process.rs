use std::time::Duration;

use corvid_tools::{ToolDetail, ToolError, ToolLimits};
use serde_json::json;

use super::support::{Project, eventually, exists, project, project_with};

#[tokio::test]
async fn background_start_status_tail_stop() {
    let p = project();
    let output = p
        .run(
            "bash",
            json!({"command": "echo started; sleep 30", "background": true}),
        )
        .await
        .unwrap();
    let Some(ToolDetail::Background { id, log_path, .. }) = output.detail.clone() else {
        panic!("expected a background handle: {output:?}");
    };
    assert_eq!(id, "p1");
    assert!(
        output
            .text
            .starts_with("Started in the background as p1 (pid "),
        "{}",
        output.text
    );
    assert!(log_path.starts_with(&p.logs));

    let status = p
        .run("process", json!({"action": "status", "id": "p1"}))
        .await
        .unwrap();
    assert!(
        status.text.starts_with("p1: running for "),
        "{}",
        status.text
    );
    assert_eq!(p.tools.context().processes().running(), 1);

    assert!(
        eventually(Duration::from_secs(3), || {
            std::fs::read_to_string(&log_path)
                .unwrap_or_default()
                .contains("started")
        })
        .await
    );
    let tail = p
        .run("process", json!({"action": "tail", "id": "p1", "lines": 5}))
        .await
        .unwrap();
    assert!(tail.text.ends_with("\nstarted\n"), "{}", tail.text);

    let stopped = p
        .run("process", json!({"action": "stop", "id": "p1"}))
        .await
        .unwrap();
    assert!(
        stopped.text.starts_with("p1: stopped (signal 15)"),
        "{}",
        stopped.text
    );
    assert_eq!(p.tools.context().processes().running(), 0);
    let all = p.run("process", json!({"action": "status"})).await.unwrap();
    assert!(all.text.starts_with("p1: stopped"), "{}", all.text);
    let again = p
        .run("process", json!({"action": "stop", "id": "p1"}))
        .await
        .unwrap();
    assert!(
        again.text.starts_with("Already finished."),
        "{}",
        again.text
    );
}

#[tokio::test]
async fn a_finished_background_command_reports_its_exit_code() {
    let p = project();
    p.run(
        "bash",
        json!({"command": "echo bye; exit 4", "background": true}),
    )
    .await
    .unwrap();
    let processes = p.tools.context().processes().clone();
    assert!(eventually(Duration::from_secs(3), || processes.running() == 0).await);
    let status = p
        .run("process", json!({"action": "status", "id": "p1"}))
        .await
        .unwrap();
    assert!(
        status.text.starts_with("p1: exited with code 4"),
        "{}",
        status.text
    );
}

#[tokio::test]
async fn unknown_ids_and_missing_ids_are_refused() {
    let p = project();
    let error = p
        .run("process", json!({"action": "tail", "id": "p9"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::UnknownProcess { .. }),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "no background process `p9`; known: none");
    let error = p
        .prepare("process", json!({"action": "stop"}))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("`id` is required"), "{error}");
    let output = p.run("process", json!({"action": "status"})).await.unwrap();
    assert_eq!(output.text, "No background processes.");
}

#[tokio::test]
async fn the_number_of_background_processes_is_capped() {
    let p = project_with(ToolLimits {
        max_background: 1,
        ..ToolLimits::default()
    });
    p.run("bash", json!({"command": "sleep 30", "background": true}))
        .await
        .unwrap();
    let error = p
        .run("bash", json!({"command": "sleep 30", "background": true}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::TooManyProcesses { running: 1 }),
        "{error:?}"
    );
}

#[tokio::test]
async fn dropping_the_registry_kills_background_processes() {
    let Project {
        dir, root, tools, ..
    } = project();
    tools
        .execute(
            "bash",
            json!({"command": "(sleep 1; touch drop-marker) & sleep 30", "background": true}),
            corvid_tools::Cancellation::never(),
        )
        .await
        .unwrap();
    drop(tools);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!exists(&root.join("drop-marker")));
    drop(dir);
}

#[tokio::test]
async fn stop_escalates_to_sigkill_when_sigterm_is_ignored() {
    let p = project_with(ToolLimits {
        kill_grace: Duration::from_millis(200),
        ..ToolLimits::default()
    });
    let output = p
        .run(
            "bash",
            json!({"command": "trap '' TERM; echo ready; sleep 30", "background": true}),
        )
        .await
        .unwrap();
    let Some(ToolDetail::Background { log_path, .. }) = output.detail else {
        panic!("expected a background handle");
    };
    // Only once the trap is set does SIGTERM go unheeded.
    assert!(
        eventually(Duration::from_secs(3), || {
            std::fs::read_to_string(&log_path)
                .unwrap_or_default()
                .contains("ready")
        })
        .await
    );
    let processes = p.tools.context().processes().clone();
    assert_eq!(processes.running(), 1);
    let stopped = p
        .run("process", json!({"action": "stop", "id": "p1"}))
        .await
        .unwrap();
    assert!(
        stopped.text.starts_with("p1: stopped (signal 9)"),
        "{}",
        stopped.text
    );
    assert_eq!(processes.running(), 0);
}
