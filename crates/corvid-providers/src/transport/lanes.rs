//! Lanes: several pooled hyper clients behind one direct transport, so that streams past what
//! one HTTP/2 connection may carry go out on another connection instead of queueing.
//!
//! hyper-util's pooled client keeps one HTTP/2 connection per host and, once the peer's
//! SETTINGS_MAX_CONCURRENT_STREAMS is reached on it, makes further requests wait until a stream
//! ends rather than opening a second connection (hyperium/hyper#2197, #3623). LLM replies
//! stream for minutes, so a gateway holding a provider's limit of them (~100-256) would queue
//! the next request behind them. A lane is a whole client with its own pool, hence its own
//! connection per host; a request takes the first lane with fewer than `limit` requests in
//! flight, and a lane is opened only when every lane is full. A provider with little traffic
//! keeps one lane, one client and one connection.
//!
//! Over HTTP/1 lanes are harmless: one lane's pool already opens a connection per concurrent
//! request, so a further lane only means that connections beyond `limit` sit in another pool.
//!
//! Lanes are never closed: an unused lane is a client with an empty pool (its connections close
//! after the pool's idle timeout), and a burst that needed it is likely to come back.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::{HyperClient, direct_client};

/// Requests in flight per lane before the next lane is used. RFC 9113 §5.1.2 recommends that
/// a server allow no fewer than 100 concurrent streams, and providers advertise ~100-256
/// (nginx's default is 128, hyper's 200), so a lane stays within one connection's limit and
/// never waits for a stream to end. Above the limit would also fail requests, not only delay
/// them: on a new connection the client sends before it has read the peer's SETTINGS, and the
/// upstream refuses the streams past its limit (REFUSED_STREAM; hyper-util does not retry it).
pub(super) const DEFAULT_LIMIT: usize = 100;

/// The lanes of one direct transport, shared by its clones.
pub(super) struct Lanes {
    limit: usize,
    connect_timeout: Duration,
    /// The process-wide TLS configuration (or a test's), cloned into each new lane.
    tls: rustls::ClientConfig,
    /// Made with the transport: the only lane most providers ever use, reached without a lock.
    first: Arc<HyperClient>,
    /// Lanes opened when every earlier one was full, in order. Locked only when the first lane
    /// is full, and then briefly (a scan and, at most, building a client, which does no I/O).
    more: Mutex<Vec<Arc<HyperClient>>>,
}

/// A request in flight on a lane: holds the lane's client; dropping it frees the place.
///
/// The count of requests in flight on a lane is the lane's `Arc` count less the one `Lanes`
/// holds: entering is the `Arc` clone the body needs anyway to keep its lane alive, so the hot
/// path is one atomic increment and one decrement, with no counter beside it and no allocation.
pub(super) struct InFlight(Arc<HyperClient>);

impl InFlight {
    /// The lane's client, to send the request on.
    pub(super) fn client(&self) -> &HyperClient {
        &self.0
    }
}

impl Lanes {
    /// Lanes of clients with `connect_timeout` and `tls`, the first made now; at most `limit`
    /// requests in flight per lane (at least 1).
    pub(super) fn new(connect_timeout: Duration, tls: rustls::ClientConfig, limit: usize) -> Self {
        let first = Arc::new(direct_client(connect_timeout, tls.clone()));
        Self {
            limit: limit.max(1),
            connect_timeout,
            tls,
            first,
            more: Mutex::new(Vec::new()),
        }
    }

    /// Takes a place on the first lane with room, opening a lane when all are full.
    pub(super) fn enter(&self) -> InFlight {
        if let Some(in_flight) = self.try_enter(&self.first) {
            return in_flight;
        }
        self.enter_past_first()
    }

    #[cold]
    fn enter_past_first(&self) -> InFlight {
        let mut more = self.more.lock();
        for lane in more.iter() {
            if let Some(in_flight) = self.try_enter(lane) {
                return in_flight;
            }
        }
        let lane = Arc::new(direct_client(self.connect_timeout, self.tls.clone()));
        let in_flight = InFlight(Arc::clone(&lane));
        more.push(lane);
        in_flight
    }

