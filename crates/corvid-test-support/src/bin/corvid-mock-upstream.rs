//! Runs the mock upstream as a process (for SDK tests written in other languages): prints its
//! base URL on the first line of stdout, then serves until killed.

use std::io::Write;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let upstream = corvid_test_support::MockUpstream::start().await;
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{}", upstream.base_url());
    let _ = stdout.flush();
    std::future::pending::<()>().await;
}
