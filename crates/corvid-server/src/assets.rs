//! The page's files, embedded in the binary (`web/`, hand-written; no build step): `GET /`
//! serves the page (and exchanges `?token=` for the cookie), `GET /assets/<name>` the rest.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use corvid_gateway::ApiError;
use http::header;
use serde::Deserialize;

use crate::PageState;

/// Every asset: name, media type, bytes.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/app.js"),
    ),
    (
        "connect.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/connect.js"),
    ),
    (
        "markdown.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/markdown.js"),
    ),
    (
        "attach.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/attach.js"),
    ),
    (
        "rewind.js",
        "text/javascript; charset=utf-8",
        include_str!("../web/rewind.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../web/style.css"),
    ),
];

const INDEX: &str = include_str!("../web/index.html");

pub(crate) fn routes() -> Router<PageState> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{name}", get(asset))
}

#[derive(Debug, Deserialize)]
struct IndexQuery {
    token: Option<String>,
}

async fn index(State(state): State<PageState>, Query(query): Query<IndexQuery>) -> Response {
    if let Some(token) = query.token {
        return crate::security::exchange(&state, &token);
    }
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(asset, _, _)| *asset == name) {
        Some((_, media_type, body)) => {
            ([(header::CONTENT_TYPE, *media_type)], *body).into_response()
        }
        None => ApiError::not_found(format!("no asset {name:?}")).into_response(),
    }
}
