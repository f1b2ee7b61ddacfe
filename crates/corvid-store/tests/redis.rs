//! Redis in front of PostgreSQL, on the real servers `scripts/team-services` starts: holds are
//! decided in Redis and recorded in PostgreSQL, a flush loses nothing, and holds go through
//! PostgreSQL alone while Redis is away. Without the servers the test says so and passes.
//! (A test binary of its own: it stops the shared Redis.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::{Duration, Instant};

use corvid_store::pg::{PgLedger, PgStore, RedisCounter, RedisFront};
use corvid_store::team::{
    BudgetSpec, Hold, KeySpec, Period, Refusal, TeamSpec, TeamStore, new_request_id,
};
use corvid_store::{
    Billing, Outcome, PriceMicros, RecorderOptions, Tokens, UsageRecord, UsageRecorder, now_ms,
};

const ESTIMATE: i64 = 3_000;

fn redis_cli(args: &str) {
    let cli = std::env::var("CORVID_TEST_REDIS_CLI").unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{cli} {args} >/dev/null 2>&1")])
        .status()
        .unwrap();
    assert!(status.success() || args.starts_with("shutdown"));
}

fn redis_answer(args: &str) -> String {
    let cli = std::env::var("CORVID_TEST_REDIS_CLI").unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("{cli} {args}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn redis_start() {
    let line = std::env::var("CORVID_TEST_REDIS_START").unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &line])
        .status()
        .unwrap();
    assert!(status.success());
}

fn hold(key: i64, budgets: &[i64], rpm: Option<u32>) -> Hold {
    Hold {
        request_id: new_request_id(),
        key_id: key,
        budget_ids: budgets.to_vec(),
        amount_micros: ESTIMATE,
        tokens: 100,
        rpm,
        tpm: None,
        daily_requests: None,
        instance: "i".to_owned(),
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
        tokens: Tokens::default(),
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

async fn admitted_of(stores: &[Arc<dyn TeamStore>], holds: Vec<Hold>) -> Vec<Hold> {
    let tasks: Vec<_> = holds
        .into_iter()
        .enumerate()
        .map(|(index, hold)| {
            let store = Arc::clone(&stores[index % stores.len()]);
            tokio::spawn(async move {
                let refusal = store.hold(&hold).await.unwrap();
                (hold, refusal)
            })
        })
        .collect();
    let mut admitted = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            (hold, None) => admitted.push(hold),
            (_, Some(Refusal::Budget { .. } | Refusal::Rpm { .. })) => {}
            (_, Some(other)) => panic!("{other:?}"),
        }
    }
    admitted
}

