//! corvid-bench: added latency, throughput and time to first byte of corvid
//! against a direct connection and a minimal forwarding proxy, on loopback.
//! See README.md for the method. Run it with `scripts/bench`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod floor;
mod idle;
mod instructions;
mod launch;
mod load;
mod mock;
mod payload;
mod pin;
mod procs;
mod report;
mod run;
mod server;
mod stats;
mod team;
mod tls;

#[derive(Parser)]
#[command(
    name = "corvid-bench",
    about = "Loopback benchmark: direct vs floor proxy vs corvid"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Internal: the fast mock upstream (spawned by the benchmark).
    #[command(hide = true)]
    MockUpstream {
        #[arg(long)]
        port: u16,
        /// Serve HTTP/2 over TLS with this certificate (and `--tls-key`)
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        #[arg(long)]
        tls_key: Option<PathBuf>,
    },
    /// Internal: the minimal forwarding proxy (spawned by the benchmark).
    #[command(hide = true)]
    FloorProxy {
        #[arg(long)]
        port: u16,
        /// e.g. http://127.0.0.1:9000
        #[arg(long)]
        upstream: String,
        /// A current-thread runtime instead of a worker per core.
        #[arg(long)]
        one_thread: bool,
    },
    /// Memory per open, idle stream: N streams held open, the server's RSS before and after
    IdleStreams {
        /// Streams held open per target (after 20 warm-up streams)
        #[arg(long, default_value_t = 1000)]
        streams: usize,
        /// The corvid binary [default: `corvid` next to this executable]
        #[arg(long)]
        corvid: Option<PathBuf>,
        /// Where to write the JSON [default: <workspace>/bench-results/idle.json]
        #[arg(long)]
        out: Option<PathBuf>,
        /// The mock upstream speaks HTTP/2 over TLS, as real providers do (corvid's targets
        /// only; needs `openssl` to make a certificate)
        #[arg(long)]
        tls: bool,
    },
    /// Instructions per request under callgrind (valgrind), per kind of request.
    Instructions {
        /// Measured requests per kind (each kind also serves 10 warm-up requests)
        #[arg(long, default_value_t = 200)]
        requests: usize,
        /// The corvid binary [default: `corvid` next to this executable]
        #[arg(long)]
        corvid: Option<PathBuf>,
        /// Also print where this kind's instructions go, per function (e.g. anthropic-cc)
        #[arg(long)]
        profile: Option<String>,
        /// Measure only these kinds (repeatable)
        #[arg(long)]
        only: Vec<String>,
        /// Where to write the JSON [default: <workspace>/bench-results/instructions.json]
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Sequential non-streamed requests per target [default: 2000; quick: 300]
    #[arg(long)]
    requests: Option<usize>,
    /// Concurrent connections in the throughput phase [default: 32]
    #[arg(long)]
    concurrency: Option<usize>,
    /// Seconds of load per target in the throughput phase [default: 5; quick: 1]
    #[arg(long)]
    seconds: Option<f64>,
    /// Sequential streamed requests per target [default: 500; quick: 100]
    #[arg(long)]
    stream_requests: Option<usize>,
    /// The corvid binary [default: `corvid` next to this executable]
    #[arg(long)]
    corvid: Option<PathBuf>,
    /// Small numbers, for a smoke run
    #[arg(long)]
    quick: bool,
    /// Where to write the JSON results [default: <workspace>/bench-results/latest.json]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run the floor proxy on one thread, as `corvid serve` runs, instead of a worker per core
    #[arg(long)]
    floor_one_thread: bool,
    /// Let the sequential phases' processes float across CPUs instead of pinning them to one
    #[arg(long)]
    no_pin: bool,
    /// Team mode instead: a budgeted key on SQLite (one instance), on one PostgreSQL (two) and
    /// on PostgreSQL with Redis (two), side by side; needs the servers of scripts/team-services
    #[arg(long)]
    team: bool,
}

