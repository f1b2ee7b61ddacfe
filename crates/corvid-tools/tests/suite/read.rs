use corvid_tools::{ToolError, ToolLimits};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{project, project_with};

fn lines(count: usize) -> String {
    (1..=count).map(|n| format!("line {n}\n")).collect()
}

#[tokio::test]
async fn numbered_lines() {
    let p = project();
    p.write("a.txt", "one\ntwo\r\nthree");
    let output = p.run("read", json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(output.text, "     1\tone\n     2\ttwo\n     3\tthree\n");
    assert!(!output.is_error);
}

#[tokio::test]
async fn offset_and_limit_say_where_to_continue() {
    let p = project();
    p.write("a.txt", lines(10));
    let output = p
        .run("read", json!({"path": "a.txt", "offset": 3, "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Use offset=5 to read on.)\n"
    );
    // Strings are forgiven, and the end needs no note.
    let output = p
        .run("read", json!({"file_path": "a.txt", "offset": "9"}))
        .await
        .unwrap();
    assert_eq!(output.text, "     9\tline 9\n    10\tline 10\n");
    let error = p
        .run("read", json!({"path": "a.txt", "offset": 11}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::OffsetPastEnd { lines: 10, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn default_line_limit_and_byte_cap() {
    let p = project_with(ToolLimits {
        read_lines: 5,
        read_bytes: 40,
        line_chars: 8,
        ..ToolLimits::default()
    });
    p.write("a.txt", lines(12));
    let output = p.run("read", json!({"path": "a.txt"})).await.unwrap();
    // Each numbered line is 14 bytes: two fit in 40.
    assert_eq!(
        output.text,
        "     1\tline 1\n     2\tline 2\n\n(Showing lines 1-2 of 12 (output is capped at 40 bytes). Use offset=3 to read on.)\n"
    );
    p.write("long.txt", "abcdefghijklmnop\n");
    let output = p.run("read", json!({"path": "long.txt"})).await.unwrap();
    assert_eq!(output.text, "     1\tabcdefgh… [8 more characters]\n");
    let output = p
        .run("read", json!({"path": "a.txt", "limit": 100, "offset": 11}))
        .await
        .unwrap();
    assert_eq!(output.text, "    11\tline 11\n    12\tline 12\n");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let p = project();
    p.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let error = p
        .run("read", json!({"path": "image.png"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::Binary { .. }), "{error:?}");
    assert!(error.to_string().contains("binary file"), "{error}");
    p.write("latin1.txt", b"caf\xe9 cr\xe8me\n");
    let error = p
        .run("read", json!({"path": "latin1.txt"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::Binary { reason, .. } if reason.contains("UTF-8")),
        "{error:?}"
    );
}

#[tokio::test]
async fn directories_are_listed() {
    let p = project();
    p.write("src/main.rs", "fn main() {}\n");
    p.write("README.md", "# hi\n");
    p.write(".env.example", "X=1\n");
    let output = p.run("read", json!({"path": "."})).await.unwrap();
    assert_eq!(
        output.text,
        ". is a directory with 3 entries (`/` marks directories, `@` symbolic links):\n.env.example\nREADME.md\nsrc/\n"
    );
}

#[tokio::test]
async fn missing_and_empty_files() {
    let p = project();
    let error = p
        .run("read", json!({"path": "nope.txt"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::NotFound { .. }), "{error:?}");
    assert_eq!(error.to_string(), "nope.txt does not exist");
    p.write("empty.txt", "");
    let output = p.run("read", json!({"path": "empty.txt"})).await.unwrap();
    assert_eq!(output.text, "empty.txt is empty.");
}
