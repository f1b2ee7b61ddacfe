//! `GET/PUT /api/settings[?conversation=<id>]`: the settings window of the page. The default
//! model, the default approval policy (`approval`), aliases, providers (on/off, base URL) and
//! the general settings (`general`: auth mode, host and port, completions, `log_prompts`,
//! timeouts; see `general`) are written to `config.toml`; the approval policy and the model apply at once to the session of
//! the tab's conversation (`conversation` in the query or the body; through the engine's
//! `set_model` and `set_approval_policy`), and a new default model or approval policy to that
//! session and every session the page opens from then on; provider keys are set or cleared in
//! the env file and never read back: the answer says only whether each is set.
//!
//! `config.toml` is changed through corvid-config's one writer (`ConfigDocument`): only the keys
//! that change are touched, its comments, blank lines and order stay as the user wrote them,
//! and the file is replaced atomically. Once the files are written the host applies them at
//! once (`Reloads::apply_now`): providers, aliases and keys are used by the next request. The
//! answer's `restart_needed` says a change waits for a restart (host, port; or a page without
//! a host that reloads), and `settings_error` why the files could not be applied.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use corvid_config::{ConfigDocument, CredentialSource, EnvFile};
use corvid_gateway::ApiError;
use corvid_protocol::{ApprovalPolicy, Op, ReplyOk};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::rest::{internal, json_error};
use crate::sessions::request;
use crate::{PageState, ReloadOutcome};

mod general;

const ENGINE_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn routes() -> Router<PageState> {
    Router::new()
        .route("/api/settings", get(read).put(write))
        .route("/api/restart", axum::routing::post(restart))
}

/// `POST /api/restart`: what waits for a restart (host, port) applies now — the host stops
/// gracefully and starts again on the settings files, keeping the page's token, so the page
/// can move to the new address. 409 when the host cannot restart itself.
async fn restart(State(state): State<PageState>) -> Result<Json<Value>, ApiError> {
    if state.0.reloads.restart() {
        tracing::info!("restarting, as the page asked");
        Ok(Json(json!({"restarting": true})))
    } else {
        Err(ApiError::new(
            http::StatusCode::CONFLICT,
            "this corvid cannot restart itself: stop it and start it again",
        ))
    }
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

fn config_document(state: &PageState) -> Result<ConfigDocument, ApiError> {
    ConfigDocument::read(&state.0.loaded.paths.config_file).map_err(internal)
}

/// A change the file cannot take as it is (a key that is not a table) is the user's to fix;
/// anything else (IO) is ours.
fn config_error(error: corvid_config::ConfigError) -> ApiError {
    match error {
        corvid_config::ConfigError::NotATable { .. } => {
            ApiError::invalid_request(format!("{error}"))
        }
        other => internal(other),
    }
}

/// The query of `GET /api/settings`: the conversation whose session's model and policy to show.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsQuery {
    conversation: Option<String>,
}

async fn read(
    State(state): State<PageState>,
    query: Result<Query<SettingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) =
        query.map_err(|rejection| ApiError::invalid_request(rejection.body_text()))?;
    Ok(Json(view(&state, query.conversation.as_deref()).await?))
}

