//! The context window a llama.cpp server was started with: its `/props` (at the server's root,
//! beside `/v1`) says `n_ctx`, which its OpenAI-shaped model list does not (vLLM's list states
//! `max_model_len`, read with the list itself). Without it corvid assumed a family window
//! (128k for Qwen2.5-Coder) while the server cut prompts at its 32,768.

use http_body_util::BodyExt;
use serde_json::Value;

use crate::registry::Provider;

impl Provider {
    /// `n_ctx` from a local llama.cpp server's `/props`; `None` for any other server (the
    /// request fails or says nothing about it).
    pub(crate) async fn served_context(&self) -> Option<u64> {
        let base = self.upstream().base_url();
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let response = self.upstream().at_base(root).get("props").await.ok()?;
        let body = response
            .response
            .into_body()
            .collect()
            .await
            .ok()?
            .to_bytes();
        let props: Value = serde_json::from_slice(&body).ok()?;
        props["default_generation_settings"]["n_ctx"]
            .as_u64()
            .or_else(|| props["n_ctx"].as_u64())
            .filter(|tokens| *tokens > 0)
    }
}
