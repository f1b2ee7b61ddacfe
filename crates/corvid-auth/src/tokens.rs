//! The xAI OAuth token set, its env-file names, and expiry from JWT claims.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use crate::Secret;

/// The developer API key (`auth_mode = "api_key"`).
pub const API_KEY_VAR: &str = "XAI_API_KEY";
/// The OAuth access token (`auth_mode = "oauth"`).
pub const ACCESS_TOKEN_VAR: &str = "XAI_ACCESS_TOKEN";
/// The OAuth refresh token; xAI rotates it on every refresh.
pub const REFRESH_TOKEN_VAR: &str = "XAI_REFRESH_TOKEN";
/// When the access token expires, in Unix seconds.
pub const EXPIRES_AT_VAR: &str = "XAI_TOKEN_EXPIRES_AT";
/// The signed-in account's email (not a secret).
pub const EMAIL_VAR: &str = "XAI_ACCOUNT_EMAIL";

/// Every variable an OAuth sign-in writes, in the order it writes them.
pub const OAUTH_VARS: [&str; 4] = [
    ACCESS_TOKEN_VAR,
    REFRESH_TOKEN_VAR,
    EXPIRES_AT_VAR,
    EMAIL_VAR,
];

/// Lifetime assumed when the token endpoint says nothing and the token is not a JWT.
const DEFAULT_LIFETIME_SECS: i64 = 3600;

/// An OAuth sign-in: what `corvid login xai` stores and the gateway refreshes.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenSet {
    pub access_token: Secret,
    pub refresh_token: Option<Secret>,
    /// Unix seconds; `None` when unknown (then only an upstream 401 triggers a refresh).
    pub expires_at: Option<i64>,
    pub email: Option<String>,
}

impl TokenSet {
    /// True when the access token expires within `skew_secs` of `now` (or already has).
    pub fn expires_within(&self, skew_secs: i64, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at - now <= skew_secs)
    }
}

/// The current time in Unix seconds.
pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The claims of a JWT, decoded without checking the signature (we only read `exp` and `email`
/// from tokens xAI just handed us over TLS). `None` when `token` is not a JWT.
pub(crate) fn jwt_claims(token: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        serde_json::Value::Object(claims) => Some(claims),
        _ => None,
    }
}

/// The `exp` claim of a JWT access token.
pub(crate) fn jwt_expiry(token: &str) -> Option<i64> {
    let exp = jwt_claims(token)?.get("exp")?.clone();
    exp.as_i64()
        .or_else(|| exp.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
}

/// Expiry of a new access token: its JWT `exp`, else `now + expires_in`, else one hour.
pub(crate) fn expiry_for(access_token: &str, expires_in: Option<i64>, now: i64) -> i64 {
    jwt_expiry(access_token)
        .or_else(|| expires_in.filter(|secs| *secs > 0).map(|secs| now + secs))
        .unwrap_or(now + DEFAULT_LIFETIME_SECS)
}

/// A successful token-endpoint reply. Deliberately not `Debug`: it holds raw tokens.
#[derive(Deserialize)]
pub(crate) struct TokenReply {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    id_token: Option<String>,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    email: Option<String>,
}

impl TokenReply {
    /// Whether the reply carries a non-empty refresh token.
    pub(crate) fn has_refresh_token(&self) -> bool {
        self.refresh_token
            .as_deref()
            .is_some_and(|token| !token.trim().is_empty())
    }

    /// The token set this reply describes. A reply without a refresh token keeps
    /// `previous_refresh`; one without an email keeps `previous_email`.
    pub(crate) fn into_token_set(
        self,
        now: i64,
        previous_refresh: Option<Secret>,
        previous_email: Option<String>,
    ) -> TokenSet {
        let expires_in = self.expires_in.as_ref().and_then(|value| {
            value
                .as_i64()
                .or_else(|| value.as_f64().map(|f| f as i64))
                .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
        });
        let email = self
            .id_token
            .as_deref()
            .and_then(jwt_claims)
            .and_then(|claims| claims.get("email")?.as_str().map(str::to_owned))
            .or(self.email)
            .filter(|email| !email.trim().is_empty())
            .or(previous_email);
        let refresh_token = self
            .refresh_token
            .filter(|token| !token.trim().is_empty())
            .map(Secret::from)
            .or(previous_refresh);
        TokenSet {
            expires_at: Some(expiry_for(&self.access_token, expires_in, now)),
            access_token: Secret::from(self.access_token),
            refresh_token,
            email,
        }
    }
}

#[cfg(test)]
mod tests;
