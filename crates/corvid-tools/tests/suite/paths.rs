//! Every way out of the project folder is refused, by every tool that takes a path.

use std::os::unix::fs::symlink;

use corvid_tools::{PathError, ToolError};
use serde_json::json;

use super::support::project;

fn is_outside(error: &ToolError) -> bool {
    matches!(
        error,
        ToolError::Path(PathError::Outside { .. } | PathError::SymlinkOutside { .. })
    )
}

#[tokio::test]
async fn dot_dot_is_refused_by_every_path_tool() {
    let p = project();
    let attempts = [
        ("read", json!({"path": "../outside/secret.txt"})),
        (
            "write",
            json!({"path": "../outside/new.txt", "content": "x"}),
        ),
        (
            "edit",
            json!({"path": "../outside/secret.txt", "old_string": "top", "new_string": "no"}),
        ),
        ("glob", json!({"pattern": "*", "path": ".."})),
        ("grep", json!({"pattern": "secret", "path": "../outside"})),
    ];
    for (tool, arguments) in attempts {
        let error = p.prepare(tool, arguments).await.unwrap_err();
        assert!(is_outside(&error), "{tool}: {error:?}");
        assert!(
            error.to_string().contains("outside the project folder"),
            "{error}"
        );
    }
    assert!(!p.outside.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn absolute_paths_outside_are_refused_and_inside_accepted() {
    let p = project();
    p.write("inside.txt", "hello\n");
    let secret = p.outside.join("secret.txt");
    let error = p
        .prepare("read", json!({"path": secret}))
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    let error = p
        .prepare("write", json!({"path": "/etc/corvid-test", "content": "x"}))
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    let output = p
        .run("read", json!({"path": p.path("inside.txt")}))
        .await
        .unwrap();
    assert_eq!(output.text, "     1\thello\n");
}

#[tokio::test]
async fn a_symlinked_directory_leading_out_is_refused() {
    let p = project();
    symlink(p.outside.join("dir"), p.path("linkdir")).unwrap();
    let error = p
        .prepare("write", json!({"path": "linkdir/x.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::Path(PathError::SymlinkOutside { .. })),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("symbolic link linkdir"),
        "{error}"
    );
    let error = p
        .prepare("read", json!({"path": "linkdir/../secret.txt"}))
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    let error = p
        .prepare("grep", json!({"pattern": "x", "path": "linkdir"}))
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
}

#[tokio::test]
async fn a_symlinked_file_leading_out_is_refused_and_never_searched() {
    let p = project();
    symlink(p.outside.join("secret.txt"), p.path("leak.txt")).unwrap();
    for (tool, arguments) in [
        ("read", json!({"path": "leak.txt"})),
        ("write", json!({"path": "leak.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "leak.txt", "old_string": "top", "new_string": "no"}),
        ),
    ] {
        let error = p.prepare(tool, arguments).await.unwrap_err();
        assert!(is_outside(&error), "{tool}: {error:?}");
    }
    // Searches walk past it.
    let output = p.run("grep", json!({"pattern": "secret"})).await.unwrap();
    assert!(output.text.starts_with("No matches"), "{}", output.text);
    let output = p.run("glob", json!({"pattern": "*.txt"})).await.unwrap();
    assert!(output.text.starts_with("No files"), "{}", output.text);
}

#[tokio::test]
async fn a_symlink_inside_a_not_yet_existing_path_is_refused() {
    let p = project();
    symlink(p.outside.join("dir"), p.path("linkdir")).unwrap();
    let error = p
        .prepare(
            "write",
            json!({"path": "linkdir/new/deeper/file.txt", "content": "x"}),
        )
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    let error = p
        .prepare(
            "edit",
            json!({"path": "linkdir/new.txt", "old_string": "", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    assert!(!p.outside.join("dir/new").exists());
    assert!(!p.outside.join("dir/new.txt").exists());
}

#[tokio::test]
async fn git_internals_are_never_written() {
    let p = project();
    p.write(".git/config", "[core]\n");
    for (tool, arguments) in [
        ("write", json!({"path": ".git/config", "content": "x"})),
        (
            "edit",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "x"}),
        ),
        (
            "write",
            json!({"path": ".git/hooks/pre-commit", "content": "evil"}),
        ),
    ] {
        let error = p.prepare(tool, arguments).await.unwrap_err();
        assert!(
            matches!(error, ToolError::Path(PathError::Protected { .. })),
            "{tool}: {error:?}"
        );
    }
    assert_eq!(p.read(".git/config"), "[core]\n");
    // Reading is allowed.
    let output = p.run("read", json!({"path": ".git/config"})).await.unwrap();
    assert_eq!(output.text, "     1\t[core]\n");
}

#[tokio::test]
async fn a_symlink_swapped_in_during_review_is_refused_at_apply() {
    let p = project();
    std::fs::create_dir(p.path("sub")).unwrap();
    let prepared = p
        .prepare("write", json!({"path": "sub/file.txt", "content": "x"}))
        .await
        .unwrap();
    std::fs::remove_dir(p.path("sub")).unwrap();
    symlink(p.outside.join("dir"), p.path("sub")).unwrap();
    let error = p.apply(prepared).await.unwrap_err();
    assert!(is_outside(&error), "{error:?}");
    assert!(!p.outside.join("dir/file.txt").exists());
}
