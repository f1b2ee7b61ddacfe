//! Which dialect a request path implies, for answers given before any handler runs (an
//! unknown route, a wrong method) and for the one path two dialects share (`GET /v1/models`).
//! A client reads an error only in its own API's shape, so a Gemini SDK that reaches a path
//! corvid does not serve must still get Google's error, not OpenAI's.

use http::HeaderMap;

use corvid_wire::Dialect;

/// The dialect of a path: Anthropic under `/v1/messages`, Gemini under `/v1beta` or for a
/// `…/{name}:{method}` path (Google's custom-method form, e.g. `:generateContent`), OpenAI
/// otherwise.
pub(crate) fn of_path(path: &str) -> Dialect {
    if under(path, "/v1/messages") {
        return Dialect::Anthropic;
    }
    let last_segment = path.rsplit('/').next().unwrap_or_default();
    if under(path, "/v1beta") || last_segment.contains(':') {
        return Dialect::Gemini;
    }
    if under(path, "/v1/responses") {
        return Dialect::OpenAiResponses;
    }
    Dialect::OpenAiChat
}

/// Whether a request on a path both OpenAI and Gemini use comes from a Google client: it
/// carries its key as `x-goog-api-key` or `?key=`, or names itself in `x-goog-api-client`.
pub(crate) fn is_google_client(headers: &HeaderMap, query: Option<&str>) -> bool {
    headers.contains_key("x-goog-api-key")
        || headers.contains_key("x-goog-api-client")
        || query.is_some_and(|query| query.split('&').any(|pair| pair.starts_with("key=")))
}

/// `path` is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_answers_in_the_dialect_it_implies() {
        for (path, dialect) in [
            ("/v1/messages", Dialect::Anthropic),
            ("/v1/messages/batches", Dialect::Anthropic),
            ("/v1/messagesx", Dialect::OpenAiChat),
            ("/v1beta/models", Dialect::Gemini),
            ("/v1beta/cachedContents", Dialect::Gemini),
            ("/v1/models/gemini-2.5-pro:embedContent", Dialect::Gemini),
            ("/v1/models/gemini-2.5-pro:generateContent", Dialect::Gemini),
            ("/v1/responses/resp_1", Dialect::OpenAiResponses),
            ("/v1/nothing", Dialect::OpenAiChat),
            ("/", Dialect::OpenAiChat),
        ] {
            assert_eq!(of_path(path), dialect, "{path}");
        }
    }

    #[test]
    fn google_clients_are_told_by_their_key_or_their_name() {
        let mut headers = HeaderMap::new();
        assert!(!is_google_client(&headers, None));
        assert!(!is_google_client(&headers, Some("after=1&limit=5")));
        assert!(is_google_client(&headers, Some("pageSize=50&key=k")));
        headers.insert("x-goog-api-key", http::HeaderValue::from_static("k"));
        assert!(is_google_client(&headers, None));
    }
}
