use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use futures_util::StreamExt as _;
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::Incoming;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

use super::*;

#[test]
fn proxies_apply_only_when_set_and_not_loopback() {
    let set = |name: &str| (name == "HTTPS_PROXY").then(|| "http://proxy:3128".to_owned());
    assert!(proxy_applies("https://api.x.ai/v1", set));
    assert!(!proxy_applies("https://127.0.0.1:1/v1", set));
    assert!(
        !proxy_applies("http://api.example/v1", set),
        "HTTPS_PROXY is for https"
    );
    assert!(!proxy_applies("https://api.x.ai/v1", |_| None));
    assert!(!proxy_applies("https://api.x.ai/v1", |_| Some(
        " ".to_owned()
    )));
}

/// A throwaway CA and a certificate for 127.0.0.1 it signed (`testdata/README.md`).
const CA: &[u8] = include_bytes!("testdata/ca.pem");
const SERVER_CERT: &[u8] = include_bytes!("testdata/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("testdata/server.key");

/// As long as any of these tests waits for response headers: far more than loopback needs,
/// so a regression fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(10);

fn crypto() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The client side: trusts only the test CA (the production configuration trusts the
/// platform's store, which a test cannot add to without changing the process environment).
fn client_tls() -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(CA) {
        roots
            .add(cert.expect("the CA parses"))
            .expect("the CA is usable");
    }
    rustls::ClientConfig::builder_with_provider(crypto())
        .with_safe_default_protocol_versions()
        .expect("aws-lc-rs supports the default versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// An HTTP/2-over-TLS upstream on an ephemeral loopback port, as real providers are, allowing
/// `max_streams` concurrent streams per connection. `/done` answers a whole body; any other
/// path answers one chunk and then holds its stream open, like a long model reply.
async fn h2_upstream(max_streams: u32) -> SocketAddr {
    let chain = CertificateDer::pem_slice_iter(SERVER_CERT)
        .collect::<Result<Vec<_>, _>>()
        .expect("the certificate parses");
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).expect("the key parses");
    let mut config = rustls::ServerConfig::builder_with_provider(crypto())
        .with_safe_default_protocol_versions()
        .expect("aws-lc-rs supports the default versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("the key matches the certificate");
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("bound address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                // Errors are the client going away; the test sees its side.
                let _ = http2::Builder::new(TokioExecutor::new())
                    .max_concurrent_streams(max_streams)
                    .serve_connection(TokioIo::new(tls), service_fn(answer))
                    .await;
            });
        }
    });
    address
}

type Chunks = futures_util::stream::BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

async fn answer(
    request: http::Request<Incoming>,
) -> Result<http::Response<StreamBody<Chunks>>, Infallible> {
    let chunk = futures_util::stream::once(async { Ok(Frame::data(Bytes::from_static(b"x"))) });
    let chunks: Chunks = if request.uri().path() == "/done" {
        chunk.boxed()
    } else {
        chunk.chain(futures_util::stream::pending()).boxed()
    };
    Ok(http::Response::new(StreamBody::new(chunks)))
}

fn request(address: SocketAddr, path: &str) -> http::Request<Bytes> {
    http::Request::post(format!("https://{address}{path}"))
        .body(Bytes::from_static(b"{}"))
        .expect("a valid request")
}

fn lanes(transport: &Transport) -> &Lanes {
    transport.lanes().expect("a direct transport")
}

/// More streams than the upstream allows on one connection: each lane has its own connection,
/// so every request gets its headers (with one client, the third would wait for a stream to
/// end: hyper#2197). Afterwards requests go back to the first lane and no lane is added.
#[tokio::test]
async fn streams_past_the_upstreams_limit_take_another_lane() {
    let address = h2_upstream(2).await;
    let transport = Transport::direct_for_test(client_tls(), 2);
    // A first exchange opens the connection and reads the upstream's SETTINGS: as with a busy
    // provider, the limit is known before the streams pile up (before it is, the upstream
    // refuses the extra streams instead of the client holding them back).
    let first = tokio::time::timeout(PATIENCE, transport.send(request(address, "/done"), None))
        .await
        .expect("headers")
        .expect("a response");
    drop(first);
    let sends = (0..5).map(|_| transport.send(request(address, "/stream"), None));
    let held = tokio::time::timeout(PATIENCE, futures_util::future::join_all(sends))
        .await
        .expect("all five streams got their headers, none waited for a free stream");
    for response in &held {
        let response = response.as_ref().expect("a response");
        assert_eq!(response.status(), http::StatusCode::OK);
        assert_eq!(
            response.version(),
            http::Version::HTTP_2,
            "negotiated by ALPN"
        );
    }
    assert_eq!(lanes(&transport).in_flight(), [2, 2, 1]);
    drop(held);
    assert_eq!(lanes(&transport).in_flight(), [0, 0, 0]);

    let again = tokio::time::timeout(PATIENCE, transport.send(request(address, "/stream"), None))
        .await
        .expect("headers after the streams ended")
        .expect("a response");
    assert_eq!(again.status(), http::StatusCode::OK);
    assert_eq!(lanes(&transport).in_flight(), [1, 0, 0]);
    assert_eq!(lanes(&transport).count(), 3, "no lane was added");
}

/// A body read to its end frees its place even while it is kept; a failed send frees it too.
#[tokio::test]
async fn places_are_freed_at_the_end_and_on_failure() {
    let address = h2_upstream(2).await;
    let transport = Transport::direct_for_test(client_tls(), 2);
    let response = tokio::time::timeout(PATIENCE, transport.send(request(address, "/done"), None))
        .await
        .expect("headers")
        .expect("a response");
    let mut body = response.into_body();
    assert_eq!(lanes(&transport).in_flight(), [1]);
    while let Some(frame) = tokio::time::timeout(PATIENCE, body.frame())
        .await
        .expect("the body")
    {
        frame.expect("a frame");
    }
    assert_eq!(
        lanes(&transport).in_flight(),
        [0],
        "the ended body is still held"
    );
    drop(body);

    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let nobody = closed.local_addr().expect("bound address");
    drop(closed);
    let failed = tokio::time::timeout(PATIENCE, transport.send(request(nobody, "/"), None))
        .await
        .expect("refused at once");
    assert!(matches!(failed, Err(SendError::Connect(_))), "{failed:?}");
    assert_eq!(lanes(&transport).in_flight(), [0]);
    assert_eq!(lanes(&transport).count(), 1);
}
