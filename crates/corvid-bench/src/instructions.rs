//! `corvid-bench instructions`: instructions per request under callgrind, a figure that does
//! not move with the machine's load. For each request kind, corvid runs twice under
//! `valgrind --tool=callgrind` (all threads counted): once serving `WARMUP` requests, once
//! serving `WARMUP + N`; the difference over N is what one more warm request costs, start-up,
//! shutdown and first-request set-up excluded. With `--profile`, the same difference per
//! function (self cost, `callgrind_annotate`) for one kind: where the time goes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::launch::{self, CorvidSetup};
use crate::load::{self, Endpoint, HttpClient, Measure};
use crate::payload::{Dialect, Shape, Stream};
use crate::procs;
use crate::report;

/// Requests served in both runs, so first-request work cancels out.
const WARMUP: usize = 10;

/// How long corvid may take to exit after SIGTERM under valgrind.
const EXIT_LIMIT: Duration = Duration::from_secs(60);

/// One kind of request measured.
#[derive(Clone, Copy)]
struct Kind {
    name: &'static str,
    dialect: Dialect,
    shape: Shape,
    stream: Stream,
}

const KINDS: [Kind; 11] = [
    Kind {
        name: report::CORVID,
        dialect: Dialect::OpenAiChat,
        shape: Shape::Short,
        stream: Stream::Disabled,
    },
    Kind {
        name: report::TRANSLATION,
        dialect: Dialect::AnthropicMessages,
        shape: Shape::Short,
        stream: Stream::Disabled,
    },
    Kind {
        name: report::CORVID_CC,
        dialect: Dialect::OpenAiChat,
        shape: Shape::ClaudeCode,
        stream: Stream::Disabled,
    },
    Kind {
        name: report::ANTHROPIC_CC,
        dialect: Dialect::AnthropicMessages,
        shape: Shape::ClaudeCode,
        stream: Stream::Disabled,
    },
    Kind {
        name: report::RESPONSES_CC,
        dialect: Dialect::OpenAiResponses,
        shape: Shape::ClaudeCode,
        stream: Stream::Disabled,
    },
    Kind {
        name: "corvid-cc-stream",
        dialect: Dialect::OpenAiChat,
        shape: Shape::ClaudeCode,
        stream: Stream::Enabled,
    },
    Kind {
        name: "anthropic-cc-stream",
        dialect: Dialect::AnthropicMessages,
        shape: Shape::ClaudeCode,
        stream: Stream::Enabled,
    },
    Kind {
        name: "responses-cc-stream",
        dialect: Dialect::OpenAiResponses,
        shape: Shape::ClaudeCode,
        stream: Stream::Enabled,
    },
    Kind {
        name: "corvid-cc-long",
        dialect: Dialect::OpenAiChat,
        shape: Shape::ClaudeCodeLong,
        stream: Stream::Disabled,
    },
    Kind {
        name: "anthropic-cc-long",
        dialect: Dialect::AnthropicMessages,
        shape: Shape::ClaudeCodeLong,
        stream: Stream::Disabled,
    },
    Kind {
        name: "responses-cc-long",
        dialect: Dialect::OpenAiResponses,
        shape: Shape::ClaudeCodeLong,
        stream: Stream::Disabled,
    },
];

/// The suffix of a kind carrying the long request; the kind without it carries the short one.
const LONG: &str = "-long";

/// What the subcommand was asked for.
pub(crate) struct Settings {
    pub(crate) requests: usize,
    pub(crate) corvid: PathBuf,
    /// The kind whose per-function profile is printed.
    pub(crate) profile: Option<String>,
    /// Only these kinds (all when empty).
    pub(crate) only: Vec<String>,
    pub(crate) out: PathBuf,
}

#[derive(Debug, Serialize)]
struct Figure {
    kind: &'static str,
    request_bytes: usize,
    requests: usize,
    instructions_per_request: f64,
    instructions_per_request_byte: f64,
    /// For a `-long` kind measured beside its short kind: what each further request byte
    /// costs, (long − short) / (long bytes − short bytes). Fixed costs cancel out.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions_per_added_byte: Option<f64>,
}

