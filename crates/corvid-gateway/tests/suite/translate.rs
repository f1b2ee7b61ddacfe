//! Every dialect in, every provider out, through the real gateway against mock upstreams.

use corvid_test_support::Reply;
use futures_util::StreamExt;
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

async fn gateway() -> Gateway {
    Gateway::start_with(|config| providers_on_mock(config, &["anthropic", "gemini", "openai"]))
        .await
}

/// The `data:` payloads of an SSE body, parsed.
fn sse_data(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

#[tokio::test]
async fn openai_chat_client_on_a_claude_model() {
    let gateway = gateway().await;
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(reply["model"], "claude-sonnet-4-5");
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "Hello from the mock."
    );
    assert_eq!(reply["choices"][0]["finish_reason"], "stop");
    assert_eq!(reply["usage"]["prompt_tokens"], 12);

    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "anthropic-test-key");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert!(
        sent.headers.get("authorization").is_none(),
        "the client's key never goes upstream"
    );
    let body = sent.json();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    // Cache breakpoints a Chat client cannot set: the system prompt and the last turn.
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": ephemeral}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": ephemeral}]}])
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn openai_chat_client_streams_from_a_claude_model() {
    let gateway = gateway().await;
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"anthropic/claude-sonnet-4-5","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let chunks = sse_data(&text);
    let content: String = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hello from the mock.");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]), "usage chunk keeps choices: []");
    assert_eq!(last["usage"]["completion_tokens"], 5);
    assert!(
        gateway.upstream.requests()[0].json()["stream"]
            .as_bool()
            .unwrap()
    );
}

