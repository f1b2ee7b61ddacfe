//! Runs the mock Zed cloud as a process (for SDK tests written in other languages): prints its
//! base URL on the first line of stdout, then serves until killed.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    corvid_test_support::zed_cloud::serve_as_process().await;
}