pub(crate) async fn run(settings: Settings) -> anyhow::Result<()> {
    anyhow::ensure!(settings.requests > 0, "--requests must be positive");
    if let Some(profile) = &settings.profile {
        anyhow::ensure!(
            KINDS.iter().any(|kind| kind.name == profile),
            "--profile {profile}: not a kind ({})",
            names()
        );
    }
    for only in &settings.only {
        anyhow::ensure!(
            KINDS.iter().any(|kind| kind.name == only),
            "--only {only}: not a kind ({})",
            names()
        );
    }
    let work = tempfile::tempdir()?;
    let client = load::client();
    let &[mock_port, corvid_port] = procs::free_ports(2)?.as_slice() else {
        bail!("could not pick two ports");
    };
    let mock = launch::mock(work.path(), mock_port).await?;
    let kinds = KINDS
        .iter()
        .filter(|kind| settings.only.is_empty() || settings.only.iter().any(|o| o == kind.name));
    let mut figures = Vec::new();
    for kind in kinds {
        let endpoint = Endpoint {
            uri: format!("http://127.0.0.1:{corvid_port}{}", kind.dialect.path()).parse()?,
            body: kind.dialect.request(kind.shape, kind.stream),
            dialect: kind.dialect,
            key: None,
        };
        let mut totals = [0_u64; 2];
        let mut files = Vec::new();
        for (run, count) in [WARMUP, WARMUP + settings.requests].into_iter().enumerate() {
            eprintln!(
                "corvid-bench: {} under callgrind, {count} requests",
                kind.name
            );
            let file = work.path().join(format!("{}-{run}.callgrind", kind.name));
            let setup = Runner {
                corvid: &settings.corvid,
                work: work.path(),
                port: corvid_port,
                upstream_port: mock.port,
            };
            totals[run] = setup
                .count(&client, &endpoint, kind.stream, count, &file)
                .await?;
            files.push(file);
        }
        let per_request = totals[1].saturating_sub(totals[0]) as f64 / settings.requests as f64;
        figures.push(Figure {
            kind: kind.name,
            request_bytes: endpoint.body.len(),
            requests: settings.requests,
            instructions_per_request: per_request,
            instructions_per_request_byte: per_request / endpoint.body.len() as f64,
            instructions_per_added_byte: None,
        });
        if settings.profile.as_deref() == Some(kind.name) {
            print_profile(kind.name, &files[0], &files[1], settings.requests)?;
        }
        // `CORVID_BENCH_KEEP_CALLGRIND=DIR` keeps both runs' files, for `callgrind_annotate
        // --inclusive=yes` or `--tree=caller` by hand.
        if let Some(dir) = std::env::var_os("CORVID_BENCH_KEEP_CALLGRIND") {
            std::fs::create_dir_all(&dir)?;
            for file in &files {
                if let Some(name) = file.file_name() {
                    std::fs::copy(file, Path::new(&dir).join(name))?;
                }
            }
        }
    }
    drop(mock);
    add_marginal_costs(&mut figures);
    print_figures(&figures);
    if let Some(dir) = settings.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(
        &settings.out,
        serde_json::to_string_pretty(&figures)? + "\n",
    )
    .with_context(|| format!("write {}", settings.out.display()))?;
    println!("\nJSON: {}", settings.out.display());
    Ok(())
}

fn names() -> String {
    KINDS
        .iter()
        .map(|kind| kind.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one corvid under callgrind.
struct Runner<'a> {
    corvid: &'a Path,
    work: &'a Path,
    port: u16,
    upstream_port: u16,
}

impl Runner<'_> {
    /// Serves `count` requests to `endpoint` under callgrind, stops corvid, and returns the
    /// instructions it ran in all (every thread).
    async fn count(
        &self,
        client: &HttpClient,
        endpoint: &Endpoint,
        stream: Stream,
        count: usize,
        file: &Path,
    ) -> anyhow::Result<u64> {
        let home = tempfile::tempdir_in(self.work)?;
        let under = [
            "valgrind".to_owned(),
            "--tool=callgrind".to_owned(),
            format!("--callgrind-out-file={}", file.display()),
        ];
        let setup = CorvidSetup {
            program: self.corvid,
            home: home.path(),
            logs: self.work,
            port: self.port,
            upstream_port: self.upstream_port,
            under: &under,
            config: "",
            env: &[],
            upstream_ca: None,
        };
        let mut started = launch::corvid(setup, client).await?;
        let measure = match stream {
            Stream::Disabled => Measure::Latency,
            Stream::Enabled => Measure::FirstByte,
        };
        load::sequential(client, endpoint, measure, 0, count).await?;
        started.guard.terminate(EXIT_LIMIT).await?;
        total(file)
    }
}