#[tokio::test]
async fn anthropic_client_on_a_grok_model_with_a_tool_call() {
    let gateway = gateway().await;
    let call = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let events = [
        call(json!({"role": "assistant", "content": "Let me look."}), Value::Null),
        call(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}), Value::Null),
        call(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}), Value::Null),
        call(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"src/lib.rs\"}"}}]}), Value::Null),
        call(json!({}), json!("tool_calls")),
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6", "choices": [],
               "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}}).to_string(),
        "[DONE]".to_owned(),
    ];
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::sse(&refs, std::time::Duration::ZERO),
    );
    let body = json!({
        "model": "grok", "max_tokens": 32000, "stream": true,
        "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "show lib.rs"}]}],
        "tools": [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
        "metadata": {"user_id": "u1"}, "context_management": {"edits": []}
    });
    let response = gateway
        .client
        .post(gateway.url("/v1/messages?beta=true"))
        .header("x-api-key", "sk-ant-client")
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "claude-code-20250219")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    // Every event line matches its data's type, and the order is Claude Code's.
    let mut kinds = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(kind) = line.strip_prefix("event: ") {
            let data: Value =
                serde_json::from_str(lines.next().unwrap().strip_prefix("data: ").unwrap())
                    .unwrap();
            assert_eq!(data["type"], kind);
            kinds.push((kind.to_owned(), data));
        }
    }
    let names: Vec<&str> = kinds.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names.last(), Some(&"message_stop"));
    let tool_start = kinds
        .iter()
        .find(|(kind, data)| {
            kind == "content_block_start" && data["content_block"]["type"] == "tool_use"
        })
        .unwrap();
    assert_eq!(tool_start.1["content_block"]["name"], "read_file");
    let arguments: String = kinds
        .iter()
        .filter_map(|(_, data)| data["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"path": "src/lib.rs"})
    );
    let delta = kinds
        .iter()
        .find(|(kind, _)| kind == "message_delta")
        .unwrap();
    assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta.1["usage"]["output_tokens"], 9);

    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], "Bearer upstream-test-key");
    let sent = sent.json();
    assert_eq!(sent["model"], "grok-4.6");
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "You are Claude Code."})
    );
    assert!(
        sent.get("context_management").is_none() && sent.get("metadata").is_none(),
        "{sent}"
    );
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn gemini_client_on_a_grok_model_and_back() {
    let gateway = gateway().await;
    let response = gateway
        .post(
            "/v1beta/models/grok-4.6:generateContent",
            r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":100}}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(
        reply["candidates"][0]["content"]["parts"][0]["text"],
        "Hello from the mock."
    );
    assert_eq!(reply["candidates"][0]["finishReason"], "STOP");
    assert_eq!(reply["usageMetadata"]["promptTokenCount"], 12);
    let sent = gateway.upstream.requests()[0].json();
    assert_eq!(sent["max_completion_tokens"], 100);

    let response = gateway
        .post(
            "/v1beta/models/grok-4.6:streamGenerateContent?alt=sse",
            r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#,
        )
        .await;
    let chunks = sse_data(&response.text().await.unwrap());
    let text: String = chunks
        .iter()
        .filter_map(|chunk| chunk["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello from the mock.");
}

#[tokio::test]
async fn gemini_models_pass_through_for_gemini_clients() {
    let gateway = gateway().await;
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let response = gateway
        .post(
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            body,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("Hello"), "{text}");
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/models/gemini-2.5-pro:streamGenerateContent");
    assert_eq!(sent.headers["x-goog-api-key"], "gemini-test-key");
    assert_eq!(sent.body, body.as_bytes(), "byte for byte");
}

#[tokio::test]
async fn responses_client_on_a_claude_model() {
    let gateway = gateway().await;
    let response = gateway
        .post(
            "/v1/responses",
            r#"{"model":"claude-opus-4-1","input":"hi","instructions":"Be brief."}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["object"], "response");
    assert_eq!(
        reply["output"][0]["content"][0]["text"],
        "Hello from the mock."
    );
    assert_eq!(gateway.upstream.requests()[0].path, "/v1/messages");
}

#[tokio::test]
async fn claude_code_on_a_claude_model_passes_through() {
    let gateway = gateway().await;
    let body = r#"{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"context_management":{"edits":[]}}"#;
    let response = gateway
        .client
        .post(gateway.url("/v1/messages?beta=true"))
        .header("authorization", "Bearer client-token")
        .header("anthropic-version", "2023-06-01")
        .header(
            "anthropic-beta",
            "claude-code-20250219,interleaved-thinking-2025-05-14",
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.body, body.as_bytes());
    assert_eq!(
        sent.headers["anthropic-beta"],
        "claude-code-20250219,interleaved-thinking-2025-05-14"
    );
    assert_eq!(sent.headers["x-api-key"], "anthropic-test-key");
    assert!(sent.headers.get("authorization").is_none());
}

#[tokio::test]
async fn anthropic_errors_reach_an_openai_client_in_its_shape() {
    let gateway = Gateway::start_with(|config| {
        providers_on_mock(config, &["anthropic"]);
        config.max_retries = 0;
    })
    .await;
    gateway.upstream.enqueue(
        "/v1/messages",
        Reply::status(StatusCode::TOO_MANY_REQUESTS, json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}))
            .with_header("retry-after", "7"),
    );
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "7");
    let value: Value = response.json().await.unwrap();
    assert_eq!(
        value["error"]["message"],
        "Number of request tokens has exceeded your per-minute rate limit"
    );
    assert!(
        value["error"]["type"]
            .as_str()
            .unwrap()
            .contains("rate_limit"),
        "{value}"
    );
}

#[tokio::test]
async fn an_anthropic_529_is_retried() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["anthropic"])).await;
    gateway.upstream.enqueue(
        "/v1/messages",
        Reply::status(StatusCode::from_u16(529).unwrap(), json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
            .with_header("retry-after", "0"),
    );
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(gateway.upstream.requests().len(), 2);
}

