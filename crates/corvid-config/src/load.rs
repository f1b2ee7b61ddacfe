//! Resolving the configuration from its layers.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use crate::schema::{
    ApprovalSetting, AuthMode, CompletionsBackend, Config, LogLevel, Price, SandboxSetting,
};
use crate::value::{is_truthy, parse_bool};
use crate::{ConfigError, EnvFile, Paths, resolve_paths};

/// Values given on the command line; they beat every other layer.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub upstream: Option<String>,
    pub default_model: Option<String>,
    pub log_level: Option<String>,
    pub auth_mode: Option<String>,
    pub config_file: Option<PathBuf>,
    /// `--allow-remote`; when false the environment still decides.
    pub allow_remote: bool,
}

/// The result of loading: the checked configuration, where it came from, the secrets file, and
/// warnings worth showing the user (an unknown key, an invalid `auth_mode`).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub paths: Paths,
    pub env_file: EnvFile,
    pub warnings: Vec<String>,
    process_env: HashMap<String, String>,
}

impl Loaded {
    /// A secret (an API key, a token): the process environment first, then the env file. Empty
    /// values count as absent.
    pub fn secret(&self, name: &str) -> Option<String> {
        let non_empty = |value: &str| {
            let value = value.trim();
            (!value.is_empty()).then(|| value.to_owned())
        };
        self.process_env
            .get(name)
            .and_then(|value| non_empty(value))
            .or_else(|| self.env_file.get(name).and_then(non_empty))
    }

    /// A plain setting from the process environment or the env file (same order as secrets).
    pub fn setting(&self, name: &str) -> Option<String> {
        self.secret(name)
    }
}

