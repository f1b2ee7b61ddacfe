use super::*;

#[test]
fn globs_match_prefixes_suffixes_and_providers() {
    assert!(glob_matches("grok*", "grok-4"));
    assert!(glob_matches("anthropic/*", "anthropic/claude"));
    assert!(glob_matches("*-mini", "gpt-5-mini"));
    assert!(glob_matches("a*b*c", "axxbyyc"));
    assert!(!glob_matches("grok*", "gpt-5"));
    assert!(!glob_matches("a*b*c", "axxbyy"));
    assert!(glob_matches("exact", "exact"));
}

#[test]
fn windows_are_utc_days_and_months() {
    // 2026-12-07T06:00:00Z
    let now = 1_796_623_200_000;
    let (start, end) = window_of(Period::Day, now);
    assert_eq!(end - start, 86_400_000);
    assert!(start <= now && now < end);
    let (start, end) = window_of(Period::Month, now);
    // 2026-12-01 and 2027-01-01.
    assert_eq!(start, 1_796_083_200_000);
    assert_eq!(end, 1_798_761_600_000);
}

#[test]
fn a_key_without_patterns_allows_every_model() {
    let mut key = KeyInfo {
        id: 1,
        name: "a".into(),
        public_id: "p".into(),
        team_id: None,
        team: None,
        models: vec![],
        rpm: None,
        daily_requests: None,
        tpm: None,
        revoked: false,
        budgets: vec![],
    };
    assert!(key.allows_model("x", "xai", "grok-4"));
    assert!(!key.needs_hold());
    key.models = vec!["anthropic/*".into()];
    assert!(!key.allows_model("grok-4", "xai", "grok-4"));
    assert!(key.allows_model("claude", "anthropic", "claude-sonnet"));
}

mod sqlite_store {
    use std::sync::Arc;
    use std::time::Duration;

    use parking_lot::Mutex;

    use super::super::*;
    use crate::{Billing, Outcome, PriceMicros, Store, Tokens, UsageRecord};

    fn teams() -> (SqliteTeams, crate::SharedStore) {
        let store = Arc::new(Mutex::new(Store::open_in_memory().unwrap()));
        (SqliteTeams::new(Arc::clone(&store)), store)
    }

    fn hold(key: &KeyInfo, amount: i64, instance: &str) -> Hold {
        Hold {
            request_id: new_request_id(),
            key_id: key.id,
            budget_ids: key.budgets.iter().map(|budget| budget.id).collect(),
            amount_micros: amount,
            tokens: 10,
            rpm: key.rpm,
            daily_requests: key.daily_requests,
            tpm: key.tpm,
            instance: instance.to_owned(),
            lease: Duration::from_secs(60),
        }
    }

    fn row(request_id: &str, key: &KeyInfo, cost: i64) -> UsageRecord {
        UsageRecord {
            at: crate::now_ms(),
            front_end: "gateway".into(),
            route: "chat_completions".into(),
            inbound: "openai-chat".into(),
            provider: "xai".into(),
            model: "m".into(),
            status: 200,
            outcome: Outcome::Ok,
            latency_ms: 1,
            ttfb_ms: None,
            tokens: Tokens::default(),
            attempts: 1,
            prompt: None,
            key_index: None,
            rule: None,
            billing: Some(Billing {
                request_id: request_id.to_owned(),
                key_id: Some(key.id),
                team_id: key.team_id,
                price: PriceMicros::default(),
                cost_micros: cost,
            }),
        }
    }

    #[tokio::test]
    async fn keys_budgets_and_holds_work_on_sqlite() {
        let (teams, store) = teams();
        teams
            .create_team(&TeamSpec {
                name: "eng".into(),
                budget: Some(BudgetSpec {
                    cap_micros: 10_000,
                    period: Period::Day,
                }),
            })
            .await
            .unwrap();
        let (key, secret) = teams
            .create_key(&KeySpec {
                name: "alice".into(),
                team: Some("eng".into()),
                budget: Some(BudgetSpec {
                    cap_micros: 6_000,
                    period: Period::Month,
                }),
                rpm: Some(3),
                ..KeySpec::default()
            })
            .await
            .unwrap();
        assert_eq!(key.budgets.len(), 2);
        let (found, hash) = teams
            .key_by_public_id(secret.public_id())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.name, "alice");
        assert!(secret.matches(&hash));
        assert!(matches!(
            teams
                .create_key(&KeySpec {
                    name: "alice".into(),
                    ..KeySpec::default()
                })
                .await,
            Err(StoreError::Exists(_))
        ));

