//! One timer always pending on the server's runtime, so that arming a request's timeout does
//! not wake the runtime.
//!
//! tokio's timer driver writes to the runtime's wake-up eventfd whenever a new timer expires
//! before every timer already set, because its sleep must be cut shorter. With no other timer,
//! that is every request: the upstream header timeout is armed as the request goes out. The
//! write, and the extra turn of the event loop it causes, cost about 3 µs per request on the
//! bench with every process on one core. A timer that fires every few seconds is always earlier
//! than a request's (600 s by default, 20 s for edit predictions), so arming those needs no
//! system call. A shorter configured timeout only makes this anchor useless, not wrong.

use std::time::Duration;

/// Shorter than every per-request timeout corvid sets by default.
const PERIOD: Duration = Duration::from_secs(5);

/// Runs until dropped or aborted.
pub(crate) async fn hold() {
    let mut ticks = tokio::time::interval(PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
    }
}
