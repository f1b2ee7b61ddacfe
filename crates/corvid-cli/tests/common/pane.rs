//! `corvid chat` in a real pseudo-terminal: one tmux server of a test's own (a private socket)
//! with the real binary in its only pane, against a scripted model on loopback.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use corvid_test_support::MockUpstream;

use super::CORVID;

pub(crate) const EXITED: &str = "CORVID-EXITED";

/// One tmux server of our own, with corvid chat in its only pane.
pub(crate) struct Pane {
    socket: String,
}

/// How a pane is made: its size, tmux options, extra environment, and what the pane runs
/// after corvid (the shell stays, so the terminal's state can be looked at).
pub(crate) struct Setup<'a> {
    pub(crate) width: u16,
    pub(crate) height: u16,
    /// Lines of tmux configuration, read when its server starts.
    pub(crate) config: &'a str,
    /// `NAME=value` words for corvid's environment.
    pub(crate) env: &'a str,
    pub(crate) after: &'a str,
}

impl Default for Setup<'_> {
    fn default() -> Self {
        Self {
            width: 80,
            height: 24,
            config: "",
            env: "",
            after: "sleep 30",
        }
    }
}

impl Pane {
    pub(crate) fn start(upstream: &MockUpstream, home: &Path, project: &Path, width: u16) -> Self {
        Self::open(
            upstream,
            home,
            project,
            &Setup {
                width,
                ..Setup::default()
            },
        )
    }

    pub(crate) fn open(
        upstream: &MockUpstream,
        home: &Path,
        project: &Path,
        setup: &Setup,
    ) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let socket = format!(
            "corvid-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let config = home.join(format!("{socket}.tmux.conf"));
        std::fs::write(&config, setup.config).unwrap();
        let script = format!(
            "env -i PATH=/usr/bin:/bin TERM=xterm-256color {} CORVID_HOME='{}' CORVID_UPSTREAM='{}' XAI_API_KEY=upstream-key '{CORVID}' chat --model grok --project '{}'; echo {EXITED} $? $(stty -a | grep -o -- '-\\?icanon' | head -1) $(stty -a | grep -ow -- '-\\?echo' | head -1); {}",
            setup.env,
            home.display(),
            upstream.base_url(),
            project.display(),
            setup.after
        );
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f"])
            .arg(&config)
            .args(["new-session", "-d", "-x"])
            .arg(setup.width.to_string())
            .arg("-y")
            .arg(setup.height.to_string())
            .arg(&script)
            .status()
            .unwrap();
        assert!(status.success());
        let pane = Self { socket };
        pane.wait_for("corvid chat ·", Duration::from_secs(20));
        pane
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
        std::thread::sleep(Duration::from_millis(150));
    }

    pub(crate) fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
        std::thread::sleep(Duration::from_millis(150));
    }

    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    /// The scrollback and the screen, oldest line first.
    pub(crate) fn history(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0", "-S", "-", "-E", "-"])
    }

    pub(crate) fn wait_for(&self, needle: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "`{needle}` did not appear within {limit:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asserts corvid is gone within a second, with a status of 0.
    pub(crate) fn assert_exits(&self) {
        let screen = self.wait_for(EXITED, Duration::from_secs(1));
        // Status 0, and the terminal is back in canonical (cooked) mode: `stty` says `icanon`,
        // not `-icanon` as in raw mode.
        assert!(screen.contains(&format!("{EXITED} 0 icanon")), "{screen}");
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}
