//! The settings page's server and account settings: `auth_mode`, `host` and `port`, the
//! completions backend and switch, `log_prompts` and the timeouts — read from config.toml over
//! the running configuration, checked, and written with the one writer (`ConfigDocument`).
//!
//! `host` and `port` are the bound socket's: they apply at the next start (the answer says
//! so). A host other than loopback is refused unless remote access is already allowed: corvid
//! has no client authentication, so anyone who reaches the port spends the user's credits.

use corvid_config::{Config, ConfigDocument};
use corvid_gateway::ApiError;
use serde::Deserialize;
use serde_json::{Value, json};

/// The ways to reach xAI (`auth_mode`).
const AUTH_MODES: [&str; 2] = ["api_key", "oauth"];
/// Which upstream API answers `/v1/completions`.
const COMPLETIONS_BACKENDS: [&str; 2] = ["responses", "chat"];
/// The timeouts the page sets, in whole seconds.
const TIMEOUTS: [&str; 4] = [
    "request_timeout_s",
    "connect_timeout_s",
    "completions_timeout_s",
    "shutdown_grace_s",
];

/// A change to the general settings; every field optional, unknown ones refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GeneralChange {
    auth_mode: Option<String>,
    host: Option<String>,
    port: Option<u16>,
    completions_backend: Option<String>,
    completions_enabled: Option<bool>,
    log_prompts: Option<bool>,
    request_timeout_s: Option<u64>,
    connect_timeout_s: Option<u64>,
    completions_timeout_s: Option<u64>,
    shutdown_grace_s: Option<u64>,
}

impl GeneralChange {
    pub(crate) fn is_empty(&self) -> bool {
        self.auth_mode.is_none()
            && self.host.is_none()
            && self.port.is_none()
            && self.completions_backend.is_none()
            && self.completions_enabled.is_none()
            && self.log_prompts.is_none()
            && self.timeouts().iter().all(|(_, value)| value.is_none())
    }

    fn timeouts(&self) -> [(&'static str, Option<u64>); 4] {
        [
            (TIMEOUTS[0], self.request_timeout_s),
            (TIMEOUTS[1], self.connect_timeout_s),
            (TIMEOUTS[2], self.completions_timeout_s),
            (TIMEOUTS[3], self.shutdown_grace_s),
        ]
    }

    /// Refuses what config.toml would not load, and a host beyond loopback without remote
    /// access allowed.
    pub(crate) fn validate(&self, config: &Config) -> Result<(), ApiError> {
        if let Some(mode) = &self.auth_mode
            && !AUTH_MODES.contains(&mode.as_str())
        {
            return Err(ApiError::invalid_request(format!(
                "auth_mode is one of {}",
                AUTH_MODES.join(", ")
            )));
        }
        if let Some(backend) = &self.completions_backend
            && !COMPLETIONS_BACKENDS.contains(&backend.as_str())
        {
            return Err(ApiError::invalid_request(format!(
                "completions_backend is one of {}",
                COMPLETIONS_BACKENDS.join(", ")
            )));
        }
        if let Some(host) = &self.host {
            if host.trim().is_empty() || host.contains(char::is_whitespace) {
                return Err(ApiError::invalid_request("host: an address or a name"));
            }
            corvid_gateway::check_bind_address(host, config.allow_remote).map_err(|_| {
                ApiError::invalid_request(format!(
                    "host {host:?} is reachable from other machines, and corvid has no client \
                     authentication: anyone who reaches the port spends your credits. Keep a \
                     loopback address (127.0.0.1, ::1, localhost), or start corvid with \
                     --allow-remote (CORVID_ALLOW_REMOTE=1) if you really mean it"
                ))
            })?;
        }
        for (name, value) in self.timeouts() {
            // The shutdown grace may be 0 (no waiting); the others must let something happen.
            if value == Some(0) && name != "shutdown_grace_s" {
                return Err(ApiError::invalid_request(format!(
                    "{name}: a positive number of seconds"
                )));
            }
        }
        Ok(())
    }

    /// Writes the changed keys; whether one of them waits for a restart (host, port).
    pub(crate) fn write(
        &self,
        document: &mut ConfigDocument,
    ) -> Result<bool, corvid_config::ConfigError> {
        if let Some(mode) = &self.auth_mode {
            document.set(&["auth_mode"], mode.as_str())?;
        }
        if let Some(host) = &self.host {
            document.set(&["host"], host.trim())?;
        }
        if let Some(port) = self.port {
            document.set(&["port"], i64::from(port))?;
        }
        if let Some(backend) = &self.completions_backend {
            document.set(&["completions_backend"], backend.as_str())?;
        }
        if let Some(enabled) = self.completions_enabled {
            document.set(&["completions_enabled"], enabled)?;
        }
        if let Some(log_prompts) = self.log_prompts {
            document.set(&["log_prompts"], log_prompts)?;
        }
        for (name, value) in self.timeouts() {
            if let Some(seconds) = value {
                // Seconds beyond i64 are not a timeout anyone means: the most there is.
                document.set(&[name], i64::try_from(seconds).unwrap_or(i64::MAX))?;
            }
        }
        Ok(self.host.is_some() || self.port.is_some())
    }
}

/// What the page shows: the file's values over the running configuration.
pub(crate) fn view(document: &ConfigDocument, config: &Config) -> Value {
    let text = |key: &str, running: &str| document.text(&[key]).unwrap_or(running).to_owned();
    let flag = |key: &str, running: bool| document.flag(&[key]).unwrap_or(running);
    let seconds = |key: &str, running: std::time::Duration| {
        document
            .integer(&[key])
            .map_or(running.as_secs_f64(), |seconds| seconds as f64)
    };
    let port = document
        .integer(&["port"])
        .and_then(|port| u16::try_from(port).ok())
        .unwrap_or(config.port);
    json!({
        "auth_mode": text("auth_mode", config.auth_mode.as_str()),
        "auth_modes": AUTH_MODES,
        "host": text("host", &config.host),
        "port": port,
        "allow_remote": config.allow_remote,
        "completions_backend": text("completions_backend", config.completions_backend.as_str()),
        "completions_backends": COMPLETIONS_BACKENDS,
        "completions_enabled": flag("completions_enabled", config.completions_enabled),
        "log_prompts": flag("log_prompts", config.log_prompts),
        "request_timeout_s": seconds("request_timeout_s", config.request_timeout),
        "connect_timeout_s": seconds("connect_timeout_s", config.connect_timeout),
        "completions_timeout_s": seconds("completions_timeout_s", config.completions_timeout),
        "shutdown_grace_s": seconds("shutdown_grace_s", config.shutdown_grace),
    })
}
