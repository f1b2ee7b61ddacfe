//! The context window a local server was started with, which its OpenAI-shaped model list does
//! not state (vLLM's list states `max_model_len`, read with the list itself). Without it corvid
//! assumed a family window (128k for Qwen2.5-Coder) while the server cut prompts at its 32,768.
//! - llama.cpp: `/props` (at the server's root, beside `/v1`) says `n_ctx`, one for the server.
//! - Ollama: `POST /api/show {"model"}` says, per model, `num_ctx` in `parameters` when its
//!   Modelfile sets one, and the model's trained `<architecture>.context_length` in `model_info`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::provider::Provider;
use crate::upstream::{Upstream, UpstreamRequest};

impl Provider {
    /// The server's root (its base URL without `/v1`), with this provider's credential.
    fn server_root(&self) -> Upstream {
        let base = self.upstream().base_url();
        self.upstream()
            .at_base(base.strip_suffix("/v1").unwrap_or(base))
    }

    /// `n_ctx` from a local llama.cpp server's `/props`; `None` for any other server (the
    /// request fails or says nothing about it).
    pub(crate) async fn served_context(&self) -> Option<u64> {
        let response = self.server_root().get("props").await.ok()?;
        let props = json_body(response.response).await?;
        props["default_generation_settings"]["n_ctx"]
            .as_u64()
            .or_else(|| props["n_ctx"].as_u64())
            .filter(|tokens| *tokens > 0)
    }

    /// `model`'s window from Ollama's `/api/show`; `None` for any other server.
    pub(crate) async fn ollama_context(&self, model: &str) -> Option<u64> {
        let request = UpstreamRequest {
            path: "api/show",
            body: Bytes::from(json!({ "model": model }).to_string()),
            deadline: Some(Duration::from_secs(5)),
            ..UpstreamRequest::default()
        };
        let response = self.server_root().post(request).await.ok()?;
        ollama_window(&json_body(response.response).await?)
    }
}

/// The window an `/api/show` answer states: the Modelfile's `num_ctx`, else the model's
/// `*.context_length`.
pub(crate) fn ollama_window(show: &Value) -> Option<u64> {
    let configured = show["parameters"].as_str().and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let trained = || {
        show["model_info"]
            .as_object()?
            .iter()
            .find_map(|(key, value)| {
                key.ends_with(".context_length")
                    .then(|| value.as_u64())
                    .flatten()
            })
    };
    configured.or_else(trained).filter(|tokens| *tokens > 0)
}

async fn json_body(response: http::Response<crate::transport::UpstreamBody>) -> Option<Value> {
    let body = response.into_body().collect().await.ok()?.to_bytes();
    serde_json::from_slice(&body).ok()
}
