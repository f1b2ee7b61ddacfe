//! `[web]` in `config.toml`: the agent's `web_fetch` and `web_search` — whether each is offered,
//! which search backend answers (off until one is named), which private hosts a fetch may reach,
//! and the caps. Values are checked here; the HTTP side lives in corvid-web.
//!
//! ```toml
//! [web]
//! fetch = true
//! search = "searxng"                      # off | searxng | brave | tavily
//! search_url = "http://127.0.0.1:8888"    # SearXNG's address; for brave/tavily another API base
//! allow_hosts = ["wiki.lan", "10.1.0.0/16"]
//! ```

use std::net::IpAddr;
use std::time::Duration;

use crate::ConfigError;

/// Which service answers `web_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchBackend {
    /// No search: `web_search` is not offered to the model (the default).
    #[default]
    Off,
    /// A SearXNG instance at `search_url`, asked for `format=json`.
    Searxng,
    /// Brave's Search API, with `BRAVE_API_KEY`.
    Brave,
    /// Tavily's search API, with `TAVILY_API_KEY`.
    Tavily,
}

impl SearchBackend {
    pub(crate) const ACCEPTED: &'static str = "off, searxng, brave, tavily";

    fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "" => Some(Self::Off),
            "searxng" => Some(Self::Searxng),
            "brave" => Some(Self::Brave),
            "tavily" => Some(Self::Tavily),
            _ => None,
        }
    }

    /// The name used in `config.toml` and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Searxng => "searxng",
            Self::Brave => "brave",
            Self::Tavily => "tavily",
        }
    }

    /// The variable (process environment or env file) holding the backend's key, if it needs
    /// one.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
            Self::Off | Self::Searxng => None,
        }
    }
}

/// One `allow_hosts` entry: a host `web_fetch` may reach even when its address is private.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRule {
    /// A host name, lower case, without a trailing dot: every address it resolves to is allowed.
    Name(String),
    /// An address or a network (`10.0.0.5` is `10.0.0.5/32`).
    Network {
        /// The network's first address (bits past `prefix` are zero).
        address: IpAddr,
        /// The prefix length.
        prefix: u8,
    },
}

impl HostRule {
    /// Reads `wiki.lan`, `10.0.0.5`, `::1`, `[::1]` or `192.168.1.0/24`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix.parse::<u8>().ok()?)),
            None => (text, None),
        };
        let bare = address
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(address);
        if let Ok(address) = bare.parse::<IpAddr>() {
            let bits = if address.is_ipv4() { 32 } else { 128 };
            let prefix = prefix.unwrap_or(bits);
            if prefix > bits {
                return None;
            }
            return Some(Self::Network {
                address: mask(address, prefix),
                prefix,
            });
        }
        if prefix.is_some() {
            return None;
        }
        let name = address.trim_end_matches('.').to_ascii_lowercase();
        let valid = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            });
        valid.then_some(Self::Name(name))
    }

    /// Whether this rule names `host` (compared without case and trailing dot).
    pub fn names(&self, host: &str) -> bool {
        match self {
            Self::Name(name) => host.trim_end_matches('.').eq_ignore_ascii_case(name),
            Self::Network { .. } => false,
        }
    }

    /// Whether `address` is inside this rule's network.
    pub fn contains(&self, address: IpAddr) -> bool {
        match *self {
            Self::Network {
                address: network,
                prefix,
            } => network.is_ipv4() == address.is_ipv4() && mask(address, prefix) == network,
            Self::Name(_) => false,
        }
    }
}

fn mask(address: IpAddr, prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4((bits & kept).into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6((bits & kept).into())
        }
    }
}

/// `[web]`, checked, defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct WebConfig {
    /// `fetch`: whether `web_fetch` is offered.
    pub fetch: bool,
    /// `search`: the backend of `web_search`; `Off` means the tool is not offered.
    pub search: SearchBackend,
    /// `search_url`: SearXNG's address (required for it); for Brave and Tavily another API
    /// base (a proxy, a test's mock). No trailing slash.
    pub search_url: Option<String>,
    /// `search_results`: results per search (1-20).
    pub search_results: usize,
    /// `allow_private`: fetches may reach loopback, private, link-local and unique-local
    /// addresses (cloud metadata still only through `allow_hosts`).
    pub allow_private: bool,
    /// `allow_hosts`: hosts and networks a fetch may reach whatever their address.
    pub allow_hosts: Vec<HostRule>,
    /// `max_page_kb`: the most bytes read from one response.
    pub max_page_bytes: usize,
    /// `max_text_kb`: the most text (markdown) returned to the model.
    pub max_text_bytes: usize,
    /// `timeout_s`: one fetch (every redirect included) or one search.
    pub timeout: Duration,
    /// `max_redirects`: redirects followed, each re-checked.
    pub max_redirects: u32,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            fetch: true,
            search: SearchBackend::Off,
            search_url: None,
            search_results: 5,
            allow_private: false,
            allow_hosts: Vec::new(),
            max_page_bytes: 5 * 1024 * 1024,
            max_text_bytes: 100 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
        }
    }
}

