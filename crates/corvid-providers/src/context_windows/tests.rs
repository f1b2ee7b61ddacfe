use std::collections::HashMap;
use std::path::Path;

use corvid_config::Flags;
use corvid_test_support::upstream::{MockUpstream, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn registry(home: &Path, toml: &str, env: &[(&str, &str)]) -> Registry {
    std::fs::write(home.join("config.toml"), toml).unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    vars.insert("CORVID_HOME".to_owned(), home.display().to_string());
    vars.insert("CORVID_KEYRING".to_owned(), "off".to_owned());
    let loaded = corvid_config::load(&Flags::default(), &vars).unwrap();
    Registry::from_config(&loaded, reqwest::Client::new()).unwrap()
}

fn window(registry: &Registry, model: &str) -> Option<(u64, WindowSource)> {
    registry
        .context_window(model)
        .map(|window| (window.tokens, window.source))
}

#[test]
fn the_family_table_picks_the_longest_prefix() {
    assert_eq!(family_window("grok-4"), Some(256_000));
    assert_eq!(family_window("grok-4.6"), Some(256_000));
    assert_eq!(family_window("grok-4-fast-reasoning"), Some(2_000_000));
    assert_eq!(family_window("grok-4.3"), Some(1_000_000));
    assert_eq!(family_window("claude-sonnet-4-5"), Some(200_000));
    assert_eq!(family_window("gpt-5-mini"), Some(272_000));
    assert_eq!(family_window("gpt-5.4"), Some(922_000));
    assert_eq!(family_window("models/gemini-2.5-pro"), Some(1_048_576));
    assert_eq!(family_window("GPT-4o"), Some(128_000));
    assert_eq!(family_window("qwen3-coder"), None);
    assert_eq!(family_window(""), None);
}

/// The order: `[context_windows]` (as written, the alias target, provider/model, bare) >
/// `context_window` > the provider's list > the family table > nothing.
#[tokio::test]
async fn configured_beats_the_provider_list_beats_the_family() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        "/v1/models",
        Reply::ok(json!({"models": [
            {"name": "models/gemini-2.5-pro", "inputTokenLimit": 500_000},
            {"name": "models/gemini-2.5-flash"},
        ]})),
    );
    let home = tempfile::tempdir().unwrap();
    let toml = format!(
        "[aliases]\nsonnet = \"anthropic/claude-sonnet-4-5\"\n\n\
         [context_windows]\nsonnet = 150000\n\"xai/grok-4\" = 100000\n\n\
         [providers.gemini]\nbase_url = \"{}\"\n",
        upstream.base_url()
    );
    let registry = registry(
        home.path(),
        &toml,
        &[("ANTHROPIC_API_KEY", "a-key"), ("GEMINI_API_KEY", "g-key")],
    );
    assert_eq!(
        window(&registry, "sonnet"),
        Some((150_000, WindowSource::Configured))
    );
    assert_eq!(
        window(&registry, "claude-opus-4-1"),
        Some((200_000, WindowSource::Family))
    );
    assert_eq!(
        window(&registry, "grok-4"),
        Some((100_000, WindowSource::Configured)),
        "provider/model matches the bare name that routes there"
    );
    assert_eq!(
        window(&registry, "grok-4.6"),
        Some((256_000, WindowSource::Family))
    );
    assert_eq!(window(&registry, "some-local-model"), None);

    // Before the provider's list is read the family decides; after, the list.
    assert_eq!(
        window(&registry, "gemini/gemini-2.5-pro"),
        Some((1_048_576, WindowSource::Family))
    );
    let gemini = registry.provider("gemini").unwrap();
    assert!(gemini.models().await.contains(&"gemini-2.5-pro".to_owned()));
    assert_eq!(
        window(&registry, "gemini/gemini-2.5-pro"),
        Some((500_000, WindowSource::Provider))
    );
    assert_eq!(
        window(&registry, "gemini/gemini-2.5-flash"),
        Some((1_048_576, WindowSource::Family)),
        "a list entry without a limit leaves it to the family"
    );

    // `context_window` beats the catalog, and `[context_windows]` beats it.
    let registry = registry_with_default(home.path(), &toml);
    assert_eq!(
        window(&registry, "gemini/gemini-2.5-pro"),
        Some((64_000, WindowSource::Configured))
    );
    assert_eq!(
        window(&registry, "some-local-model"),
        Some((64_000, WindowSource::Configured))
    );
    assert_eq!(
        window(&registry, "sonnet"),
        Some((150_000, WindowSource::Configured))
    );
}

fn registry_with_default(home: &Path, toml: &str) -> Registry {
    registry(
        home,
        &format!("context_window = 64000\n{toml}"),
        &[("ANTHROPIC_API_KEY", "a-key"), ("GEMINI_API_KEY", "g-key")],
    )
}

/// Zed's `/models` states each model's `max_token_count`; once read, it beats the family.
#[tokio::test]
async fn zed_models_carry_their_window() {
    use corvid_test_support::zed_cloud::{ACCOUNT_TOKEN, MockZedCloud, USER_ID, fixtures};
    let cloud = MockZedCloud::start().await;
    let mut models = fixtures::models();
    models["models"][1]["max_token_count"] = json!(123_456);
    cloud.set_models(models);
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        &format!("[providers.zed]\nbase_url = \"{}\"\n", cloud.base_url()),
        &[
            ("ZED_USER_ID", USER_ID),
            ("ZED_ACCESS_TOKEN", ACCOUNT_TOKEN),
        ],
    );
    assert_eq!(
        window(&registry, "zed/gpt-5"),
        Some((272_000, WindowSource::Family))
    );
    let zed = registry.provider("zed").unwrap();
    assert!(zed.models().await.contains(&"gpt-5".to_owned()));
    assert_eq!(
        window(&registry, "zed/gpt-5"),
        Some((123_456, WindowSource::Provider))
    );
    assert_eq!(
        window(&registry, "zed/claude-sonnet-4-6"),
        Some((200_000, WindowSource::Provider))
    );
}
