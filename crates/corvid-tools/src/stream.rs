//! Streaming a running command's output to whoever shows progress (the agent turns it into
//! events), without letting a chatty command flood them.
//!
//! The output thread hands every chunk it reads to a [`Streamer`], which batches: it sends when
//! [`FLUSH_BYTES`] are waiting or [`FLUSH_EVERY`] has passed since the last send (the thread
//! waits for more output at most until then, see [`Streamer::due_in`]), and stops
//! streaming (with one note) after [`STREAM_CAP`] bytes. Sending never blocks the command: when
//! the receiver is behind, the batch waits for the next send, and a backlog past
//! [`BACKLOG_BYTES`] is dropped with a note. The tool result is unaffected: it is built from the
//! log file, not from the stream.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// Send when this much output waits.
const FLUSH_BYTES: usize = 8 * 1024;
/// Or when this long has passed since the last send.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The most output streamed for one command.
const STREAM_CAP: u64 = 1024 * 1024;
/// The most output held back while the receiver is behind.
const BACKLOG_BYTES: usize = 64 * 1024;

/// Where a running command's output goes, in pieces of text (stdout and stderr interleaved as
/// the command wrote them). Make one with a bounded channel: `OutputSink::new(sender)`.
#[derive(Debug, Clone)]
pub struct OutputSink {
    sender: mpsc::Sender<String>,
}

impl OutputSink {
    /// Pieces of output go to `sender`; when it is full they wait, and are dropped past a cap.
    pub fn new(sender: mpsc::Sender<String>) -> Self {
        Self { sender }
    }
}

/// Batches output for an [`OutputSink`]; lives on the output thread.
#[derive(Debug)]
pub(crate) struct Streamer {
    sink: OutputSink,
    pending: Vec<u8>,
    last_send: Instant,
    streamed: u64,
    capped: bool,
}

impl Streamer {
    pub(crate) fn new(sink: OutputSink) -> Self {
        Self {
            sink,
            pending: Vec::new(),
            // The first output goes out at once.
            last_send: Instant::now()
                .checked_sub(FLUSH_EVERY)
                .unwrap_or_else(Instant::now),
            streamed: 0,
            capped: false,
        }
    }

    /// Takes a chunk the command wrote.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.capped {
            return;
        }
        let room = (STREAM_CAP - self.streamed) as usize;
        let taken = &bytes[..bytes.len().min(room)];
        self.pending.extend_from_slice(taken);
        self.streamed += taken.len() as u64;
        if self.streamed >= STREAM_CAP {
            self.capped = true;
            self.flush(true);
            self.send(format!(
                "\n[… only the first {} of the output is shown while it runs; the result has the rest …]\n",
                crate::text::size(STREAM_CAP)
            ));
            return;
        }
        if self.pending.len() >= FLUSH_BYTES || self.last_send.elapsed() >= FLUSH_EVERY {
            self.flush(false);
        }
    }

    /// How long the output thread may wait for more output before what waits must go out;
    /// `None` when nothing waits.
    pub(crate) fn due_in(&self) -> Option<Duration> {
        (!self.pending.is_empty() && !self.capped)
            .then(|| FLUSH_EVERY.saturating_sub(self.last_send.elapsed()))
    }

    /// No more output came in time: send what waits.
    pub(crate) fn flush_due(&mut self) {
        self.flush(false);
    }

    /// The command's output ended: send what waits.
    pub(crate) fn finish(&mut self) {
        self.flush(true);
    }

    fn flush(&mut self, at_end: bool) {
        if self.pending.is_empty() {
            return;
        }
        // Hold back a multi-byte character cut at the end of the chunk, unless nothing follows.
        let cut = if at_end {
            self.pending.len()
        } else {
            complete_utf8_prefix(&self.pending)
        };
        if cut == 0 {
            return;
        }
        let text = String::from_utf8_lossy(&self.pending[..cut]).into_owned();
        match self.sink.sender.try_send(text) {
            Ok(()) => {
                self.pending.drain(..cut);
                self.last_send = Instant::now();
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                // Nobody listens any more; stop collecting.
                self.capped = true;
                self.pending.clear();
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                if self.pending.len() > BACKLOG_BYTES {
                    let skipped = self.pending.len();
                    self.pending.clear();
                    self.pending.extend_from_slice(
                        format!("\n[… {skipped} bytes of output skipped while the display caught up …]\n")
                            .as_bytes(),
                    );
                }
            }
        }
    }

    fn send(&self, text: String) {
        let _ = self.sink.sender.try_send(text);
    }
}

/// How many leading bytes of `bytes` end on a character boundary (invalid bytes count as
/// characters; only an incomplete sequence at the very end is held back).
fn complete_utf8_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        Err(_) => bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_back_a_cut_character_and_stop_at_the_cap() {
        let (sender, mut receiver) = mpsc::channel(1024);
        let mut streamer = Streamer::new(OutputSink::new(sender));
        streamer.last_send = Instant::now() - FLUSH_EVERY;
        let snowman = "☃".as_bytes();
        streamer.push(&[b'a', snowman[0]]);
        assert_eq!(receiver.try_recv().unwrap(), "a");
        streamer.last_send = Instant::now() - FLUSH_EVERY;
        streamer.push(&snowman[1..]);
        assert_eq!(receiver.try_recv().unwrap(), "☃");
        let big = vec![b'x'; STREAM_CAP as usize + 10];
        streamer.push(&big);
        streamer.push(b"more");
        streamer.finish();
        let mut total = 0;
        let mut notes = 0;
        while let Ok(text) = receiver.try_recv() {
            if text.contains("only the first") {
                notes += 1;
            } else {
                total += text.len();
            }
        }
        assert_eq!(
            total as u64,
            STREAM_CAP - 4,
            "the cap counts what was streamed before"
        );
        assert_eq!(notes, 1);
    }

    #[test]
    fn a_quiet_command_gets_its_waiting_output_out_when_due() {
        let (sender, mut receiver) = mpsc::channel(8);
        let mut streamer = Streamer::new(OutputSink::new(sender));
        streamer.push(b"first\n");
        assert_eq!(
            receiver.try_recv().unwrap(),
            "first\n",
            "the first output goes at once"
        );
        assert_eq!(streamer.due_in(), None);
        streamer.push(b"second\n");
        assert!(receiver.try_recv().is_err(), "batched within the interval");
        let due = streamer.due_in().unwrap();
        assert!(due <= FLUSH_EVERY);
        streamer.flush_due();
        assert_eq!(receiver.try_recv().unwrap(), "second\n");
    }

    #[test]
    fn a_full_receiver_never_blocks_and_a_backlog_is_dropped() {
        let (sender, mut receiver) = mpsc::channel(1);
        let mut streamer = Streamer::new(OutputSink::new(sender));
        for _ in 0..40 {
            streamer.push(&[b'y'; FLUSH_BYTES]);
        }
        streamer.finish();
        assert_eq!(receiver.try_recv().unwrap().len(), FLUSH_BYTES);
        assert!(receiver.try_recv().is_err(), "the channel holds one batch");
        assert!(streamer.pending.len() <= BACKLOG_BYTES + 128);
    }
}
