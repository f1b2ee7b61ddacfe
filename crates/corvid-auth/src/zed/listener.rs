//! The one-shot loopback listener the browser returns to after the Zed sign-in.
//!
//! Zed reads the query of whatever request comes first, on any path. corvid is more patient:
//! requests without `user_id` and `access_token` (a favicon, a preconnect, a probe) get a 404
//! and the wait goes on; `error=…` ends it. Each connection is read in its own task so an idle
//! connection never holds up the real one.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::{ZedKeyPair, ZedLoginError};
use crate::Secret;
use crate::callback::{page, read_head, respond};

/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head accepted (the token alone is about 350 characters).
/// A listener on `127.0.0.1`, bound before the browser opens.
pub(super) struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

/// The query of a request that settles the sign-in, and the browser's open connection.
struct Arrival {
    query: Vec<(String, String)>,
    stream: TcpStream,
}

impl CallbackListener {
    /// Binds `127.0.0.1:port` (`0`: a free port).
    pub(super) async fn bind(port: u16) -> Result<Self, ZedLoginError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(ZedLoginError::Listen)?;
        let port = listener.local_addr().map_err(ZedLoginError::Listen)?.port();
        Ok(Self { listener, port })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Waits for the callback, decrypts its token with `key`, sends the browser to
    /// `success_url` and returns `(user_id, access_token)`.
    pub(super) async fn wait(
        self,
        key: &ZedKeyPair,
        success_url: &str,
    ) -> Result<(String, Secret), ZedLoginError> {
        let mut readers = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        readers.spawn(read_request(stream));
                    }
                    Err(err) => {
                        tracing::debug!(%err, "Zed sign-in callback: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(joined) = readers.join_next() => {
                    if let Ok(Some(arrival)) = joined {
                        return settle(arrival, key, success_url).await;
                    }
                }
            }
        }
    }
}

/// Judges the callback and answers the browser.
async fn settle(
    arrival: Arrival,
    key: &ZedKeyPair,
    success_url: &str,
) -> Result<(String, Secret), ZedLoginError> {
    let Arrival { query, mut stream } = arrival;
    let get = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let outcome = match (get("error"), get("user_id"), get("access_token")) {
        (Some(error), _, _) => Err(ZedLoginError::Denied {
            error: error.to_owned(),
        }),
        (None, Some(user_id), Some(token)) => match user_id.trim().parse::<u64>() {
            Ok(user_id) => key
                .decrypt(token)
                .map(|(token, _format)| (user_id.to_string(), token)),
            Err(_) => Err(ZedLoginError::InvalidUserId),
        },
        // `read_request` only lets through requests with an error or both fields.
        (None, _, _) => Err(ZedLoginError::InvalidUserId),
    };
    match &outcome {
        Ok(_) => redirect(&mut stream, success_url).await,
        Err(err) => {
            let message = format!("{err}. You may close this tab.");
            respond(
                &mut stream,
                "400 Bad Request",
                &page("Zed sign-in failed", &message),
            )
            .await;
        }
    }
    outcome
}

/// Reads one request head. A request carrying `error`, or both `user_id` and `access_token`,
/// yields its query and stream; anything else is answered 404 here.
async fn read_request(mut stream: TcpStream) -> Option<Arrival> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream))
        .await
        .ok()??;
    let target = head.lines().next()?.split_whitespace().nth(1)?;
    let url = url::Url::parse("http://127.0.0.1/")
        .ok()?
        .join(target)
        .ok()?;
    let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let has = |name: &str| query.iter().any(|(key, _)| key == name);
    if has("error") || (has("user_id") && has("access_token")) {
        return Some(Arrival { query, stream });
    }
    respond(
        &mut stream,
        "404 Not Found",
        &page("Not found", "Nothing here."),
    )
    .await;
    None
}

/// `302 Found` to `location` with an empty body, as Zed answers.
async fn redirect(stream: &mut TcpStream, location: &str) {
    let response = format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
