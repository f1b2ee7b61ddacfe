//! Two `corvid serve` instances on one PostgreSQL with Redis in front (the servers
//! `scripts/team-services` starts; a test binary of its own, since it flushes and stops the
//! shared Redis): a burst against a key capped at 10 estimates admits at most 10 even with
//! Redis flushed in the middle of it; with Redis stopped, PostgreSQL alone keeps the cap; after
//! Redis returns, no false 429; every admitted request has its row.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use std::time::Duration;

use team::*;

fn redis(action: &str) {
    let line = if action == "start" {
        std::env::var("CORVID_TEST_REDIS_START").unwrap()
    } else {
        format!(
            "{} {action}",
            std::env::var("CORVID_TEST_REDIS_CLI").unwrap()
        )
    };
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{line} >/dev/null 2>&1")])
        .status()
        .unwrap();
    assert!(
        status.success() || action.starts_with("shutdown"),
        "redis {action}"
    );
}

/// Sends one request with `key` to `server` and waits until its hold is settled; the status.
async fn one_settled(
    http: &reqwest::Client,
    server: &Server,
    key: &str,
    db: &tokio_postgres::Client,
) -> u16 {
    // Streamed, like the burst's (the mock still has its unused streams queued).
    let response = chat(http, server, Some(key), 10, true).await;
    let status = response.status().as_u16();
    response.text().await.unwrap();
    settled(db, "key:bob", Duration::from_secs(5)).await;
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_flushed_or_stopped_never_admits_past_the_cap() {
    let Ok(redis_url) = std::env::var("CORVID_TEST_REDIS_URL") else {
        eprintln!("skipped: CORVID_TEST_REDIS_URL is not set (run under scripts/team-services)");
        return;
    };
    let Some(team) = Team::migrated(&format!("redis_url = \"{redis_url}\"")).await else {
        return;
    };
    let (home, database, upstream) = (team.home(), team.database.clone(), &team.upstream);
    let estimate = estimate(10, true);
    let usd = |micros: i64| format!("{:.6}", micros as f64 / 1e6);
    let alice = create_key(
        home,
        &database,
        &["--name", "alice", "--budget-usd", &usd(10 * estimate)],
    );
    let a = start_server(home, &database).await;
    let b = start_server(home, &database).await;
    let http = client();
    let db = connect(&database).await;

    // 100 streams across both, Redis flushed while they are being admitted.
    for _ in 0..100 {
        upstream.enqueue(
            "/v1/chat/completions",
            slow_stream(Duration::from_millis(100), 4),
        );
    }
    let mut tasks = Vec::new();
    for index in 0..100 {
        let http = http.clone();
        let url = [&a, &b][index % 2].url("/v1/chat/completions");
        let alice = alice.clone();
        tasks.push(tokio::spawn(async move {
            let response = http
                .post(url)
                .bearer_auth(alice)
                .json(&chat_body(10, true))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            (status, text)
        }));
        if index == 50 {
            redis("FLUSHALL");
        }
    }
    let mut admitted = 0i64;
    for task in tasks {
        let (status, text) = task.await.unwrap();
        match status {
            200 => admitted += 1,
            429 => assert!(text.contains("key:alice"), "{text}"),
            other => panic!("{other}: {text}"),
        }
    }
    assert!((1..=10).contains(&admitted), "admitted {admitted} of 100");
    let spent = settled(&db, "key:alice", Duration::from_secs(5)).await;
    assert!(spent <= 10 * estimate, "spent {spent} over the cap");
    assert_eq!(spent, admitted * 5_012, "one charge per admitted request");

    // bob: room for exactly 7 requests one after another (each spends 5,012 of a 10,0xx
    // estimate), whatever Redis does in between.
    let bob = create_key(
        home,
        &database,
        &["--name", "bob", "--budget-usd", &usd(4 * estimate)],
    );
    let mut statuses = Vec::new();
    for index in 0..2 {
        statuses.push(one_settled(&http, [&a, &b][index % 2], &bob, &db).await);
    }
    redis("shutdown nosave");
    for index in 0..2 {
        statuses.push(one_settled(&http, [&a, &b][index % 2], &bob, &db).await);
    }
    redis("start");
    // Past the instances' 1 s backoff from Redis.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for index in 0..6 {
        statuses.push(one_settled(&http, [&a, &b][index % 2], &bob, &db).await);
    }
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 200, 200, 200, 429, 429, 429],
        "7 fit under bob's cap, before, during and after Redis' absence"
    );
    a.stop();
    b.stop();
    let rows: i64 = db
        .query_one("SELECT count(*) FROM usage_events WHERE status = 200", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, admitted + 7, "no row lost");
}
