//! Child processes: spawning, readiness, cleanup, and memory readings.

use std::fs::File;
use std::io::Read as _;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Serialize;

/// A spawned server. Dropping the guard kills the process, so children die
/// on every exit path of the benchmark, including `?` and panics.
pub(crate) struct ChildGuard {
    name: String,
    program: PathBuf,
    child: Child,
    // Held open on purpose: helper servers exit when this pipe closes,
    // which also covers the bench being killed before Drop can run.
    _stdin: Option<ChildStdin>,
    log: PathBuf,
    spawned_at: Instant,
}

impl ChildGuard {
    /// Spawns `command` with stdout and stderr both sent to `log`. The caller
    /// chooses stdin (piped for our helpers, null for corvid).
    pub(crate) fn spawn(name: &str, command: &mut Command, log: PathBuf) -> anyhow::Result<Self> {
        let out = File::create(&log).with_context(|| format!("create {}", log.display()))?;
        let err = out.try_clone()?;
        let program = PathBuf::from(command.get_program());
        let mut child = command
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("could not start {name} ({})", program.display()))?;
        Ok(Self {
            name: name.to_owned(),
            program,
            _stdin: child.stdin.take(),
            child,
            log,
            spawned_at: Instant::now(),
        })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks the child to stop (SIGTERM, through `kill(1)`: no libc binding here) and waits up
    /// to `limit` for it to exit, so it can write what it writes at exit (callgrind's profile).
    pub(crate) async fn terminate(&mut self, limit: Duration) -> anyhow::Result<()> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .context("run kill")?;
        anyhow::ensure!(status.success(), "kill -TERM {} failed", self.child.id());
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "{} did not exit within {} s of SIGTERM",
            self.describe(),
            limit.as_secs()
        )
    }

    /// "corvid (/path/to/corvid)", for messages.
    pub(crate) fn describe(&self) -> String {
        format!("{} ({})", self.name, self.program.display())
    }

    /// The last `lines` lines the child wrote to stdout or stderr.
    pub(crate) fn output_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join("\n");
        if tail.trim().is_empty() {
            "(no output)".to_owned()
        } else {
            tail
        }
    }

    /// Polls `ready` every 20 ms until it succeeds, the child exits, or
    /// `limit` passes. Returns the time from spawn to ready.
    pub(crate) async fn wait_until<F, Fut>(
        &mut self,
        limit: Duration,
        mut ready: F,
    ) -> anyhow::Result<Duration>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = bool>,
    {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                bail!(
                    "{} exited ({status}) before becoming ready\noutput tail:\n{}",
                    self.describe(),
                    self.output_tail(20)
                );
            }
            if ready().await {
                return Ok(self.spawned_at.elapsed());
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} was not ready within {} s\noutput tail:\n{}",
                    self.describe(),
                    limit.as_secs(),
                    self.output_tail(20)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        // Errors mean the child is already gone; either way, reap it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Called first thing by the helper servers: exit as soon as stdin reaches
/// EOF, i.e. when the bench process that holds the other end goes away.
/// Only when stdin is a pipe: run by hand from a terminal or with
/// `</dev/null`, the helper just runs until it is killed.
pub(crate) fn exit_when_parent_exits() {
    use std::os::unix::fs::FileTypeExt as _;
    let piped = std::fs::metadata("/proc/self/fd/0").is_ok_and(|stdin| stdin.file_type().is_fifo());
    if !piped {
        return;
    }
    std::thread::spawn(|| {
        let mut buffer = [0_u8; 64];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => std::process::exit(0),
                Ok(_) => {}
            }
        }
    });
}

/// `count` distinct free loopback ports. They are released before return,
/// so another process could take one in between; on a bench box that is
/// acceptable.
pub(crate) fn free_ports(count: usize) -> anyhow::Result<Vec<u16>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()?;
    listeners
        .iter()
        .map(|listener| Ok(listener.local_addr()?.port()))
        .collect()
}

pub(crate) async fn accepts_tcp(port: u16) -> bool {
    tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .await
        .is_ok()
}

/// Resident and peak resident memory of a process, from /proc (Linux only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Memory {
    pub(crate) rss_kib: u64,
    pub(crate) peak_kib: u64,
}

pub(crate) fn memory(pid: u32) -> Option<Memory> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    parse_status(&status)
}

/// Reads `VmRSS` and `VmHWM` (both in kB) from /proc/<pid>/status text.
pub(crate) fn parse_status(status: &str) -> Option<Memory> {
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        peak_kib: field("VmHWM:")?,
    })
}

#[cfg(test)]
mod tests;
