//! The gate as a tower service in front of the routes.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use corvid_store::team::{Hold, KeyInfo, Refusal};
use corvid_store::{PriceMicros, Tokens, now_ms};
use futures_util::future::{BoxFuture, Either};
use http::{HeaderMap, Method, StatusCode};

use super::{Access, RunningGuard, TICKET, Ticket, estimate};
use crate::body::read_body;
use crate::error::ApiError;
use crate::path_dialect;
use crate::state::AppState;
use crate::top_level::TopLevel;

/// How long a caller is told to wait when the store cannot be asked.
const UNREACHABLE_RETRY: Duration = Duration::from_secs(2);

/// Paths any caller may reach without a key: the probes.
fn is_open(path: &str) -> bool {
    matches!(path, "/healthz" | "/livez" | "/readyz")
}

#[derive(Clone)]
pub(crate) struct Gate<S> {
    pub(crate) inner: S,
    pub(crate) state: AppState,
}

impl<S> tower::Service<Request> for Gate<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let Some(access) = self.state.access().cloned() else {
            return Either::Left(self.inner.call(request));
        };
        let path = request.uri().path();
        let presented = presented_key(request.headers(), request.uri().query());
        let is_ours = presented
            .as_deref()
            .is_some_and(|key| key.starts_with("cv-"));
        // The admin API checks its own key (see `admin`).
        let as_local = !access.required && !is_ours && access.local.is_some();
        if is_open(path)
            || path == "/metrics"
            || path.starts_with("/admin/")
            || (!access.required && !is_ours && !as_local)
        {
            return Either::Left(self.inner.call(request));
        }
        // The service that was made ready serves this request; a clone waits for the next.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        Either::Right(Box::pin(async move {
            let presented = if as_local { None } else { presented };
            Ok(admit(access, state, inner, request, presented).await)
        }))
    }
}

/// The key a client sent, under any dialect's header (or Gemini's `?key=`).
fn presented_key(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    if let Some(value) = headers.get(http::header::AUTHORIZATION)
        && let Ok(text) = value.to_str()
    {
        let token = text
            .strip_prefix("Bearer ")
            .or_else(|| text.strip_prefix("bearer "))
            .unwrap_or(text);
        return Some(token.trim().to_owned());
    }
    for name in ["x-api-key", "x-goog-api-key"] {
        if let Some(text) = headers.get(name).and_then(|value| value.to_str().ok()) {
            return Some(text.trim().to_owned());
        }
    }
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("key="))
        .map(str::to_owned)
}

async fn admit<S>(
    access: Access,
    state: AppState,
    mut inner: S,
    request: Request,
    presented: Option<String>,
) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    let dialect = path_dialect::of_path(request.uri().path());
    let refuse = |error: ApiError| error.in_dialect(dialect).into_response();
    let key = match (presented, &access.local) {
        (Some(presented), _) => match access.keys.lookup(&presented).await {
            Ok(Some(key)) => key,
            Ok(None) => return refuse(unauthorized("the client key is unknown or revoked")),
            Err(error) => {
                tracing::warn!(%error, "cannot look up a client key");
                return refuse(unavailable());
            }
        },
        // Keys are not required: the local user's key carries the daily budget.
        (None, Some(local)) if !access.required => Arc::clone(local),
        (None, _) => {
            return refuse(unauthorized(
                "this corvid requires a client key: send it as a bearer token, x-api-key or x-goog-api-key",
            ));
        }
    };
    let is_generation = request.method() == Method::POST
        && !request.uri().path().ends_with("/count_tokens")
        && (request.uri().path().starts_with("/v1/")
            || request.uri().path().starts_with("/v1beta/"));
    if !is_generation {
        return call(&mut inner, request).await;
    }
    let (parts, body) = request.into_parts();
    let body = match read_body(
        Request::from_parts(parts.clone(), body),
        state.config().max_body_bytes,
    )
    .await
    {
        Ok(body) => body,
        Err(error) => return refuse(error),
    };
    let top = TopLevel::parse(&body).ok();
    let requested = estimate::model_of(parts.uri.path(), top.as_ref()).unwrap_or_default();
    // A `[routes.NAME]` expands into its targets: the key must be allowed every one a fallback
    // may reach, and the hold is priced at the first.
    let attempts = state
        .registry()
        .plan(&requested, None, None)
        .map(|plan| plan.attempts)
        .unwrap_or_default();
    if attempts
        .iter()
        .any(|route| !key.allows_model(&requested, route.provider.name(), &route.model))
    {
        return refuse(ApiError::forbidden(format!(
            "the client key {} may not use the model {requested}",
            key.name
        )));
    }
    let route = attempts.into_iter().next();
    let request = Request::from_parts(parts, Body::from(body.clone()));
    let request_id = corvid_store::team::new_request_id();
    let mut held = false;
    if key.needs_hold() {
        let hold = match hold_for(
            &access,
            &state,
            &key,
            &request_id,
            &body,
            top.as_ref(),
            route.as_ref().map(|r| r.model.as_str()),
        ) {
            Ok(hold) => hold,
            Err(error) => return refuse(error),
        };
        match access.store().hold(&hold).await {
            Ok(None) => held = true,
            Ok(Some(refusal)) => return refuse(refused(refusal)),
            Err(error) => {
                tracing::warn!(%error, "cannot take a budget hold");
                return refuse(unavailable());
            }
        }
    }
    let ticket = Ticket {
        request_id: request_id.clone(),
        key_id: key.id,
        team_id: key.team_id,
        taken: Arc::new(AtomicU32::new(0)),
        _running: held.then(|| RunningGuard::new(&access, &request_id)),
    };
    let taken = Arc::clone(&ticket.taken);
    let response = TICKET.scope(ticket, call(&mut inner, request)).await;
    if held && (taken.load(Ordering::SeqCst) == 0 || !response.status().is_success()) {
        // Refused before any provider was asked (a bad body, an unknown model): nothing spent.
        // Or every attempt failed (their rows, outcome `error`, keep the hold for a fallback):
        // the request is over.
        let store = Arc::clone(access.store());
        tokio::spawn(async move {
            if let Err(error) = store.release(&request_id).await {
                tracing::warn!(%error, "cannot release a budget hold; the sweeper will");
            }
        });
    }
    response
}

