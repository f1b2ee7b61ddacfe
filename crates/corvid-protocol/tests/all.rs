//! corvid-protocol's integration tests: the wire shape of every frame, compatibility rules, and
//! the checked-in JSON Schema.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite {
    mod compat;
    mod kinds;
    mod reply;
    mod roundtrip;
    mod schema;
}