/// Loads the configuration: flags > process env > env file > `config.toml` > defaults.
///
/// `process_env` is passed in (rather than read here) so tests never touch the real
/// environment.
pub fn load(flags: &Flags, process_env: &HashMap<String, String>) -> Result<Loaded, ConfigError> {
    let mut paths = resolve_paths(|name| process_env.get(name).cloned())?;
    if let Some(file) = &flags.config_file {
        paths.config_file = file.clone();
    }
    let env_file = EnvFile::read(&paths.env_file)?;
    let mut warnings = Vec::new();
    if let Some(warning) = readable_by_others(&paths.env_file) {
        warnings.push(warning);
    }
    let toml = read_toml(&paths)?;

    let layers = Layers {
        process_env,
        env_file: &env_file,
        env_file_name: paths.env_file.display().to_string(),
        toml: &toml,
        toml_name: paths.config_file.display().to_string(),
    };

    let mut config = Config::default();
    for key in toml.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "unknown key `{key}` in {} (ignored)",
                paths.config_file.display()
            ));
        }
    }

    if let Some(value) = flags.host.clone() {
        config.host = value;
    } else if let Some(found) = layers.string("host", "HOST")? {
        config.host = found.value;
    }
    if let Some(port) = flags.port {
        config.port = port;
    } else if let Some(found) = layers.string("port", "PORT")? {
        config.port = found.parse("port", "an integer from 0 to 65535", |v| v.parse().ok())?;
    }
    if let Some(value) = flags.default_model.clone() {
        config.default_model = value;
    } else if let Some(found) = layers.string("default_model", "DEFAULT_MODEL")? {
        config.default_model = found.value;
    }
    if let Some(value) = flags.upstream.clone() {
        config.upstream = value;
    } else if let Some(found) = layers.string("upstream", "UPSTREAM")? {
        config.upstream = found.value;
    }
    config.upstream = config.upstream.trim().trim_end_matches('/').to_owned();
    if !(config.upstream.starts_with("http://") || config.upstream.starts_with("https://")) {
        return Err(ConfigError::Invalid {
            key: "upstream".to_owned(),
            source_name: "configuration".to_owned(),
            message: format!(
                "expected an http:// or https:// URL, got {:?}",
                config.upstream
            ),
        });
    }

    if let Some(found) = layers.string("request_timeout_s", "REQUEST_TIMEOUT_S")? {
        config.request_timeout = found.parse(
            "request_timeout_s",
            "a positive number of seconds",
            parse_seconds,
        )?;
    }
    if let Some(found) = layers.string("connect_timeout_s", "CONNECT_TIMEOUT_S")? {
        config.connect_timeout = found.parse(
            "connect_timeout_s",
            "a positive number of seconds",
            parse_seconds,
        )?;
    }
    if let Some(found) = layers.string("completions_timeout_s", "COMPLETIONS_TIMEOUT_S")? {
        config.completions_timeout = found.parse(
            "completions_timeout_s",
            "a positive number of seconds",
            parse_seconds,
        )?;
    }
    if let Some(found) = layers.string("shutdown_grace_s", "SHUTDOWN_GRACE_S")? {
        config.shutdown_grace = found.parse("shutdown_grace_s", "a number of seconds", |v| {
            v.parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(Duration::from_secs_f64)
        })?;
    }
    if let Some(found) = layers.string("max_retries", "MAX_RETRIES")? {
        config.max_retries = found.parse("max_retries", "an integer from 0 to 10", |v| {
            v.parse().ok().filter(|n| *n <= 10)
        })?;
    }
    if let Some(found) = layers.string("max_body_mb", "MAX_BODY_MB")? {
        config.max_body_bytes = found.parse("max_body_mb", "an integer from 1 to 1024", |v| {
            v.parse::<usize>()
                .ok()
                .filter(|n| (1..=1024).contains(n))
                .map(|n| n * 1024 * 1024)
        })?;
    }

    let log_level = match flags.log_level.clone() {
        Some(value) => Some(Found::flag("log_level", value)),
        None => layers.string("log_level", "LOG_LEVEL")?,
    };
    if let Some(found) = log_level {
        config.log_level =
            found.parse("log_level", &one_of(LogLevel::ACCEPTED), LogLevel::parse)?;
    }
    if let Some(found) = layers.string("log_prompts", "LOG_PROMPTS")? {
        config.log_prompts = found.parse_bool("log_prompts")?;
    }

    let auth_mode = match flags.auth_mode.clone() {
        Some(value) => Some(Found::flag("auth_mode", value)),
        None => layers.string("auth_mode", "AUTH_MODE")?,
    };
    if let Some(found) = auth_mode {
        // The seed's rule: an invalid mode falls back to api_key with a warning, not an error.
        config.auth_mode = AuthMode::parse(&found.value).unwrap_or_else(|| {
            warnings.push(format!(
                "invalid value for `auth_mode` (from {}): expected one of {}; got {:?}; using api_key",
                found.source_name,
                AuthMode::ACCEPTED,
                found.value
            ));
            AuthMode::ApiKey
        });
    }
    if let Some(found) = layers.string("completions_backend", "COMPLETIONS_BACKEND")? {
        config.completions_backend = found.parse(
            "completions_backend",
            &one_of(CompletionsBackend::ACCEPTED),
            CompletionsBackend::parse,
        )?;
    }
    if let Some(found) = layers.string("completions_enabled", "COMPLETIONS_ENABLED")? {
        config.completions_enabled = found.parse_bool("completions_enabled")?;
    }
    if let Some(found) = layers.string("sandbox", "SANDBOX")? {
        config.sandbox = found.parse(
            "sandbox",
            &one_of(SandboxSetting::ACCEPTED),
            SandboxSetting::parse,
        )?;
    }
    if let Some(found) = layers.string("approval", "APPROVAL")? {
        config.approval = found.parse(
            "approval",
            &one_of(ApprovalSetting::ACCEPTED),
            ApprovalSetting::parse,
        )?;
    }
    if let Some(found) = layers.string("xai_auth_url", "XAI_AUTH_URL")? {
        config.xai_auth_url = found.value.trim_end_matches('/').to_owned();
    }
    config.allow_remote = flags.allow_remote
        || layers
            .env_only("ALLOW_REMOTE")
            .is_some_and(|found| is_truthy(&found.value));

    if let Some(table) = toml.get("aliases") {
        config.aliases = read_aliases(table, &layers.toml_name)?;
    }
    config.providers = crate::providers::read_providers(
        toml.get("providers"),
        &config.upstream,
        &layers.toml_name,
    )?;
    if let Some(found) = layers.string("default_provider", "DEFAULT_PROVIDER")? {
        if config.provider(&found.value).is_none() {
            let names: Vec<&str> = config
                .providers
                .iter()
                .map(|provider| provider.name.as_str())
                .collect();
            return Err(ConfigError::Invalid {
                key: "default_provider".to_owned(),
                source_name: found.source_name,
                message: format!(
                    "expected one of {}; got {:?}",
                    names.join(", "),
                    found.value
                ),
            });
        }
        config.default_provider = found.value;
    }
    if let Some(table) = toml.get("prices") {
        config.prices = read_prices(table, &layers.toml_name)?;
    }
    if let Some(found) = layers.string("context_window", "CONTEXT_WINDOW")? {
        config.context_window =
            Some(found.parse("context_window", WINDOW_ACCEPTED, parse_window)?);
    }
    if let Some(table) = toml.get("context_windows") {
        config.context_windows = read_context_windows(table, &layers.toml_name)?;
    }
    config.routing =
        crate::routing::read_routing(toml.get("routes"), toml.get("router"), &layers.toml_name)?;
    config.web = crate::web::read_web(toml.get("web"), &layers.toml_name)?;
    let env_require = match layers.env_only("REQUIRE_KEYS") {
        Some(found) => Some(found.parse_bool("store.require_keys")?),
        None => None,
    };
    config.store = crate::store::read_store(
        toml.get("store"),
        &layers.toml_name,
        layers.env_only("DATABASE_URL").map(|found| found.value),
        layers.env_only("REDIS_URL").map(|found| found.value),
        env_require,
    )?;
    let max_tools = layers
        .string("mcp_max_tools", "MCP_MAX_TOOLS")?
        .map(|found| (found.value, found.source_name));
    let callback_port = layers
        .string("mcp_oauth_callback_port", "MCP_OAUTH_CALLBACK_PORT")?
        .map(|found| (found.value, found.source_name));
    config.mcp = crate::mcp::read_global(
        toml.get("mcp_servers"),
        max_tools,
        callback_port,
        &paths.config_file,
        &mut warnings,
    )?;

    Ok(Loaded {
        config,
        paths,
        env_file,
        warnings,
        process_env: process_env.clone(),
    })
}