impl RunArgs {
    fn settings(&self) -> anyhow::Result<run::Settings> {
        let pick = |explicit: Option<usize>, quick: usize, full: usize| {
            explicit.unwrap_or(if self.quick { quick } else { full })
        };
        let settings = run::Settings {
            requests: pick(self.requests, 300, 2_000),
            concurrency: pick(self.concurrency, 32, 32),
            seconds: self.seconds.unwrap_or(if self.quick { 1.0 } else { 5.0 }),
            stream_requests: pick(self.stream_requests, 100, 500),
            rounds: 8,
            quick: self.quick,
            floor_one_thread: self.floor_one_thread,
            pin: !self.no_pin,
        };
        anyhow::ensure!(
            settings.requests > 0 && settings.stream_requests > 0 && settings.concurrency > 0,
            "--requests, --stream-requests and --concurrency must be positive"
        );
        anyhow::ensure!(
            settings.seconds.is_finite() && settings.seconds > 0.0,
            "--seconds must be positive"
        );
        Ok(settings)
    }
}

fn default_out() -> PathBuf {
    // This crate sits at <workspace>/crates/corvid-bench.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.ancestors().nth(2).unwrap_or(manifest);
    workspace.join("bench-results").join("latest.json")
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn main() -> ExitCode {
    match dispatch(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("corvid-bench: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::MockUpstream {
            port,
            tls_cert,
            tls_key,
        }) => mock::run(port, tls_cert.zip(tls_key)),
        Some(Command::FloorProxy {
            port,
            upstream,
            one_thread,
        }) => floor::run(port, &upstream, one_thread),
        Some(Command::Instructions {
            requests,
            corvid,
            profile,
            only,
            out,
        }) => {
            let settings = instructions::Settings {
                requests,
                corvid: launch::corvid_program(corvid)?,
                profile,
                only,
                out: out.unwrap_or_else(|| default_out().with_file_name("instructions.json")),
            };
            runtime()?.block_on(async {
                tokio::select! {
                    result = instructions::run(settings) => result,
                    signal = interrupted() => Err(anyhow::anyhow!("stopped by {}", signal?)),
                }
            })
        }
        Some(Command::IdleStreams {
            streams,
            corvid,
            out,
            tls,
        }) => {
            let settings = idle::Settings {
                streams,
                tls,
                corvid: launch::corvid_program(corvid)?,
                out: out.unwrap_or_else(|| default_out().with_file_name("idle.json")),
            };
            runtime()?.block_on(async {
                tokio::select! {
                    result = idle::run(settings) => result,
                    signal = interrupted() => Err(anyhow::anyhow!("stopped by {}", signal?)),
                }
            })
        }
        None if cli.run.team => {
            let general = cli.run.settings()?;
            let postgres_url = std::env::var("CORVID_TEST_POSTGRES_URL").map_err(|_| {
                anyhow::anyhow!("--team needs PostgreSQL: run it as `scripts/bench --team`")
            })?;
            let settings = team::Settings {
                requests: general.requests,
                concurrency: general.concurrency,
                seconds: general.seconds,
                corvid: launch::corvid_program(cli.run.corvid)?,
                postgres_url,
                redis_url: std::env::var("CORVID_TEST_REDIS_URL").ok(),
                out: cli
                    .run
                    .out
                    .unwrap_or_else(|| default_out().with_file_name("team.json")),
            };
            runtime()?.block_on(async {
                tokio::select! {
                    result = team::run(settings) => result,
                    signal = interrupted() => Err(anyhow::anyhow!("stopped by {}", signal?)),
                }
            })
        }
        None => {
            let settings = cli.run.settings()?;
            let corvid = launch::corvid_program(cli.run.corvid)?;
            let out = cli.run.out.unwrap_or_else(default_out);
            runtime()?.block_on(async {
                // On Ctrl-C or SIGTERM, dropping the run future drops the
                // child guards, which kill the servers.
                tokio::select! {
                    result = run::run(settings, corvid, out) => result,
                    signal = interrupted() => Err(anyhow::anyhow!("stopped by {}", signal?)),
                }
            })
        }
    }
}

async fn interrupted() -> anyhow::Result<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.map(|()| "Ctrl-C").map_err(Into::into),
        _ = terminate.recv() => Ok("SIGTERM"),
    }
}
