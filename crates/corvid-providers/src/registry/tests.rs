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
