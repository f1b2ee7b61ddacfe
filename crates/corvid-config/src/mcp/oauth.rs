//! The OAuth settings of an HTTP server (`oauth`, `scopes`) and the reading of them.

use serde_json::Value as Json;

use super::entry::Entry;
use crate::ConfigError;

/// OAuth settings of an HTTP server, as Codex (`[mcp_servers.x.oauth]`, `scopes`) and Claude
/// Code (`"oauth": {"clientId", "callbackPort"}`) write them. Everything is optional: by
/// default corvid discovers the authorization server, registers itself (dynamic client
/// registration) and listens on any free loopback port.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McpOAuth {
    /// `oauth = false`: never sign in; a server that asks for it fails.
    pub disabled: bool,
    /// `oauth.client_id`: a client registered with the authorization server beforehand (no
    /// dynamic registration then).
    pub client_id: Option<String>,
    /// `oauth.client_secret_env_var`: the variable holding that client's secret, if it has one.
    pub client_secret_env_var: Option<String>,
    /// `scopes` (or `oauth.scopes`): the scopes to ask for; empty lets the server's metadata decide.
    pub scopes: Vec<String>,
    /// `oauth.callback_port`: the loopback port of the sign-in callback, exactly (the redirect
    /// URI registered for `client_id` names it).
    pub callback_port: Option<u16>,
    /// `oauth.client_metadata_url`: an https URL of a Client ID Metadata Document, used as the
    /// client id where the authorization server supports it (CIMD).
    pub client_metadata_url: Option<String>,
}

/// Keys of an HTTP server's `oauth` table (snake case as Codex, camel case as Claude Code).
const OAUTH_KEYS: &[(&str, &str)] = &[
    ("client_id", "clientId"),
    ("client_secret_env_var", "clientSecretEnvVar"),
    ("scopes", "scopes"),
    ("callback_port", "callbackPort"),
    ("client_metadata_url", "clientMetadataUrl"),
];

impl Entry {
    /// The `oauth` table (or `oauth = false`) and `scopes` of an HTTP server.
    pub(super) fn oauth(
        &self,
        fields: &serde_json::Map<String, Json>,
        warnings: &mut Vec<String>,
    ) -> Result<McpOAuth, ConfigError> {
        let mut oauth = McpOAuth::default();
        if let Some(scopes) = fields.get("scopes") {
            oauth.scopes = self.scopes("scopes", scopes)?;
        }
        let table = match fields.get("oauth") {
            None | Some(Json::Bool(true)) => return Ok(oauth),
            Some(Json::Bool(false)) => {
                oauth.disabled = true;
                return Ok(oauth);
            }
            Some(Json::Object(table)) => table,
            Some(other) => {
                return Err(self.invalid(
                    "oauth",
                    format!("expected false or a table like {{ client_id = \"…\" }}, got {other}"),
                ));
            }
        };
        for key in table.keys() {
            if !OAUTH_KEYS
                .iter()
                .any(|(snake, camel)| key == snake || key == camel)
            {
                warnings.push(format!(
                    "unknown key `{}.oauth.{key}` in {} (ignored)",
                    self.key, self.source
                ));
            }
        }
        let get = |snake: &str| {
            let camel = OAUTH_KEYS
                .iter()
                .find(|(name, _)| *name == snake)
                .map_or(snake, |(_, camel)| camel);
            table.get(snake).or_else(|| table.get(camel))
        };
        let text = |name: &str| -> Result<Option<String>, ConfigError> {
            match get(name) {
                None => Ok(None),
                Some(Json::String(value)) if !value.trim().is_empty() => {
                    Ok(Some(value.trim().to_owned()))
                }
                Some(_) => {
                    Err(self.invalid(&format!("oauth.{name}"), "expected a non-empty string"))
                }
            }
        };
        oauth.client_id = text("client_id")?;
        oauth.client_secret_env_var = text("client_secret_env_var")?;
        if oauth.client_secret_env_var.is_some() && oauth.client_id.is_none() {
            return Err(self.invalid(
                "oauth.client_secret_env_var",
                "a client secret belongs to a pre-registered client: set `oauth.client_id` too",
            ));
        }
        oauth.client_metadata_url = text("client_metadata_url")?;
        if let Some(url) = &oauth.client_metadata_url
            && !url.starts_with("https://")
        {
            return Err(self.invalid(
                "oauth.client_metadata_url",
                format!("expected an https:// URL, got {url:?}"),
            ));
        }
        if let Some(scopes) = get("scopes") {
            oauth.scopes = self.scopes("oauth.scopes", scopes)?;
        }
        oauth.callback_port = match get("callback_port") {
            None => None,
            Some(value) => Some(
                value
                    .as_u64()
                    .and_then(|port| u16::try_from(port).ok())
                    .filter(|port| *port > 0)
                    .ok_or_else(|| {
                        self.invalid(
                            "oauth.callback_port",
                            format!("expected a port from 1 to 65535, got {value}"),
                        )
                    })?,
            ),
        };
        Ok(oauth)
    }

    /// Scopes as a list, or as one space-separated string (the OAuth `scope` form).
    fn scopes(&self, field: &str, value: &Json) -> Result<Vec<String>, ConfigError> {
        match value {
            Json::String(text) => Ok(text.split_whitespace().map(str::to_owned).collect()),
            _ => self.strings(field, value),
        }
    }
}
