use corvid_tools::{Prepared, ToolDetail, ToolError, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Project, project};

const SOURCE: &str = "fn main() {\n    let total = compute(1);\n    println!(\"{total}\");\n}\n";

/// Prepares the edit of `path` that replaces `old_string` with `new_string`.
async fn prepare_edit(
    p: &Project,
    path: &str,
    old_string: &str,
    new_string: &str,
) -> Result<Prepared, ToolError> {
    p.prepare("edit", replacing(path, old_string, new_string))
        .await
}

/// Runs the edit of `path` that replaces `old_string` with `new_string`.
async fn edit(
    p: &Project,
    path: &str,
    old_string: &str,
    new_string: &str,
) -> Result<ToolOutput, ToolError> {
    p.run("edit", replacing(path, old_string, new_string)).await
}

/// The `edit` arguments that replace `old_string` with `new_string` in `path`.
fn replacing(path: &str, old_string: &str, new_string: &str) -> serde_json::Value {
    json!({"path": path, "old_string": old_string, "new_string": new_string})
}

#[tokio::test]
async fn an_edit_proposes_a_diff_and_lands_on_apply() {
    let p = project();
    p.write("src/main.rs", SOURCE);
    let prepared = prepare_edit(&p, "src/main.rs", "compute(1)", "compute(2)")
        .await
        .unwrap();
    assert_eq!(
        prepared.proposal.summary,
        "Edit src/main.rs: 1 replacement at line 2"
    );
    assert_eq!(
        prepared.proposal.diff.as_deref(),
        Some(
            "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,4 +1,4 @@\n fn main() {\n-    let total = compute(1);\n+    let total = compute(2);\n     println!(\"{total}\");\n }\n"
        )
    );
    assert_eq!(
        p.read("src/main.rs"),
        SOURCE,
        "nothing changes before apply"
    );
    let output = p.apply(prepared).await.unwrap();
    assert_eq!(output.text, "Edited src/main.rs: 1 replacement at line 2.");
    assert!(matches!(output.detail, Some(ToolDetail::Diff { .. })));
    assert_eq!(
        p.read("src/main.rs"),
        SOURCE.replace("compute(1)", "compute(2)")
    );
}

#[tokio::test]
async fn apply_relocates_the_edit_after_the_file_changed() {
    let p = project();
    p.write("src/main.rs", SOURCE);
    let prepared = p
        .prepare(
            "edit",
            json!({
                "path": "src/main.rs",
                // Indented wrongly: found by the indentation stage, re-indented.
                "old_string": "let total = compute(1);\nprintln!(\"{total}\");",
                "new_string": "let total = compute(1) * 2;\nprintln!(\"{total}\");"
            }),
        )
        .await
        .unwrap();
    assert!(
        prepared.proposal.summary.contains("indentation shift"),
        "{}",
        prepared.proposal.summary
    );
    // The user adds lines above while reviewing.
    p.write("src/main.rs", format!("use std::fmt;\n\n{SOURCE}"));
    let output = p.apply(prepared).await.unwrap();
    assert_eq!(
        output.text,
        "Edited src/main.rs: 1 replacement at line 4 (matched ignoring an indentation shift; new_string re-indented to fit)."
    );
    assert_eq!(
        p.read("src/main.rs"),
        "use std::fmt;\n\nfn main() {\n    let total = compute(1) * 2;\n    println!(\"{total}\");\n}\n"
    );
}

#[tokio::test]
async fn apply_refuses_a_target_that_vanished() {
    let p = project();
    p.write("a.rs", SOURCE);
    let prepared = prepare_edit(&p, "a.rs", "compute(1)", "compute(2)")
        .await
        .unwrap();
    p.write("a.rs", SOURCE.replace("compute(1)", "compute(7)"));
    let error = p.apply(prepared).await.unwrap_err();
    assert!(matches!(error, ToolError::EditVanished { .. }), "{error:?}");
    assert!(error.to_string().contains("no longer in a.rs"), "{error}");
    assert_eq!(p.read("a.rs"), SOURCE.replace("compute(1)", "compute(7)"));
}

#[tokio::test]
async fn apply_refuses_a_target_that_became_ambiguous() {
    let p = project();
    p.write("a.rs", SOURCE);
    let prepared = prepare_edit(&p, "a.rs", "compute(1)", "compute(2)")
        .await
        .unwrap();
    p.write("a.rs", format!("{SOURCE}// compute(1) again\n"));
    let error = p.apply(prepared).await.unwrap_err();
    match &error {
        ToolError::EditNowAmbiguous { count, lines, .. } => {
            assert_eq!((*count, lines.as_str()), (2, "2, 5"));
        }
        other => panic!("expected EditNowAmbiguous, got {other:?}"),
    }
    assert!(error.to_string().contains("at lines 2, 5"), "{error}");
}

