//! Gateway tests: the real router on a loopback socket, against mock upstreams.

mod suite {
    mod completions;
    mod errors;
    mod harness;
    mod security;
    mod streaming;
}
