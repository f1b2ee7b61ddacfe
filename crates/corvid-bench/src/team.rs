//! `--team`: corvid with a budgeted client key on each of its stores, side by side in one run —
//! one instance on SQLite, two instances on one PostgreSQL, and two on PostgreSQL with Redis
//! in front. Every request takes a budget hold and settles it, the team-mode hot path.
//! Latency is measured one request at a time on the first instance; throughput with the
//! concurrency split evenly across the instances, added up.
//!
//! The servers come from `scripts/team-services` (`CORVID_TEST_POSTGRES_URL`,
//! `CORVID_TEST_REDIS_URL`), which `scripts/bench --team` runs this under.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::launch::{self, CorvidSetup, Started};
use crate::load::{self, Endpoint, HttpClient, Measure, Throughput};
use crate::payload::{Dialect, Shape, Stream};
use crate::procs;
use crate::stats::Summary;

/// What `--team` measures with.
pub(crate) struct Settings {
    pub(crate) requests: usize,
    pub(crate) concurrency: usize,
    pub(crate) seconds: f64,
    pub(crate) corvid: PathBuf,
    pub(crate) postgres_url: String,
    pub(crate) redis_url: Option<String>,
    pub(crate) out: PathBuf,
}

/// The model the bench's requests resolve to, priced so a budget applies.
const PRICES: &str = "[prices.\"grok-4.6\"]\ninput = 0.2\noutput = 0.5\n";

#[derive(Debug, Serialize)]
struct Row {
    store: String,
    instances: usize,
    latency: Option<Summary>,
    throughput: Throughput,
}

/// One store's setup: its `[store]` lines and environment.
struct Store {
    name: String,
    instances: usize,
    database: Option<String>,
    redis: Option<String>,
}

pub(crate) async fn run(settings: Settings) -> anyhow::Result<()> {
    let logs = tempfile::tempdir()?;
    let client = load::client();
    let ports = procs::free_ports(6)?;
    let mock = launch::mock(logs.path(), ports[0]).await?;
    let mut stores = vec![
        Store {
            name: "SQLite".into(),
            instances: 1,
            database: None,
            redis: None,
        },
        Store {
            name: "PostgreSQL".into(),
            instances: 2,
            database: Some(settings.postgres_url.clone()),
            redis: None,
        },
    ];
    if let Some(redis) = &settings.redis_url {
        stores.push(Store {
            name: "PostgreSQL + Redis".into(),
            instances: 2,
            database: Some(settings.postgres_url.clone()),
            redis: Some(redis.clone()),
        });
    }
    let mut next_port = ports[1..].iter().copied();
    let mut rows = Vec::new();
    for (index, store) in stores.iter().enumerate() {
        let home = tempfile::tempdir()?;
        let env = store_env(store);
        let key = prepare(&settings.corvid, home.path(), &env, index)?;
        let mut servers = Vec::new();
        for instance in 0..store.instances {
            let port = next_port.next().context("out of ports")?;
            let instance_logs = logs.path().join(format!("{index}-{instance}"));
            std::fs::create_dir_all(&instance_logs)?;
            let config = format!("{PRICES}[store]\nrequire_keys = true\n");
            let setup = CorvidSetup {
                program: &settings.corvid,
                home: home.path(),
                logs: &instance_logs,
                port,
                upstream_port: mock.port,
                under: &[],
                config: &config,
                env: &env,
                upstream_ca: None,
            };
            servers.push(launch::corvid(setup, &client).await?);
        }
        let row = measure(&settings, &client, store, &servers, &key).await?;
        print_row(&row);
        rows.push(row);
    }
    if let Some(dir) = settings.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&settings.out, serde_json::to_vec_pretty(&rows)?)?;
    eprintln!("corvid-bench: wrote {}", settings.out.display());
    Ok(())
}

