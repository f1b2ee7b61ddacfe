//! Issue 22 item 6: `/v1/models` in every dialect carries what corvid knows of each model — the
//! context window, output limit, prices and capabilities — from the catalog shipped with
//! corvid, the provider's own list where it states them, and `[prices]` over the catalog.

use corvid_test_support::Reply;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

async fn gateway(configure: impl FnOnce(&mut corvid_config::Config)) -> Gateway {
    Gateway::start_with(|config| {
        providers_on_mock(config, &["anthropic"]);
        for provider in &mut config.providers {
            if provider.name == "anthropic" {
                provider.models = vec!["claude-sonnet-4-5".to_owned()];
            }
        }
        configure(config);
    })
    .await
}

async fn list(gateway: &Gateway, header: Option<(&str, &str)>, path: &str) -> Value {
    let mut request = gateway.client.get(gateway.url(path));
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    request.send().await.unwrap().json().await.unwrap()
}

fn entry<'a>(list: &'a Value, field: &str, key: &str, id: &str) -> &'a Value {
    list[field]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry[key] == id)
        .unwrap_or_else(|| panic!("no {id} in {list}"))
}

#[tokio::test]
async fn openai_objects_carry_window_output_prices_and_capabilities() {
    let gateway = gateway(|_| {}).await;
    let listed = list(&gateway, None, "/v1/models").await;
    let sonnet = entry(&listed, "data", "id", "anthropic/claude-sonnet-4-5");
    assert_eq!(sonnet["object"], "model");
    assert_eq!(sonnet["owned_by"], "anthropic");
    assert_eq!(sonnet["context_window"], 200_000);
    assert_eq!(sonnet["max_output_tokens"], 64_000);
    assert_eq!(
        sonnet["pricing"],
        json!({"unit": "usd_per_million_tokens", "input": 3.0, "output": 15.0,
               "cached_input": 0.3, "cache_write": 3.75})
    );
    assert_eq!(
        sonnet["capabilities"],
        json!({"tools": true, "images": true, "reasoning": true})
    );
    // The retrieve answers the same entry.
    let one = list(&gateway, None, "/v1/models/anthropic/claude-sonnet-4-5").await;
    assert_eq!(&one, sonnet);
    // A model nothing knows carries no invented figures.
    let unknown = entry(&listed, "data", "id", "xai/mock-extra-model");
    for field in [
        "context_window",
        "max_output_tokens",
        "pricing",
        "capabilities",
    ] {
        assert!(unknown.get(field).is_none(), "{field} in {unknown}");
    }
}

#[tokio::test]
async fn configured_prices_override_the_catalog_in_the_list() {
    let gateway = gateway(|config| {
        config.prices.insert(
            "claude-sonnet-4-5".to_owned(),
            corvid_config::Price {
                input: 1.0,
                cached_input: 0.1,
                cache_write: 1.0,
                output: 2.0,
            },
        );
    })
    .await;
    let listed = list(&gateway, None, "/v1/models").await;
    let sonnet = entry(&listed, "data", "id", "anthropic/claude-sonnet-4-5");
    assert_eq!(sonnet["pricing"]["input"], 1.0);
    assert_eq!(sonnet["pricing"]["output"], 2.0);
}

#[tokio::test]
async fn anthropic_and_gemini_lists_use_their_own_fields() {
    let gateway = gateway(|_| {}).await;
    let anthropic = list(
        &gateway,
        Some(("anthropic-version", "2023-06-01")),
        "/v1/models",
    )
    .await;
    let sonnet = entry(&anthropic, "data", "id", "anthropic/claude-sonnet-4-5");
    assert_eq!(sonnet["type"], "model");
    assert_eq!(sonnet["max_input_tokens"], 200_000);
    assert_eq!(sonnet["max_tokens"], 64_000);
    let gemini = list(&gateway, None, "/v1beta/models").await;
    let sonnet = entry(
        &gemini,
        "models",
        "name",
        "models/anthropic/claude-sonnet-4-5",
    );
    assert_eq!(sonnet["inputTokenLimit"], 200_000);
    assert_eq!(sonnet["outputTokenLimit"], 64_000);
    assert_eq!(sonnet["thinking"], true);
}

/// A provider's own list wins where it states a limit (here vLLM's `max_model_len` and an
/// output limit), over the catalog and the family table.
#[tokio::test]
async fn a_providers_own_list_refreshes_the_catalog() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["ollama"])).await;
    gateway.upstream.enqueue(
        "/v1/models",
        Reply::ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-coder", "object": "model", "max_model_len": 32_768,
             "max_output_tokens": 4_096}]})),
    );
    // The xai preset reads the same mock list first; the ollama provider gets the second.
    gateway.upstream.enqueue(
        "/v1/models",
        Reply::ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-coder", "object": "model", "max_model_len": 32_768,
             "max_output_tokens": 4_096}]})),
    );
    let listed = list(&gateway, None, "/v1/models").await;
    let qwen = entry(&listed, "data", "id", "ollama/qwen2.5-coder");
    assert_eq!(qwen["context_window"], 32_768, "{qwen}");
    assert_eq!(qwen["max_output_tokens"], 4_096, "{qwen}");
    assert!(qwen.get("pricing").is_none(), "{qwen}");
}

/// Ollama's OpenAI-shaped list states no window; its `/api/show` does, per model.
#[tokio::test]
async fn an_ollama_window_is_read_from_api_show() {
    let gateway = Gateway::start_with(|config| {
        providers_on_mock(config, &["ollama"]);
        // Only ollama lists here, so the mock's one scripted list is its own.
        for provider in &mut config.providers {
            provider.enabled = provider.name == "ollama";
        }
    })
    .await;
    gateway.upstream.enqueue(
        "/v1/models",
        Reply::ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-coder:7b", "object": "model", "owned_by": "library"}]})),
    );
    gateway.upstream.enqueue(
        "/api/show",
        Reply::ok(json!({"parameters": "temperature 0.2",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32_768}})),
    );
    let listed = list(&gateway, None, "/v1/models").await;
    let qwen = entry(&listed, "data", "id", "ollama/qwen2.5-coder:7b");
    assert_eq!(qwen["context_window"], 32_768, "{qwen}");
    let asked: Vec<Value> = gateway
        .upstream
        .requests()
        .iter()
        .filter(|request| request.path == "/api/show")
        .map(|request| request.json())
        .collect();
    assert_eq!(asked, vec![json!({"model": "qwen2.5-coder:7b"})]);
}

/// A keyless local server of another kind (here an Anthropic-compatible one) is not sent
/// llama.cpp's `/props` or Ollama's `/api/show`: only OpenAI-compatible servers answer them.
#[tokio::test]
async fn a_local_server_of_another_kind_is_not_probed_for_its_window() {
    let gateway = Gateway::start_with(|config| {
        providers_on_mock(config, &["ollama"]);
        for provider in &mut config.providers {
            provider.enabled = provider.name == "ollama";
            if provider.name == "ollama" {
                provider.kind = corvid_config::ProviderKind::Anthropic;
            }
        }
    })
    .await;
    gateway.upstream.enqueue(
        "/v1/models",
        Reply::ok(json!({"data": [{"id": "local-claude", "type": "model"}], "has_more": false})),
    );
    let listed = list(&gateway, None, "/v1/models").await;
    entry(&listed, "data", "id", "ollama/local-claude");
    let probes: Vec<String> = gateway
        .upstream
        .requests()
        .into_iter()
        .map(|request| request.path)
        .filter(|path| path == "/api/show" || path == "/props")
        .collect();
    assert_eq!(probes, Vec::<String>::new());
}
