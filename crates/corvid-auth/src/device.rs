//! `corvid login xai --device`: the device authorization grant (RFC 8628), for machines
//! without a browser.

use std::time::Duration;

use serde::Deserialize;

use crate::browser::tokens_from_login;
use crate::token_endpoint::{TokenOutcome, describe, post_form, truncate};
use crate::{AuthError, LoginError, OAuthEndpoints, Secret, TokenSet};

/// Poll interval when the server names none, in seconds.
const DEFAULT_INTERVAL: u64 = 5;
/// Device-code lifetime when the server names none, in seconds.
const DEFAULT_EXPIRES_IN: u64 = 600;
/// Consecutive network or 5xx failures tolerated while polling.
const MAX_TRANSIENT_FAILURES: u32 = 3;

/// What the user must do: visit `verification_uri` and enter `user_code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCode {
    pub user_code: String,
    pub verification_uri: String,
    /// The same page with the code filled in, when the server offers one.
    pub verification_uri_complete: Option<String>,
    /// Seconds until the code expires.
    pub expires_in: u64,
    /// Seconds between polls.
    pub interval: u64,
}

/// The device flow's inputs.
pub struct DeviceLogin {
    pub endpoints: OAuthEndpoints,
    pub http: reqwest::Client,
    /// What one "second" of the server's `interval` and `expires_in` lasts: one second,
    /// or a few milliseconds in tests.
    pub time_unit: Duration,
}

/// Signs in with a device code: `on_code` shows the code, then the token endpoint is polled
/// until the user approves, denies, or the code expires.
pub async fn login_device(
    endpoints: &OAuthEndpoints,
    http: &reqwest::Client,
    on_code: impl Fn(&DeviceCode),
) -> Result<TokenSet, AuthError> {
    let options = DeviceLogin {
        endpoints: endpoints.clone(),
        http: http.clone(),
        time_unit: Duration::from_secs(1),
    };
    login_device_with(options, on_code).await
}

/// [`login_device`] with every option.
pub async fn login_device_with(
    options: DeviceLogin,
    on_code: impl Fn(&DeviceCode),
) -> Result<TokenSet, AuthError> {
    let (device_code, code) = request_device_code(&options).await?;
    on_code(&code);

    let deadline = tokio::time::Instant::now() + options.time_unit * seconds(code.expires_in);
    let mut interval = code.interval.max(1);
    let mut transient_failures = 0;
    let form = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("device_code", device_code.expose()),
        ("client_id", options.endpoints.client_id.as_str()),
    ];
    // Each poll is scheduled `interval` after the previous one *started* (RFC 8628 spaces the
    // requests), so a slow answer does not push the schedule past the code's lifetime.
    let mut last_start = tokio::time::Instant::now();
    loop {
        let wake = last_start + options.time_unit * seconds(interval);
        if wake > deadline {
            return Err(LoginError::DeviceCodeExpired.into());
        }
        tokio::time::sleep_until(wake).await;
        last_start = wake.max(tokio::time::Instant::now());
        let outcome = post_form(
            &options.http,
            &options.endpoints.token,
            &form,
            &[&device_code],
        )
        .await;
        match outcome {
            Ok(TokenOutcome::Tokens(reply)) => return Ok(tokens_from_login(reply)?),
            Ok(TokenOutcome::Rejected(rejection)) => {
                transient_failures = 0;
                match rejection.error.as_deref() {
                    Some("authorization_pending") => {}
                    Some("slow_down") => interval += 5,
                    Some("access_denied") => {
                        return Err(LoginError::Denied {
                            error: "access_denied".to_owned(),
                            description: Some(rejection.description.unwrap_or_else(|| {
                                "the request was denied on the verification page".to_owned()
                            })),
                        }
                        .into());
                    }
                    Some("expired_token") => return Err(LoginError::DeviceCodeExpired.into()),
                    _ => {
                        return Err(LoginError::TokenEndpoint {
                            status: rejection.status,
                            body: rejection.summary(),
                        }
                        .into());
                    }
                }
            }
            Err(error) => {
                let message = error.to_string();
                transient_failures += 1;
                if transient_failures > MAX_TRANSIENT_FAILURES {
                    return Err(LoginError::Transport { message }.into());
                }
                tracing::warn!(%message, "device sign-in: polling failed; trying again");
            }
        }
    }
}

fn seconds(count: u64) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The device-code reply. Not `Debug`: `device_code` is a secret.
#[derive(Deserialize)]
struct DeviceReply {
    device_code: String,
    user_code: String,
    #[serde(alias = "verification_url")]
    verification_uri: String,
    #[serde(default)]
    verification_uri_complete: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    interval: Option<u64>,
}

async fn request_device_code(options: &DeviceLogin) -> Result<(Secret, DeviceCode), LoginError> {
    let form = [
        ("client_id", options.endpoints.client_id.as_str()),
        ("scope", options.endpoints.scope.as_str()),
    ];
    let call = async {
        let response = options
            .http
            .post(&options.endpoints.device)
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&form)
            .send()
            .await?;
        let status = response.status();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    };
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .map_err(|_| LoginError::Transport {
            message: "the device-code endpoint did not answer within 30 s".to_owned(),
        })?
        .map_err(|err| LoginError::Transport {
            message: describe(err),
        })?;
    if !status.is_success() {
        return Err(LoginError::DeviceEndpoint {
            status: status.as_u16(),
            body: truncate(&body),
        });
    }
    let reply: DeviceReply =
        serde_json::from_str(&body).map_err(|err| LoginError::DeviceEndpoint {
            status: status.as_u16(),
            body: format!("unexpected JSON: {err}"),
        })?;
    let code = DeviceCode {
        user_code: reply.user_code,
        verification_uri: reply.verification_uri,
        verification_uri_complete: reply.verification_uri_complete,
        expires_in: reply.expires_in.unwrap_or(DEFAULT_EXPIRES_IN),
        interval: reply.interval.unwrap_or(DEFAULT_INTERVAL),
    };
    Ok((Secret::new(reply.device_code), code))
}

#[cfg(test)]
mod tests;
