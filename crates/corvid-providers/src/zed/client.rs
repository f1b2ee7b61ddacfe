//! [`ZedClient`]: the account API (`/client/*`, authorized by the sign-in pair) and the LLM
//! API (`/models`, `/completions`, authorized by a short-lived LLM token).
//!
//! The LLM token (reference §3.4) is shared by every request of the client and kept in memory
//! only. Minting runs under one async mutex, so concurrent callers share one mint: a caller
//! whose request was refused for a stale token asks for a refresh *of that token*; if another
//! caller already replaced it, the new one is returned without a second mint. Each request is
//! resent at most once.
//!
//! A 401 from the account API means the sign-in is dead (reference §2.5): the client then
//! counts as signed out ([`ZedClient::is_signed_out`]) and, when it was given the store the
//! sign-in came from ([`ZedClient::with_store`]), removes it there, so `corvid status` and the
//! routing say "run `corvid login zed`" instead of trusting it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use std::time::Duration;

use bytes::Bytes;
use corvid_auth::Secret;
use corvid_auth::zed::{ZedCredentials, ZedStore};
use corvid_wire::model::{ChatRequest, NameMap};
use http::{HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use serde::Deserialize;

use crate::transport::{Transport, UpstreamBody};

use super::ZedConfig;
use super::account::{ZedAccount, ZedPlan};
use super::completion::ZedCompletion;
use super::error::{ZedError, error_from_reply};
use super::models::{ZedModel, ZedModels};
use super::request::completion_body;
use super::stream::{ZedFraming, ZedStreamDecoder};

/// How much of an error body is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// How much of a JSON reply (account, models) is read.
const JSON_BODY_LIMIT: usize = 8 * 1024 * 1024;
/// Reply headers that mean "mint a new LLM token and resend once" (presence only).
const STALE_TOKEN_HEADERS: [&str; 2] = ["x-zed-expired-token", "x-zed-outdated-token"];

/// A client for one signed-in Zed account. Cheap to clone; clones share the LLM token.
#[derive(Clone, Debug)]
pub struct ZedClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The one HTTP client every provider uses (keep-alive, TLS, the system proxy).
    transport: Transport,
    config: ZedConfig,
    credentials: ZedCredentials,
    /// The LLM token; the mutex also serializes minting.
    token: tokio::sync::Mutex<Option<Secret>>,
    /// Tokens minted so far.
    mints: AtomicU64,
    /// What `/client/users/me` said last: the organization tokens are minted for, the plan.
    account: Mutex<AccountCache>,
    /// Zed answered 401 to the sign-in.
    signed_out: AtomicBool,
    /// Where the sign-in is kept, to remove it once Zed refuses it.
    store: OnceLock<ZedStore>,
}

#[derive(Debug, Default)]
struct AccountCache {
    organization: Option<String>,
    plan: Option<ZedPlan>,
}

impl ZedClient {
    /// A client on corvid's transport (connect and idle timeouts from `config`, the system
    /// proxy honoured).
    pub fn new(config: ZedConfig, credentials: ZedCredentials) -> Result<Self, ZedError> {
        let transport = Transport::new(
            config.connect_timeout,
            config.idle_timeout,
            &config.llm_url,
            |name| std::env::var(name).ok(),
        )
        .map_err(|source| ZedError::Transport {
            url: config.llm_url.clone(),
            source,
        })?;
        Ok(Self::with_transport(config, credentials, transport))
    }