fn store_env(store: &Store) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if let Some(url) = &store.database {
        env.push(("CORVID_DATABASE_URL", url.clone()));
    }
    if let Some(url) = &store.redis {
        env.push(("CORVID_REDIS_URL", url.clone()));
    }
    env
}

/// Migrates the store and makes a key with a budget no run exhausts; the key.
fn prepare(
    corvid: &Path,
    home: &Path,
    env: &[(&str, String)],
    index: usize,
) -> anyhow::Result<String> {
    let run = |args: &[&str]| -> anyhow::Result<String> {
        let output = Command::new(corvid)
            .args(args)
            .env("CORVID_HOME", home)
            .envs(env.iter().map(|(name, value)| (*name, value)))
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("run corvid {}", args.join(" ")))?;
        if !output.status.success() {
            bail!(
                "corvid {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    run(&["migrate"])?;
    let name = format!("bench-{index}-{}", std::process::id());
    let made = run(&[
        "keys",
        "create",
        "--name",
        &name,
        "--budget-usd",
        "1000000",
        "--period",
        "month",
    ])?;
    made.lines()
        .last()
        .map(|line| line.trim().to_owned())
        .filter(|key| key.starts_with("cv-"))
        .context("corvid keys create printed no key")
}

async fn measure(
    settings: &Settings,
    client: &HttpClient,
    store: &Store,
    servers: &[Started],
    key: &str,
) -> anyhow::Result<Row> {
    let endpoint = |server: &Started| -> anyhow::Result<Endpoint> {
        Ok(Endpoint {
            uri: format!(
                "http://127.0.0.1:{}{}",
                server.port,
                Dialect::OpenAiChat.path()
            )
            .parse()?,
            body: Dialect::OpenAiChat.request(Shape::Short, Stream::Disabled),
            dialect: Dialect::OpenAiChat,
            key: Some(key.to_owned()),
        })
    };
    let endpoints: Vec<Endpoint> = servers.iter().map(endpoint).collect::<Result<_, _>>()?;
    let first = endpoints.first().context("no instance")?;
    load::verify(client, first).await?;
    let samples = load::sequential(client, first, Measure::Latency, 50, settings.requests).await?;
    let share = settings.concurrency.div_ceil(endpoints.len()).max(1);
    let window = Duration::from_secs_f64(settings.seconds);
    let runs = endpoints.iter().map(|endpoint| {
        load::throughput(client, endpoint, share, Duration::from_millis(500), window)
    });
    let mut total = Throughput {
        requests: 0,
        errors: 0,
        rps: 0.0,
        latency: None,
        first_error: None,
    };
    let mut latencies = Vec::new();
    for part in futures_util::future::join_all(runs).await {
        let part = part?;
        total.requests += part.requests;
        total.errors += part.errors;
        total.rps += part.rps;
        total.first_error = total.first_error.or(part.first_error);
        latencies.extend(part.latency);
    }
    // The slowest instance's percentiles stand for the whole (a conservative merge).
    total.latency = latencies
        .into_iter()
        .max_by(|a, b| a.p99_us.total_cmp(&b.p99_us));
    Ok(Row {
        store: store.name.clone(),
        instances: store.instances,
        latency: Summary::of(samples),
        throughput: total,
    })
}

fn print_row(row: &Row) {
    let (p50, p99) = row.latency.map_or((f64::NAN, f64::NAN), |summary| {
        (summary.p50_us, summary.p99_us)
    });
    let loaded_p99 = row
        .throughput
        .latency
        .map_or(f64::NAN, |summary| summary.p99_us);
    println!(
        "{:<20} {} instance{}  sequential p50 {:>7.0} µs  p99 {:>7.0} µs  |  {:>7.0} req/s  (p99 under load {:>7.0} µs, {} errors)",
        row.store,
        row.instances,
        if row.instances == 1 { " " } else { "s" },
        p50,
        p99,
        row.throughput.rps,
        loaded_p99,
        row.throughput.errors
    );
}
