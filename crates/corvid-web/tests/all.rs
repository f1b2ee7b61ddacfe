//! corvid-web through its public API. Every server is a local one on a loopback port, and every
//! connection goes through a test network that refuses anything but loopback: a guard bug shows
//! up as a failed assertion, never as traffic to a private or public address.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite {
    mod agent;
    mod fetch;
    mod search;
    mod support;
}
