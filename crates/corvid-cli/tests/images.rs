//! An image in a message reaches each kind of upstream in that provider's own format: the
//! real binary (`corvid exec`), the real provider path, a mock upstream recording the body.
//! A model the catalog says reads text only is refused before anything is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::MockUpstream;
use serde_json::Value;

mod common;
use common::{corvid, json_lines};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

/// A home whose four providers, one per dialect, all lead to `upstream`.
fn home_for(upstream: &MockUpstream) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let base = upstream.base_url();
    let mut config = String::from("max_retries = 0\n");
    for (name, kind) in [
        ("chat", "openai-chat"),
        ("resp", "openai-responses"),
        ("anth", "anthropic"),
        ("gem", "gemini"),
    ] {
        config.push_str(&format!(
            "\n[providers.{name}]\nkind = \"{kind}\"\nbase_url = \"{base}\"\napi_key_env = \"MOCK_KEY\"\n"
        ));
    }
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    home
}

async fn exec(home: &std::path::Path, project: &std::path::Path, model: &str) -> (i32, Vec<Value>) {
    let mut command = corvid(home);
    command
        .env("MOCK_KEY", "mock-key")
        .args(["exec", "--json", "--model", model, "--project"])
        .arg(project)
        .arg("what is in @shot.png?")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap(), json_lines(output.stdout))
}

/// The one request the upstream received on a path ending in `suffix`, as JSON.
fn body_at(upstream: &MockUpstream, suffix: &str) -> Value {
    let requests: Vec<Value> = upstream
        .requests()
        .iter()
        .filter(|request| request.path.contains(suffix))
        .map(|request| request.json())
        .collect();
    assert_eq!(requests.len(), 1, "{suffix}: {requests:#?}");
    requests.into_iter().next().unwrap()
}

/// The parts of the last user message in an OpenAI-shaped `messages` or `input` list.
fn last_user_content<'a>(list: &'a Value, role_key: &str) -> &'a Vec<Value> {
    list.as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message[role_key] == "user")
        .unwrap()["content"]
        .as_array()
        .unwrap()
}

#[tokio::test]
async fn a_mentioned_image_reaches_each_dialect_in_its_own_format() {
    let upstream = MockUpstream::start().await;
    let home = home_for(&upstream);
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    let data_url = format!("data:image/png;base64,{PNG_BASE64}");

    for model in [
        "chat/vision-1",
        "resp/vision-1",
        "anth/vision-1",
        "gem/vision-1",
    ] {
        let (code, events) = exec(home.path(), project.path(), model).await;
        assert_eq!(code, 0, "{model}: {events:#?}");
    }

    let chat = body_at(&upstream, "/chat/completions");
    let content = last_user_content(&chat["messages"], "role");
    assert_eq!(content[0]["text"], "what is in @shot.png?");
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(content[1]["image_url"]["url"], data_url.as_str());

    let responses = body_at(&upstream, "/responses");
    let content = last_user_content(&responses["input"], "role");
    assert_eq!(content[1]["type"], "input_image");
    assert_eq!(content[1]["image_url"], data_url.as_str());

    let anthropic = body_at(&upstream, "/messages");
    let content = last_user_content(&anthropic["messages"], "role");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(
        content[1]["source"],
        serde_json::json!({"type": "base64", "media_type": "image/png", "data": PNG_BASE64})
    );

    let gemini = body_at(&upstream, ":streamGenerateContent");
    let parts = gemini["contents"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|content| content["role"] == "user")
        .unwrap()["parts"]
        .as_array()
        .unwrap();
    let inline = parts
        .iter()
        .find_map(|part| part.get("inlineData").or_else(|| part.get("inline_data")))
        .unwrap();
    assert_eq!(inline["data"], PNG_BASE64);
    assert_eq!(
        inline
            .get("mimeType")
            .or_else(|| inline.get("mime_type"))
            .unwrap(),
        "image/png"
    );
}

#[tokio::test]
async fn a_text_only_model_is_refused_and_nothing_is_sent() {
    let upstream = MockUpstream::start().await;
    let home = home_for(&upstream);
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    // The catalog says grok-3 reads text only.
    let (code, events) = exec(home.path(), project.path(), "chat/grok-3").await;
    assert_ne!(code, 0);
    let error = events
        .iter()
        .find(|event| event["msg"]["type"] == "error")
        .unwrap();
    assert!(
        error["msg"]["message"]
            .as_str()
            .unwrap()
            .starts_with("chat/grok-3 does not take images; pick one that does, e.g. "),
        "{error}"
    );
    assert!(
        upstream
            .requests()
            .iter()
            .all(|request| !request.path.contains("/chat/completions")),
        "nothing was sent upstream"
    );
}