const KNOWN_KEYS: &[&str] = &[
    "host",
    "port",
    "default_model",
    "upstream",
    "request_timeout_s",
    "connect_timeout_s",
    "completions_timeout_s",
    "shutdown_grace_s",
    "max_retries",
    "max_body_mb",
    "log_level",
    "log_prompts",
    "auth_mode",
    "completions_backend",
    "completions_enabled",
    "xai_auth_url",
    "aliases",
    "prices",
    "providers",
    "default_provider",
    "sandbox",
    "approval",
    "context_window",
    "context_windows",
    "web",
    "store",
    "mcp_servers",
    "mcp_max_tools",
    "mcp_oauth_callback_port",
    "routes",
    "router",
];

/// The secrets file is readable by other users (group or world bits set): it is still used, but
/// the user is told, with the command that fixes it. corvid itself always writes it 0600.
#[cfg(unix)]
fn readable_by_others(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} holds your keys and tokens but other users can read it (mode {mode:04o}); run `chmod 600 {}`",
            path.display(),
            path.display()
        )
    })
}

#[cfg(not(unix))]
fn readable_by_others(_path: &std::path::Path) -> Option<String> {
    None
}

fn one_of(accepted: &str) -> String {
    format!("one of {accepted}")
}

fn parse_seconds(value: &str) -> Option<Duration> {
    value
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        .map(Duration::from_secs_f64)
}

fn read_toml(paths: &Paths) -> Result<toml::Table, ConfigError> {
    let text = match std::fs::read_to_string(&paths.config_file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(err) => return Err(ConfigError::io("cannot read", &paths.config_file, err)),
    };
    text.parse::<toml::Table>()
        .map_err(|err| ConfigError::Toml {
            path: paths.config_file.clone(),
            message: err.to_string().trim().to_owned(),
        })
}

fn read_aliases(
    value: &toml::Value,
    source: &str,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        key: "aliases".to_owned(),
        source_name: source.to_owned(),
        message,
    };
    let table = value
        .as_table()
        .ok_or_else(|| invalid("expected a table of name = \"model\" pairs".to_owned()))?;
    table
        .iter()
        .map(|(alias, target)| match target.as_str() {
            Some(model) if !model.trim().is_empty() => Ok((alias.clone(), model.trim().to_owned())),
            _ => Err(invalid(format!(
                "aliases.{alias} must be a non-empty model name string"
            ))),
        })
        .collect()
}

/// `[prices."model"]` tables: `input`, `output` (required), `cached_input`, `cache_write`, in
/// US dollars per million tokens.
fn read_prices(value: &toml::Value, source: &str) -> Result<BTreeMap<String, Price>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        key: "prices".to_owned(),
        source_name: source.to_owned(),
        message,
    };
    let table = value.as_table().ok_or_else(|| {
        invalid("expected tables like [prices.\"grok-4.6\"] input = 3.0, output = 15.0".to_owned())
    })?;
    let mut prices = BTreeMap::new();
    for (model, entry) in table {
        let entry = entry.as_table().ok_or_else(|| {
            invalid(format!(
                "prices.{model} must be a table with input and output"
            ))
        })?;
        let number = |key: &str| -> Result<Option<f64>, ConfigError> {
            match entry.get(key) {
                None => Ok(None),
                Some(toml::Value::Float(value)) if *value >= 0.0 => Ok(Some(*value)),
                Some(toml::Value::Integer(value)) if *value >= 0 => Ok(Some(*value as f64)),
                Some(_) => Err(invalid(format!(
                    "prices.{model}.{key} must be a non-negative number (dollars per million tokens)"
                ))),
            }
        };
        let required = |key: &str| {
            number(key)?.ok_or_else(|| invalid(format!("prices.{model}.{key} is required")))
        };
        let input = required("input")?;
        let price = Price {
            input,
            output: required("output")?,
            cached_input: number("cached_input")?.unwrap_or(input),
            cache_write: number("cache_write")?.unwrap_or(input),
        };
        prices.insert(model.clone(), price);
    }
    Ok(prices)
}

