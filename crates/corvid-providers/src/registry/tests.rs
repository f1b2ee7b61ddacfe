use std::collections::HashMap;
use std::path::Path;

use corvid_config::Flags;
use pretty_assertions::assert_eq;

use super::*;

fn registry(home: &Path, toml: &str, env: &[(&str, &str)]) -> Registry {
    std::fs::write(home.join("config.toml"), toml).unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    vars.insert("CORVID_HOME".to_owned(), home.display().to_string());
    let loaded = corvid_config::load(&Flags::default(), &vars).unwrap();
    Registry::from_config(&loaded, reqwest::Client::new()).unwrap()
}

fn route(registry: &Registry, model: &str) -> Result<(String, String), RouteError> {
    registry
        .resolve(model)
        .map(|route| (route.provider.name().to_owned(), route.model))
}

fn ok(provider: &str, model: &str) -> Result<(String, String), RouteError> {
    Ok((provider.to_owned(), model.to_owned()))
}

#[test]
fn aliases_provider_prefixes_families_and_the_default() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        "[aliases]\nsupergrok = \"grok-4.6\"\nsonnet = \"anthropic/claude-sonnet-4-5\"\n",
        &[("ANTHROPIC_API_KEY", "a-key")],
    );
    assert_eq!(route(&registry, "supergrok"), ok("xai", "grok-4.6"));
    assert_eq!(route(&registry, ""), ok("xai", "grok-4.6"), "default_model");
    assert_eq!(
        route(&registry, "sonnet"),
        ok("anthropic", "claude-sonnet-4-5")
    );
    assert_eq!(
        route(&registry, "xai/grok-3-mini"),
        ok("xai", "grok-3-mini")
    );
    assert_eq!(
        route(&registry, "claude-opus-4-1"),
        ok("anthropic", "claude-opus-4-1"),
        "family"
    );
    assert_eq!(
        route(&registry, "grok-4.5"),
        ok("xai", "grok-4.5"),
        "listed"
    );
    assert_eq!(
        route(&registry, "some-local-model"),
        ok("xai", "some-local-model"),
        "default provider"
    );
}

#[test]
fn unset_providers_say_what_to_set() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(home.path(), "", &[]);
    let error = route(&registry, "openai/gpt-5").unwrap_err();
    assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
    let error = route(&registry, "gpt-5").unwrap_err();
    assert!(
        error.to_string().contains("OPENAI_API_KEY"),
        "a family model names its provider's key: {error}"
    );
    let error = route(&registry, "gemini-2.5-pro").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("GEMINI_API_KEY or GOOGLE_API_KEY"),
        "{error}"
    );
}

#[test]
fn unknown_providers_and_ambiguous_models_list_the_choices() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        "[providers.a]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodels = [\"shared\", \"vendor/model\"]\n\
         [providers.b]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:2/v1\"\nmodels = [\"shared\"]\n",
        &[],
    );
    assert_eq!(
        route(&registry, "shared").unwrap_err(),
        RouteError::Ambiguous {
            model: "shared".to_owned(),
            candidates: vec!["a/shared".to_owned(), "b/shared".to_owned()]
        }
    );
    assert_eq!(route(&registry, "b/shared"), ok("b", "shared"));
    assert_eq!(
        route(&registry, "vendor/model"),
        ok("a", "vendor/model"),
        "a listed id with a slash"
    );
    let error = route(&registry, "nobody/model").unwrap_err();
    assert!(
        matches!(&error, RouteError::UnknownProvider { provider, .. } if provider == "nobody"),
        "{error}"
    );
    assert!(error.to_string().contains("xai, a, b"), "{error}");
}

#[test]
fn unknown_bare_names_fail_when_the_default_provider_is_not_set_up() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(home.path(), "default_provider = \"openai\"\n", &[]);
    let error = route(&registry, "mystery").unwrap_err();
    assert!(matches!(error, RouteError::UnknownModel { .. }), "{error}");
    assert!(
        error.to_string().contains("xai"),
        "lists what is available: {error}"
    );
}

#[test]
fn switched_off_providers_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        "[providers.openai]\nenabled = false\n",
        &[("OPENAI_API_KEY", "k")],
    );
    let error = route(&registry, "openai/gpt-5").unwrap_err();
    assert!(error.to_string().contains("enabled = false"), "{error}");
}