#[tokio::test]
async fn routing_errors_answer_in_the_callers_dialect() {
    let gateway = Gateway::start().await;
    let anthropic = gateway
        .post("/v1/messages", r#"{"model":"nobody/claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#)
        .await;
    assert_eq!(anthropic.status(), StatusCode::NOT_FOUND);
    let value: Value = anthropic.json().await.unwrap();
    assert_eq!(value["type"], "error");
    assert_eq!(value["error"]["type"], "not_found_error");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nobody")
    );

    let gemini = gateway
        .post("/v1beta/models/gpt-5:generateContent", r#"{"contents":[]}"#)
        .await;
    assert_eq!(gemini.status(), StatusCode::UNAUTHORIZED);
    let value: Value = gemini.json().await.unwrap();
    assert_eq!(value["error"]["status"], "UNAUTHENTICATED");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY"),
        "{value}"
    );

    let openai = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","messages":[]}"#,
        )
        .await;
    let value: Value = openai.json().await.unwrap();
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY"),
        "{value}"
    );
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn count_tokens_is_estimated_for_other_providers_and_asked_of_anthropic() {
    let gateway = gateway().await;
    let body = r#"{"model":"grok-4.6","messages":[{"role":"user","content":"hello there, how are you today?"}]}"#;
    let value: Value = gateway
        .post("/v1/messages/count_tokens?beta=true", body)
        .await
        .json()
        .await
        .unwrap();
    assert!(value["input_tokens"].as_u64().unwrap() > 0);
    assert!(gateway.upstream.requests().is_empty());

    let body = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#;
    let value: Value = gateway
        .post("/v1/messages/count_tokens", body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(value["input_tokens"], 42);
    assert_eq!(
        gateway.upstream.requests()[0].path,
        "/v1/messages/count_tokens"
    );
}

#[tokio::test]
async fn a_translated_stream_arrives_event_by_event() {
    let gateway = gateway().await;
    let (feed, reply) = Reply::fed();
    gateway.upstream.enqueue("/v1/messages", reply);
    let response = gateway
        .post("/v1/chat/completions", r#"{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
        .await;
    let mut body = response.bytes_stream();
    let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}});
    feed.send(&format!("event: message_start\ndata: {start}\n\n"));
    feed.send("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    feed.send("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"first\"}}\n\n");
    // The first token reaches the client before the upstream sends anything more.
    let mut seen = String::new();
    while !seen.contains("first") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    drop(feed);
}

#[tokio::test]
async fn an_upstream_refusing_stream_options_is_asked_again_without_it() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["openai"])).await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "Unrecognized request argument supplied: stream_options"}}),
        ),
    );
    let response = gateway
        .post("/v1/messages", r#"{"model":"openai/gpt-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("Hello"), "{text}");
    let sent = gateway.upstream.requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].json().get("stream_options").is_some());
    assert!(sent[1].json().get("stream_options").is_none());
}

#[tokio::test]
async fn a_pretty_printed_stream_options_still_asks_for_usage() {
    let gateway = gateway().await;
    let body = "{\n  \"model\": \"anthropic/claude-sonnet-4-5\",\n  \"stream\": true,\n  \"stream_options\": {\n\"include_usage\":\n\ttrue\n  },\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}";
    let text = gateway
        .post("/v1/chat/completions", body)
        .await
        .text()
        .await
        .unwrap();
    let chunks = sse_data(&text);
    assert_eq!(chunks.last().unwrap()["usage"]["completion_tokens"], 5);
}

