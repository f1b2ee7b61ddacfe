//! Gateway tests: the real router on a loopback socket, against mock upstreams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite {
    mod caching;
    mod completions;
    mod crossing;
    mod embeddings;
    mod errors;
    mod failover_retries;
    mod faults;
    mod harness;
    mod ledger;
    mod local;
    mod model_metadata;
    mod oauth;
    mod pipeline;
    mod routed_harness;
    mod routes;
    mod routing;
    mod security;
    mod streaming;
    mod translate;
    mod zed;
}
