//! Every log line of every crate, at trace level, through a sign-in, a session and a refresh
//! against the OAuth fixture: no token in any of them. A test binary of its own, so the
//! subscriber is the process's global one from the start (a thread's scoped subscriber misses
//! the callsites other tests already hit).

// Tests fail loudly by design; the shared helpers serve the other binary's tests too, and
// not all of them are used here.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

mod suite {
    mod oauth_logs;
    mod oauth_support;
    mod support;
}
