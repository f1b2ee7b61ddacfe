use std::time::{Duration, SystemTime};

use corvid_tools::{ToolError, ToolLimits};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Project, project, project_with};

/// Sets a file's modification time to `seconds` after the epoch.
fn touch(p: &Project, relative: &str, seconds: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(p.path(relative))
        .unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
        .unwrap();
}

fn tree(p: &Project) {
    p.write(".gitignore", "target/\n*.log\n");
    p.write("src/main.rs", "fn main() {\n    println!(\"Hello\");\n}\n");
    p.write(
        "src/lib.rs",
        "pub fn hello() -> &'static str {\n    \"hello\"\n}\n",
    );
    p.write("src/deep/mod.rs", "// HELLO from deep\n");
    p.write("target/debug/build.rs", "fn hello() {}\n");
    p.write("debug.log", "hello log\n");
    p.write(".github/workflows/ci.yml", "name: hello\n");
    p.write(".git/HEAD", "hello: refs/heads/main\n");
    touch(p, "src/main.rs", 1_000);
    touch(p, "src/lib.rs", 3_000);
    touch(p, "src/deep/mod.rs", 2_000);
}

#[tokio::test]
async fn glob_respects_gitignore_and_sorts_newest_first() {
    let p = project();
    tree(&p);
    let output = p.run("glob", json!({"pattern": "*.rs"})).await.unwrap();
    assert_eq!(output.text, "src/lib.rs\nsrc/deep/mod.rs\nsrc/main.rs\n");
    let output = p.run("glob", json!({"pattern": "src/*.rs"})).await.unwrap();
    assert_eq!(output.text, "src/lib.rs\nsrc/main.rs\n");
    let output = p
        .run("glob", json!({"pattern": "**/*.rs", "path": "src/deep"}))
        .await
        .unwrap();
    assert_eq!(output.text, "src/deep/mod.rs\n");
    // Hidden files are found; `.git` never is.
    let output = p.run("glob", json!({"pattern": "*.yml"})).await.unwrap();
    assert_eq!(output.text, ".github/workflows/ci.yml\n");
    let output = p.run("glob", json!({"pattern": "HEAD"})).await.unwrap();
    assert_eq!(output.text, "No files match `HEAD` in the project folder.");
}

#[tokio::test]
async fn glob_is_capped_with_a_note() {
    let p = project_with(ToolLimits {
        search_results: 2,
        ..ToolLimits::default()
    });
    for (index, name) in ["a.txt", "b.txt", "c.txt", "d.txt"].iter().enumerate() {
        p.write(name, "x");
        touch(&p, name, 100 + index as u64);
    }
    let output = p.run("glob", json!({"pattern": "*.txt"})).await.unwrap();
    assert_eq!(
        output.text,
        "d.txt\nc.txt\n\n(Truncated: showing 2 of 4 files, most recently modified first. Use a narrower pattern or path.)\n"
    );
}

#[tokio::test]
async fn grep_respects_gitignore_and_prints_path_line_text() {
    let p = project();
    tree(&p);
    let output = p.run("grep", json!({"pattern": "hello"})).await.unwrap();
    assert_eq!(
        output.text,
        ".github/workflows/ci.yml:1: name: hello\nsrc/lib.rs:1: pub fn hello() -> &'static str {\nsrc/lib.rs:2:     \"hello\"\n"
    );
    let output = p
        .run(
            "grep",
            json!({"pattern": "hello", "case_insensitive": true, "glob": "*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "src/deep/mod.rs:1: // HELLO from deep\nsrc/lib.rs:1: pub fn hello() -> &'static str {\nsrc/lib.rs:2:     \"hello\"\nsrc/main.rs:2:     println!(\"Hello\");\n"
    );
}

#[tokio::test]
async fn grep_context_lines() {
    let p = project();
    p.write("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    let output = p
        .run(
            "grep",
            json!({"pattern": "^(two|six)$", "path": "a.txt", "context": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "a.txt-1- one\na.txt:2: two\na.txt-3- three\n--\na.txt-5- five\na.txt:6: six\na.txt-7- seven\n"
    );
}

#[tokio::test]
async fn grep_caps_matches_and_long_lines() {
    let p = project_with(ToolLimits {
        search_results: 3,
        grep_line_chars: 10,
        ..ToolLimits::default()
    });
    p.write(
        "a.txt",
        "match 1\nmatch 2\nmatch 3\nmatch 4 is a long line\n",
    );
    p.write("b.txt", "match 5\n");
    let output = p.run("grep", json!({"pattern": "match"})).await.unwrap();
    assert_eq!(
        output.text,
        "a.txt:1: match 1\na.txt:2: match 2\na.txt:3: match 3\n\n(Truncated after 3 matches; there are more. Narrow the pattern, path or glob.)\n"
    );
    let output = p
        .run("grep", json!({"pattern": "long", "path": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(output.text, "a.txt:4: match 4 is… [12 more characters]\n");
}

#[tokio::test]
async fn grep_skips_binary_files_and_rejects_bad_regexes() {
    let p = project();
    p.write("blob.bin", b"\0\0needle\0");
    p.write("text.txt", "needle\n");
    let output = p.run("grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(output.text, "text.txt:1: needle\n");
    let error = p
        .prepare("grep", json!({"pattern": "(unclosed"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("bad regular expression"),
        "{error}"
    );
}

#[tokio::test]
async fn grep_on_a_single_file_applies_the_glob_to_its_name() {
    let p = project();
    p.write("src/a.rs", "needle\n");
    let output = p
        .run(
            "grep",
            json!({"pattern": "needle", "path": "src/a.rs", "glob": "*.rs"}),
        )
        .await
        .unwrap();
    assert_eq!(output.text, "src/a.rs:1: needle\n");
    let output = p
        .run(
            "grep",
            json!({"pattern": "needle", "path": "src/a.rs", "glob": "*.py"}),
        )
        .await
        .unwrap();
    assert_eq!(output.text, "No matches for `needle` in src/a.rs.");
}