/// The `summary:` (or `totals:`) line of a callgrind output file.
fn total(file: &Path) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(file).with_context(|| format!("read {}", file.display()))?;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
        })
        .and_then(|count| count.trim().parse().ok())
        .with_context(|| format!("no summary line in {}", file.display()))
}

/// Self instructions per function, from `callgrind_annotate`.
fn per_function(file: &Path) -> anyhow::Result<HashMap<String, u64>> {
    let output = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--threshold=100"])
        .arg(file)
        .output()
        .context("run callgrind_annotate")?;
    anyhow::ensure!(
        output.status.success(),
        "callgrind_annotate failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(parse_annotate(&String::from_utf8_lossy(&output.stdout)))
}

/// Lines like `1,234,567 (12.34%)  file:function [object]` (the percentage is absent in some
/// versions); the header and the total line do not have a `:` after the count.
pub(crate) fn parse_annotate(text: &str) -> HashMap<String, u64> {
    let mut functions = HashMap::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some((count, rest)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let Ok(count) = count.replace(',', "").parse::<u64>() else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(after) => after
                .split_once(')')
                .map_or(after, |(_, name)| name)
                .trim_start(),
            None => rest,
        };
        if !rest.contains(':') || rest.starts_with("PROGRAM TOTALS") {
            continue;
        }
        *functions.entry(rest.to_owned()).or_insert(0) += count;
    }
    functions
}

fn print_profile(
    kind: &str,
    warmup: &Path,
    measured: &Path,
    requests: usize,
) -> anyhow::Result<()> {
    let before = per_function(warmup)?;
    let after = per_function(measured)?;
    let mut rows: Vec<(f64, &str)> = after
        .iter()
        .map(|(name, &count)| {
            let extra = count.saturating_sub(before.get(name).copied().unwrap_or(0));
            (extra as f64 / requests as f64, name.as_str())
        })
        .filter(|(per_request, _)| *per_request >= 1.0)
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = rows.iter().map(|(per_request, _)| per_request).sum();
    // `CORVID_BENCH_PROFILE_ROWS=N` prints more (or fewer) functions.
    let shown = std::env::var("CORVID_BENCH_PROFILE_ROWS")
        .ok()
        .and_then(|rows| rows.parse().ok())
        .unwrap_or(30);
    println!("\nWhere {kind}'s instructions go (self cost per request, top {shown} of {total:.0})");
    for (per_request, name) in rows.iter().take(shown) {
        println!(
            "  {per_request:>9.0} {:>5.1}%  {name}",
            per_request / total * 100.0
        );
    }
    Ok(())
}

/// Fills in `instructions_per_added_byte` for each long kind whose short kind was measured.
fn add_marginal_costs(figures: &mut [Figure]) {
    let short: HashMap<&str, (f64, usize)> = figures
        .iter()
        .map(|figure| {
            (
                figure.kind,
                (figure.instructions_per_request, figure.request_bytes),
            )
        })
        .collect();
    for figure in figures.iter_mut() {
        let Some(base) = figure.kind.strip_suffix(LONG) else {
            continue;
        };
        if let Some(&(count, bytes)) = short.get(base)
            && figure.request_bytes > bytes
        {
            figure.instructions_per_added_byte = Some(
                (figure.instructions_per_request - count) / (figure.request_bytes - bytes) as f64,
            );
        }
    }
}

fn print_figures(figures: &[Figure]) {
    println!("\nInstructions per request (callgrind, every thread, warm)");
    println!(
        "  {:<20} {:>8} {:>12} {:>10} {:>16}",
        "kind", "bytes", "per request", "per byte", "per added byte"
    );
    for figure in figures {
        let added = figure
            .instructions_per_added_byte
            .map_or_else(String::new, |added| format!("{added:.1}"));
        println!(
            "  {:<20} {:>8} {:>12.0} {:>10.1} {added:>16}",
            figure.kind,
            figure.request_bytes,
            figure.instructions_per_request,
            figure.instructions_per_request_byte
        );
    }
    let named = |name: &str| {
        figures
            .iter()
            .find(|figure| figure.kind == name)
            .map(|figure| figure.instructions_per_request)
    };
    for translated in [report::ANTHROPIC_CC, report::RESPONSES_CC] {
        if let (Some(translated_count), Some(pass)) = (named(translated), named(report::CORVID_CC))
        {
            println!(
                "  {translated} / {}: {:.2}×",
                report::CORVID_CC,
                translated_count / pass
            );
        }
    }
}