async fn flush(recorder: &UsageRecorder) {
    let recorder = recorder.clone();
    tokio::task::spawn_blocking(move || recorder.flush())
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_in_redis_keep_the_cap_through_a_flush_and_an_outage() {
    let (Ok(admin_url), Ok(redis_url)) = (
        std::env::var("CORVID_TEST_POSTGRES_URL"),
        std::env::var("CORVID_TEST_REDIS_URL"),
    ) else {
        eprintln!("skipped: run under scripts/team-services (PostgreSQL and Redis)");
        return;
    };
    let (admin, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let name = format!("r_{}", &new_request_id()[..16]);
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let url = admin_url.replace("/postgres", &format!("/{name}"));
    let pg = PgStore::connect(&url, 16).unwrap();
    pg.migrate().await.unwrap();
    pg.create_team(&TeamSpec {
        name: "eng".into(),
        budget: Some(BudgetSpec {
            cap_micros: 1_000 * ESTIMATE,
            period: Period::Day,
        }),
    })
    .await
    .unwrap();
    let (key, _) = pg
        .create_key(&KeySpec {
            name: "alice".into(),
            team: Some("eng".into()),
            budget: Some(BudgetSpec {
                cap_micros: 10 * ESTIMATE,
                period: Period::Month,
            }),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let budgets: Vec<i64> = key.budgets.iter().map(|b| b.id).collect();
    // Two instances: a pool and a Redis connection each.
    let counters = [
        RedisCounter::connect(&redis_url, &name).unwrap(),
        RedisCounter::connect(&redis_url, &name).unwrap(),
    ];
    let stores: Vec<Arc<dyn TeamStore>> = counters
        .iter()
        .map(|counter| {
            let pg = PgStore::connect(&url, 16).unwrap();
            Arc::new(RedisFront::new(pg, counter.clone())) as Arc<dyn TeamStore>
        })
        .collect();
    let recorder = UsageRecorder::spawn_postgres(
        PgLedger::new(pg.clone(), tokio::runtime::Handle::current())
            .with_redis(Some(counters[0].clone())),
        RecorderOptions::default(),
    )
    .unwrap();
    let key_state = |pg: PgStore| async move {
        let all = pg.budgets().await.unwrap();
        all.into_iter().find(|b| b.scope == "key:alice").unwrap()
    };

    // 100 at once across both: exactly the cap.
    let holds = (0..100).map(|_| hold(key.id, &budgets, None)).collect();
    let admitted = admitted_of(&stores, holds).await;
    assert_eq!(admitted.len(), 10, "admitted {} of 100", admitted.len());
    assert_eq!(key_state(pg.clone()).await.reserved_micros, 10 * ESTIMATE);
    // Decided in Redis, which counts what PostgreSQL holds.
    let used = redis_answer(&format!("HGET '{{corvid:{name}}}:b:{}' used", budgets[0]));
    assert_eq!(used, (10 * ESTIMATE).to_string());

    // Five settle at a third of their estimate: Redis follows, and room opens for exactly the
    // difference (no false refusal).
    for held in &admitted[..5] {
        recorder.record(billed(&held.request_id, key.id, key.team_id, ESTIMATE / 3));
    }
    flush(&recorder).await;
    let holds = (0..20).map(|_| hold(key.id, &budgets, None)).collect();
    let more = admitted_of(&stores, holds).await;
    // 5 × 2,000 µ$ freed → 3 more holds of 3,000.
    assert_eq!(more.len(), 3);

    // Flushed: seeded again from PostgreSQL (spend + open holds), nothing past the cap.
    redis_cli("FLUSHALL");
    let holds = (0..20).map(|_| hold(key.id, &budgets, None)).collect();
    assert!(admitted_of(&stores, holds).await.is_empty());
    let state = key_state(pg.clone()).await;
    assert!(state.spent_micros + state.reserved_micros <= state.cap_micros);

    // Redis stopped: PostgreSQL decides alone, within the cap, and fast.
    redis_cli("shutdown nosave");
    for held in admitted[5..].iter().chain(&more) {
        recorder.record(billed(&held.request_id, key.id, key.team_id, ESTIMATE / 3));
    }
    flush(&recorder).await;
    let asked = Instant::now();
    let holds = (0..20).map(|_| hold(key.id, &budgets, None)).collect();
    let during = admitted_of(&stores, holds).await;
    let took = asked.elapsed();
    eprintln!("20 holds with Redis down decided in {took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // 8 × 2,000 µ$ freed → 5 more.
    assert_eq!(during.len(), 5);

    // Back (empty): no false refusal once the settled holds free room.
    redis_start();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for held in &during {
        recorder.record(billed(&held.request_id, key.id, key.team_id, 0));
    }
    flush(&recorder).await;
    let holds = (0..20).map(|_| hold(key.id, &budgets, None)).collect();
    let after = admitted_of(&stores, holds).await;
    assert_eq!(after.len(), 5, "the settled holds' room is usable again");
    let state = key_state(pg.clone()).await;
    assert!(state.spent_micros + state.reserved_micros <= state.cap_micros);

    // Rate limits live in Redis: 3 per minute across both instances. The window is the clock's
    // minute: start clear of its end, or the ten holds straddle two windows (3 + 3 admitted).
    let into_minute = now_ms().rem_euclid(60_000);
    if into_minute > 50_000 {
        let left = u64::try_from(60_000 - into_minute).unwrap() + 100;
        tokio::time::sleep(Duration::from_millis(left)).await;
    }
    let (limited, _) = pg
        .create_key(&KeySpec {
            name: "rated".into(),
            rpm: Some(3),
            ..KeySpec::default()
        })
        .await
        .unwrap();
    let holds = (0..10).map(|_| hold(limited.id, &[], Some(3))).collect();
    assert_eq!(admitted_of(&stores, holds).await.len(), 3);
    drop(recorder);
}
