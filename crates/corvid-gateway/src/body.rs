use axum::extract::Request;
use bytes::Bytes;
use http::StatusCode;

use crate::error::ApiError;

/// Reads a request body up to `limit` bytes; larger bodies get a 413 in the OpenAI shape.
pub(crate) async fn read_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|error| {
            let too_large = std::error::Error::source(&error)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>())
                || error.to_string().contains("length limit");
            if too_large {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "invalid_request_error",
                    format!(
                        "request body is larger than the {} MiB limit (max_body_mb)",
                        limit / (1024 * 1024)
                    ),
                )
            } else {
                ApiError::invalid_request(format!("could not read the request body: {error}"))
            }
        })
}
