//! The OAuth sign-in shared by every request, refreshed single-flight.
//!
//! # Concurrency
//!
//! Three locks, always taken in this order, each for one job:
//!
//! * `flight` (a `tokio::sync::Mutex`) is held across a whole refresh, the POST included. A
//!   caller that finds the access token stale queues on it. Because xAI rotates the refresh
//!   token, two refreshes in parallel would leave one caller with a dead token, so only the
//!   holder of `flight` may spend the refresh token. When a queued caller gets the lock it looks
//!   again: the token the previous holder installed is usually fresh, so it returns that
//!   without a POST. `refreshes` counts finished attempts; a caller that sees the count moved
//!   while it queued also shares the previous attempt's *failure* instead of retrying, so N
//!   callers cost exactly one POST whatever the outcome. tokio's mutex is fair (FIFO).
//! * `persist` (a `parking_lot::Mutex`, which no panic poisons) orders every "change the sign-in in memory, then write it
//!   to the store" step, so the env file always ends up matching the latest change (a refresh
//!   finishing after a sign-out cannot write its tokens back). Never held across an await:
//!   the store's blocking IO (the env file, a keyring tool) runs under it on tokio's blocking
//!   pool, never on a runtime worker.
//! * `state` (a `parking_lot::Mutex`) guards the tokens for a few instructions; the hot path
//!   (a fresh token) takes only this lock and never waits for a refresh or for disk.
//!
//! `generation` is bumped by every sign-in and sign-out. A refresh remembers the generation it
//! started from and, if it changed by the time the reply arrives, discards the reply: it must
//! neither install tokens after a sign-out nor clear a newer sign-in after a fatal answer.
//!
//! # Cancellation
//!
//! The refresh itself runs in a spawned task. If the caller is dropped (the client hung up),
//! the refresh still finishes and its rotated refresh token is still stored; dropping it
//! halfway could leave xAI holding a new refresh token that corvid never saw.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::token_endpoint::{TokenEndpointError, TokenOutcome, post_form};
use crate::tokens::now_unix;
use crate::{AuthError, CredentialStore, OAuthEndpoints, Secret, TokenSet};

/// Refresh when the access token expires within this many seconds.
pub const REFRESH_SKEW_SECS: i64 = 60;

/// The in-memory OAuth sign-in for the xAI upstream. Share it in an `Arc`.
#[derive(Debug)]
pub struct OAuthSession {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    endpoints: OAuthEndpoints,
    http: reqwest::Client,
    store: CredentialStore,
    flight: tokio::sync::Mutex<()>,
    persist: Mutex<()>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tokens: Option<TokenSet>,
    /// Bumped on every sign-in and sign-out (a fatal refresh signs out).
    generation: u64,
    /// Refresh attempts finished so far.
    refreshes: u64,
    /// How the last attempt failed, for the callers that queued behind it.
    last_failure: Option<Failure>,
}

#[derive(Debug, Clone)]
enum Failure {
    SignInRequired(String),
    Transient(String),
}

impl Failure {
    fn to_error(&self) -> AuthError {
        match self.clone() {
            Self::SignInRequired(reason) => AuthError::SignInRequired { reason },
            Self::Transient(message) => AuthError::RefreshFailed { message },
        }
    }
}

/// What the caller needs.
#[derive(Clone)]
enum Want {
    /// A token that does not expire within the skew.
    Fresh,
    /// A fresh token other than this one, which upstream just refused.
    Replacing(Secret),
}

impl State {
    fn usable(&self, want: &Want, now: i64) -> Option<Secret> {
        let tokens = self.tokens.as_ref()?;
        let fresh = !tokens.access_token.expose().is_empty()
            && !tokens.expires_within(REFRESH_SKEW_SECS, now);
        let wanted = match want {
            Want::Fresh => true,
            Want::Replacing(rejected) => tokens.access_token != *rejected,
        };
        (fresh && wanted).then(|| tokens.access_token.clone())
    }
}

/// What a caller holding `flight` should do next.
enum Next {
    Ready(Secret),
    Fail(AuthError),
    Refresh(Job),
    /// Our sign-in cannot be refreshed; the reason, should nothing better turn up.
    Stuck(String),
}

struct Job {
    refresh_token: Secret,
    generation: u64,
    email: Option<String>,
}

impl OAuthSession {
    /// A session starting from `tokens` (`None`: signed out). `store` receives every change.
    pub fn new(
        endpoints: OAuthEndpoints,
        http: reqwest::Client,
        store: CredentialStore,
        tokens: Option<TokenSet>,
    ) -> Self {
        let state = State {
            tokens,
            ..State::default()
        };
        Self {
            inner: Arc::new(Inner {
                endpoints,
                http,
                store,
                flight: tokio::sync::Mutex::new(()),
                persist: Mutex::new(()),
                state: Mutex::new(state),
            }),
        }
    }

