//! The load generator: a keep-alive hyper client, measuring as the caller
//! sees it (from before the request is written to the last body byte, or to
//! the first body byte for streams).

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use tokio::task::JoinSet;
use tokio::time::timeout;

use crate::payload::Dialect;
use crate::stats::Summary;

pub(crate) type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// No single exchange on loopback should come near this; it only stops a
/// hung target from hanging the benchmark.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of a stream's end is kept to check how it ended.
const TAIL_BYTES: usize = 8 * 1024;

pub(crate) fn client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// Where to send requests, the body to send, and the API it is in.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) uri: Uri,
    pub(crate) body: Bytes,
    pub(crate) dialect: Dialect,
    /// A corvid client key to send (team mode); else a dummy credential corvid ignores.
    pub(crate) key: Option<String>,
}

pub(crate) async fn send(
    client: &HttpClient,
    endpoint: &Endpoint,
) -> anyhow::Result<Response<Incoming>> {
    let builder = Request::builder()
        .method(Method::POST)
        .uri(endpoint.uri.clone())
        .header(CONTENT_TYPE, "application/json");
    // The credential headers each SDK sends; corvid ignores their values.
    let builder = match endpoint.dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => builder.header(
            AUTHORIZATION,
            format!("Bearer {}", endpoint.key.as_deref().unwrap_or("dummy")),
        ),
        Dialect::AnthropicMessages => builder
            .header("x-api-key", endpoint.key.as_deref().unwrap_or("dummy"))
            .header("anthropic-version", "2023-06-01"),
    };
    let request = builder.body(Full::new(endpoint.body.clone()))?;
    let response = client
        .request(request)
        .await
        .with_context(|| format!("POST {}", endpoint.uri))?;
    if response.status() != StatusCode::OK {
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map(|body| body.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        bail!("{} answered {status}: {text}", endpoint.uri);
    }
    Ok(response)
}

/// One non-streamed exchange, timed up to the end of the response body.
async fn exchange(client: &HttpClient, endpoint: &Endpoint) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let work = async {
        let response = send(client, endpoint).await?;
        let body = response.into_body().collect().await?.to_bytes();
        ensure!(
            !body.is_empty(),
            "{} answered with an empty body",
            endpoint.uri
        );
        Ok(started.elapsed())
    };
    timeout(EXCHANGE_TIMEOUT, work)
        .await
        .with_context(|| format!("POST {} timed out", endpoint.uri))?
}

/// One streamed exchange: the time to the first non-empty data frame. The
/// rest of the stream is drained and must end as its dialect ends a stream.
async fn first_byte(client: &HttpClient, endpoint: &Endpoint) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let work = async {
        let mut body = send(client, endpoint).await?.into_body();
        let mut first = None;
        let mut tail: Vec<u8> = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            if data.is_empty() {
                continue;
            }
            first.get_or_insert_with(|| started.elapsed());
            tail.extend_from_slice(&data);
            // The whole last event: a Responses stream's last one carries the whole response.
            let excess = tail.len().saturating_sub(TAIL_BYTES);
            tail.drain(..excess);
        }
        let first = first.with_context(|| format!("{} streamed no data", endpoint.uri))?;
        ensure!(
            endpoint.dialect.stream_complete(&tail),
            "{} stream ended early: {:?}",
            endpoint.uri,
            String::from_utf8_lossy(&tail)
        );
        Ok(first)
    };
    timeout(EXCHANGE_TIMEOUT, work)
        .await
        .with_context(|| format!("POST {} timed out", endpoint.uri))?
}

/// One non-streamed exchange, untimed, whose answer must be in the endpoint's dialect.
pub(crate) async fn verify(client: &HttpClient, endpoint: &Endpoint) -> anyhow::Result<()> {
    let work = async {
        let response = send(client, endpoint).await?;
        anyhow::Ok(response.into_body().collect().await?.to_bytes())
    };
    let body = timeout(EXCHANGE_TIMEOUT, work)
        .await
        .with_context(|| format!("POST {} timed out", endpoint.uri))??;
    ensure!(
        endpoint.dialect.answers_in_kind(&body),
        "{} answered in the wrong shape for {:?}: {}",
        endpoint.uri,
        endpoint.dialect,
        String::from_utf8_lossy(&body[..body.len().min(300)])
    );
    Ok(())
}

fn nanos(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

/// Which figure a sequential run records.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Measure {
    /// Full non-streamed exchange.
    Latency,
    /// Time to the first body byte of a stream.
    FirstByte,
}

/// `warmup` unrecorded then `count` recorded exchanges, one at a time on
/// one keep-alive connection. Returns nanoseconds per exchange.
pub(crate) async fn sequential(
    client: &HttpClient,
    endpoint: &Endpoint,
    measure: Measure,
    warmup: usize,
    count: usize,
) -> anyhow::Result<Vec<u64>> {
    let mut samples = Vec::with_capacity(count);
    for index in 0..warmup + count {
        let elapsed = match measure {
            Measure::Latency => exchange(client, endpoint).await?,
            Measure::FirstByte => first_byte(client, endpoint).await?,
        };
        if index >= warmup {
            samples.push(nanos(elapsed));
        }
    }
    Ok(samples)
}

/// Result of a closed-loop throughput run.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Throughput {
    pub(crate) requests: usize,
    pub(crate) errors: usize,
    pub(crate) rps: f64,
    /// Latency of the exchanges completed in the window, under load.
    pub(crate) latency: Option<Summary>,
    pub(crate) first_error: Option<String>,
}

/// `concurrency` workers each send exchanges back to back for `warmup` and
/// then `window`. Only exchanges that complete inside the window count, so
/// requests/second = completions in window / window length.
pub(crate) async fn throughput(
    client: &HttpClient,
    endpoint: &Endpoint,
    concurrency: usize,
    warmup: Duration,
    window: Duration,
) -> anyhow::Result<Throughput> {
    let window_start = Instant::now() + warmup;
    let window_end = window_start + window;
    let mut workers = JoinSet::new();
    for _ in 0..concurrency {
        let (client, endpoint) = (client.clone(), endpoint.clone());
        workers.spawn(async move {
            let mut samples = Vec::new();
            let mut errors = 0_usize;
            let mut first_error = None;
            loop {
                let started = Instant::now();
                if started >= window_end {
                    break;
                }
                match exchange(&client, &endpoint).await {
                    Ok(elapsed) => {
                        let done = started + elapsed;
                        if done >= window_start && done <= window_end {
                            samples.push(nanos(elapsed));
                        }
                    }
                    Err(err) => {
                        errors += 1;
                        first_error.get_or_insert_with(|| format!("{err:#}"));
                        // A dead target fails instantly; do not spin on it.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
            (samples, errors, first_error)
        });
    }
    let mut all = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    while let Some(joined) = workers.join_next().await {
        let (samples, worker_errors, worker_error) = joined.context("load worker panicked")?;
        all.extend(samples);
        errors += worker_errors;
        first_error = first_error.or(worker_error);
    }
    if all.is_empty() {
        bail!("no request succeeded: {}", first_error.unwrap_or_default());
    }
    Ok(Throughput {
        requests: all.len(),
        errors,
        rps: all.len() as f64 / window.as_secs_f64(),
        latency: Summary::of(all),
        first_error,
    })
}
