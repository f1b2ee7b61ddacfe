//! PostgreSQL stops under two running instances (the server `scripts/team-services` started;
//! a test binary of its own, so no other test shares the outage): budgeted requests fail
//! closed fast, readiness goes red while liveness stays green, both instances recover without
//! a restart, and no usage row is lost or counted twice.
//!
//! The outage lasts the 30 s ([`OUTAGE`]): long enough that every pooled connection
//! is dead and the key cache (500 ms), the pool checkout (750 ms), the ledger writer's retries
//! and the sweeper's dead-instance window (5 s) all run out while PostgreSQL is away. Through
//! it, both instances keep answering budgeted requests 503 within a second (nothing piles up
//! behind the dead pool). It adds about 30 s to the suite, which CI affords.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use std::time::{Duration, Instant};

use team::*;

/// How long PostgreSQL stays stopped (the figure).
const OUTAGE: Duration = Duration::from_secs(30);

/// How often, during the outage, both instances are asked again.
const PROBE_EVERY: Duration = Duration::from_secs(5);

/// A budgeted request through `server` fails closed at once: 503 with `Retry-After`.
async fn fails_closed_fast(http: &reqwest::Client, server: &Server, key: &str) {
    let asked = Instant::now();
    let response = chat(http, server, Some(key), 10, false).await;
    let took = asked.elapsed();
    assert_eq!(response.status(), 503);
    assert!(response.headers().get("retry-after").is_some());
    assert!(
        took < Duration::from_secs(1),
        "a budgeted request hung {took:?}"
    );
}

fn pg_ctl(action: &str) {
    let line = std::env::var("CORVID_TEST_PG_CTL").unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{line} {action} >/dev/null")])
        .status()
        .unwrap();
    assert!(status.success(), "pg_ctl {action} failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_fails_closed_and_recovers_without_losing_a_row() {
    let Some(team) = Team::migrated("").await else {
        return;
    };
    let (home, database, upstream) = (team.home(), team.database.clone(), &team.upstream);
    let key = create_key(home, &database, &["--name", "erin", "--budget-usd", "50"]);
    let a = start_server(home, &database).await;
    let b = start_server(home, &database).await;
    let http = client();
    let mut ok = 0i64;
    for index in 0..20 {
        let server = if index % 2 == 0 { &a } else { &b };
        assert_eq!(
            chat(&http, server, Some(&key), 10, false).await.status(),
            200
        );
        ok += 1;
    }
    // A stream that ends during the outage: its row must land once PostgreSQL is back.
    upstream.enqueue(
        "/v1/chat/completions",
        slow_stream(Duration::from_millis(300), 8),
    );
    let mut stream = chat(&http, &a, Some(&key), 10, true).await;
    assert_eq!(stream.status(), 200);
    stream.chunk().await.unwrap();
    let streaming = tokio::spawn(async move { while let Ok(Some(_)) = stream.chunk().await {} });

    pg_ctl("stop");
    let stopped = Instant::now();
    // Past the key cache (500 ms): both the lookup and the hold need the store.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for server in [&a, &b] {
        fails_closed_fast(&http, server, &key).await;
        assert_eq!(
            http.get(server.url("/readyz"))
                .send()
                .await
                .unwrap()
                .status(),
            503
        );
        assert_eq!(
            http.get(server.url("/livez"))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    streaming.await.unwrap();
    // Through the whole outage, neither instance starts hanging (a pool wedged on dead
    // connections, a writer retrying in a tight loop).
    let mut probes = 0;
    while stopped.elapsed() + PROBE_EVERY < OUTAGE {
        tokio::time::sleep(PROBE_EVERY).await;
        for server in [&a, &b] {
            fails_closed_fast(&http, server, &key).await;
        }
        probes += 1;
    }
    eprintln!("{probes} probes during the outage, each 503 within a second");
    tokio::time::sleep(OUTAGE.saturating_sub(stopped.elapsed())).await;
    pg_ctl("start");
    ok += 1; // the stream
    let restarted = Instant::now();
    for server in [&a, &b] {
        loop {
            let status = chat(&http, server, Some(&key), 10, false).await.status();
            if status == 200 {
                ok += 1;
                break;
            }
            assert_eq!(status, 503);
            assert!(restarted.elapsed() < Duration::from_secs(10), "no recovery");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(
            http.get(server.url("/readyz"))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    eprintln!(
        "both instances serving again {:?} after PostgreSQL restarted",
        restarted.elapsed()
    );
    a.stop();
    b.stop();
    let db = connect(&database).await;
    let row = db
        .query_one(
            "SELECT count(*), count(DISTINCT request_id), COALESCE(sum(cost_micros), 0)::bigint
             FROM usage_events WHERE status = 200",
            &[],
        )
        .await
        .unwrap();
    let (rows, distinct, cost): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(
        (rows, distinct),
        (ok, ok),
        "one row for each answered request"
    );
    let budget = db
        .query_one(
            "SELECT spent, reserved FROM budgets WHERE scope = 'key:erin'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(budget.get::<_, i64>(1), 0, "no hold left");
    assert_eq!(
        budget.get::<_, i64>(0),
        cost,
        "the budget spent what the rows cost"
    );
}