/// Every key of `[web]`, for the unknown-key check and the README test.
pub(crate) const WEB_KEYS: &[&str] = &[
    "fetch",
    "search",
    "search_url",
    "search_results",
    "allow_private",
    "allow_hosts",
    "max_page_kb",
    "max_text_kb",
    "timeout_s",
    "max_redirects",
];

/// Reads `[web]`; an absent table gives the defaults. Unknown keys are refused, naming the
/// accepted ones (a misspelt `allow_hosts` must not silently leave a host blocked or open).
pub(crate) fn read_web(
    value: Option<&toml::Value>,
    source: &str,
) -> Result<WebConfig, ConfigError> {
    let mut web = WebConfig::default();
    let Some(value) = value else {
        return Ok(web);
    };
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        key: format!("web.{key}"),
        source_name: source.to_owned(),
        message,
    };
    let table = value.as_table().ok_or_else(|| ConfigError::Invalid {
        key: "web".to_owned(),
        source_name: source.to_owned(),
        message: "expected a [web] table".to_owned(),
    })?;
    for key in table.keys() {
        if !WEB_KEYS.contains(&key.as_str()) {
            return Err(invalid(
                key,
                format!("unknown key (accepted: {})", WEB_KEYS.join(", ")),
            ));
        }
    }
    let boolean = |key: &str| -> Result<Option<bool>, ConfigError> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(flag)) => Ok(Some(*flag)),
            Some(other) => Err(invalid(
                key,
                format!("expected true or false, got a {}", other.type_str()),
            )),
        }
    };
    let whole = |key: &str, low: i64, high: i64| -> Result<Option<i64>, ConfigError> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(number)) if (low..=high).contains(number) => {
                Ok(Some(*number))
            }
            Some(other) => Err(invalid(
                key,
                format!(
                    "expected a whole number from {low} to {high}, got {}",
                    shown(other)
                ),
            )),
        }
    };
    let text = |key: &str| -> Result<Option<&str>, ConfigError> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(text)) => Ok(Some(text.as_str())),
            Some(other) => Err(invalid(
                key,
                format!("expected a string, got a {}", other.type_str()),
            )),
        }
    };

    if let Some(flag) = boolean("fetch")? {
        web.fetch = flag;
    }
    if let Some(name) = text("search")? {
        web.search = SearchBackend::parse(name).ok_or_else(|| {
            invalid(
                "search",
                format!("expected one of {}; got {name:?}", SearchBackend::ACCEPTED),
            )
        })?;
    }
    if let Some(url) = text("search_url")? {
        let url = url.trim().trim_end_matches('/');
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "search_url",
                format!("expected an http:// or https:// URL, got {url:?}"),
            ));
        }
        web.search_url = Some(url.to_owned());
    }
    if web.search == SearchBackend::Searxng && web.search_url.is_none() {
        return Err(invalid(
            "search_url",
            "required with search = \"searxng\": the address of your SearXNG instance".to_owned(),
        ));
    }
    if let Some(count) = whole("search_results", 1, 20)? {
        web.search_results = count as usize;
    }
    if let Some(flag) = boolean("allow_private")? {
        web.allow_private = flag;
    }
    if let Some(list) = table.get("allow_hosts") {
        let entries = list.as_array().ok_or_else(|| {
            invalid(
                "allow_hosts",
                "expected a list like [\"wiki.lan\", \"10.0.0.5\", \"192.168.1.0/24\"]".to_owned(),
            )
        })?;
        web.allow_hosts = entries
            .iter()
            .map(|entry| {
                entry.as_str().and_then(HostRule::parse).ok_or_else(|| {
                    invalid(
                        "allow_hosts",
                        format!(
                            "expected a host name, an address or a network; got {}",
                            shown(entry)
                        ),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(kb) = whole("max_page_kb", 16, 64 * 1024)? {
        web.max_page_bytes = kb as usize * 1024;
    }
    if let Some(kb) = whole("max_text_kb", 1, 4 * 1024)? {
        web.max_text_bytes = kb as usize * 1024;
    }
    if let Some(seconds) = whole("timeout_s", 1, 600)? {
        web.timeout = Duration::from_secs(seconds as u64);
    }
    if let Some(count) = whole("max_redirects", 0, 10)? {
        web.max_redirects = count as u32;
    }
    Ok(web)
}

/// A value for a message: numbers and strings as written, anything else by its type.
fn shown(value: &toml::Value) -> String {
    match value {
        toml::Value::Integer(number) => number.to_string(),
        toml::Value::Float(number) => number.to_string(),
        toml::Value::String(text) => format!("{text:?}"),
        other => format!("a {}", other.type_str()),
    }
}

#[cfg(test)]
mod tests;
