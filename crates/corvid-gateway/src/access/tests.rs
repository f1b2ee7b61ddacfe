use std::sync::Arc;

use corvid_config::StoreConfig;
use corvid_store::Store;
use corvid_store::team::{BudgetSpec, Hold, Period, SqliteTeams, new_request_id};

use super::{Access, RunningGuard};

#[tokio::test]
async fn the_local_allowance_reports_the_daily_budget_and_quota() {
    let store = Store::open_in_memory().unwrap().into_shared();
    let teams = SqliteTeams::new(Arc::clone(&store));
    let mut local = teams
        .local_key(Some(BudgetSpec {
            cap_micros: 50_000,
            period: Period::Day,
        }))
        .await
        .unwrap();
    local.daily_requests = Some(3);
    let access =
        Access::new(Arc::new(teams), &StoreConfig::default(), false).with_local_key(local.clone());
    let held = Hold {
        request_id: new_request_id(),
        key_id: local.id,
        budget_ids: vec![local.budgets[0].id],
        amount_micros: 4_000,
        tokens: 10,
        rpm: None,
        tpm: None,
        daily_requests: local.daily_requests,
        instance: "i".into(),
        lease: std::time::Duration::from_secs(60),
    };
    assert_eq!(access.store().hold(&held).await.unwrap(), None);
    let allowance = access.local_allowance().await.unwrap();
    assert_eq!(allowance["budget"]["cap_micros"], 50_000);
    assert_eq!(allowance["budget"]["held_micros"], 4_000);
    assert_eq!(allowance["requests"]["limit"], 3);
    assert_eq!(allowance["requests"]["made"], 1);
    assert!(allowance["resets_at_ms"].as_i64().unwrap() > corvid_store::now_ms());

    // A running request stays in the set its heartbeat renews until its last ticket is gone.
    let guard = RunningGuard::new(&access, &held.request_id);
    let copy = Arc::clone(&guard);
    drop(guard);
    assert!(access.running.lock().unwrap().contains(&held.request_id));
    drop(copy);
    assert!(access.running.lock().unwrap().is_empty());
}
