//! corvid-tools through its public API, in temporary directories only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite {
    mod bash;
    mod custom;
    mod edit;
    mod files;
    mod paths;
    mod process;
    mod read;
    mod read_only;
    mod registry;
    mod sandbox;
    mod search;
    mod support;
    mod write;
}
