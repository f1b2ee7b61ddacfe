//! The whole benchmark: start the servers, run the phases against each
//! target, collect the figures. Phases run target by target, so only one
//! target is under load at a time; sequential phases are split into rounds
//! whose order rotates, so slow drift in the machine spreads evenly.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use http::Uri;
use serde::Serialize;

use crate::launch::{self, CorvidSetup, Started};
use crate::load::{self, Endpoint, HttpClient, Measure};
use crate::payload::{Dialect, Shape, Stream};
use crate::pin::Pinned;
use crate::procs::{self, Memory};
use crate::report::{self, MemoryTrace, TargetReport};
use crate::stats::Summary;

/// Resolved run parameters (explicit flags, else `--quick`, else defaults).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Settings {
    pub(crate) requests: usize,
    pub(crate) concurrency: usize,
    pub(crate) seconds: f64,
    pub(crate) stream_requests: usize,
    pub(crate) rounds: usize,
    pub(crate) quick: bool,
    /// The floor proxy runs on one thread (as `corvid serve` does) instead of a worker per core.
    pub(crate) floor_one_thread: bool,
    /// The sequential phases run with every process pinned to one CPU (see `pin`).
    pub(crate) pin: bool,
}

impl Settings {
    fn warmup(count: usize) -> usize {
        (count / 10).clamp(10, 200)
    }

    fn throughput_warmup(&self) -> Duration {
        Duration::from_secs_f64((self.seconds / 5.0).clamp(0.2, 1.0))
    }
}

/// direct, floor and corvid; the translation targets come after them.
const PASS_THROUGH_TARGETS: usize = 3;

/// How long every server is left alone before the final memory reading.
const SETTLE: Duration = Duration::from_secs(2);

struct Target {
    report: TargetReport,
    plain: Endpoint,
    stream: Endpoint,
    pid: Option<u32>,
    samples: Vec<u64>,
}

impl Target {
    /// `started` is the target's own process, whose memory the report traces.
    fn new(
        name: &str,
        port: u16,
        started: Option<&Started>,
        dialect: Dialect,
        shape: Shape,
    ) -> anyhow::Result<Self> {
        let uri: Uri = format!("http://127.0.0.1:{port}{}", dialect.path()).parse()?;
        let pid = started.map(|started| started.guard.pid());
        let mut report = TargetReport::new(name, started.map(|started| started.ready_after));
        if pid.is_some() {
            report.memory = Some(MemoryTrace::default());
        }
        Ok(Self {
            report,
            plain: Endpoint {
                uri: uri.clone(),
                body: dialect.request(shape, Stream::Disabled),
                dialect,
                key: None,
            },
            stream: Endpoint {
                uri,
                body: dialect.request(shape, Stream::Enabled),
                dialect,
                key: None,
            },
            pid,
            samples: Vec::new(),
        })
    }

    fn usable(&self) -> bool {
        self.report.error.is_none()
    }

    fn fail(&mut self, phase: &str, err: &anyhow::Error) {
        eprintln!(
            "corvid-bench: {} failed during {phase}: {err:#}",
            self.report.name
        );
        self.report.error = Some(format!("{phase}: {err:#}"));
    }

    fn sample_memory(&mut self, record: impl FnOnce(&mut MemoryTrace, Option<Memory>)) {
        if let (Some(pid), Some(trace)) = (self.pid, self.report.memory.as_mut()) {
            record(trace, procs::memory(pid));
        }
    }
}

