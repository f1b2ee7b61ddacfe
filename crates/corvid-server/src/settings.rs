//! `GET/PUT /api/settings`: the settings window of the page. The default model, aliases and
//! providers (on/off, base URL) are written to `config.toml`; the approval policy and the model
//! apply to the running session at once (through the engine's `set_model` and
//! `set_approval_policy`); provider keys are set or cleared in the env file and never read back:
//! the answer says only whether each is set.
//!
//! `config.toml` is rewritten from its parsed form, so comments in it are not kept; the
//! gateway reads it at start, so provider and alias changes apply after a restart (the answer
//! says `restart_needed`).

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use corvid_config::{CredentialSource, EnvFile};
use corvid_gateway::ApiError;
use corvid_protocol::{ApprovalPolicy, EventMsg, Op, PROTOCOL_VERSION};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::PageState;
use crate::rest::json_error;
use crate::sessions::ask;

const ENGINE_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn routes() -> Router<PageState> {
    Router::new().route("/api/settings", get(read).put(write))
}

/// The variables a key may be stored under: those the configured providers read. Anything
/// else is refused, so the page cannot write arbitrary variables into the env file.
fn key_variables(state: &PageState) -> Vec<String> {
    let mut variables = vec![corvid_auth::API_KEY_VAR.to_owned()];
    for provider in state.0.gateway.registry().providers() {
        if let CredentialSource::Env(vars) = &provider.config().credential {
            variables.extend(vars.iter().cloned());
        }
    }
    variables.sort();
    variables.dedup();
    variables
}

fn env_file(state: &PageState) -> Result<EnvFile, ApiError> {
    let path = &state.0.loaded.paths.env_file;
    if !path.exists() {
        return Ok(EnvFile::parse(""));
    }
    EnvFile::read(path).map_err(internal)
}

fn config_table(state: &PageState) -> Result<toml::Table, ApiError> {
    let path = &state.0.loaded.paths.config_file;
    match std::fs::read_to_string(path) {
        Ok(text) => text.parse::<toml::Table>().map_err(internal),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(toml::Table::new()),
        Err(error) => Err(internal(error)),
    }
}

fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}

async fn read(State(state): State<PageState>) -> Result<Json<Value>, ApiError> {
    Ok(Json(view(&state).await?))
}

/// What the page shows: the file's values over the launch configuration, the session's model
/// and policy, and for each key variable only whether it is set.
async fn view(state: &PageState) -> Result<Value, ApiError> {
    let config = state.0.gateway.config();
    let table = config_table(state)?;
    let default_model = table
        .get("default_model")
        .and_then(toml::Value::as_str)
        .unwrap_or(&config.default_model)
        .to_owned();
    let aliases: BTreeMap<String, String> =
        match table.get("aliases").and_then(toml::Value::as_table) {
            Some(aliases) => aliases
                .iter()
                .filter_map(|(name, target)| Some((name.clone(), target.as_str()?.to_owned())))
                .collect(),
            None => config.aliases.clone(),
        };
    let file_providers = table.get("providers").and_then(toml::Value::as_table);
    let providers: Vec<Value> = config
        .providers
        .iter()
        .map(|provider| {
            let entry = file_providers
                .and_then(|all| all.get(&provider.name))
                .and_then(toml::Value::as_table);
            let enabled = entry
                .and_then(|entry| entry.get("enabled"))
                .and_then(toml::Value::as_bool)
                .unwrap_or(provider.enabled);
            let base_url = entry
                .and_then(|entry| entry.get("base_url"))
                .and_then(toml::Value::as_str)
                .unwrap_or(&provider.base_url);
            json!({"name": provider.name, "kind": provider.kind.as_str(), "enabled": enabled, "base_url": base_url})
        })
        .collect();
    let file = env_file(state)?;
    let keys: Vec<Value> = key_variables(state)
        .into_iter()
        .map(|variable| {
            let set = file
                .get(&variable)
                .is_some_and(|value| !value.trim().is_empty())
                || std::env::var(&variable).is_ok_and(|value| !value.trim().is_empty());
            json!({"variable": variable, "set": set})
        })
        .collect();
    let session = ask(
        state.0.sessions.as_ref(),
        Op::Hello {
            version: PROTOCOL_VERSION,
            client: Some("corvid-server settings".to_owned()),
        },
        |msg| matches!(msg, EventMsg::Ready(_)),
        ENGINE_TIMEOUT,
    )
    .await
    .ok()
    .and_then(|msg| match msg {
        EventMsg::Ready(ready) => {
            Some(json!({"model": ready.model, "approval_policy": ready.approval_policy}))
        }
        _ => None,
    });
    Ok(json!({
        "default_model": default_model,
        "aliases": aliases,
        "providers": providers,
        "keys": keys,
        "session": session,
        "approval_policies": ApprovalPolicy::ALL.map(ApprovalPolicy::as_str),
    }))
}