fn zed_route_error(registry: &Registry) -> String {
    match registry.resolve("zed/claude-sonnet-4-6") {
        Err(error) => error.to_string(),
        Ok(route) => panic!("routed to {}", route.provider.name()),
    }
}

/// Issue 10, item 21: a `zed/` request without a sign-in, or with the Zed account off under
/// `CORVID_ALLOW_REMOTE`, says what to do (or why), not "declare it under [providers]".
#[test]
fn zed_requests_say_how_to_sign_in_or_why_the_account_is_off() {
    let home = tempfile::tempdir().unwrap();
    let signed_out = registry(home.path(), "", &[("CORVID_KEYRING", "off")]);
    let message = zed_route_error(&signed_out);
    assert!(message.contains("corvid login zed"), "{message}");
    assert!(!message.contains("[providers]"), "{message}");

    let remote = registry(
        home.path(),
        "",
        &[
            ("CORVID_KEYRING", "off"),
            ("CORVID_ALLOW_REMOTE", "1"),
            ("ZED_USER_ID", "42"),
            ("ZED_ACCESS_TOKEN", "token"),
        ],
    );
    let message = zed_route_error(&remote);
    assert!(message.contains("CORVID_ALLOW_REMOTE"), "{message}");
    assert!(!message.contains("[providers]"), "{message}");
}

/// Issue 10, item 21: once Zed refuses the sign-in (401), `zed/` requests say so and how to
/// sign in again.
#[tokio::test]
async fn a_refused_zed_sign_in_makes_zed_requests_say_so() {
    let cloud = corvid_test_support::zed_cloud::MockZedCloud::start().await;
    cloud.revoke_account();
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        &format!("[providers.zed]\nbase_url = \"{}\"\n", cloud.base_url()),
        &[
            ("CORVID_KEYRING", "off"),
            ("ZED_USER_ID", "42"),
            ("ZED_ACCESS_TOKEN", "token"),
        ],
    );
    assert!(registry.resolve("zed/claude-sonnet-4-6").is_ok());
    let zed = registry.provider("zed").unwrap().zed_service().unwrap();
    assert!(zed.models().await.is_err());
    let message = zed_route_error(&registry);
    assert!(message.contains("refused"), "{message}");
    assert!(message.contains("corvid login zed"), "{message}");
}

/// Issue 10, item 22: `/models` is read again once a new LLM token was minted (the list can
/// change with the plan), as Zed does.
#[tokio::test]
async fn zed_models_are_read_again_after_the_token_is_renewed() {
    use corvid_test_support::zed_cloud::{MockZedCloud, StaleReply, fixtures};
    let cloud = MockZedCloud::start().await;
    let config = crate::zed::ZedConfig::new(&corvid_auth::zed::ZedHosts::single(&cloud.base_url()));
    let transport = crate::Transport::new(
        config.connect_timeout,
        config.idle_timeout,
        &config.llm_url,
        |_| None,
    )
    .unwrap();
    let client = crate::zed::ZedClient::with_transport(
        config,
        corvid_auth::zed::ZedCredentials {
            user_id: corvid_test_support::zed_cloud::USER_ID.to_owned(),
            access_token: corvid_auth::Secret::new(corvid_test_support::zed_cloud::ACCOUNT_TOKEN),
            system_id: None,
        },
        transport,
    );
    let service = ZedService::new(client.clone());
    let first = service.models().await.unwrap();
    assert!(first.get("grok-4").is_some());
    // Cached: no second read while the token stands.
    service.models().await.unwrap();
    assert_eq!(cloud.requests_to("/models").len(), 1);

    let mut changed = fixtures::models();
    changed["models"]
        .as_array_mut()
        .unwrap()
        .retain(|model| model["id"] != "grok-4");
    cloud.set_models(changed);
    cloud.expire_tokens(StaleReply::expired());
    let stale = client.llm_token().await.unwrap();
    client.refresh_llm_token(&stale).await.unwrap();
    let second = service.models().await.unwrap();
    assert!(
        second.get("grok-4").is_none(),
        "the list was not read again"
    );
    assert_eq!(cloud.requests_to("/models").len(), 2);
}
