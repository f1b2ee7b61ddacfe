//! Reading a provider's own model list: the ids it serves and the limits it states for them
//! (OpenAI-shaped `{"data":[…]}` lists with vLLM's `max_model_len` and friends, Anthropic's
//! `max_input_tokens` and `max_tokens`, Gemini's `{"models":[…]}` with `inputTokenLimit` and
//! `outputTokenLimit`), and, for a local server whose list states none, the window it was
//! started with (`local_window`: llama.cpp's `/props`, Ollama's `/api/show`).

use std::sync::PoisonError;

use http_body_util::BodyExt;
use serde_json::Value;

use crate::provider::Provider;
use crate::transport::BoxError;

/// A model of a fetched list, with the limits the list states, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedModel {
    pub(crate) id: String,
    /// The input limit (what a request may carry).
    pub(crate) window: Option<u64>,
    /// The longest answer.
    pub(crate) max_output: Option<u64>,
}

/// The fields a list may state a model's input limit in, the first present winning.
const WINDOW_FIELDS: [&str; 5] = [
    "inputTokenLimit",
    "context_length",
    "context_window",
    "max_model_len",
    "max_input_tokens",
];

/// The fields a list may state a model's output limit in.
const OUTPUT_FIELDS: [&str; 4] = [
    "outputTokenLimit",
    "max_output_tokens",
    "max_completion_tokens",
    "max_tokens",
];

/// The models of a list body: OpenAI and Anthropic `{"data":[{"id"}]}`, Gemini
/// `{"models":[{"name":"models/x"}]}`; empty for anything else.
pub(crate) fn parse_list(value: &Value) -> Vec<ListedModel> {
    let first = |item: &Value, fields: &[&str]| {
        fields
            .iter()
            .find_map(|key| item[*key].as_u64())
            .filter(|tokens| *tokens > 0)
    };
    let listed = |id: &str, item: &Value| ListedModel {
        id: id.to_owned(),
        window: first(item, &WINDOW_FIELDS),
        max_output: first(item, &OUTPUT_FIELDS),
    };
    if let Some(items) = value["data"].as_array() {
        return items
            .iter()
            .filter_map(|item| Some(listed(item["id"].as_str()?, item)))
            .collect();
    }
    value["models"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let name = item["name"].as_str()?;
                    Some(listed(name.strip_prefix("models/").unwrap_or(name), item))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Past this many models, a local server's models are not each asked for their window.
const MAX_SHOWN_MODELS: usize = 16;

impl Provider {
    /// The provider's list, read now. A local OpenAI-compatible server whose list states no
    /// window is asked for it: llama.cpp's `/props` (one window for the server), else Ollama's
    /// `/api/show` for each model. (Those are the servers that answer them; a local server of
    /// another kind is not sent requests it cannot understand.)
    pub(crate) async fn fetch_models(&self) -> Result<Vec<ListedModel>, BoxError> {
        let response = self.upstream().get("models").await?;
        let body = response.response.into_body().collect().await?.to_bytes();
        let value: Value = serde_json::from_slice(&body)?;
        let mut models = parse_list(&value);
        let openai_compatible = matches!(
            self.kind(),
            corvid_config::ProviderKind::OpenAiChat | corvid_config::ProviderKind::OpenAiResponses
        );
        if openai_compatible
            && crate::quirks::is_local_server(self)
            && models.iter().all(|model| model.window.is_none())
        {
            let served = self.served_context().await;
            *self
                .served_window
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = served;
            if served.is_none() && models.len() <= MAX_SHOWN_MODELS {
                for model in &mut models {
                    model.window = self.ollama_context(&model.id).await;
                }
            }
        }
        Ok(models)
    }
}

#[cfg(test)]
mod tests;
