//! Zed's hosted models on the signed-in user's own Zed account (provider kind `zed`), spoken
//! the way the Zed editor speaks them (reference `zed-cloud.md`).
//!
//! - [`ZedClient::me`]: the account, its organization (chosen as Zed chooses it) and plan;
//!   a 401 means signed out ([`ZedError::SignedOut`]).
//! - [`ZedClient::llm_token`]: the short-lived LLM token, kept in memory, renewed single-flight
//!   on a 401 or an `x-zed-expired-token` / `x-zed-outdated-token` reply, with one resend.
//! - [`ZedClient::models`]: what the account may call, each model's provider kept.
//! - [`ZedClient::completion`]: a canonical [`ChatRequest`] written in the model's provider
//!   dialect by corvid-wire, and the newline-delimited reply decoded into canonical
//!   [`StreamEvent`]s as it arrives ([`ZedStreamDecoder`] is the pure part).
//!
//! - [`ZedService`]: the account as the `zed` provider's backend (cached model list, retried
//!   completions, failures as `ProviderError`s).
//!
//! The client identity (User-Agent, `x-zed-version`) is configuration, visible in
//! [`ZedConfig`], not hidden.
//!
//! [`ChatRequest`]: corvid_wire::model::ChatRequest
//! [`StreamEvent`]: corvid_wire::model::StreamEvent

use std::time::Duration;

use corvid_auth::zed::ZedHosts;

mod account;
mod client;
mod completion;
mod error;
mod models;
mod request;
mod service;
mod stream;

#[cfg(test)]
mod tests;

pub use account::{ZedAccount, ZedOrganization, ZedPlan};
pub use client::ZedClient;
pub use completion::ZedCompletion;
pub use error::{ACCOUNT_URL, ZedError, ZedFailure};
pub use models::{ZedEffortLevel, ZedModel, ZedModels, ZedProvider};
pub use request::{completion_body, provider_request};
pub use service::ZedService;
pub use stream::{SERVER_STATUS_HEADER, ZedFraming, ZedStatus, ZedStreamDecoder};

/// The Zed release the requests say they come from, unless configured otherwise.
pub const DEFAULT_ZED_VERSION: &str = "1.23.0";

/// Where and as whom [`ZedClient`] talks to Zed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZedConfig {
    /// The account API base (`https://cloud.zed.dev`).
    pub cloud_url: String,
    /// The LLM API base (`https://cloud.zed.dev`).
    pub llm_url: String,
    /// Sent as `x-zed-version` on completions (empty: not sent).
    pub version: String,
    /// Sent as `User-Agent` everywhere.
    pub user_agent: String,
    pub connect_timeout: Duration,
    /// The longest silence while reading any reply (never a total deadline on a stream).
    pub idle_timeout: Duration,
    /// A total deadline for each account call (`/client/*`).
    pub account_timeout: Duration,
}

impl ZedConfig {
    /// The cloud and LLM bases of `hosts`, Zed's default version and User-Agent.
    pub fn new(hosts: &ZedHosts) -> Self {
        Self {
            cloud_url: hosts.cloud.trim_end_matches('/').to_owned(),
            llm_url: hosts.llm.trim_end_matches('/').to_owned(),
            version: DEFAULT_ZED_VERSION.to_owned(),
            user_agent: default_user_agent(DEFAULT_ZED_VERSION),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            account_timeout: Duration::from_secs(30),
        }
    }

    /// Another version, and the matching User-Agent.
    pub fn with_version(mut self, version: &str) -> Self {
        self.version = version.to_owned();
        self.user_agent = default_user_agent(version);
        self
    }
}

/// Zed's User-Agent: `Zed/<version> (<os>; <arch>)`, with Rust's names (`macos`, `linux`,
/// `windows`; `aarch64`, `x86_64`).
pub fn default_user_agent(version: &str) -> String {
    format!(
        "Zed/{version} ({}; {})",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