#[tokio::test]
async fn gemini_count_tokens_reads_both_request_shapes() {
    let gateway = gateway().await;
    let contents =
        r#"{"contents":[{"role":"user","parts":[{"text":"hello there, how are you today?"}]}]}"#;
    let count = |body: String| {
        let gateway = &gateway;
        async move {
            let value: Value = gateway
                .post("/v1beta/models/gemini-2.5-pro:countTokens", &body)
                .await
                .json()
                .await
                .unwrap();
            value["totalTokens"].as_u64().unwrap()
        }
    };
    let direct = count(contents.to_owned()).await;
    let wrapped = count(format!(r#"{{"generateContentRequest":{contents}}}"#)).await;
    assert!(direct > 0);
    assert_eq!(direct, wrapped);
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn a_translated_stream_ends_at_the_upstreams_message_stop() {
    // A real upstream may keep its connection open after `message_stop`; the client's
    // Responses stream must still complete then, not at the body's (idle) end.
    let gateway = gateway().await;
    let (feed, reply) = Reply::fed();
    gateway.upstream.enqueue("/v1/messages", reply);
    let response = gateway
        .post(
            "/v1/responses",
            r#"{"model":"claude-sonnet-4-5","stream":true,"input":"hi"}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}});
    feed.send(&format!("event: message_start\ndata: {start}\n\n"));
    feed.send("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    feed.send("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"done\"}}\n\n");
    feed.send("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
    feed.send("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n");
    feed.send("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    // The feed stays open: the whole body must arrive anyway.
    let text = tokio::time::timeout(std::time::Duration::from_secs(5), response.text())
        .await
        .expect("the stream ended at message_stop")
        .unwrap();
    let events = sse_data(&text);
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    assert!(text.contains("done"));
    drop(feed);
}

#[tokio::test]
async fn serving_responses_is_a_provider_setting_not_its_name() {
    // The same Responses request: translated to chat for a plain OpenAI-compatible server,
    // passed through once its settings say it serves `/responses`.
    for serves_responses in [false, true] {
        let gateway = Gateway::start_with(|config| {
            providers_on_mock(config, &["ollama"]);
            let ollama = config
                .providers
                .iter_mut()
                .find(|provider| provider.name == "ollama")
                .unwrap();
            ollama.capabilities.serves_responses = serves_responses;
        })
        .await;
        gateway.upstream.enqueue(
            "/v1/responses",
            Reply::ok(corvid_test_support::upstream::responses_json(
                "llama3", "hi",
            )),
        );
        gateway.upstream.enqueue(
            "/v1/chat/completions",
            Reply::ok(corvid_test_support::upstream::chat_json("llama3", "hi")),
        );
        let response = gateway
            .post("/v1/responses", r#"{"model":"ollama/llama3","input":"hi"}"#)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        // (A local server's model list is read too, for its context window, and Ollama's
        // `/api/show` asked for each model's.)
        let paths: Vec<String> = gateway
            .upstream
            .requests()
            .into_iter()
            .filter(|request| request.method == "POST" && request.path != "/api/show")
            .map(|request| request.path)
            .collect();
        let expected = if serves_responses {
            "/v1/responses"
        } else {
            "/v1/chat/completions"
        };
        assert_eq!(paths, [expected]);
    }
}

#[tokio::test]
async fn xais_field_table_applies_on_the_pass_through_and_the_translation_alike() {
    let gateway = Gateway::start().await;
    let chat = |model: &str| corvid_test_support::upstream::chat_json(model, "ok");
    // Pass-through: a chat client's `reasoning_effort` to grok-4, which refuses it.
    gateway
        .upstream
        .enqueue("/v1/chat/completions", Reply::ok(chat("grok-4")));
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"grok-4","reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // Translation: an Anthropic client's thinking becomes `reasoning_effort`, kept for a
    // model that takes it and removed for one that does not.
    for model in ["grok-4.6", "grok-4"] {
        gateway
            .upstream
            .enqueue("/v1/chat/completions", Reply::ok(chat(model)));
        let response = gateway
            .post(
                "/v1/messages",
                &format!(
                    r#"{{"model":"{model}","max_tokens":4096,"thinking":{{"type":"enabled","budget_tokens":2048}},"messages":[{{"role":"user","content":"hi"}}]}}"#
                ),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let sent: Vec<Value> = gateway
        .upstream
        .requests()
        .iter()
        .map(|request| request.json())
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].get("reasoning_effort").is_none(), "{}", sent[0]);
    assert!(sent[1].get("reasoning_effort").is_some(), "{}", sent[1]);
    assert!(sent[2].get("reasoning_effort").is_none(), "{}", sent[2]);
}
