//! Team mode on a real PostgreSQL: `scripts/team-services cargo test -p corvid-store --test
//! postgres` (scripts/test runs it so). Each test makes a database of its own. Without
//! `CORVID_TEST_POSTGRES_URL` the tests say so and pass: only a machine without PostgreSQL
//! runs them that way.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::Duration;

mod pg_support;

use corvid_store::pg::{PgLedger, PgStore, RedisCounter, RedisFront};
use corvid_store::team::{
    BudgetSpec, Hold, KeyCache, KeySpec, Period, Refusal, TeamSpec, TeamStore, UsageBy,
    new_request_id,
};
use corvid_store::{
    Billing, Outcome, PriceMicros, RecorderOptions, StoreError, Tokens, UsageRecord, UsageRecorder,
    now_ms,
};
use pg_support::fresh_database;

async fn migrated(url: &str) -> PgStore {
    let store = PgStore::connect(url, 16).unwrap();
    store.migrate().await.unwrap();
    store
}

fn hold(key: i64, budgets: Vec<i64>, amount: i64, instance: &str) -> Hold {
    Hold {
        request_id: new_request_id(),
        key_id: key,
        budget_ids: budgets,
        amount_micros: amount,
        tokens: 100,
        rpm: None,
        daily_requests: None,
        tpm: None,
        instance: instance.to_owned(),
        lease: Duration::from_secs(60),
    }
}