async fn call<S>(inner: &mut S, request: Request) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    match inner.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The hold a request with `key` takes: its estimated cost against the key's budgets.
fn hold_for(
    access: &Access,
    state: &AppState,
    key: &KeyInfo,
    request_id: &str,
    body: &[u8],
    top: Option<&TopLevel<'_>>,
    upstream: Option<&str>,
) -> Result<Hold, ApiError> {
    let output = top
        .and_then(estimate::output_cap)
        .unwrap_or(access.default_output_tokens);
    let tokens = Tokens {
        input: estimate::input_tokens(body),
        output,
        ..Tokens::default()
    };
    let amount = if key.budgets.is_empty() {
        0
    } else {
        let price =
            upstream.and_then(|model| corvid_store::price_of(&state.config().prices, model));
        match price {
            Some(price) => PriceMicros::from_price(&price).cost(&tokens),
            // An unpriced model would cost a budget nothing: refused rather than free.
            None => {
                return Err(ApiError::forbidden(format!(
                    "the model {} has no price (neither in [prices] nor corvid's catalog); a key with a budget can only use priced models",
                    upstream.unwrap_or("requested")
                )));
            }
        }
    };
    Ok(Hold {
        request_id: request_id.to_owned(),
        key_id: key.id,
        budget_ids: key.budgets.iter().map(|budget| budget.id).collect(),
        amount_micros: amount,
        tokens: tokens.input + tokens.output,
        rpm: key.rpm,
        tpm: key.tpm,
        daily_requests: key.daily_requests,
        instance: access.instance.clone(),
        lease: access.lease,
    })
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, message)
}

fn unavailable() -> ApiError {
    let mut error = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "the budget store cannot be reached; try again shortly",
    );
    error.retry_after = Some(UNREACHABLE_RETRY);
    error
}

fn refused(refusal: Refusal) -> ApiError {
    let (message, wait) = match refusal {
        Refusal::Budget {
            scope,
            cap_micros,
            resets_at_ms,
        } => {
            let wait_ms = u64::try_from(resets_at_ms - now_ms()).unwrap_or(0);
            (
                format!(
                    "the budget {scope} (${:.2}) is spent; it resets in {} (at Unix time {})",
                    corvid_store::micros_to_usd(cap_micros),
                    human(wait_ms / 1000),
                    resets_at_ms / 1000
                ),
                Duration::from_millis(wait_ms.max(1000)),
            )
        }
        Refusal::DailyRequests {
            limit,
            resets_at_ms,
        } => {
            let wait_ms = u64::try_from(resets_at_ms - now_ms()).unwrap_or(0);
            (
                format!(
                    "the daily request quota ({limit} requests) is used up; it resets in {} (at Unix time {})",
                    human(wait_ms / 1000),
                    resets_at_ms / 1000
                ),
                Duration::from_millis(wait_ms.max(1000)),
            )
        }
        Refusal::Rpm {
            limit,
            retry_after_s,
        } => (
            format!("the client key's limit of {limit} requests per minute is reached"),
            Duration::from_secs(retry_after_s),
        ),
        Refusal::Tpm {
            limit,
            retry_after_s,
        } => (
            format!("the client key's limit of {limit} tokens per minute is reached"),
            Duration::from_secs(retry_after_s),
        ),
    };
    let mut error = ApiError::new(StatusCode::TOO_MANY_REQUESTS, message);
    error.retry_after = Some(wait);
    error
}

fn human(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        _ => format!("{} h", seconds / 3600),
    }
}