pub(crate) async fn run(settings: Settings, corvid: PathBuf, out: PathBuf) -> anyhow::Result<()> {
    let logs = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let &[mock_port, floor_port, corvid_port] = procs::free_ports(3)?.as_slice() else {
        bail!("could not pick three ports");
    };
    let client = load::client();

    let mock = launch::mock(logs.path(), mock_port).await?;
    let floor = launch::floor(
        logs.path(),
        floor_port,
        mock.port,
        settings.floor_one_thread,
    )
    .await?;
    let setup = CorvidSetup {
        program: &corvid,
        home: home.path(),
        logs: logs.path(),
        port: corvid_port,
        upstream_port: mock.port,
        under: &[],
        config: "",
        env: &[],
        upstream_ca: None,
    };
    let corvid_server = launch::corvid(setup, &client).await;

    let mut targets = vec![
        Target::new(
            report::DIRECT,
            mock.port,
            None,
            Dialect::OpenAiChat,
            Shape::Short,
        )?,
        Target::new(
            report::FLOOR,
            floor.port,
            Some(&floor),
            Dialect::OpenAiChat,
            Shape::Short,
        )?,
    ];
    match &corvid_server {
        Ok(started) => {
            targets.push(Target::new(
                report::CORVID,
                started.port,
                Some(started),
                Dialect::OpenAiChat,
                Shape::Short,
            )?);
            // The same corvid process, so its memory is traced once, under `corvid`.
            targets.push(Target::new(
                report::TRANSLATION,
                started.port,
                None,
                Dialect::AnthropicMessages,
                Shape::Short,
            )?);
        }
        Err(err) => {
            eprintln!(
                "corvid-bench: corvid ({}) is unavailable; reporting direct and floor only.\n{err:#}",
                corvid.display()
            );
            for (name, dialect) in [
                (report::CORVID, Dialect::OpenAiChat),
                (report::TRANSLATION, Dialect::AnthropicMessages),
            ] {
                let mut target = Target::new(name, corvid_port, None, dialect, Shape::Short)?;
                target.report.error = Some(format!("start: {err:#}"));
                targets.push(target);
            }
        }
    }
    // The Claude Code-sized request: its own direct baseline, corvid passing the chat form
    // through, and translating the Anthropic and Responses forms to chat.
    targets.push(Target::new(
        report::DIRECT_CC,
        mock.port,
        None,
        Dialect::OpenAiChat,
        Shape::ClaudeCode,
    )?);
    for (name, dialect) in [
        (report::CORVID_CC, Dialect::OpenAiChat),
        (report::ANTHROPIC_CC, Dialect::AnthropicMessages),
        (report::RESPONSES_CC, Dialect::OpenAiResponses),
    ] {
        let mut target = Target::new(name, corvid_port, None, dialect, Shape::ClaudeCode)?;
        if let Err(err) = &corvid_server {
            target.report.error = Some(format!("start: {err:#}"));
        }
        targets.push(target);
    }
    for target in &mut targets {
        target.sample_memory(|trace, memory| trace.idle = memory);
    }
    // After the idle reading, so it stays the memory of a server that has served nothing.
    for target in targets.iter_mut().filter(|target| target.usable()) {
        if let Err(err) = load::verify(&client, &target.plain).await {
            target.fail("the answer check", &err);
        }
    }
    let servers: Vec<u32> = [Some(&mock), Some(&floor), corvid_server.as_ref().ok()]
        .into_iter()
        .flatten()
        .map(|started| started.guard.pid())
        .collect();

    eprintln!(
        "corvid-bench: non-streamed latency, {} requests per target",
        settings.requests
    );
    let latency_cpu =
        pinned_phase(&client, &settings, &mut targets, Measure::Latency, &servers).await;
    for target in &mut targets {
        target.sample_memory(|trace, memory| trace.after_latency = memory);
    }

    eprintln!(
        "corvid-bench: throughput, concurrency {} for {} s per target",
        settings.concurrency, settings.seconds
    );
    // The pass-through targets first and corvid's end-of-load memory read right after its own
    // window, as before the translation target existed; then the translation's window.
    let (pass_through, translation) = targets.split_at_mut(PASS_THROUGH_TARGETS);
    throughput_phase(&client, &settings, pass_through).await;
    for target in pass_through.iter_mut() {
        target.sample_memory(|trace, memory| trace.after_load = memory);
    }
    // The translation, then the Claude Code-sized targets.
    throughput_phase(&client, &settings, translation).await;

    eprintln!(
        "corvid-bench: streamed time to first byte, {} requests per target",
        settings.stream_requests
    );
    let ttfb_cpu = pinned_phase(
        &client,
        &settings,
        &mut targets,
        Measure::FirstByte,
        &servers,
    )
    .await;

    tokio::time::sleep(SETTLE).await;
    for target in &mut targets {
        target.sample_memory(|trace, memory| trace.settled = memory);
    }

    let crashed: Vec<String> = targets[..2]
        .iter()
        .filter_map(|target| {
            target
                .report
                .error
                .as_ref()
                .map(|err| format!("{}: {err}", target.report.name))
        })
        .collect();
    let mut report = report::Report::new(
        settings,
        &corvid,
        targets.into_iter().map(|target| target.report).collect(),
    );
    report.pinned_cpu = latency_cpu.filter(|_| ttfb_cpu.is_some());
    report.print();
    report.write_json(&out)?;
    println!("\nJSON: {}", out.display());

    // Children are killed here, when their guards drop, on every path.
    drop((corvid_server, floor, mock));
    if !crashed.is_empty() {
        bail!("the reference targets failed: {}", crashed.join("; "));
    }
    Ok(())
}

