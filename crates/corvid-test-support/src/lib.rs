//! Local stand-ins for everything corvid talks to, for tests and benchmarks. Every mock listens
//! on an ephemeral loopback port chosen by the OS and records what it received.

pub mod oauth;