/// What the page shows: the file's values over the launch configuration, the model and policy
/// of the session holding `conversation`, and for each key variable only whether it is set.
async fn view(state: &PageState, conversation: Option<&str>) -> Result<Value, ApiError> {
    // First: the file's tables are not `Send`, so none may be held across this wait.
    let session = match conversation.and_then(|id| state.0.agent.agents().session_for(id)) {
        Some(session) => match request(
            &session,
            Op::Hello {
                version: corvid_protocol::PROTOCOL_VERSION,
                client: Some("corvid-web settings".to_owned()),
            },
            ENGINE_TIMEOUT,
        )
        .await
        {
            Ok(ReplyOk::Ready(ready)) => Some(
                json!({"conversation": ready.conversation_id, "model": ready.model, "approval_policy": ready.approval_policy}),
            ),
            _ => None,
        },
        None => None,
    };
    let config = state.0.gateway.config();
    let document = config_document(state)?;
    let default_model = document
        .text(&["default_model"])
        .unwrap_or(&config.default_model)
        .to_owned();
    let aliases: BTreeMap<String, String> = document
        .strings(&["aliases"])
        .unwrap_or_else(|| config.aliases.clone());
    let providers: Vec<Value> = config
        .providers
        .iter()
        .map(|provider| {
            let name = provider.name.as_str();
            let enabled = document
                .flag(&["providers", name, "enabled"])
                .unwrap_or(provider.enabled);
            let base_url = document
                .text(&["providers", name, "base_url"])
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
    let general = general::view(&document, config);
    Ok(json!({
        "general": general,
        "default_model": default_model,
        "aliases": aliases,
        "providers": providers,
        "keys": keys,
        "session": session,
        "default_approval_policy": state.0.agent.approval().as_str(),
        "default_approval_policies": ApprovalPolicy::ALL
            .into_iter()
            .filter(|policy| !policy.is_read_only())
            .map(ApprovalPolicy::as_str)
            .collect::<Vec<_>>(),
        "approval_policies": ApprovalPolicy::ALL.map(ApprovalPolicy::as_str),
    }))
}

/// A change; every field optional. Unknown fields are refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    /// The tab's conversation: its session gets `model` and `approval_policy` (and a new
    /// default model) at once.
    conversation: Option<String>,
    default_model: Option<String>,
    /// The session's model now, without changing the default.
    model: Option<String>,
    aliases: Option<BTreeMap<String, String>>,
    /// The session's policy now, without changing the default.
    approval_policy: Option<ApprovalPolicy>,
    /// Saved as `approval` in config.toml: the policy of every session opened from now on (and
    /// of the tab's session now, unless `approval_policy` says otherwise).
    default_approval_policy: Option<ApprovalPolicy>,
    #[serde(default)]
    providers: Vec<ProviderChange>,
    /// Variable → new value, or `null` to clear it.
    #[serde(default)]
    keys: BTreeMap<String, Option<String>>,
    /// Auth mode, host and port, completions, `log_prompts`, timeouts.
    #[serde(default)]
    general: general::GeneralChange,
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
    let touches_config = change.default_model.is_some()
        || change.default_approval_policy.is_some()
        || change.aliases.is_some()
        || !change.providers.is_empty()
        || !change.general.is_empty();
    // Host and port are the bound socket's: they wait for a restart whatever the host does.
    let mut socket_changed = false;
    if touches_config {
        let mut document = config_document(&state)?;
        if let Some(model) = &change.default_model {
            document.set_default_model(model);
        }
        if let Some(policy) = change.default_approval_policy {
            document.set_approval(policy.as_str());
        }
        if let Some(aliases) = &change.aliases {
            document
                .replace_strings(&["aliases"], aliases)
                .map_err(config_error)?;
            restart_needed = true;
        }
        for provider in &change.providers {
            let name = provider.name.as_str();
            if let Some(enabled) = provider.enabled {
                document
                    .set(&["providers", name, "enabled"], enabled)
                    .map_err(config_error)?;
            }
            if let Some(base_url) = &provider.base_url {
                document
                    .set(&["providers", name, "base_url"], base_url.as_str())
                    .map_err(config_error)?;
            }
            restart_needed = true;
        }
        if !change.general.is_empty() {
            socket_changed = change.general.write(&mut document).map_err(config_error)?;
            restart_needed = true;
        }
        document.save().map_err(internal)?;
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
    let mut restart_reason = None;
    let mut settings_error = None;
    if restart_needed {
        match state.0.reloads.apply_now().await {
            Some(ReloadOutcome::Applied { needs_restart }) => {
                restart_needed = needs_restart.is_some();
                restart_reason = needs_restart;
            }
            Some(ReloadOutcome::Refused(error)) => settings_error = Some(error),
            // No host applies settings live: they are read at the next start.
            None => {}
        }
    }
    if socket_changed && !restart_needed {
        restart_needed = true;
        restart_reason = Some("Changes to host and port apply at the next start".to_owned());
    }
    if let Some(model) = &change.default_model {
        state.0.agent.set_model(model);
    }
    if let Some(policy) = change.default_approval_policy {
        state.0.agent.set_approval(policy);
    }
    let session = change
        .conversation
        .as_deref()
        .and_then(|id| state.0.agent.agents().session_for(id));
    if let Some(session) = &session {
        if let Some(model) = change.model.clone().or(change.default_model.clone()) {
            request(session, Op::SetModel { model }, ENGINE_TIMEOUT)
                .await
                .map_err(|error| ApiError::invalid_request(error.message))?;
        }
        if let Some(policy) = change.approval_policy.or(change.default_approval_policy) {
            request(session, Op::SetApprovalPolicy { policy }, ENGINE_TIMEOUT)
                .await
                .map_err(|error| ApiError::invalid_request(error.message))?;
        }
    }
    let mut answer = view(&state, change.conversation.as_deref()).await?;
    answer["restart_needed"] = Value::Bool(restart_needed);
    answer["restart_reason"] = json!(restart_reason);
    answer["settings_error"] = json!(settings_error);
    Ok(Json(answer))
}

fn validate(state: &PageState, change: &Change) -> Result<(), ApiError> {
    if let Some(policy) = change
        .default_approval_policy
        .filter(|policy| policy.is_read_only())
    {
        return Err(ApiError::invalid_request(format!(
            "{policy} is a policy for one session (the selector above the conversation), not a default"
        )));
    }
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
    let for_session = change.model.is_some() || change.approval_policy.is_some();
    if let Some(conversation) = &change.conversation
        && for_session
        && state.0.agent.agents().session_for(conversation).is_none()
    {
        return Err(ApiError::invalid_request(format!(
            "conversation {conversation:?} is not open in any tab; reload the page"
        )));
    }
    let config = state.0.gateway.config();
    change.general.validate(config)?;
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
