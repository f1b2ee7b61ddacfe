//! Pinning the sequential phases to one CPU.
//!
//! At concurrency 1 the client, the target and the mock take turns, so one core is enough.
//! Left free, the scheduler places them differently from run to run: all on one core, or
//! hopping between cores with a wake-up interrupt per hop. On a shared 2-core VM that
//! placement moved the floor's added p50 between +21 and +56 µs on identical binaries, more
//! than the difference being measured. On one core every run measures the same thing: the CPU
//! time a hop costs, system calls and context switches included, and everything a target does
//! per request (its background threads too) counts.
//!
//! `taskset` (util-linux) does the pinning; without it the phases run unpinned, and the report
//! says so.

use std::process::{Command, Stdio};

/// Processes pinned to one CPU until `release`.
pub(crate) struct Pinned {
    pids: Vec<u32>,
    /// The affinity to restore, as `taskset` prints it (e.g. `0,1` or `0-3`).
    original: String,
    cpu: u32,
}

impl Pinned {
    /// Pins this process and `others`, every thread of each, to the last CPU this process
    /// may use. `None`, after a warning on stderr, when that is not possible.
    pub(crate) fn pin(others: &[u32]) -> Option<Self> {
        let own = std::process::id();
        let original = match current_affinity(own) {
            Ok(list) => list,
            Err(why) => {
                eprintln!("corvid-bench: not pinning the sequential phases: {why}");
                return None;
            }
        };
        let Some(cpu) = last_cpu(&original) else {
            eprintln!("corvid-bench: not pinning: unreadable CPU list {original:?}");
            return None;
        };
        let pids: Vec<u32> = std::iter::once(own).chain(others.iter().copied()).collect();
        let pinned = Self {
            pids,
            original,
            cpu,
        };
        if let Err(why) = pinned.set(&cpu.to_string()) {
            eprintln!("corvid-bench: not pinning the sequential phases: {why}");
            pinned.release();
            return None;
        }
        Some(pinned)
    }

    /// The CPU everything runs on.
    pub(crate) fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Gives every process its original affinity back.
    pub(crate) fn release(self) {
        if let Err(why) = self.set(&self.original) {
            eprintln!(
                "corvid-bench: could not restore CPU affinity {}: {why}",
                self.original
            );
        }
    }

    fn set(&self, list: &str) -> Result<(), TasksetError> {
        for pid in &self.pids {
            taskset(&["-a", "-p", "-c", list, &pid.to_string()])?;
        }
        Ok(())
    }
}

/// Why `taskset` did not do what was asked.
#[derive(Debug, thiserror::Error)]
enum TasksetError {
    #[error("taskset: {0}")]
    Spawn(std::io::Error),
    #[error("taskset {args}: {stderr}")]
    Failed { args: String, stderr: String },
    #[error("unexpected taskset output {0:?}")]
    Unexpected(String),
}

/// `taskset -p -c PID` prints "pid 42's current affinity list: 0,1".
fn current_affinity(pid: u32) -> Result<String, TasksetError> {
    let out = taskset(&["-p", "-c", &pid.to_string()])?;
    out.rsplit_once(": ")
        .map(|(_, list)| list.trim().to_owned())
        .filter(|list| !list.is_empty())
        .ok_or(TasksetError::Unexpected(out))
}

/// The highest CPU in a list such as `0,1`, `0-3` or `0-1,4`.
fn last_cpu(list: &str) -> Option<u32> {
    list.split([',', '-'])
        .filter_map(|cpu| cpu.trim().parse().ok())
        .max()
}

fn taskset(args: &[&str]) -> Result<String, TasksetError> {
    let out = Command::new("taskset")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(TasksetError::Spawn)?;
    if !out.status.success() {
        return Err(TasksetError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_cpu_of_a_list() {
        assert_eq!(last_cpu("0,1"), Some(1));
        assert_eq!(last_cpu("0-3"), Some(3));
        assert_eq!(last_cpu("0-1,4"), Some(4));
        assert_eq!(last_cpu("2"), Some(2));
        assert_eq!(last_cpu(""), None);
    }
}
