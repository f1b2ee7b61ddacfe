//! `GET/PUT /api/settings[?conversation=<id>]`: the settings window of the page. The default
//! model, the default approval policy (`approval`), aliases and providers (on/off, base URL) are
//! written to `config.toml`; the approval policy and the model apply at once to the session of
//! the tab's conversation (`conversation` in the query or the body; through the engine's
//! `set_model` and `set_approval_policy`), and a new default model or approval policy to that
//! session and every session the page opens from then on; provider keys are set or cleared in
//! the env file and never read back: the answer says only whether each is set.
//!
//! `config.toml` is edited in place (`toml_edit`): only the keys that change are touched, and
//! its comments, blank lines and order stay as the user wrote them. The gateway reads it at
//! start, so provider and alias changes apply after a restart (the answer says
//! `restart_needed`).

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use corvid_config::{CredentialSource, EnvFile};
use corvid_gateway::ApiError;
use corvid_protocol::{ApprovalPolicy, Op, ReplyOk};
use serde::Deserialize;
use serde_json::{Value, json};
use toml_edit::{DocumentMut, Item, Table, TableLike};

use crate::PageState;
use crate::rest::{internal, json_error};
use crate::sessions::request;

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

fn config_document(state: &PageState) -> Result<DocumentMut, ApiError> {
    let path = &state.0.loaded.paths.config_file;
    match std::fs::read_to_string(path) {
        Ok(text) => text.parse::<DocumentMut>().map_err(internal),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(DocumentMut::new()),
        Err(error) => Err(internal(error)),
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

/// A string at `key` of a table, if it is one.
fn text<'a>(table: Option<&'a dyn TableLike>, key: &str) -> Option<&'a str> {
    table?.get(key)?.as_str()
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
    let root: Option<&dyn TableLike> = Some(document.as_table());
    let default_model = text(root, "default_model")
        .unwrap_or(&config.default_model)
        .to_owned();
    let aliases: BTreeMap<String, String> =
        match document.get("aliases").and_then(Item::as_table_like) {
            Some(aliases) => aliases
                .iter()
                .filter_map(|(name, target)| Some((name.to_owned(), target.as_str()?.to_owned())))
                .collect(),
            None => config.aliases.clone(),
        };
    let file_providers = document.get("providers").and_then(Item::as_table_like);
    let providers: Vec<Value> = config
        .providers
        .iter()
        .map(|provider| {
            let entry = file_providers
                .and_then(|all| all.get(&provider.name))
                .and_then(Item::as_table_like);
            let enabled = entry
                .and_then(|entry| entry.get("enabled"))
                .and_then(Item::as_bool)
                .unwrap_or(provider.enabled);
            let base_url = text(entry, "base_url").unwrap_or(&provider.base_url);
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
    Ok(json!({
        "default_model": default_model,
        "aliases": aliases,
        "providers": providers,
        "keys": keys,
        "session": session,
        "default_approval_policy": state.0.agent.approval().as_str(),
        "default_approval_policies": ApprovalPolicy::ALL
            .into_iter()
            .filter(|policy| *policy != ApprovalPolicy::ReadOnly)
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
        || !change.providers.is_empty();
    if touches_config {
        let mut document = config_document(&state)?;
        let was_empty = document.as_table().is_empty();
        if let Some(model) = &change.default_model {
            set(document.as_table_mut(), "default_model", model.as_str());
        }
        if let Some(policy) = change.default_approval_policy {
            set(document.as_table_mut(), "approval", policy.as_str());
        }
        if let Some(aliases) = &change.aliases {
            let table = table_at(document.as_table_mut(), "aliases", "aliases")?;
            let gone: Vec<String> = table
                .iter()
                .map(|(name, _)| name.to_owned())
                .filter(|name| !aliases.contains_key(name))
                .collect();
            for name in gone {
                table.remove(&name);
            }
            for (name, target) in aliases {
                set(table, name, target.as_str());
            }
            restart_needed = true;
        }
        if !change.providers.is_empty() {
            let providers = table_at(document.as_table_mut(), "providers", "providers")?;
            for provider in &change.providers {
                let entry = table_at(
                    providers,
                    &provider.name,
                    &format!("providers.{}", provider.name),
                )?;
                if let Some(enabled) = provider.enabled {
                    set(entry, "enabled", enabled);
                }
                if let Some(base_url) = &provider.base_url {
                    set(entry, "base_url", base_url.as_str());
                }
            }
            restart_needed = true;
        }
        let path = &state.0.loaded.paths.config_file;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(internal)?;
        }
        std::fs::write(path, render(document, was_empty)).map_err(internal)?;
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
    Ok(Json(answer))
}

/// The edited file's text. A file that held only comments keeps them on top: toml_edit reads
/// them as the document's trailing text, which it writes after every item.
fn render(mut document: DocumentMut, was_empty: bool) -> String {
    if !was_empty {
        return document.to_string();
    }
    let head = document.trailing().as_str().unwrap_or_default().to_owned();
    document.set_trailing("");
    let body = document.to_string();
    if head.trim().is_empty() {
        return body;
    }
    let gap = match (head.ends_with("\n\n"), head.ends_with('\n')) {
        (true, _) => "",
        (false, true) => "\n",
        (false, false) => "\n\n",
    };
    format!("{head}{gap}{body}")
}

/// Sets `key` in `table`, keeping the comment and spacing around a value that was there.
fn set(table: &mut dyn TableLike, key: &str, value: impl Into<toml_edit::Value>) {
    let mut value = value.into();
    match table.get_mut(key).and_then(Item::as_value_mut) {
        Some(existing) => {
            *value.decor_mut() = existing.decor().clone();
            *existing = value;
        }
        None => {
            table.insert(key, Item::Value(value));
        }
    }
}

/// The table at `key` of `parent` (a `[section]` or an inline table), created as a section when
/// missing; `shown` names it in the error when the file has something else there.
fn table_at<'a>(
    parent: &'a mut dyn TableLike,
    key: &str,
    shown: &str,
) -> Result<&'a mut dyn TableLike, ApiError> {
    if parent.get(key).is_none() {
        let mut table = Table::new();
        // `[providers.xai]` without an empty `[providers]` above it.
        table.set_implicit(true);
        parent.insert(key, Item::Table(table));
    }
    parent
        .get_mut(key)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| {
            ApiError::invalid_request(format!(
                "config.toml's `{shown}` is not a table; fix it by hand"
            ))
        })
}

fn validate(state: &PageState, change: &Change) -> Result<(), ApiError> {
    if change.default_approval_policy == Some(ApprovalPolicy::ReadOnly) {
        return Err(ApiError::invalid_request(
            "read-only is a policy for one session (the selector above the conversation), not a default",
        ));
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
