use axum::extract::Request;
use bytes::{Bytes, BytesMut};
use http::StatusCode;
use http_body::Body as _;
use http_body_util::BodyExt as _;

use crate::error::ApiError;

/// Reads a request body up to `limit` bytes; larger bodies get a 413 in the OpenAI shape.
///
/// A body with a `Content-Length` is complete at its last byte: reading on to the end-of-body
/// signal would cost the request another pass through hyper's connection task (which sends
/// that signal only after the handler has taken the data). One chunk is returned as it came.
pub(crate) async fn read_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    let mut body = request.into_body();
    let expected = body.size_hint().exact();
    if expected.is_some_and(|length| length > limit as u64) {
        return Err(too_large(limit));
    }
    let mut chunks = Vec::new();
    let mut length = 0u64;
    while expected != Some(length) {
        let Some(frame) = body.frame().await else {
            break;
        };
        let frame = frame.map_err(|error| {
            ApiError::invalid_request(format!("could not read the request body: {error}"))
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        length += data.len() as u64;
        if length > limit as u64 {
            return Err(too_large(limit));
        }
        chunks.push(data);
    }
    Ok(join(chunks))
}

/// The chunks of one body as one buffer: a single chunk as it came, several copied together.
pub(crate) fn join(mut chunks: Vec<Bytes>) -> Bytes {
    if chunks.len() <= 1 {
        return chunks.pop().unwrap_or_default();
    }
    let mut joined = BytesMut::with_capacity(chunks.iter().map(Bytes::len).sum());
    chunks
        .iter()
        .for_each(|chunk| joined.extend_from_slice(chunk));
    joined.freeze()
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "request body is larger than the {} MiB limit (max_body_mb)",
            limit / (1024 * 1024)
        ),
    )
}