    /// A place on `lane` if it has fewer than `limit` requests in flight.
    ///
    /// The clone comes first and the count is read after it, so two requests racing for the
    /// last place cannot both take it: the later increment is seen by both reads. A read can
    /// also see a place being tried by a request that will give it back — then this request
    /// moves on to the next lane, which is harmless.
    fn try_enter(&self, lane: &Arc<HyperClient>) -> Option<InFlight> {
        let in_flight = InFlight(Arc::clone(lane));
        // `Lanes` holds one reference; every other one is an `InFlight`.
        (Arc::strong_count(lane) - 1 <= self.limit).then_some(in_flight)
    }

    /// How many lanes are open.
    #[cfg(test)]
    pub(super) fn count(&self) -> usize {
        1 + self.more.lock().len()
    }

    /// Requests in flight on each lane, in order.
    #[cfg(test)]
    pub(super) fn in_flight(&self) -> Vec<usize> {
        std::iter::once(&self.first)
            .chain(self.more.lock().iter())
            .map(|lane| Arc::strong_count(lane) - 1)
            .collect()
    }
}

impl fmt::Debug for Lanes {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Lanes")
            .field("limit", &self.limit)
            .field("lanes", &(1 + self.more.lock().len()))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(limit: usize) -> Lanes {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("aws-lc-rs supports the default versions")
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        Lanes::new(Duration::from_secs(1), tls, limit)
    }

    #[test]
    fn one_lane_until_it_is_full() {
        let lanes = lanes(2);
        assert_eq!(
            lanes.count(),
            1,
            "the first lane is made with the transport"
        );
        let a = lanes.enter();
        let b = lanes.enter();
        assert_eq!(lanes.count(), 1);
        assert_eq!(lanes.in_flight(), [2]);
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let c = lanes.enter();
        assert_eq!(lanes.count(), 2, "a lane is opened when the first is full");
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        assert_eq!(lanes.in_flight(), [2, 1]);
        let _d = lanes.enter();
        let _e = lanes.enter();
        assert_eq!(lanes.in_flight(), [2, 2, 1]);
        drop(c);
        assert_eq!(lanes.in_flight(), [2, 1, 1], "dropping frees the place");
        drop((a, b));
        assert_eq!(lanes.in_flight(), [0, 1, 1]);
    }

    #[test]
    fn the_first_lane_with_room_is_taken_and_lanes_stay() {
        let lanes = lanes(1);
        let held: Vec<InFlight> = (0..3).map(|_| lanes.enter()).collect();
        assert_eq!(lanes.in_flight(), [1, 1, 1]);
        drop(held);
        assert_eq!(lanes.in_flight(), [0, 0, 0]);
        let again = lanes.enter();
        assert!(
            Arc::ptr_eq(&again.0, &lanes.first),
            "back to the first lane"
        );
        let second = lanes.enter();
        assert_eq!(lanes.in_flight(), [1, 1, 0]);
        assert_eq!(lanes.count(), 3, "no lane is opened while one has room");
        drop((again, second));
    }

    #[test]
    fn a_limit_of_zero_is_one() {
        let lanes = lanes(0);
        let _a = lanes.enter();
        let _b = lanes.enter();
        assert_eq!(lanes.in_flight(), [1, 1]);
    }

    #[test]
    fn racing_threads_never_exceed_the_limit() {
        use std::collections::HashMap;
        let lanes = Arc::new(lanes(3));
        // Holders per lane, counted by the test itself: registered after entering and removed
        // before leaving, so it never counts more than really hold a place.
        let holders = Arc::new(Mutex::new(HashMap::<usize, usize>::new()));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (lanes, holders) = (Arc::clone(&lanes), Arc::clone(&holders));
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        let held = [lanes.enter(), lanes.enter()];
                        for place in &held {
                            let mut holders = holders.lock();
                            let count = holders.entry(Arc::as_ptr(&place.0) as usize).or_default();
                            *count += 1;
                            assert!(*count <= 3, "{count} holders on a lane of 3");
                        }
                        for place in &held {
                            *holders
                                .lock()
                                .entry(Arc::as_ptr(&place.0) as usize)
                                .or_default() -= 1;
                        }
                        drop(held);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no thread panicked");
        }
        assert!(lanes.in_flight().iter().all(|&count| count == 0));
        // A lane is opened only when those past the first are full (read under the lock), and
        // at most 15 other places are held then: 5 full lanes past the first, the first, one new.
        assert!(lanes.count() <= 7, "{} lanes", lanes.count());
    }
}
