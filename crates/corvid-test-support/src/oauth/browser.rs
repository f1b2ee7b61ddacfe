//! The "browser" of the OAuth tests: raw HTTP/1.1 GETs over fresh TCP connections.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A raw HTTP/1.1 response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// A plain `GET` over a fresh TCP connection (`http://` only): the "browser" of these tests.
pub async fn http_get(url: &str) -> std::io::Result<RawResponse> {
    let invalid =
        |message: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, message.to_owned());
    let parsed = url::Url::parse(url).map_err(|_| invalid("not a URL"))?;
    let host = parsed.host_str().ok_or_else(|| invalid("no host"))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| invalid("no port"))?;
    let target = match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_owned(),
    };
    let mut stream = tokio::net::TcpStream::connect((host, port)).await?;
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status line"))?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Ok(RawResponse {
        status,
        headers,
        body: body.to_owned(),
    })
}

/// What the "browser" saw: the authorize redirect and the callback page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserVisit {
    /// Where the authorize endpoint redirected (the client's callback URL).
    pub redirected_to: String,
    /// The client's callback page.
    pub callback: RawResponse,
}

/// Plays the browser: GETs `authorize_url` (the mock answers 302), then GETs the `Location`.
pub async fn follow_authorize_redirect(authorize_url: &str) -> std::io::Result<BrowserVisit> {
    let redirect = http_get(authorize_url).await?;
    let location = redirect
        .header("location")
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("authorize answered {} without a Location", redirect.status),
            )
        })?
        .to_owned();
    let callback = http_get(&location).await?;
    Ok(BrowserVisit {
        redirected_to: location,
        callback,
    })
}
