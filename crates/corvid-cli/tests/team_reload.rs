//! A settings reload in team mode keeps the store's connections: `corvid serve` on PostgreSQL
//! follows edits of config.toml (new aliases, here) while the PostgreSQL sessions it opened at
//! the start — the pool of keys, budgets, the ledger and conversations, and the LISTEN session
//! that hears revocations — stay the same backends, and requests after each reload are still
//! checked, held and recorded.
//! `scripts/team-services cargo test -p corvid-cli --test team_reload`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::json;
use team::*;

/// The backend pids of the sessions other than `db`'s own on its database.
async fn sessions(db: &tokio_postgres::Client) -> BTreeSet<i32> {
    db.query(
        "SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
        &[],
    )
    .await
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect()
}

/// A chat completion of `model` with `key`: the status.
async fn ask(http: &reqwest::Client, server: &Server, key: &str, model: &str) -> u16 {
    http.post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": model, "max_tokens": 10,
                      "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_in_team_mode_keeps_the_store_connections() {
    let Some(team) = Team::migrated("").await else {
        return;
    };
    let (home, database) = (team.home(), team.database.clone());
    let key = create_key(
        home,
        &database,
        &["--name", "alice", "--budget-usd", "5", "--period", "day"],
    );
    let server = start_server(home, &database).await;
    let http = client();
    let db = connect(&database).await;
    for _ in 0..3 {
        assert_eq!(ask(&http, &server, &key, MODEL).await, 200);
    }
    let before = sessions(&db).await;
    assert!(!before.is_empty(), "serve holds no PostgreSQL session");

    let config = home.join("config.toml");
    let original = std::fs::read_to_string(&config).unwrap();
    for round in 1..=3 {
        // A new alias each round: once it answers, the reload is in use.
        let alias = format!("fast-{round}");
        std::fs::write(
            &config,
            format!("{original}[aliases]\n\"{alias}\" = \"{MODEL}\"\n"),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        while ask(&http, &server, &key, &alias).await != 200 {
            assert!(Instant::now() < deadline, "the alias {alias} never applied");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    let after = sessions(&db).await;
    assert!(
        before.is_subset(&after),
        "a reload closed PostgreSQL sessions: {before:?} before, {after:?} after"
    );
    // Nor opened a second set beside them (a pool of its own per reload).
    assert!(
        after.len() <= before.len() + 2,
        "three reloads opened sessions: {before:?} before, {after:?} after"
    );
    // Every admitted request is one ledger row, charged to the key's budget.
    let recorded = Instant::now();
    loop {
        let rows: i64 = db
            .query_one("SELECT count(*) FROM usage_events WHERE status = 200", &[])
            .await
            .unwrap()
            .get(0);
        let (spent, reserved) = scope_totals(&db, "key:alice").await;
        if rows >= 6 && reserved == 0 {
            assert!(spent > 0);
            break;
        }
        assert!(
            recorded.elapsed() < Duration::from_secs(10),
            "{rows} rows, {spent} spent, {reserved} held"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.stop();
}
