use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use corvid_config::Flags;
use http::StatusCode;

use crate::error::ProviderError;
use crate::registry::Registry;

/// The registry of `home` with `toml` and the environment `env` (never this machine's own).
fn registry(home: &Path, toml: &str, env: &[(&str, &str)]) -> Registry {
    std::fs::write(home.join("config.toml"), toml).unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    vars.insert("CORVID_HOME".to_owned(), home.display().to_string());
    let loaded = corvid_config::load(&Flags::default(), &vars).unwrap();
    Registry::from_config(&loaded, reqwest::Client::new()).unwrap()
}

fn failed(registry: &Registry, provider: &str) {
    registry
        .provider(provider)
        .unwrap()
        .upstream()
        .note_failure(&ProviderError::Status {
            status: StatusCode::BAD_GATEWAY,
            body: Bytes::from_static(br#"{"error": {"message": "down for a moment"}}"#),
            retry_after: None,
        });
}

const POOLED: &str = "[providers.openai]\napi_key_envs = [\"OPENAI_KEY_A\", \"OPENAI_KEY_B\"]\n";

#[test]
fn a_reload_keeps_unchanged_providers_with_their_state_and_drops_changed_ones() {
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("XAI_API_KEY", "x-1"),
        ("OPENAI_KEY_A", "o-a"),
        ("OPENAI_KEY_B", "o-b"),
    ];
    let first = registry(home.path(), POOLED, &env);
    failed(&first, "xai");
    failed(&first, "openai");
    let openai = first.provider("openai").unwrap();
    assert_eq!(openai.keys().len(), 2);
    openai
        .keys()
        .rest(0, Some(std::time::Duration::from_secs(60)));

    // An unrelated setting (an alias) changes: both providers, and their state, stay.
    let aliased = format!("{POOLED}[aliases]\nfast = \"grok-3-mini\"\n");
    let second = registry(home.path(), &aliased, &env).keeping_unchanged(&first);
    for name in ["xai", "openai"] {
        assert!(
            Arc::ptr_eq(
                first.provider(name).unwrap(),
                second.provider(name).unwrap()
            ),
            "{name} was rebuilt"
        );
    }
    assert_eq!(
        second
            .provider("xai")
            .unwrap()
            .upstream()
            .failing()
            .unwrap()
            .status,
        Some(502)
    );
    assert!(second.provider("openai").unwrap().keys().is_resting(0));
    assert_eq!(
        second.aliases()["fast"],
        "grok-3-mini",
        "the new settings serve"
    );

    // xAI's key changes: xAI starts afresh, OpenAI keeps its failure and its cooldown.
    let rekeyed = [
        ("XAI_API_KEY", "x-2"),
        ("OPENAI_KEY_A", "o-a"),
        ("OPENAI_KEY_B", "o-b"),
    ];
    let third = registry(home.path(), &aliased, &rekeyed).keeping_unchanged(&second);
    let xai = third.provider("xai").unwrap();
    assert!(!Arc::ptr_eq(second.provider("xai").unwrap(), xai));
    assert_eq!(xai.upstream().failing(), None);
    assert!(
        xai.upstream()
            .credential()
            .same_as(&corvid_auth::Credential::ApiKey("x-2".to_owned().into())),
        "the new key is used"
    );
    let openai = third.provider("openai").unwrap();
    assert!(Arc::ptr_eq(second.provider("openai").unwrap(), openai));
    assert!(openai.upstream().failing().is_some());
    assert!(openai.keys().is_resting(0));

    // A pool key changes, or a provider setting: OpenAI starts afresh too.
    let repooled = [
        ("XAI_API_KEY", "x-2"),
        ("OPENAI_KEY_A", "o-a"),
        ("OPENAI_KEY_B", "o-c"),
    ];
    let fourth = registry(home.path(), &aliased, &repooled).keeping_unchanged(&third);
    let openai = fourth.provider("openai").unwrap();
    assert!(!Arc::ptr_eq(third.provider("openai").unwrap(), openai));
    assert!(!openai.keys().is_resting(0));
    assert_eq!(openai.upstream().failing(), None);
    assert!(Arc::ptr_eq(
        third.provider("xai").unwrap(),
        fourth.provider("xai").unwrap()
    ));

    // A timeout every transport is built with: nothing is kept.
    let slower = format!("request_timeout_s = 900\n{aliased}");
    let fifth = registry(home.path(), &slower, &repooled).keeping_unchanged(&fourth);
    assert!(!Arc::ptr_eq(
        fourth.provider("xai").unwrap(),
        fifth.provider("xai").unwrap()
    ));
}
