//! Starting the three servers, each in its own process, and waiting until
//! each is ready. The mock and the floor are this binary re-executed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri};
use http_body_util::Full;
use tokio::time::timeout;

use crate::load::HttpClient;
use crate::procs::{self, ChildGuard};
use crate::tls::TestCa;

const READY_LIMIT: Duration = Duration::from_secs(10);

/// Proxy variables corvid must not see: its upstream is on loopback.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// A server that answered its readiness probe.
pub(crate) struct Started {
    pub(crate) guard: ChildGuard,
    pub(crate) port: u16,
    pub(crate) ready_after: Duration,
}

fn helper(subcommand: &str) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("cannot find the bench executable")?;
    let mut command = Command::new(exe);
    // A piped stdin that the helper watches: it exits when the bench exits.
    command.arg(subcommand).stdin(Stdio::piped());
    Ok(command)
}

pub(crate) async fn mock(logs: &Path, port: u16) -> anyhow::Result<Started> {
    mock_with(logs, port, None).await
}

/// The mock serving HTTP/2 over TLS with `ca`'s server certificate.
pub(crate) async fn mock_tls(logs: &Path, port: u16, ca: &TestCa) -> anyhow::Result<Started> {
    mock_with(logs, port, Some(ca)).await
}

async fn mock_with(logs: &Path, port: u16, tls: Option<&TestCa>) -> anyhow::Result<Started> {
    let mut command = helper("mock-upstream")?;
    command.args(["--port", &port.to_string()]);
    if let Some(ca) = tls {
        command.arg("--tls-cert").arg(&ca.cert);
        command.arg("--tls-key").arg(&ca.key);
    }
    let mut guard = ChildGuard::spawn("mock upstream", &mut command, logs.join("mock.log"))?;
    let ready_after = guard
        .wait_until(READY_LIMIT, || procs::accepts_tcp(port))
        .await?;
    Ok(Started {
        guard,
        port,
        ready_after,
    })
}

pub(crate) async fn floor(
    logs: &Path,
    port: u16,
    upstream_port: u16,
    one_thread: bool,
) -> anyhow::Result<Started> {
    let mut command = helper("floor-proxy")?;
    let upstream = format!("http://127.0.0.1:{upstream_port}");
    command.args(["--port", &port.to_string(), "--upstream", &upstream]);
    if one_thread {
        command.arg("--one-thread");
    }
    let mut guard = ChildGuard::spawn("floor proxy", &mut command, logs.join("floor.log"))?;
    let ready_after = guard
        .wait_until(READY_LIMIT, || procs::accepts_tcp(port))
        .await?;
    Ok(Started {
        guard,
        port,
        ready_after,
    })
}

/// `--corvid PATH`, or `corvid` next to this executable (the same
/// `target/<profile>/` directory).
pub(crate) fn corvid_program(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let exe = std::env::current_exe().context("cannot find the bench executable")?;
    let dir = exe
        .parent()
        .context("the bench executable has no parent directory")?;
    Ok(dir.join("corvid"))
}

pub(crate) struct CorvidSetup<'a> {
    pub(crate) program: &'a Path,
    pub(crate) home: &'a Path,
    pub(crate) logs: &'a Path,
    pub(crate) port: u16,
    pub(crate) upstream_port: u16,
    /// A program corvid runs under (valgrind and its arguments), when not run directly.
    pub(crate) under: &'a [String],
    /// More of `config.toml` (team mode's `[prices]` and `[store]`).
    pub(crate) config: &'a str,
    /// More environment (team mode's database URLs).
    pub(crate) env: &'a [(&'a str, String)],
    /// The upstream speaks TLS with a certificate this authority signed (`https`, and corvid
    /// trusts only it).
    pub(crate) upstream_ca: Option<&'a Path>,
}

/// How long corvid may take to answer its health probe under valgrind, which reads its
/// debug information first and runs it some 50× slower.
const READY_LIMIT_UNDER: Duration = Duration::from_secs(180);

pub(crate) async fn corvid(setup: CorvidSetup<'_>, client: &HttpClient) -> anyhow::Result<Started> {
    let CorvidSetup {
        program,
        home,
        logs,
        port,
        upstream_port,
        under,
        config,
        env,
        upstream_ca,
    } = setup;
    // The `xai` preset passes Responses through; the bench wants that request translated to
    // chat, as for any chat-only provider.
    std::fs::write(
        home.join("config.toml"),
        format!("[providers.xai]\nserves_responses = false\n{config}"),
    )
    .context("write the bench's config.toml")?;
    let mut command = match under.split_first() {
        Some((wrapper, arguments)) => {
            let mut command = Command::new(wrapper);
            command.args(arguments).arg(program);
            command
        }
        None => Command::new(program),
    };
    command
        .arg("serve")
        .stdin(Stdio::null())
        .env("CORVID_HOME", home)
        .env(
            "CORVID_UPSTREAM",
            format!(
                "{}://127.0.0.1:{upstream_port}/v1",
                if upstream_ca.is_some() {
                    "https"
                } else {
                    "http"
                }
            ),
        )
        .env("XAI_API_KEY", "bench-key")
        .env("CORVID_PORT", port.to_string())
        .env("CORVID_LOG_LEVEL", "warn")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .envs(env.iter().map(|(name, value)| (*name, value)));
    for variable in PROXY_VARIABLES {
        command.env_remove(variable);
    }
    if let Some(ca) = upstream_ca {
        // The platform verifier reads the trusted roots from here on Linux.
        command.env("SSL_CERT_FILE", ca).env_remove("SSL_CERT_DIR");
    }
    let mut guard =
        ChildGuard::spawn("corvid", &mut command, logs.join("corvid.log")).map_err(|err| {
            anyhow::anyhow!(
                "{err:#}\nbuild it with `cargo build --release -p corvid-cli`, or pass --corvid PATH"
            )
        })?;
    let health: Uri = format!("http://127.0.0.1:{port}/healthz").parse()?;
    let limit = if under.is_empty() {
        READY_LIMIT
    } else {
        READY_LIMIT_UNDER
    };
    let ready_after = guard.wait_until(limit, || healthy(client, &health)).await?;
    Ok(Started {
        guard,
        port,
        ready_after,
    })
}

async fn healthy(client: &HttpClient, uri: &Uri) -> bool {
    let Ok(request) = Request::builder()
        .method(Method::GET)
        .uri(uri.clone())
        .body(Full::new(Bytes::new()))
    else {
        return false;
    };
    matches!(
        timeout(Duration::from_secs(1), client.request(request)).await,
        Ok(Ok(response)) if response.status() == StatusCode::OK
    )
}