    /// The access token to send, refreshed first when it expires within 60 s.
    pub async fn access_token(&self) -> Result<Secret, AuthError> {
        self.obtain(Want::Fresh).await
    }

    /// After upstream answered 401 to `rejected`: the token to retry with. If another caller
    /// already replaced it, that token; otherwise one forced refresh.
    pub async fn refresh_after_rejection(&self, rejected: &Secret) -> Result<Secret, AuthError> {
        self.obtain(Want::Replacing(rejected.clone())).await
    }

    /// Installs and stores a new sign-in (a login done in this process). Blocking: writes the
    /// env file (and the keyring); call it from `spawn_blocking` inside a server.
    pub fn sign_in(&self, tokens: TokenSet) -> Result<(), AuthError> {
        let _persist = self.inner.persist.lock();
        self.inner.store.save(&tokens)?;
        let mut state = self.inner.state.lock();
        state.tokens = Some(tokens);
        state.generation += 1;
        state.last_failure = None;
        Ok(())
    }

    /// Forgets the sign-in in memory and in the store; returns the env-file variables removed.
    /// A refresh in flight is discarded when it finishes. Blocking, like [`Self::sign_in`].
    pub fn sign_out(&self) -> Result<Vec<&'static str>, AuthError> {
        let _persist = self.inner.persist.lock();
        {
            let mut state = self.inner.state.lock();
            state.tokens = None;
            state.generation += 1;
            state.last_failure = None;
        }
        self.inner.store.clear()
    }

    /// Whether `other` holds the same sign-in as this one now (the same tokens, or no sign-in
    /// in either): a settings reload that read back the tokens this session refreshed and
    /// stored finds nothing new, and keeps this session.
    pub fn holds_same_tokens(&self, other: &OAuthSession) -> bool {
        if Arc::ptr_eq(&self.inner, &other.inner) {
            return true;
        }
        // One lock at a time: two sessions never wait on each other.
        let mine = self.tokens_held();
        let theirs = other.tokens_held();
        mine == theirs
    }

    fn tokens_held(&self) -> Option<(Secret, Option<Secret>)> {
        let state = self.inner.state.lock();
        let tokens = state.tokens.as_ref()?;
        Some((tokens.access_token.clone(), tokens.refresh_token.clone()))
    }

    /// Whether the session holds a sign-in (it may still need a refresh).
    pub fn is_signed_in(&self) -> bool {
        self.inner.state.lock().tokens.is_some()
    }

    /// The signed-in account's email.
    pub fn email(&self) -> Option<String> {
        self.inner.state.lock().tokens.as_ref()?.email.clone()
    }

    /// When the current access token expires (Unix seconds), if known.
    pub fn expires_at(&self) -> Option<i64> {
        self.inner.state.lock().tokens.as_ref()?.expires_at
    }

    /// Where changes are stored.
    pub fn store(&self) -> &CredentialStore {
        &self.inner.store
    }

    async fn obtain(&self, want: Want) -> Result<Secret, AuthError> {
        // The hot path: a fresh token, one short lock, no await.
        let seen = {
            let state = self.inner.state.lock();
            if let Some(token) = state.usable(&want, now_unix()) {
                return Ok(token);
            }
            state.refreshes
        };
        // The slow path runs in its own task so that cancelling the caller cannot cut a
        // refresh in half (see the module docs).
        let inner = Arc::clone(&self.inner);
        tokio::spawn(inner.slow_path(want, seen))
            .await
            .unwrap_or_else(|err| {
                Err(AuthError::RefreshFailed {
                    message: format!("the refresh task stopped: {err}"),
                })
            })
    }
}

impl Inner {
    async fn slow_path(self: Arc<Self>, want: Want, seen: u64) -> Result<Secret, AuthError> {
        let _flight = self.flight.lock().await;
        let reason = match self.next(&want, seen) {
            Next::Ready(token) => return Ok(token),
            Next::Fail(err) => return Err(err),
            Next::Refresh(job) => return self.refresh(job, want).await,
            Next::Stuck(reason) => reason,
        };
        // Our sign-in is gone or cannot be refreshed; perhaps `corvid login xai` (another
        // process) has stored a new one since. Reading the store is blocking IO.
        let inner = Arc::clone(&self);
        let adopted = tokio::task::spawn_blocking(move || inner.adopt_stored_sign_in())
            .await
            .unwrap_or(false);
        if adopted {
            match self.next(&want, seen) {
                Next::Ready(token) => return Ok(token),
                Next::Fail(err) => return Err(err),
                Next::Refresh(job) => return self.refresh(job, want).await,
                Next::Stuck(reason) => return Err(AuthError::SignInRequired { reason }),
            }
        }
        Err(AuthError::SignInRequired { reason })
    }