        let first = hold(&key, 5_000, "i");
        assert_eq!(teams.hold(&first).await.unwrap(), None);
        match teams.hold(&hold(&key, 5_000, "i")).await.unwrap() {
            Some(Refusal::Budget { scope, .. }) => assert_eq!(scope, "key:alice"),
            other => panic!("{other:?}"),
        }
        // The row settles the hold to its cost, once.
        let record = row(&first.request_id, &key, 1_200);
        store.lock().record_all(&[record.clone(), record]).unwrap();
        let budgets = teams.budgets().await.unwrap();
        assert!(budgets.iter().all(|budget| budget.reserved_micros == 0));
        assert!(budgets.iter().all(|budget| budget.spent_micros == 1_200));
        // Three requests a minute: the first hold counts (the refused one does not), two more
        // pass, the next is refused.
        assert_eq!(teams.hold(&hold(&key, 10, "i")).await.unwrap(), None);
        assert_eq!(teams.hold(&hold(&key, 10, "i")).await.unwrap(), None);
        assert!(matches!(
            teams.hold(&hold(&key, 10, "i")).await.unwrap(),
            Some(Refusal::Rpm { limit: 3, .. })
        ));
        let by_key = teams.usage_by(UsageBy::Key, 0).await.unwrap();
        assert_eq!(by_key[0].group, "alice");
        assert_eq!(by_key[0].requests, 1);
        assert_eq!(by_key[0].cost_micros, 1_200);
        // A hold of an instance that never heartbeats is swept at its estimate.
        assert_eq!(teams.sweep(Duration::from_secs(5)).await.unwrap(), 2);
        assert!(teams.revoke_key("alice").await.unwrap());
        assert!(!teams.revoke_key("alice").await.unwrap());
        teams.ping().await.unwrap();
    }

    #[tokio::test]
    async fn the_local_users_quota_and_a_failed_attempt_keep_count_on_sqlite() {
        let (teams, store) = teams();
        let mut local = teams
            .local_key(Some(BudgetSpec {
                cap_micros: 100_000,
                period: Period::Day,
            }))
            .await
            .unwrap();
        local.daily_requests = Some(2);
        let first = hold(&local, 5_000, "i");
        assert_eq!(teams.hold(&first).await.unwrap(), None);
        assert_eq!(teams.hold(&hold(&local, 5_000, "i")).await.unwrap(), None);
        match teams.hold(&hold(&local, 5_000, "i")).await.unwrap() {
            Some(Refusal::DailyRequests {
                limit: 2,
                resets_at_ms,
            }) => assert!(resets_at_ms > crate::now_ms()),
            other => panic!("{other:?}"),
        }
        assert_eq!(teams.requests_today(local.id).await.unwrap(), 2);
        // A failed attempt is charged but keeps the hold (a fallback may follow); the row that
        // ends the request releases it.
        let mut failed = row(&first.request_id, &local, 300);
        failed.outcome = Outcome::Error;
        store.lock().record_all(&[failed]).unwrap();
        let budget = &teams.budgets().await.unwrap()[0];
        assert_eq!((budget.spent_micros, budget.reserved_micros), (300, 10_000));
        let last = row(&format!("{}.1", first.request_id), &local, 700);
        store.lock().record_all(&[last]).unwrap();
        let budget = &teams.budgets().await.unwrap()[0];
        assert_eq!(
            (budget.spent_micros, budget.reserved_micros),
            (1_000, 5_000)
        );
        // A running request's lease is renewed (the sweeper leaves it).
        teams.heartbeat("i").await.unwrap();
        let mut short = hold(&local, 0, "i");
        short.daily_requests = None;
        short.lease = Duration::from_millis(1);
        assert_eq!(teams.hold(&short).await.unwrap(), None);
        teams
            .renew("i", &[short.request_id.clone()], Duration::from_secs(60))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(teams.sweep(Duration::from_secs(5)).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_keys_own_daily_request_quota_is_kept_and_counted_on_sqlite() {
        let (teams, _store) = teams();
        let (created, _) = teams
            .create_key(&KeySpec {
                name: "dana".into(),
                daily_requests: Some(2),
                ..KeySpec::default()
            })
            .await
            .unwrap();
        let (key, _) = teams
            .key_by_public_id(&created.public_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(key.daily_requests, Some(2));
        assert!(key.needs_hold(), "a quota alone takes a hold");
        assert_eq!(teams.hold(&hold(&key, 0, "i")).await.unwrap(), None);
        assert_eq!(teams.hold(&hold(&key, 0, "i")).await.unwrap(), None);
        assert!(matches!(
            teams.hold(&hold(&key, 0, "i")).await.unwrap(),
            Some(Refusal::DailyRequests { limit: 2, .. })
        ));
        assert_eq!(teams.requests_today(key.id).await.unwrap(), 2);
    }
}
