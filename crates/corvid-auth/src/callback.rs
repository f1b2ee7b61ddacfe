//! The one-shot loopback HTTP/1.1 listener that receives the browser's redirect (the xAI
//! sign-in's, and `corvid mcp login`'s through corvid-mcp).
//!
//! Each connection is read in its own task, so an idle connection (browsers preconnect) never
//! holds up the real request. Only `GET /callback` matters; everything else (favicon, probes)
//! gets a 404 and the wait goes on.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use crate::{LoginError, Secret};

/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// A listener on `127.0.0.1`, bound before the browser is opened.
#[derive(Debug)]
pub struct CallbackServer {
    listener: TcpListener,
    port: u16,
    /// The command a stale or forged callback's page tells the user to run again.
    again: String,
}

/// A successful callback: the code, the issuer when the server named one (RFC 9207 `iss`),
/// and the browser still waiting for its page.
#[derive(Debug)]
pub struct Callback {
    pub code: Secret,
    pub issuer: Option<String>,
    pub responder: Responder,
}

/// The browser's connection, answered once the code exchange is done.
#[derive(Debug)]
pub struct Responder {
    stream: TcpStream,
}

impl Responder {
    /// Sends the final page and closes the connection.
    pub async fn finish(mut self, status: &str, title: &str, message: &str) {
        respond(&mut self.stream, status, &page(title, message)).await;
    }
}

impl CallbackServer {
    /// Binds `127.0.0.1:port` (`0`: any free port). A busy port is [`LoginError::PortInUse`].
    pub async fn bind(port: u16) -> Result<Self, LoginError> {
        match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => {
                let port = listener
                    .local_addr()
                    .map(|address| address.port())
                    .unwrap_or(port);
                Ok(Self {
                    listener,
                    port,
                    again: "`corvid login xai`".to_owned(),
                })
            }
            Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => {
                Err(LoginError::PortInUse { port })
            }
            Err(source) => Err(LoginError::Listen { port, source }),
        }
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The command a rejected callback's page tells the user to run again (default: `corvid
    /// login xai`), e.g. "`corvid mcp login docs`".
    pub fn with_retry_command(mut self, command: impl Into<String>) -> Self {
        self.again = command.into();
        self
    }

    /// Waits for `GET /callback`, checks it, and returns the code. A callback with an error, a
    /// wrong `state` or no code is answered with a page saying so and ends the wait.
    pub async fn wait(self, expected_state: &str) -> Result<Callback, LoginError> {
        let mut readers = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        readers.spawn(read_callback_request(stream));
                    }
                    Err(err) => {
                        tracing::debug!(%err, "sign-in callback: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(joined) = readers.join_next() => {
                    if let Ok(Some((query, stream))) = joined {
                        return check(query, stream, expected_state, &self.again).await;
                    }
                }
            }
        }
    }
}

/// Judges a `/callback` query.
async fn check(
    query: Vec<(String, String)>,
    mut stream: TcpStream,
    expected_state: &str,
    again: &str,
) -> Result<Callback, LoginError> {
    let get = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    if let Some(error) = get("error") {
        let description = get("error_description");
        let err = LoginError::Denied { error, description };
        let message = format!("{err}. You may close this tab.");
        respond(
            &mut stream,
            "400 Bad Request",
            &page("Sign-in failed", &message),
        )
        .await;
        return Err(err);
    }
    if get("state").as_deref() != Some(expected_state) {
        let message = format!(
            "This sign-in response does not belong to the running sign-in (state mismatch), \
             so it was ignored. Run {again} again."
        );
        respond(
            &mut stream,
            "400 Bad Request",
            &page("Sign-in rejected", &message),
        )
        .await;
        return Err(LoginError::StateMismatch);
    }
    match get("code").filter(|code| !code.is_empty()) {
        Some(code) => Ok(Callback {
            code: Secret::new(code),
            issuer: get("iss"),
            responder: Responder { stream },
        }),
        None => {
            let message = "The sign-in response carried no authorization code.";
            respond(
                &mut stream,
                "400 Bad Request",
                &page("Sign-in failed", message),
            )
            .await;
            Err(LoginError::MissingCode)
        }
    }
}

/// Reads one request head. `GET /callback` yields its query and the open stream; anything else
/// is answered here (404, 405) and yields `None`.
async fn read_callback_request(
    mut stream: TcpStream,
) -> Option<(Vec<(String, String)>, TcpStream)> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream))
        .await
        .ok()??;
    let mut words = head.lines().next()?.split_whitespace();
    let (method, target) = (words.next()?, words.next()?);
    let url = url::Url::parse("http://127.0.0.1/")
        .ok()?
        .join(target)
        .ok()?;
    if url.path() != "/callback" {
        respond(
            &mut stream,
            "404 Not Found",
            &page("Not found", "Nothing here."),
        )
        .await;
        return None;
    }
    if method != "GET" {
        respond(
            &mut stream,
            "405 Method Not Allowed",
            &page("Not allowed", "Use GET."),
        )
        .await;
        return None;
    }
    Some((url.query_pairs().into_owned().collect(), stream))
}

/// The request line and headers, up to the blank line (shared by both sign-in listeners).
pub(crate) async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return None;
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            // A client may close after the request line (`\n\n` or no blank line at all).
            break;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    String::from_utf8(head).ok()
}

pub(crate) async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // The browser may have gone; the login's outcome does not depend on this page.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A minimal HTML page; `title` and `message` are escaped.
pub(crate) fn page(title: &str, message: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>corvid: {title}</title></head>\
         <body style=\"font-family: sans-serif; max-width: 40em; margin: 4em auto\">\
         <h1>{title}</h1><p>{message}</p></body></html>",
        title = escape_html(title),
        message = escape_html(message)
    )
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
