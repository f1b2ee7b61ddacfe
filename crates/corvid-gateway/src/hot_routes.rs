//! The routes a client calls once per generation skip the router: a POST to one of these exact
//! paths goes straight to its handler, without path matching, route lookup, URL-parameter
//! extensions and a boxed per-route service (~5k instructions per request under callgrind).
//! Every other request, and every other method on these paths, goes through the `Router`,
//! which also declares these routes.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use http::Method;

use crate::inbound::{self, GENERATION_ROUTES};
use crate::state::AppState;
use corvid_wire::Dialect;

/// The generation route a request is for: only a POST to one of the exact paths.
fn hot_route(method: &Method, path: &str) -> Option<(Dialect, &'static str)> {
    if method != Method::POST {
        return None;
    }
    GENERATION_ROUTES
        .iter()
        .find(|(known, _, _)| *known == path)
        .map(|&(_, dialect, name)| (dialect, name))
}

#[derive(Clone)]
pub(crate) struct HotRoutes<S> {
    pub(crate) inner: S,
    pub(crate) state: AppState,
}

impl<S> tower::Service<Request> for HotRoutes<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<BoxFuture<'static, Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match hot_route(request.method(), request.uri().path()) {
            Some((dialect, route_name)) => {
                let state = self.state.clone();
                Either::Left(Box::pin(async move {
                    let answer = inbound::handle(&state, request, dialect, route_name).await;
                    Ok(answer.into_response())
                }))
            }
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_posts_to_the_exact_paths_are_hot() {
        assert_eq!(
            hot_route(&Method::POST, "/v1/chat/completions"),
            Some((Dialect::OpenAiChat, "chat_completions"))
        );
        assert_eq!(
            hot_route(&Method::POST, "/v1/messages"),
            Some((Dialect::Anthropic, "messages"))
        );
        assert_eq!(hot_route(&Method::GET, "/v1/chat/completions"), None);
        assert_eq!(hot_route(&Method::POST, "/v1/chat/completions/"), None);
        assert_eq!(hot_route(&Method::POST, "/v1/messages/count_tokens"), None);
    }
}
