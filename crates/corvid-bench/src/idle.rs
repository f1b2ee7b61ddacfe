//! `corvid-bench idle-streams`: the memory an open, idle stream costs a server.
//!
//! A model that thinks for minutes keeps its client's stream open with nothing flowing, and an
//! editor with a few agents open holds several; a gateway shared by a team holds hundreds. For
//! each target the bench starts a fresh server, opens a few streams to warm its allocator, then
//! N more, each held open by the mock after its first two events (the request carries
//! [`payload::HOLD_MARKER`]), and reads the server's resident memory once they have settled:
//! (RSS with N + warm-up streams − RSS with the warm-up streams) / N. The floor proxy's figure
//! is what any HTTP hop holds per stream (two connections and their buffers); corvid's minus
//! the floor's is what corvid itself keeps.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use futures_util::{StreamExt as _, TryStreamExt as _};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use serde::Serialize;

use crate::launch::{self, CorvidSetup, Started};
use crate::load::{self, Endpoint, HttpClient};
use crate::payload::{self, Dialect, Shape, Stream};
use crate::procs;
use crate::report::mib;
use crate::tls::TestCa;

/// Streams opened first, so the allocator's start-up is not charged to the measured ones.
const WARM_STREAMS: usize = 20;
/// Streams being opened at once.
const OPENING_AT_ONCE: usize = 64;
/// How long the server is left alone before its memory is read.
const SETTLE: Duration = Duration::from_secs(1);
/// One stream's first event should come at once; this only stops a hung target.
const FIRST_EVENT_LIMIT: Duration = Duration::from_secs(20);

pub(crate) struct Settings {
    pub(crate) streams: usize,
    /// The mock speaks HTTP/2 over TLS, as real providers do; corvid's targets only (the floor
    /// proxy's client speaks plain HTTP/1).
    pub(crate) tls: bool,
    pub(crate) corvid: PathBuf,
    pub(crate) out: PathBuf,
}

/// One target's readings, in KiB.
#[derive(Debug, Serialize)]
struct Row {
    target: &'static str,
    streams: usize,
    idle_rss_kib: u64,
    warm_rss_kib: u64,
    held_rss_kib: u64,
    per_stream_kib: f64,
}

/// The server a target's streams go to.
#[derive(Clone, Copy)]
enum Server {
    Floor,
    Corvid,
}

/// The targets: the floor (a bare HTTP hop), corvid passing chat through, and corvid
/// translating the Anthropic and Responses forms, each the Claude Code-sized request streamed.
const TARGETS: [(&str, Server, Dialect); 4] = [
    ("floor", Server::Floor, Dialect::OpenAiChat),
    ("corvid-cc", Server::Corvid, Dialect::OpenAiChat),
    ("anthropic-cc", Server::Corvid, Dialect::AnthropicMessages),
    ("responses-cc", Server::Corvid, Dialect::OpenAiResponses),
];

pub(crate) async fn run(settings: Settings) -> anyhow::Result<()> {
    anyhow::ensure!(settings.streams > 0, "--streams must be positive");
    check_file_limit(settings.streams)?;
    let logs = tempfile::tempdir()?;
    let &[mock_port] = procs::free_ports(1)?.as_slice() else {
        bail!("could not pick a port");
    };
    let ca = if settings.tls {
        Some(TestCa::new()?)
    } else {
        None
    };
    let mock = match &ca {
        None => launch::mock(logs.path(), mock_port).await?,
        Some(ca) => launch::mock_tls(logs.path(), mock_port, ca).await?,
    };
    let upstream_ca = ca.as_ref().map(|ca| ca.ca.as_path());
    let mut rows = Vec::new();
    println!(
        "{:<14} {:>8} {:>10} {:>12} {:>12} {:>12}",
        "target", "streams", "idle MiB", "warm MiB", "held MiB", "KiB/stream"
    );
    for (name, server, dialect) in TARGETS {
        if upstream_ca.is_some() && matches!(server, Server::Floor) {
            continue;
        }
        let target = Target {
            name,
            server,
            dialect,
            upstream_ca,
        };
        let row = measure(&settings, logs.path(), mock.port, target)
            .await
            .with_context(|| format!("{name}: holding {} streams", settings.streams))?;
        println!(
            "{:<14} {:>8} {:>10.1} {:>12.1} {:>12.1} {:>12.1}",
            row.target,
            row.streams,
            mib(row.idle_rss_kib),
            mib(row.warm_rss_kib),
            mib(row.held_rss_kib),
            row.per_stream_kib
        );
        rows.push(row);
    }
    write_json(&settings.out, &rows)?;
    eprintln!("corvid-bench: wrote {}", settings.out.display());
    Ok(())
}