    /// A client over an existing transport (tests pass one that ignores proxies).
    pub fn with_transport(
        config: ZedConfig,
        credentials: ZedCredentials,
        transport: Transport,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                transport,
                config,
                credentials,
                token: tokio::sync::Mutex::new(None),
                mints: AtomicU64::new(0),
                account: Mutex::new(AccountCache::default()),
                signed_out: AtomicBool::new(false),
                store: OnceLock::new(),
            }),
        }
    }

    /// Removes the sign-in from `store` when Zed answers 401 to it (only if the store still
    /// holds this token: a newer sign-in is left alone).
    pub fn with_store(self, store: ZedStore) -> Self {
        // A second store is ignored: the first one is where this sign-in came from.
        let _ = self.inner.store.set(store);
        self
    }

    /// Whether Zed refused this sign-in (401 from the account API).
    pub fn is_signed_out(&self) -> bool {
        self.inner.signed_out.load(Ordering::SeqCst)
    }

    /// The account API answered 401: remember it, and remove the dead sign-in from its store.
    async fn signed_out(&self) -> ZedError {
        let first = !self.inner.signed_out.swap(true, Ordering::SeqCst);
        if let (true, Some(store)) = (first, self.inner.store.get().cloned()) {
            let refused = self.inner.credentials.access_token.clone();
            // The env file and the keyring are blocking IO.
            match tokio::task::spawn_blocking(move || store.clear_if_token(&refused)).await {
                Ok(Ok(true)) => tracing::warn!(
                    "Zed refused the stored sign-in (401); it was removed: run `corvid login zed` to sign in again"
                ),
                Ok(Ok(false)) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, "Zed refused the stored sign-in (401), and it could not be removed")
                }
                Err(error) => tracing::warn!(%error, "could not remove the refused Zed sign-in"),
            }
        }
        ZedError::SignedOut
    }

    /// Whether `other` talks to the same Zed, as the same account.
    pub fn same_account(&self, other: &ZedClient) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
            || (self.inner.config == other.inner.config
                && self.inner.credentials == other.inner.credentials)
    }

    pub fn config(&self) -> &ZedConfig {
        &self.inner.config
    }

    /// `GET /client/users/me`. A 401 is [`ZedError::SignedOut`]: the stored pair is dead (the
    /// caller removes it and asks the user to sign in again). Remembers the organization and
    /// plan; a change of organization drops the LLM token.
    pub async fn me(&self) -> Result<ZedAccount, ZedError> {
        let previous = self.lock_account().organization.clone();
        let account = self.fetch_account().await?;
        let current = account.organization.as_ref().map(|org| org.id.clone());
        if previous.is_some() && previous != current {
            *self.inner.token.lock().await = None;
        }
        Ok(account)
    }

    /// Uses `organization` for LLM tokens from now on (dropping the current token if it
    /// changes).
    pub async fn set_organization(&self, organization: &str) {
        let changed = {
            let mut account = self.lock_account();
            let changed = account.organization.as_deref() != Some(organization);
            account.organization = Some(organization.to_owned());
            changed
        };
        if changed {
            *self.inner.token.lock().await = None;
        }
    }

    /// The plan last read from `/client/users/me`.
    pub fn plan(&self) -> Option<ZedPlan> {
        self.lock_account().plan
    }

    /// The current LLM token, minted when there is none.
    pub async fn llm_token(&self) -> Result<Secret, ZedError> {
        let mut slot = self.inner.token.lock().await;
        if let Some(token) = slot.as_ref() {
            return Ok(token.clone());
        }
        let token = self.mint().await?;
        *slot = Some(token.clone());
        Ok(token)
    }

    /// A new LLM token to replace `stale`, which Zed refused. Single-flight: when another
    /// caller already replaced `stale`, its token is returned and nothing is minted.
    pub async fn refresh_llm_token(&self, stale: &Secret) -> Result<Secret, ZedError> {
        let mut slot = self.inner.token.lock().await;
        if let Some(current) = slot.as_ref()
            && current != stale
        {
            return Ok(current.clone());
        }
        *slot = None;
        let token = self.mint().await?;
        *slot = Some(token.clone());
        Ok(token)
    }

    /// LLM tokens minted so far. When it grows, the gateway re-reads `/models`.
    pub fn llm_tokens_minted(&self) -> u64 {
        self.inner.mints.load(Ordering::SeqCst)
    }

    /// `GET /models`: the models this account may call.
    pub async fn models(&self) -> Result<ZedModels, ZedError> {
        let url = format!("{}/models", self.inner.config.llm_url);
        let response = self
            .send_llm(&url, |token| {
                let mut request = self.llm_request(Method::GET, &url, token, Bytes::new())?;
                static_header(&mut request, "x-zed-client-supports-x-ai", "true");
                Ok(request)
            })
            .await?;
        if !response.status().is_success() {
            return Err(reply_error(response, || self.plan()).await);
        }
        let body = read_body(response, JSON_BODY_LIMIT).await;
        ZedModels::parse(&body).map_err(|err| ZedError::Decode {
            what: "/models",
            message: err.to_string(),
        })
    }

    /// `POST /completions` for `model`, its `provider_request` written by corvid-wire's encoder
    /// for the model's provider. Resolves when the reply's head arrives: an error status is a
    /// [`ZedError`] (402 worded with the plan); a success is a stream of canonical events.
    pub async fn completion(
        &self,
        request: &ChatRequest,
        model: &ZedModel,
        thread_id: Option<&str>,
        prompt_id: Option<&str>,
    ) -> Result<ZedCompletion, ZedError> {
        let url = format!("{}/completions", self.inner.config.llm_url);
        let body = Bytes::from(completion_body(request, model, thread_id, prompt_id).to_string());
        let response = self
            .send_llm(&url, |token| {
                let mut request = self.llm_request(Method::POST, &url, token, body.clone())?;
                static_header(
                    &mut request,
                    "x-zed-client-supports-status-messages",
                    "true",
                );
                static_header(
                    &mut request,
                    "x-zed-client-supports-stream-ended-request-completion-status",
                    "true",
                );
                if !self.inner.config.version.is_empty() {
                    config_header(
                        &mut request,
                        "x-zed-version",
                        &self.inner.config.version,
                        &url,
                    )?;
                }
                Ok(request)
            })
            .await?;
        if !response.status().is_success() {
            return Err(reply_error(response, || self.plan()).await);
        }
        let framing = ZedFraming::from_headers(response.headers());
        let decoder = ZedStreamDecoder::new(model.provider, framing, NameMap::new(&request.tools))
            .with_plan(self.plan());
        Ok(ZedCompletion::new(response, decoder))
    }

    /// Sends an LLM request with the current token; on a stale-token reply, mints once and
    /// resends once, returning whatever the second attempt gets.
    async fn send_llm(
        &self,
        url: &str,
        build: impl Fn(&Secret) -> Result<http::Request<Bytes>, ZedError>,
    ) -> Result<http::Response<UpstreamBody>, ZedError> {
        let token = self.llm_token().await?;
        let response = self.send(url, build(&token)?, None).await?;
        if !token_is_stale(&response) {
            return Ok(response);
        }
        drop(response);
        tracing::debug!("Zed refused the LLM token as stale; minting a new one");
        let token = self.refresh_llm_token(&token).await?;
        self.send(url, build(&token)?, None).await
    }

    /// Sends one request; `deadline` bounds a whole account call (a completion is bounded by
    /// the idle timeout only).
    async fn send(
        &self,
        url: &str,
        request: http::Request<Bytes>,
        deadline: Option<Duration>,
    ) -> Result<http::Response<UpstreamBody>, ZedError> {
        self.inner
            .transport
            .send(request, deadline)
            .await
            .map_err(|error| ZedError::from_send(url, error))
    }

    /// `/client/users/me` without touching the LLM token (minting calls it under the lock).
    async fn fetch_account(&self) -> Result<ZedAccount, ZedError> {
        let body = self
            .account_call(
                Method::GET,
                "/client/users/me",
                Bytes::new(),
                JSON_BODY_LIMIT,
            )
            .await?;
        let account = ZedAccount::parse(&body).map_err(|err| ZedError::Decode {
            what: "/client/users/me",
            message: err.to_string(),
        })?;
        let mut cache = self.lock_account();
        cache.organization = account.organization.as_ref().map(|org| org.id.clone());
        cache.plan = Some(account.plan);
        Ok(account)
    }

    /// `POST /client/llm_tokens` for the current organization (read from `/client/users/me`
    /// first when unknown). Called with the token mutex held.
    async fn mint(&self) -> Result<Secret, ZedError> {
        let organization = self.lock_account().organization.clone();
        let organization = match organization {
            Some(organization) => organization,
            None => {
                self.fetch_account()
                    .await?
                    .organization
                    .ok_or(ZedError::NoOrganization)?
                    .id
            }
        };
        let body = serde_json::json!({ "organization_id": organization }).to_string();
        let body = self
            .account_call(
                Method::POST,
                "/client/llm_tokens",
                Bytes::from(body),
                ERROR_BODY_LIMIT,
            )
            .await?;
        let reply: TokenReply = serde_json::from_slice(&body).map_err(|err| ZedError::Decode {
            what: "/client/llm_tokens",
            message: err.to_string(),
        })?;
        if reply.token.is_empty() {
            return Err(ZedError::Decode {
                what: "/client/llm_tokens",
                message: "an empty token".to_owned(),
            });
        }
        self.inner.mints.fetch_add(1, Ordering::SeqCst);
        Ok(Secret::new(reply.token))
    }

    /// Calls `path` on the account API (bounded by the account timeout) and reads a successful
    /// reply's body, up to `limit` bytes. A 401 means the sign-in is gone; any other failure is
    /// the reply's error.
    async fn account_call(
        &self,
        method: Method,
        path: &str,
        body: Bytes,
        limit: usize,
    ) -> Result<Vec<u8>, ZedError> {
        let url = format!("{}{path}", self.inner.config.cloud_url);
        let response = self
            .send(
                &url,
                self.account_request(method, &url, body)?,
                Some(self.inner.config.account_timeout),
            )
            .await?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED {
            return Err(self.signed_out().await);
        }
        if !status.is_success() {
            return Err(reply_error(response, || None).await);
        }
        Ok(read_body(response, limit).await)
    }

    /// A `/client/*` request: `Authorization: <user_id> <access_token>` (no `Bearer`).
    fn account_request(
        &self,
        method: Method,
        url: &str,
        body: Bytes,
    ) -> Result<http::Request<Bytes>, ZedError> {
        let credentials = &self.inner.credentials;
        let authorization = sensitive(&format!(
            "{} {}",
            credentials.user_id,
            credentials.access_token.expose()
        ))?;
        let mut request = self.request(method, url, authorization, body)?;
        if let Some(system_id) = &credentials.system_id {
            config_header(&mut request, "x-zed-system-id", system_id, url)?;
        }
        Ok(request)
    }

    /// An LLM request: `Authorization: Bearer <llm token>`.
    fn llm_request(
        &self,
        method: Method,
        url: &str,
        token: &Secret,
        body: Bytes,
    ) -> Result<http::Request<Bytes>, ZedError> {
        let authorization = sensitive(&format!("Bearer {}", token.expose()))?;
        self.request(method, url, authorization, body)
    }

    /// A request with what every call to Zed carries: its credential, JSON, the User-Agent.
    fn request(
        &self,
        method: Method,
        url: &str,
        authorization: HeaderValue,
        body: Bytes,
    ) -> Result<http::Request<Bytes>, ZedError> {
        let mut request = http::Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = url.parse().map_err(|error| ZedError::Transport {
            url: url.to_owned(),
            source: Box::new(error),
        })?;
        let headers = request.headers_mut();
        headers.insert(http::header::AUTHORIZATION, authorization);
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        config_header(
            &mut request,
            "user-agent",
            &self.inner.config.user_agent,
            url,
        )?;
        Ok(request)
    }

    fn lock_account(&self) -> std::sync::MutexGuard<'_, AccountCache> {
        self.inner
            .account
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Deserialize)]
struct TokenReply {
    token: String,
}

