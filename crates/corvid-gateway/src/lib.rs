//! The inbound HTTP APIs: `router(state) -> Router` for `/healthz`, `/v1/models`,
//! `/v1/chat/completions`, `/v1/responses`, `/v1/completions` (FIM), `/v1/messages` (+
//! `count_tokens`) and Gemini's `/v1beta/models/{model}:generateContent` (also under `/v1`,
//! google-genai's default from its version 3 on); the request guards;
//! routing to providers; the byte pass-through for same-dialect requests and the translation
//! through `corvid-wire` for the rest; and the one mapping from failures to HTTP answers.

mod access;
mod anchor;
mod body;
mod body_deadline;
mod bookkeeping;
mod closing;
mod completions;
mod embeddings;
mod error;
mod exchange;
mod guard;
mod hot_routes;
mod inbound;
mod listen;
mod log_text;
mod metrics;
mod model_get;
mod model_name;
mod models;
mod passthrough;
mod path_dialect;
mod relay;
mod routed;
mod rules;
mod state;
mod top_level;
mod translate;

pub use access::Access;
pub use corvid_wire::Dialect;
pub use error::ApiError;
pub use listen::{BindError, ServeLimits, Served, check_bind_address, serve, serve_with};
pub use state::AppState;

use axum::Router;
use axum::extract::{Request, State};
use axum::routing::{get, post};
use futures_util::future::{BoxFuture, Either, Ready};
use tower::Layer as _;

use guard::{Guard, GuardLayer};
use hot_routes::HotRoutes;

/// The whole gateway as one service, ready for [`serve`] (or `oneshot` in tests).
pub fn router(state: AppState) -> App {
    let allow_remote = state.config().allow_remote;
    let mut router = Router::new()
        .route("/healthz", get(health))
        .route("/livez", get(health))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics_text))
        .route(
            "/admin/keys",
            get(access::admin::list_keys).post(access::admin::create_key),
        )
        .route("/admin/keys/{name}/revoke", post(access::admin::revoke_key))
        .route(
            "/admin/teams",
            get(access::admin::list_teams).post(access::admin::create_team),
        )
        .route("/admin/spend", get(access::admin::spend))
        .route("/v1/models", get(list_models))
        .route("/v1/completions", post(completions::complete))
        .route("/v1/embeddings", post(embeddings::embeddings))
        .route("/v1/messages/count_tokens", post(inbound::count_tokens))
        .route("/v1beta/models", get(models::list_gemini))
        .route(
            "/v1beta/models/{*target}",
            post(inbound::gemini).get(model_get::get_v1beta),
        )
        .route(
            "/v1/models/{*target}",
            post(inbound::gemini).get(model_get::get_v1),
        );
    // `HotRoutes` answers POSTs to these before the router sees them; the router declares them
    // too, with the same handler, so that other methods on these paths get 405, not 404.
    for (path, dialect, name) in inbound::GENERATION_ROUTES {
        router = router.route(
            path,
            post(
                move |State(state): State<AppState>, request: Request| async move {
                    inbound::handle(&state, request, dialect, name).await
                },
            ),
        );
    }
    // After every route: the 405 fallback is set on the routes registered before it.
    let router = router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state.clone());
    let closing = state.closing();
    App {
        service: GuardLayer { allow_remote }.layer(access::Gate {
            inner: HotRoutes {
                inner: router,
                state: state.clone(),
            },
            state,
        }),
        closing,
    }
}

/// The gateway: the Host/Origin guard, then the hot routes, then the router.
#[derive(Clone)]
pub struct App {
    service: Guard<access::Gate<HotRoutes<Router>>>,
    /// The shutdown gate `serve` closes when its grace ends.
    closing: std::sync::Arc<closing::Closing>,
}

impl tower::Service<axum::extract::Request> for App {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Either<
        Ready<Result<Self::Response, Self::Error>>,
        Either<
            Either<
                BoxFuture<'static, Result<Self::Response, Self::Error>>,
                axum::routing::future::RouteFuture<Self::Error>,
            >,
            BoxFuture<'static, Result<Self::Response, Self::Error>>,
        >,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.service.poll_ready(cx)
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        self.service.call(request)
    }
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"status": "ok"}))
}

/// `GET /metrics`: Prometheus' text format.
async fn metrics_text(State(state): State<AppState>) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        [(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics_text(),
    )
        .into_response()
}

/// `GET /readyz`: 200 when the store answers within two seconds (always, without team mode);
/// 503 otherwise. `/livez` (the process) never asks the store.
async fn ready(State(state): State<AppState>) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let Some(access) = state.access() else {
        return axum::Json(serde_json::json!({"status": "ok"})).into_response();
    };
    let store = std::sync::Arc::clone(access.store());
    match tokio::time::timeout(std::time::Duration::from_secs(2), store.ping()).await {
        Ok(Ok(())) => {
            axum::Json(serde_json::json!({"status": "ok", "store": "ok"})).into_response()
        }
        Ok(Err(error)) => {
            tracing::debug!(%error, "readiness: the store does not answer");
            not_ready()
        }
        Err(_) => not_ready(),
    }
}

fn not_ready() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        http::StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(serde_json::json!({"status": "unavailable", "store": "unreachable"})),
    )
        .into_response()
}

/// `GET /v1/models`: Gemini's list for a Google client (google-genai 3 lists under `/v1`),
/// otherwise OpenAI's (or Anthropic's, for Claude Code).
async fn list_models(
    state: State<AppState>,
    headers: http::HeaderMap,
    uri: http::Uri,
) -> axum::Json<serde_json::Value> {
    if path_dialect::is_google_client(&headers, uri.query()) {
        return models::list_gemini(state).await;
    }
    models::list(state, headers).await
}

async fn not_found(uri: http::Uri) -> ApiError {
    ApiError::not_found(format!("no route for {}", uri.path()))
        .in_dialect(path_dialect::of_path(uri.path()))
}

async fn method_not_allowed(method: http::Method, uri: http::Uri) -> ApiError {
    ApiError::new(
        http::StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    )
    .in_dialect(path_dialect::of_path(uri.path()))
}