fn billed(request_id: &str, key: i64, team: Option<i64>, cost: i64) -> UsageRecord {
    UsageRecord {
        at: now_ms(),
        front_end: "gateway".into(),
        route: "chat_completions".into(),
        inbound: "openai-chat".into(),
        provider: "mock".into(),
        model: "m".into(),
        status: 200,
        outcome: Outcome::Ok,
        latency_ms: 5,
        ttfb_ms: Some(2),
        tokens: Tokens {
            input: 10,
            output: 5,
            ..Tokens::default()
        },
        attempts: 1,
        prompt: None,
        key_index: None,
        rule: None,
        billing: Some(Billing {
            request_id: request_id.to_owned(),
            key_id: Some(key),
            team_id: team,
            price: PriceMicros::default(),
            cost_micros: cost,
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_migrations_at_once_apply_once_and_serve_checks_the_version() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = PgStore::connect(&url, 4).unwrap();
    match store.check_schema().await {
        Err(StoreError::SchemaMismatch { found: 0, .. }) => {}
        other => panic!("an empty database must be refused, got {other:?}"),
    }
    let (one, two) = (
        PgStore::connect(&url, 2).unwrap(),
        PgStore::connect(&url, 2).unwrap(),
    );
    let (first, second) = tokio::join!(one.migrate(), two.migrate());
    let (first, second) = (first.unwrap(), second.unwrap());
    let all: Vec<i64> = (1..=PgStore::needed_version()).collect();
    assert!(
        (first == all && second.is_empty()) || (second == all && first.is_empty()),
        "one applies, one finds nothing: {first:?} {second:?}"
    );
    store.check_schema().await.unwrap();
    // A database migrated by a newer corvid is refused too.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute("INSERT INTO corvid_schema (version) VALUES (999)", &[])
        .await
        .unwrap();
    let refused = store.check_schema().await.unwrap_err().to_string();
    assert!(refused.contains("run `corvid migrate`"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_holds_on_two_instances_admit_exactly_the_cap() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let a = migrated(&url).await;
    let b = PgStore::connect(&url, 16).unwrap();
    let estimate = 3_000;
    let (key, _) = a
        .create_key(&KeySpec {
            name: "alice".into(),
            budget: Some(BudgetSpec {
                cap_micros: 10 * estimate,
                period: Period::Month,
            }),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let budget = key.budgets[0].id;
    let mut tasks = Vec::new();
    for index in 0..100 {
        let store: Arc<dyn TeamStore> =
            Arc::new(if index % 2 == 0 { a.clone() } else { b.clone() });
        let hold = hold(key.id, vec![budget], estimate, "i");
        tasks.push(tokio::spawn(
            async move { store.hold(&hold).await.unwrap() },
        ));
    }
    let mut admitted = 0;
    for task in tasks {
        match task.await.unwrap() {
            None => admitted += 1,
            Some(Refusal::Budget { scope, .. }) => assert_eq!(scope, "key:alice"),
            Some(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(admitted, 10);
    let state = &a.budgets().await.unwrap()[0];
    assert_eq!(state.reserved_micros, 10 * estimate);
    assert!(state.spent_micros + state.reserved_micros <= state.cap_micros);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_cap_holds_across_keys_and_refuses_a_key_with_room() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = migrated(&url).await;
    store
        .create_team(&TeamSpec {
            name: "eng".into(),
            budget: Some(BudgetSpec {
                cap_micros: 5_000,
                period: Period::Day,
            }),
        })
        .await
        .unwrap();
    let mut keys = Vec::new();
    for name in ["k1", "k2"] {
        let (key, _) = store
            .create_key(&KeySpec {
                name: name.into(),
                team: Some("eng".into()),
                budget: Some(BudgetSpec {
                    cap_micros: 1_000_000,
                    period: Period::Day,
                }),
                ..KeySpec::default()
            })
            .await
            .unwrap();
        keys.push(key);
    }
    let ids = |key: &corvid_store::team::KeyInfo| key.budgets.iter().map(|b| b.id).collect();
    let mut admitted = 0;
    for round in 0..10 {
        let key = &keys[round % 2];
        if store
            .hold(&hold(key.id, ids(key), 1_000, "i"))
            .await
            .unwrap()
            .is_none()
        {
            admitted += 1;
        }
    }
    assert_eq!(
        admitted, 5,
        "the team's 5,000 µ$ admit five 1,000 µ$ holds in all"
    );
    match store
        .hold(&hold(keys[0].id, ids(&keys[0]), 1_000, "i"))
        .await
        .unwrap()
    {
        Some(Refusal::Budget { scope, .. }) => assert_eq!(scope, "team:eng"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_settles_each_request_once_and_rolls_up_to_the_micro_dollar() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = migrated(&url).await;
    let (key, _) = store
        .create_key(&KeySpec {
            name: "bob".into(),
            budget: Some(BudgetSpec {
                cap_micros: 1_000_000_000,
                period: Period::Month,
            }),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let budget = key.budgets[0].id;
    let recorder = UsageRecorder::spawn_postgres(
        PgLedger::new(store.clone(), tokio::runtime::Handle::current()),
        RecorderOptions::default(),
    )
    .unwrap();
    let mut records = Vec::new();
    let mut expected = 0;
    for index in 0..500 {
        let held = hold(key.id, vec![budget], 5_000, "i");
        assert!(store.hold(&held).await.unwrap().is_none());
        let cost = 1_000 + index;
        expected += cost;
        records.push(billed(&held.request_id, key.id, None, cost));
    }
    for record in &records {
        recorder.record(record.clone());
    }
    let flushing = recorder.clone();
    tokio::task::spawn_blocking(move || flushing.flush())
        .await
        .unwrap()
        .unwrap();
    // The same rows again (a batch retried after a lost commit): nothing counts twice.
    for record in &records {
        recorder.record(record.clone());
    }
    let flushing = recorder.clone();
    tokio::task::spawn_blocking(move || flushing.flush())
        .await
        .unwrap()
        .unwrap();
    let state = &store.budgets().await.unwrap()[0];
    assert_eq!(state.reserved_micros, 0);
    assert_eq!(state.spent_micros, expected);
    let by_key = store.usage_by(UsageBy::Key, 0).await.unwrap();
    assert_eq!(by_key.len(), 1);
    assert_eq!(by_key[0].group, "bob");
    assert_eq!(by_key[0].requests, 500);
    assert_eq!(by_key[0].cost_micros, expected);
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(*), count(DISTINCT request_id), sum(cost_micros)::bigint FROM usage_events",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 500);
    assert_eq!(row.get::<_, i64>(1), 500);
    assert_eq!(row.get::<_, i64>(2), expected);
    drop(recorder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_instances_holds_are_swept_and_revocations_reach_the_cache() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = migrated(&url).await;
    let (key, secret) = store
        .create_key(&KeySpec {
            name: "carol".into(),
            budget: Some(BudgetSpec {
                cap_micros: 100_000,
                period: Period::Day,
            }),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let budget = key.budgets[0].id;
    store.heartbeat("alive").await.unwrap();
    store.heartbeat("dead").await.unwrap();
    assert!(
        store
            .hold(&hold(key.id, vec![budget], 7_000, "alive"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .hold(&hold(key.id, vec![budget], 9_000, "dead"))
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    store.heartbeat("alive").await.unwrap();
    assert_eq!(store.sweep(Duration::from_secs(1)).await.unwrap(), 1);
    let state = &store.budgets().await.unwrap()[0];
    assert_eq!(
        state.reserved_micros, 7_000,
        "the live instance's hold stays"
    );
    assert_eq!(
        state.spent_micros, 9_000,
        "the dead one's is settled at its estimate"
    );

    let cache = KeyCache::new(Arc::new(store.clone()), Duration::from_millis(300));
    let other = KeyCache::new(Arc::new(store.clone()), Duration::from_millis(300));
    let presented = secret.reveal();
    assert!(cache.lookup(&presented).await.unwrap().is_some());
    assert!(other.lookup(&presented).await.unwrap().is_some());
    assert!(
        cache
            .lookup(&format!("{presented}x"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.revoke_key("carol").await.unwrap());
    let started = std::time::Instant::now();
    while other.lookup(&presented).await.unwrap().is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "revocation not seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "revocation seen by another cache after {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_requests_lease_is_renewed_and_a_failed_attempt_keeps_the_hold() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = migrated(&url).await;
    let (key, _) = store
        .create_key(&KeySpec {
            name: "erin".into(),
            budget: Some(BudgetSpec {
                cap_micros: 100_000,
                period: Period::Day,
            }),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let budget = key.budgets[0].id;
    store.heartbeat("i").await.unwrap();
    // Two holds with a 1 s lease: one request still running (renewed), one not.
    let mut running = hold(key.id, vec![budget], 7_000, "i");
    running.lease = Duration::from_secs(1);
    let mut stale = hold(key.id, vec![budget], 9_000, "i");
    stale.lease = Duration::from_secs(1);
    for held in [&running, &stale] {
        assert!(store.hold(held).await.unwrap().is_none());
    }
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        store.heartbeat("i").await.unwrap();
        store
            .renew("i", &[running.request_id.clone()], Duration::from_secs(1))
            .await
            .unwrap();
    }
    assert_eq!(store.sweep(Duration::from_secs(5)).await.unwrap(), 1);
    let state = &store.budgets().await.unwrap()[0];
    assert_eq!((state.spent_micros, state.reserved_micros), (9_000, 7_000));

    // The running request's first attempt fails (outcome error, a routing fallback follows):
    // charged, but the hold stays until the attempt that ends the request.
    let recorder = UsageRecorder::spawn_postgres(
        PgLedger::new(store.clone(), tokio::runtime::Handle::current()),
        RecorderOptions::default(),
    )
    .unwrap();
    let mut failed = billed(&running.request_id, key.id, None, 0);
    failed.outcome = Outcome::Error;
    failed.status = 503;
    recorder.record(failed);
    let flushing = recorder.clone();
    tokio::task::spawn_blocking(move || flushing.flush())
        .await
        .unwrap()
        .unwrap();
    let state = &store.budgets().await.unwrap()[0];
    assert_eq!(
        state.reserved_micros, 7_000,
        "the fallback is still covered"
    );
    recorder.record(billed(
        &format!("{}.1", running.request_id),
        key.id,
        None,
        2_500,
    ));
    let flushing = recorder.clone();
    tokio::task::spawn_blocking(move || flushing.flush())
        .await
        .unwrap()
        .unwrap();
    let state = &store.budgets().await.unwrap()[0];
    assert_eq!((state.spent_micros, state.reserved_micros), (11_500, 0));
}

/// `count` concurrent holds of `key` (a quota of 4 a day, at most `rpm` a minute) through
/// `stores` in turn: how many were admitted; every refusal names the quota and the next UTC
/// midnight.
async fn daily_admitted(
    stores: &[Arc<dyn TeamStore>],
    key: &corvid_store::team::KeyInfo,
    count: usize,
    rpm: Option<u32>,
) -> usize {
    let tasks: Vec<_> = (0..count)
        .map(|index| {
            let store = Arc::clone(&stores[index % stores.len()]);
            let hold = Hold {
                daily_requests: key.daily_requests,
                rpm,
                ..hold(key.id, key.budgets.iter().map(|b| b.id).collect(), 10, "i")
            };
            tokio::spawn(async move { store.hold(&hold).await.unwrap() })
        })
        .collect();
    let midnight = (now_ms().div_euclid(86_400_000) + 1) * 86_400_000;
    let mut admitted = 0;
    for task in tasks {
        match task.await.unwrap() {
            None => admitted += 1,
            Some(Refusal::DailyRequests {
                limit,
                resets_at_ms,
            }) => {
                assert_eq!(limit, 4);
                assert_eq!(resets_at_ms, midnight);
            }
            Some(other) => panic!("{other:?}"),
        }
    }
    admitted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_daily_request_quota_holds_across_instances_with_and_without_redis() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let pg = migrated(&url).await;
    let mut keys = Vec::new();
    for name in ["dana", "erin"] {
        let (key, _) = pg
            .create_key(&KeySpec {
                name: name.into(),
                budget: Some(BudgetSpec {
                    cap_micros: 1_000_000,
                    period: Period::Day,
                }),
                daily_requests: Some(4),
                ..KeySpec::default()
            })
            .await
            .unwrap();
        let (found, _) = pg.key_by_public_id(&key.public_id).await.unwrap().unwrap();
        assert_eq!(found.daily_requests, Some(4));
        keys.push(key);
    }
    // Two instances on PostgreSQL alone.
    let plain: Vec<Arc<dyn TeamStore>> = vec![
        Arc::new(PgStore::connect(&url, 8).unwrap()),
        Arc::new(PgStore::connect(&url, 8).unwrap()),
    ];
    assert_eq!(daily_admitted(&plain, &keys[0], 10, None).await, 4);
    assert_eq!(pg.requests_today(keys[0].id).await.unwrap(), 4);
    // A refused request held nothing: only the four admitted holds are reserved.
    let state = pg
        .key_by_public_id(&keys[0].public_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(state.0.budgets[0].reserved_micros, 4 * 10);
    // Two instances with Redis in front: PostgreSQL still counts the quota.
    if let Ok(redis_url) = std::env::var("CORVID_TEST_REDIS_URL") {
        let name = url.rsplit('/').next().unwrap().to_owned();
        let fronted: Vec<Arc<dyn TeamStore>> = (0..2)
            .map(|_| {
                let counter = RedisCounter::connect(&redis_url, &name).unwrap();
                let pg = PgStore::connect(&url, 8).unwrap();
                Arc::new(RedisFront::new(pg, counter)) as Arc<dyn TeamStore>
            })
            .collect();
        assert_eq!(daily_admitted(&fronted, &keys[1], 10, Some(1_000)).await, 4);
        assert_eq!(pg.requests_today(keys[1].id).await.unwrap(), 4);
        // The six requests the quota refused were never made, so they left the key's rate
        // window in Redis: with 6 a minute allowed, the quota (not the rate) still refuses.
        for _ in 0..3 {
            assert_eq!(daily_admitted(&fronted, &keys[1], 1, Some(6)).await, 0);
        }
        let state = pg
            .key_by_public_id(&keys[1].public_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            state.0.budgets[0].reserved_micros,
            4 * 10,
            "the refused holds were undone"
        );
    }
}