    fn next(&self, want: &Want, seen: u64) -> Next {
        let state = self.state.lock();
        if let Some(token) = state.usable(want, now_unix()) {
            return Next::Ready(token);
        }
        if state.refreshes != seen
            && let Some(failure) = &state.last_failure
        {
            // The refresh we queued behind failed; its answer is ours too.
            return Next::Fail(failure.to_error());
        }
        match &state.tokens {
            None => Next::Stuck("not signed in".to_owned()),
            Some(TokenSet {
                refresh_token: None,
                ..
            }) => Next::Stuck(
                match want {
                    Want::Fresh => "the access token has expired and there is no refresh token",
                    Want::Replacing(_) => {
                        "xAI refused the access token and there is no refresh token"
                    }
                }
                .to_owned(),
            ),
            Some(TokenSet {
                refresh_token: Some(refresh_token),
                email,
                ..
            }) => Next::Refresh(Job {
                refresh_token: refresh_token.clone(),
                generation: state.generation,
                email: email.clone(),
            }),
        }
    }

    /// Installs the stored sign-in if it differs from ours; returns whether it did.
    fn adopt_stored_sign_in(&self) -> bool {
        let generation = self.state.lock().generation;
        let stored = match self.store.load() {
            Ok(Some((tokens, _source))) => tokens,
            Ok(None) => return false,
            Err(err) => {
                tracing::warn!(%err, "could not re-read the stored xAI sign-in");
                return false;
            }
        };
        let _persist = self.persist.lock();
        let mut state = self.state.lock();
        if state.generation != generation || state.tokens.as_ref() == Some(&stored) {
            return false;
        }
        tracing::info!("picked up a new xAI sign-in from the credential store");
        state.tokens = Some(stored);
        state.generation += 1;
        state.last_failure = None;
        true
    }

    /// One POST to the token endpoint, then the result applied and stored (blocking IO, so on
    /// the blocking pool). The caller holds `flight` throughout.
    async fn refresh(self: &Arc<Self>, job: Job, want: Want) -> Result<Secret, AuthError> {
        let form = [
            ("grant_type", "refresh_token"),
            ("client_id", self.endpoints.client_id.as_str()),
            ("refresh_token", job.refresh_token.expose()),
        ];
        let outcome = post_form(
            &self.http,
            &self.endpoints.token,
            &form,
            &[&job.refresh_token],
        )
        .await;
        let inner = Arc::clone(self);
        tokio::task::spawn_blocking(move || inner.apply(job, outcome, &want))
            .await
            .unwrap_or_else(|err| {
                Err(AuthError::RefreshFailed {
                    message: format!("storing the refreshed sign-in failed: {err}"),
                })
            })
    }

    /// Applies a refresh outcome to memory and the store.
    fn apply(
        &self,
        job: Job,
        outcome: Result<TokenOutcome, TokenEndpointError>,
        want: &Want,
    ) -> Result<Secret, AuthError> {
        let now = now_unix();

        let _persist = self.persist.lock();
        let mut state = self.state.lock();
        state.refreshes += 1;
        if state.generation != job.generation {
            // Signed in or out while the POST was in flight: this reply belongs to a sign-in
            // that no longer exists. Install nothing, clear nothing.
            state.last_failure = None;
            return state
                .usable(want, now)
                .ok_or_else(|| AuthError::SignInRequired {
                    reason: "signed out while a refresh was in flight".to_owned(),
                });
        }
        let failure = match outcome {
            Ok(TokenOutcome::Tokens(reply)) => {
                let tokens = reply.into_token_set(now, Some(job.refresh_token), job.email);
                if tokens.access_token.expose().is_empty() {
                    Failure::Transient("the token endpoint returned an empty access token".into())
                } else {
                    let access = tokens.access_token.clone();
                    state.tokens = Some(tokens.clone());
                    state.last_failure = None;
                    drop(state);
                    if let Err(err) = self.store.save(&tokens) {
                        // The new tokens work in memory; say so loudly, since the rotated
                        // refresh token would be lost at the next start.
                        tracing::error!(%err, "refreshed the xAI sign-in but could not store it");
                    }
                    return Ok(access);
                }
            }
            Ok(TokenOutcome::Rejected(rejection)) if rejection.is_fatal_for_refresh() => {
                let reason = format!("xAI refused the refresh token: {}", rejection.summary());
                state.tokens = None;
                state.generation += 1;
                let failure = Failure::SignInRequired(reason);
                state.last_failure = Some(failure.clone());
                drop(state);
                if let Err(err) = self.store.clear_if_refresh_token(&job.refresh_token) {
                    tracing::warn!(%err, "could not clear the refused xAI sign-in from the store");
                }
                return Err(failure.to_error());
            }
            Ok(TokenOutcome::Rejected(rejection)) => Failure::Transient(format!(
                "the token endpoint answered {}",
                rejection.summary()
            )),
            Err(error) => Failure::Transient(error.to_string()),
        };
        state.last_failure = Some(failure.clone());
        Err(failure.to_error())
    }
}

#[cfg(test)]
mod tests;