/// One target of a run, and how its upstream is reached.
struct Target<'a> {
    name: &'static str,
    server: Server,
    dialect: Dialect,
    /// The authority of the mock's TLS certificate, when it speaks HTTP/2 over TLS.
    upstream_ca: Option<&'a Path>,
}

async fn measure(
    settings: &Settings,
    logs: &Path,
    mock_port: u16,
    target: Target<'_>,
) -> anyhow::Result<Row> {
    let Target {
        name,
        server,
        dialect,
        upstream_ca,
    } = target;
    let client = load::client();
    let home = tempfile::tempdir()?;
    let &[port] = procs::free_ports(1)?.as_slice() else {
        bail!("could not pick a port");
    };
    // A fresh server per target: memory another target freed must not be reused here.
    let started: Started = match server {
        Server::Floor => launch::floor(logs, port, mock_port, true).await?,
        Server::Corvid => {
            let setup = CorvidSetup {
                program: &settings.corvid,
                home: home.path(),
                logs,
                port,
                upstream_port: mock_port,
                under: &[],
                config: "",
                env: &[],
                upstream_ca,
            };
            launch::corvid(setup, &client).await?
        }
    };
    let pid = started.guard.pid();
    let endpoint = Endpoint {
        uri: format!("http://127.0.0.1:{port}{}", dialect.path()).parse()?,
        body: payload::held(&dialect.request(Shape::ClaudeCode, Stream::Enabled)),
        dialect,
        key: None,
    };
    let rss = || {
        procs::memory(pid)
            .map(|memory| memory.rss_kib)
            .context("cannot read the server's memory from /proc")
    };
    tokio::time::sleep(SETTLE).await;
    let idle_rss_kib = rss()?;
    let warm = open(&client, &endpoint, WARM_STREAMS).await?;
    tokio::time::sleep(SETTLE).await;
    let warm_rss_kib = rss()?;
    let held = open(&client, &endpoint, settings.streams).await?;
    tokio::time::sleep(SETTLE).await;
    let held_rss_kib = rss()?;
    drop((warm, held, client, started));
    Ok(Row {
        target: name,
        streams: settings.streams,
        idle_rss_kib,
        warm_rss_kib,
        held_rss_kib,
        per_stream_kib: held_rss_kib.saturating_sub(warm_rss_kib) as f64 / settings.streams as f64,
    })
}

/// Opens `count` streams and returns their bodies, each past its first event.
async fn open(
    client: &HttpClient,
    endpoint: &Endpoint,
    count: usize,
) -> anyhow::Result<Vec<Incoming>> {
    futures_util::stream::iter(0..count)
        .map(|_| first_event(client, endpoint))
        .buffer_unordered(OPENING_AT_ONCE)
        .try_collect()
        .await
}

async fn first_event(client: &HttpClient, endpoint: &Endpoint) -> anyhow::Result<Incoming> {
    let work = async {
        let mut body = load::send(client, endpoint).await?.into_body();
        loop {
            let frame = body
                .frame()
                .await
                .context("the stream ended before its first event")??;
            if frame.data_ref().is_some_and(|data| !data.is_empty()) {
                return Ok(body);
            }
        }
    };
    tokio::time::timeout(FIRST_EVENT_LIMIT, work)
        .await
        .context("no first event")?
}

/// Each stream takes a socket in the bench, two in a proxy (client and upstream) and one in
/// the mock, which all inherit this process's limit.
fn check_file_limit(streams: usize) -> anyhow::Result<()> {
    let needed = streams + WARM_STREAMS;
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse::<usize>().ok());
    match soft {
        Some(soft) if soft < 2 * needed + 64 => bail!(
            "{streams} streams need about {} open files per process and the limit is {soft}: \
             raise it with `ulimit -n`, or ask for fewer streams",
            2 * needed + 64
        ),
        _ => Ok(()),
    }
}

fn write_json(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let text = serde_json::to_string_pretty(rows)?;
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
}