/// A change; every field optional. Unknown fields are refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    default_model: Option<String>,
    /// The session's model now, without changing the default.
    model: Option<String>,
    aliases: Option<BTreeMap<String, String>>,
    approval_policy: Option<ApprovalPolicy>,
    #[serde(default)]
    providers: Vec<ProviderChange>,
    /// Variable → new value, or `null` to clear it.
    #[serde(default)]
    keys: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderChange {
    name: String,
    enabled: Option<bool>,
    base_url: Option<String>,
}

async fn write(
    State(state): State<PageState>,
    body: Result<Json<Change>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(change) = body.map_err(json_error)?;
    validate(&state, &change)?;
    let mut restart_needed = false;
    // Files first: a refused write leaves the session as it was.
    let touches_config =
        change.default_model.is_some() || change.aliases.is_some() || !change.providers.is_empty();
    if touches_config {
        let mut table = config_table(&state)?;
        if let Some(model) = &change.default_model {
            table.insert(
                "default_model".to_owned(),
                toml::Value::String(model.clone()),
            );
        }
        if let Some(aliases) = &change.aliases {
            let aliases = aliases
                .iter()
                .map(|(name, target)| (name.clone(), toml::Value::String(target.clone())))
                .collect();
            table.insert("aliases".to_owned(), toml::Value::Table(aliases));
            restart_needed = true;
        }
        if !change.providers.is_empty() {
            let providers = table
                .entry("providers")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(providers) = providers.as_table_mut() else {
                return Err(ApiError::invalid_request(
                    "config.toml's `providers` is not a table; fix it by hand",
                ));
            };
            for provider in &change.providers {
                let entry = providers
                    .entry(provider.name.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let Some(entry) = entry.as_table_mut() else {
                    return Err(ApiError::invalid_request(format!(
                        "config.toml's providers.{} is not a table",
                        provider.name
                    )));
                };
                if let Some(enabled) = provider.enabled {
                    entry.insert("enabled".to_owned(), toml::Value::Boolean(enabled));
                }
                if let Some(base_url) = &provider.base_url {
                    entry.insert("base_url".to_owned(), toml::Value::String(base_url.clone()));
                }
            }
            restart_needed = true;
        }
        let text = toml::to_string(&table).map_err(internal)?;
        let path = &state.0.loaded.paths.config_file;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(internal)?;
        }
        std::fs::write(path, text).map_err(internal)?;
    }
    if !change.keys.is_empty() {
        let mut file = env_file(&state)?;
        for (variable, value) in &change.keys {
            match value {
                Some(value) => file.set(variable, value.trim()),
                None => {
                    file.remove(variable);
                }
            }
        }
        file.write(&state.0.loaded.paths.env_file)
            .map_err(internal)?;
        // Keys are read when the providers are built.
        restart_needed = true;
    }
    let sessions = state.0.sessions.as_ref();
    let settings_changed = |msg: &EventMsg| matches!(msg, EventMsg::SettingsChanged { .. });
    if let Some(model) = change.model.clone().or(change.default_model.clone()) {
        ask(
            sessions,
            Op::SetModel { model },
            settings_changed,
            ENGINE_TIMEOUT,
        )
        .await
        .map_err(|error| ApiError::invalid_request(error.to_string()))?;
    }
    if let Some(policy) = change.approval_policy {
        ask(
            sessions,
            Op::SetApprovalPolicy { policy },
            settings_changed,
            ENGINE_TIMEOUT,
        )
        .await
        .map_err(|error| ApiError::invalid_request(error.to_string()))?;
    }
    let mut answer = view(&state).await?;
    answer["restart_needed"] = Value::Bool(restart_needed);
    Ok(Json(answer))
}

fn validate(state: &PageState, change: &Change) -> Result<(), ApiError> {
    let model_ok = |model: &str| !model.trim().is_empty() && !model.contains(char::is_control);
    for model in change.default_model.iter().chain(&change.model) {
        if !model_ok(model) {
            return Err(ApiError::invalid_request(
                "a model name must be non-empty text",
            ));
        }
    }
    for (name, target) in change.aliases.iter().flatten() {
        if !model_ok(name) || !model_ok(target) {
            return Err(ApiError::invalid_request(format!(
                "alias {name:?}: names and targets must be non-empty text"
            )));
        }
    }
    let config = state.0.gateway.config();
    for provider in &change.providers {
        if config.provider(&provider.name).is_none() {
            return Err(ApiError::invalid_request(format!(
                "no provider {:?}",
                provider.name
            )));
        }
        if let Some(url) = &provider.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ApiError::invalid_request(format!(
                "{}: a base URL starts with http:// or https://",
                provider.name
            )));
        }
    }
    let allowed = key_variables(state);
    for (variable, value) in &change.keys {
        if !allowed.contains(variable) {
            return Err(ApiError::invalid_request(format!(
                "{variable:?} is not a provider key variable (one of {})",
                allowed.join(", ")
            )));
        }
        if let Some(value) = value
            && (value.trim().is_empty() || value.contains(['\n', '\r', '\0']))
        {
            return Err(ApiError::invalid_request(format!(
                "{variable}: a key is one line of text; send null to clear it"
            )));
        }
    }
    Ok(())
}
