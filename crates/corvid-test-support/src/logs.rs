//! Everything a test binary logs, from any thread, for tests that check what reaches a log line
//! (no secret, no forged line). The subscriber is the process's global one, installed once per
//! binary: a thread-scoped one misses callsites other tests already registered.

use std::sync::{Arc, Mutex, OnceLock};

/// The logs captured so far.
#[derive(Clone)]
pub struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// What was logged, as text.
    pub fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Starts capturing, at `filter` (an `EnvFilter` directive such as `debug` or `trace`), unless
/// this binary already does: the first call's filter holds for the whole binary.
pub fn capture(filter: &str) -> CapturedLogs {
    static LOGS: OnceLock<CapturedLogs> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = CapturedLogs(Arc::default());
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_ansi(false)
            .with_writer(move || Sink(Arc::clone(&sink.0)))
            .finish();
        // Only this function installs one, once (OnceLock); a test binary that set its own
        // subscriber elsewhere is a mistake worth failing loudly on.
        #[allow(clippy::expect_used)]
        tracing::subscriber::set_global_default(subscriber)
            .expect("another global log subscriber was installed before capture()");
        logs
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