#[tokio::test]
async fn an_ambiguous_old_string_is_refused_with_line_numbers() {
    let p = project();
    p.write("a.txt", "x = 1\ny = 2\nx = 1\n");
    let error = prepare_edit(&p, "a.txt", "x = 1", "x = 3")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "old_string matches 2 places in a.txt (at lines 1, 3). Add surrounding lines to old_string so it matches exactly one place, or set replace_all to change every occurrence"
    );
    // replace_all takes both (sent as a string, as some models do).
    p.run(
        "edit",
        json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 3", "replace_all": "true"}),
    )
    .await
    .unwrap();
    assert_eq!(p.read("a.txt"), "x = 3\ny = 2\nx = 3\n");
}

#[tokio::test]
async fn a_miss_shows_the_closest_region() {
    let p = project();
    p.write("a.rs", SOURCE);
    let error = prepare_edit(
        &p,
        "a.rs",
        "let totl = compute(1);\nprintln!(\"{totl}\");",
        "x",
    )
    .await
    .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, ToolError::EditNotFound { .. }), "{error:?}");
    assert!(
        message.starts_with("old_string was not found in a.rs. The closest region is lines 2-3 ("),
        "{message}"
    );
    assert!(
        message
            .contains("     2\t    let total = compute(1);\n     3\t    println!(\"{total}\");\n"),
        "{message}"
    );
}

#[tokio::test]
async fn empty_old_string_creates_a_missing_file_but_never_overwrites() {
    let p = project();
    let output = edit(&p, "new/file.txt", "", "hello\n").await.unwrap();
    assert_eq!(output.text, "Created new/file.txt (1 line).");
    assert_eq!(p.read("new/file.txt"), "hello\n");
    let error = edit(&p, "new/file.txt", "", "bye\n").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("old_string is empty but the file already has content"),
        "{error}"
    );
    assert_eq!(p.read("new/file.txt"), "hello\n");
    // An existing empty file may be filled.
    p.write("empty.txt", "");
    edit(&p, "empty.txt", "", "filled\n").await.unwrap();
    assert_eq!(p.read("empty.txt"), "filled\n");
    // A missing file with a non-empty old_string says how to create it.
    let error = edit(&p, "missing.txt", "a", "b").await.unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
}

#[tokio::test]
async fn line_endings_bom_and_final_newline_are_kept() {
    let p = project();
    p.write("win.txt", "\u{feff}one\r\ntwo\r\nthree\r\n");
    // LF text, and the trailing newline of the last line dropped by the model.
    edit(&p, "win.txt", "two\nthree\n", "2\n3").await.unwrap();
    assert_eq!(p.read("win.txt"), "\u{feff}one\r\n2\r\n3\r\n");
    p.write("nofinal.txt", "a\nb");
    edit(&p, "nofinal.txt", "b", "c").await.unwrap();
    assert_eq!(p.read("nofinal.txt"), "a\nc");
}

#[tokio::test]
async fn other_agents_argument_names_are_accepted() {
    let p = project();
    p.write("a.txt", "alpha\n");
    p.run(
        "edit",
        json!({"filePath": "a.txt", "oldString": "alpha", "newString": "beta", "replaceAll": false}),
    )
    .await
    .unwrap();
    assert_eq!(p.read("a.txt"), "beta\n");
}

#[tokio::test]
async fn replace_all_refuses_when_the_count_changed() {
    let p = project();
    p.write("a.txt", "x x\n");
    let prepared = p
        .prepare(
            "edit",
            json!({"path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        prepared.proposal.summary,
        "Edit a.txt: 2 replacements at line 1"
    );
    p.write("a.txt", "x x x\n");
    let error = p.apply(prepared).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("approved for 2 occurrences but the file now has 3"),
        "{error}"
    );
}

#[tokio::test]
async fn pointless_and_binary_edits_are_refused() {
    let p = project();
    p.write("a.txt", "same\n");
    let error = prepare_edit(&p, "a.txt", "same", "same").await.unwrap_err();
    assert!(
        error.to_string().contains("nothing would change"),
        "{error}"
    );
    p.write("bin.dat", b"\0\x01\x02");
    let error = prepare_edit(&p, "bin.dat", "a", "b").await.unwrap_err();
    assert!(matches!(error, ToolError::Binary { .. }), "{error:?}");
}
