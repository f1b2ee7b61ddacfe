use std::os::unix::fs::PermissionsExt as _;

use corvid_tools::{ToolDetail, ToolError, ToolKind};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::project;

#[tokio::test]
async fn creating_a_file_proposes_a_diff_and_writes_only_on_apply() {
    let p = project();
    let prepared = p
        .prepare(
            "write",
            json!({"path": "src/deep/new.rs", "content": "fn a() {}\nfn b() {}\n"}),
        )
        .await
        .unwrap();
    assert_eq!(prepared.kind, ToolKind::Edit);
    assert_eq!(
        prepared.proposal.summary,
        "Create src/deep/new.rs (2 lines)"
    );
    assert_eq!(
        prepared.proposal.diff.as_deref(),
        Some("--- /dev/null\n+++ b/src/deep/new.rs\n@@ -0,0 +1,2 @@\n+fn a() {}\n+fn b() {}\n")
    );
    assert_eq!(
        prepared.proposal.path.as_deref(),
        Some(std::path::Path::new("src/deep/new.rs"))
    );
    assert!(!p.path("src").exists(), "nothing is written before apply");
    let output = p.apply(prepared).await.unwrap();
    assert_eq!(output.text, "Created src/deep/new.rs (2 lines).");
    assert_eq!(p.read("src/deep/new.rs"), "fn a() {}\nfn b() {}\n");
}

#[tokio::test]
async fn overwriting_shows_the_diff_and_keeps_permissions() {
    let p = project();
    p.write("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let prepared = p
        .prepare(
            "write",
            json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
        )
        .await
        .unwrap();
    assert_eq!(prepared.proposal.summary, "Overwrite run.sh (+1 -1 lines)");
    assert_eq!(
        prepared.proposal.diff.as_deref(),
        Some("--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n")
    );
    let output = p.apply(prepared).await.unwrap();
    assert!(matches!(output.detail, Some(ToolDetail::Diff { .. })));
    assert_eq!(p.read("run.sh"), "#!/bin/sh\necho new\n");
    let mode = std::fs::metadata(p.path("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn an_existing_crlf_file_with_a_bom_keeps_both() {
    let p = project();
    p.write("win.txt", "\u{feff}a\r\nb\r\n");
    p.run("write", json!({"path": "win.txt", "content": "x\ny\n"}))
        .await
        .unwrap();
    assert_eq!(p.read("win.txt"), "\u{feff}x\r\ny\r\n");
}

#[tokio::test]
async fn a_file_changed_during_review_is_not_overwritten() {
    let p = project();
    p.write("a.txt", "v1\n");
    let prepared = p
        .prepare("write", json!({"path": "a.txt", "content": "mine\n"}))
        .await
        .unwrap();
    p.write("a.txt", "the user's edit\n");
    let error = p.apply(prepared).await.unwrap_err();
    assert!(matches!(error, ToolError::Refused { .. }), "{error:?}");
    assert!(
        error.to_string().contains("changed while the write waited"),
        "{error}"
    );
    assert_eq!(p.read("a.txt"), "the user's edit\n");

    let prepared = p
        .prepare("write", json!({"path": "b.txt", "content": "mine\n"}))
        .await
        .unwrap();
    p.write("b.txt", "someone else's\n");
    let error = p.apply(prepared).await.unwrap_err();
    assert!(
        error.to_string().contains("created by someone else"),
        "{error}"
    );
}

#[tokio::test]
async fn directories_are_not_files() {
    let p = project();
    p.write("dir/x", "");
    let error = p
        .prepare("write", json!({"path": "dir", "content": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::IsDirectory { .. }), "{error:?}");
}

#[tokio::test]
async fn rewriting_a_file_with_the_same_content_writes_nothing_and_says_so() {
    let p = project();
    p.write("same.txt", "\u{feff}one\r\ntwo\r\n");
    let before = std::fs::metadata(p.path("same.txt"))
        .unwrap()
        .modified()
        .unwrap();
    // The same text in the model's line endings is the same content (the file keeps its own).
    for content in ["\u{feff}one\r\ntwo\r\n", "one\ntwo\n"] {
        let error = p
            .prepare("write", json!({"path": "same.txt", "content": content}))
            .await
            .unwrap_err();
        assert!(matches!(error, ToolError::Refused { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .contains("already has exactly this content"),
            "{error}"
        );
    }
    assert_eq!(p.read("same.txt"), "\u{feff}one\r\ntwo\r\n");
    let after = std::fs::metadata(p.path("same.txt"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}
