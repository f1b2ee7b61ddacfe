use corvid_test_support::oauth::http_get;
use pretty_assertions::assert_eq;
use tokio::io::AsyncWriteExt;

use super::{CallbackServer, page};

#[tokio::test]
async fn other_paths_get_404_and_idle_connections_do_not_block() {
    let server = CallbackServer::bind(0).await.unwrap();
    let port = server.port();
    let wait = tokio::spawn(async move {
        let callback = server.wait("s1").await.unwrap();
        let code = callback.code.expose().to_owned();
        callback
            .responder
            .finish("200 OK", "Signed in", "done")
            .await;
        code
    });

    // A browser preconnect: a connection that never sends anything.
    let _idle = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let favicon = http_get(&format!("http://127.0.0.1:{port}/favicon.ico"))
        .await
        .unwrap();
    assert_eq!(favicon.status, 404);
    // A half-written request line, then the real callback.
    let mut partial = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    partial.write_all(b"GET /callb").await.unwrap();

    let page = http_get(&format!(
        "http://127.0.0.1:{port}/callback?code=c%2F1&state=s1"
    ))
    .await
    .unwrap();
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.body.contains("done"));
    assert_eq!(wait.await.unwrap(), "c/1");
}

#[tokio::test]
async fn a_callback_without_code_fails() {
    let server = CallbackServer::bind(0).await.unwrap();
    let port = server.port();
    let wait = tokio::spawn(async move { server.wait("s1").await.err() });
    let page = http_get(&format!("http://127.0.0.1:{port}/callback?state=s1"))
        .await
        .unwrap();
    assert_eq!(page.status, 400);
    assert!(matches!(
        wait.await.unwrap(),
        Some(crate::LoginError::MissingCode)
    ));
}

#[test]
fn pages_escape_their_text() {
    let html = page("a<b", "\"x\" & 'y'");
    assert!(html.contains("a&lt;b"));
    assert!(html.contains("&quot;x&quot; &amp; &#39;y&#39;"));
}