/// A 401, or a stale-token header on any status.
fn token_is_stale(response: &http::Response<UpstreamBody>) -> bool {
    response.status() == StatusCode::UNAUTHORIZED
        || STALE_TOKEN_HEADERS
            .iter()
            .any(|name| response.headers().contains_key(*name))
}

/// Adds a header whose value corvid wrote itself.
fn static_header(request: &mut http::Request<Bytes>, name: &'static str, value: &'static str) {
    request.headers_mut().insert(
        HeaderName::from_static(name),
        HeaderValue::from_static(value),
    );
}

/// Adds a header whose value comes from configuration or the sign-in (a version, the
/// User-Agent, the system id); one that cannot be sent fails the request before it leaves.
fn config_header(
    request: &mut http::Request<Bytes>,
    name: &'static str,
    value: &str,
    url: &str,
) -> Result<(), ZedError> {
    let value = HeaderValue::from_str(value).map_err(|error| ZedError::Transport {
        url: url.to_owned(),
        source: Box::new(error),
    })?;
    request
        .headers_mut()
        .insert(HeaderName::from_static(name), value);
    Ok(())
}

fn sensitive(value: &str) -> Result<HeaderValue, ZedError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ZedError::InvalidCredential)?;
    value.set_sensitive(true);
    Ok(value)
}

/// Up to `limit` bytes of the body; a broken body yields what arrived.
/// A failed reply as a [`ZedError`]: its status, headers and the start of its body, worded
/// with the plan `plan` reads once the body is in (`None` where the plan plays no part).
async fn reply_error(
    response: http::Response<UpstreamBody>,
    plan: impl FnOnce() -> Option<ZedPlan>,
) -> ZedError {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = read_body(response, ERROR_BODY_LIMIT).await;
    error_from_reply(status, &headers, &body, plan())
}

async fn read_body(response: http::Response<UpstreamBody>, limit: usize) -> Vec<u8> {
    let mut reply = response.into_body();
    let mut body = Vec::new();
    while let Some(Ok(frame)) = reply.frame().await {
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    body
}
