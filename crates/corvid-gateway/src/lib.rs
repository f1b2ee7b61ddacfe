//! The inbound HTTP APIs: `router(state) -> Router` for `/healthz`, `/v1/models`,
//! `/v1/chat/completions`, `/v1/responses`, `/v1/completions` (FIM), `/v1/messages` (+
//! `count_tokens`) and Gemini's `/v1beta/models/{model}:generateContent`; the request guards;
//! routing to providers; the byte pass-through for same-dialect requests and the translation
//! through `corvid-wire` for the rest; and the one mapping from failures to HTTP answers.

mod body;
mod completions;
mod error;
mod exchange;
mod guard;
mod inbound;
mod listen;
mod models;
mod passthrough;
mod relay;
mod rules;
mod state;
mod top_level;
mod translate;
mod usage_scan;

pub use corvid_wire::Dialect;
pub use error::ApiError;
pub use listen::{BindError, check_bind_address, serve};
pub use state::AppState;

use axum::Router;
use axum::routing::{get, post};

/// The whole gateway as one `Router`, ready for `axum::serve` or `oneshot` in tests.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/v1/models", get(models::list))
        .route("/v1/chat/completions", post(inbound::chat_completions))
        .route("/v1/responses", post(inbound::responses))
        .route("/v1/completions", post(completions::complete))
        .route("/v1/messages", post(inbound::messages))
        .route("/v1/messages/count_tokens", post(inbound::count_tokens))
        .route("/v1beta/models", get(models::list_gemini))
        .route("/v1beta/models/{*target}", post(inbound::gemini))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(guard::GuardLayer {
            allow_remote: state.config().allow_remote,
        })
        .with_state(state)
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"status": "ok"}))
}

async fn not_found(uri: http::Uri) -> ApiError {
    ApiError::not_found(format!("no route for {}", uri.path()))
}

async fn method_not_allowed(method: http::Method, uri: http::Uri) -> ApiError {
    ApiError::new(
        http::StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        format!("{method} is not allowed on {}", uri.path()),
    )
}