const WINDOW_ACCEPTED: &str = "a whole number of tokens from 1,000 to 100,000,000";

/// A context window: a whole number of tokens (`_` or `,` between digits allowed), at least
/// 1,000 (below that no system prompt fits) and at most 100,000,000 (a typo, not a model).
fn parse_window(value: &str) -> Option<u64> {
    let digits: String = value
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | ','))
        .collect();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u64>()
        .ok()
        .filter(|tokens| (1_000..=100_000_000).contains(tokens))
}

/// `[context_windows]`: `"model" = tokens` pairs, each checked like `context_window`.
fn read_context_windows(
    value: &toml::Value,
    source: &str,
) -> Result<BTreeMap<String, u64>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        key: "context_windows".to_owned(),
        source_name: source.to_owned(),
        message,
    };
    let table = value.as_table().ok_or_else(|| {
        invalid(
            "expected a table of \"model\" = tokens pairs, like \"grok-4.6\" = 256000".to_owned(),
        )
    })?;
    table
        .iter()
        .map(|(model, tokens)| {
            let text = match tokens {
                toml::Value::Integer(number) => number.to_string(),
                toml::Value::String(text) => text.clone(),
                other => format!("a {}", other.type_str()),
            };
            match parse_window(&text) {
                Some(tokens) if !model.trim().is_empty() => Ok((model.trim().to_owned(), tokens)),
                _ => Err(invalid(format!(
                    "context_windows.\"{model}\" must be {WINDOW_ACCEPTED}; got {text}"
                ))),
            }
        })
        .collect()
}

/// A raw value and the human name of where it came from.
struct Found {
    value: String,
    source_name: String,
}

impl Found {
    fn flag(key: &str, value: String) -> Self {
        Self {
            value,
            source_name: format!("--{}", key.replace('_', "-")),
        }
    }

    fn parse<T>(
        self,
        key: &str,
        accepted: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        parse(self.value.trim()).ok_or_else(|| ConfigError::Invalid {
            key: key.to_owned(),
            source_name: self.source_name,
            message: format!("expected {accepted}; got {:?}", self.value),
        })
    }

    fn parse_bool(self, key: &str) -> Result<bool, ConfigError> {
        parse_bool(&self.value).ok_or_else(|| ConfigError::Invalid {
            key: key.to_owned(),
            source_name: self.source_name,
            message: format!(
                "expected one of 1, true, yes, on, 0, false, no, off; got {:?}",
                self.value.trim().to_ascii_lowercase()
            ),
        })
    }
}

struct Layers<'a> {
    process_env: &'a HashMap<String, String>,
    env_file: &'a EnvFile,
    env_file_name: String,
    toml: &'a toml::Table,
    toml_name: String,
}

impl Layers<'_> {
    /// `CORVID_<suffix>` then `SUPERGROK_ZED_<suffix>`, from the process env then the env file.
    fn env_only(&self, suffix: &str) -> Option<Found> {
        let names = [
            format!("CORVID_{suffix}"),
            format!("SUPERGROK_ZED_{suffix}"),
        ];
        for name in &names {
            if let Some(value) = self.process_env.get(name).filter(|v| !v.trim().is_empty()) {
                return Some(Found {
                    value: value.clone(),
                    source_name: name.clone(),
                });
            }
        }
        for name in &names {
            if let Some(value) = self.env_file.get(name).filter(|v| !v.trim().is_empty()) {
                return Some(Found {
                    value: value.to_owned(),
                    source_name: format!("{name} in {}", self.env_file_name),
                });
            }
        }
        None
    }

    /// A setting from the environment layers, else from `config.toml` (scalars as text).
    fn string(&self, key: &str, suffix: &str) -> Result<Option<Found>, ConfigError> {
        if let Some(found) = self.env_only(suffix) {
            return Ok(Some(found));
        }
        let Some(value) = self.toml.get(key) else {
            return Ok(None);
        };
        let text = match value {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Float(number) => number.to_string(),
            toml::Value::Boolean(flag) => flag.to_string(),
            other => {
                return Err(ConfigError::Invalid {
                    key: key.to_owned(),
                    source_name: self.toml_name.clone(),
                    message: format!("expected a single value, got a {}", other.type_str()),
                });
            }
        };
        Ok(Some(Found {
            value: text,
            source_name: self.toml_name.clone(),
        }))
    }
}

#[cfg(test)]
mod tests;