/// A sequential phase with every process pinned to one CPU, when the settings ask for it and
/// pinning works; returns that CPU.
async fn pinned_phase(
    client: &HttpClient,
    settings: &Settings,
    targets: &mut [Target],
    measure: Measure,
    servers: &[u32],
) -> Option<u32> {
    let pinned = if settings.pin {
        Pinned::pin(servers)
    } else {
        None
    };
    let cpu = pinned.as_ref().map(Pinned::cpu);
    sequential_phase(client, settings, targets, measure).await;
    if let Some(pinned) = pinned {
        pinned.release();
    }
    cpu
}

async fn sequential_phase(
    client: &HttpClient,
    settings: &Settings,
    targets: &mut [Target],
    measure: Measure,
) {
    let total = match measure {
        Measure::Latency => settings.requests,
        Measure::FirstByte => settings.stream_requests,
    };
    let rounds = settings.rounds.max(1);
    let warmup = Settings::warmup(total);
    for target in targets.iter_mut() {
        target.samples.clear();
    }
    for round in 0..rounds {
        // Split `total` as evenly as possible; warm up only in round one.
        let count = total / rounds + usize::from(round < total % rounds);
        let round_warmup = if round == 0 { warmup } else { 0 };
        for offset in 0..targets.len() {
            let target = &mut targets[(round + offset) % targets.len()];
            if !target.usable() {
                continue;
            }
            let endpoint = match measure {
                Measure::Latency => &target.plain,
                Measure::FirstByte => &target.stream,
            };
            match load::sequential(client, endpoint, measure, round_warmup, count).await {
                Ok(samples) => target.samples.extend(samples),
                Err(err) => target.fail(phase_name(measure), &err),
            }
        }
    }
    for target in targets.iter_mut().filter(|target| target.usable()) {
        let summary = Summary::of(std::mem::take(&mut target.samples));
        match measure {
            Measure::Latency => target.report.latency = summary,
            Measure::FirstByte => target.report.ttfb = summary,
        }
    }
}

fn phase_name(measure: Measure) -> &'static str {
    match measure {
        Measure::Latency => "latency",
        Measure::FirstByte => "time to first byte",
    }
}

async fn throughput_phase(client: &HttpClient, settings: &Settings, targets: &mut [Target]) {
    let warmup = settings.throughput_warmup();
    let window = Duration::from_secs_f64(settings.seconds);
    for target in targets.iter_mut().filter(|target| target.usable()) {
        // Read memory halfway through the window, while the load runs.
        let pid = target.pid;
        let midway = async {
            tokio::time::sleep(warmup + window / 2).await;
            pid.and_then(procs::memory)
        };
        let load = load::throughput(client, &target.plain, settings.concurrency, warmup, window);
        let (result, mid_load) = tokio::join!(load, midway);
        if let Some(trace) = target.report.memory.as_mut() {
            trace.mid_load = mid_load;
        }
        match result {
            Ok(throughput) => target.report.throughput = Some(throughput),
            Err(err) => target.fail("throughput", &err),
        }
    }
}
