use pretty_assertions::assert_eq;

use super::*;

/// 2026-11-29T00:00:00Z in Unix milliseconds.
pub(crate) const NOV_29: i64 = 1_795_910_400_000;

/// A successful request at `at` to `model` with 100/20/10/50/5 tokens.
pub(crate) fn sample(at: i64, model: &str) -> UsageRecord {
    UsageRecord {
        at,
        front_end: FRONT_END_GATEWAY.to_owned(),
        route: "chat_completions".to_owned(),
        inbound: "openai-chat".to_owned(),
        provider: "xai".to_owned(),
        model: model.to_owned(),
        status: 200,
        outcome: Outcome::Ok,
        latency_ms: 1_200,
        ttfb_ms: Some(300),
        tokens: Tokens {
            input: 100,
            cache_read: 20,
            cache_write: 10,
            output: 50,
            reasoning: 5,
        },
        attempts: 1,
        prompt: None,
        billing: None,
        key_index: None,
        rule: None,
    }
}

fn tokens(times: u64) -> Tokens {
    Tokens {
        input: 100 * times,
        cache_read: 20 * times,
        cache_write: 10 * times,
        output: 50 * times,
        reasoning: 5 * times,
    }
}

fn two_days_two_models() -> Store {
    let mut store = Store::open_in_memory().unwrap();
    let last_ms_of_nov_28 = NOV_29 - 1;
    let failed = UsageRecord {
        status: 429,
        outcome: Outcome::Error,
        ttfb_ms: None,
        tokens: Tokens::default(),
        attempts: 3,
        ..sample(NOV_29 + 5_000, "grok-4.6")
    };
    let broken_stream = UsageRecord {
        outcome: Outcome::StreamError,
        ..sample(NOV_29 + 6_000, "grok-4.6")
    };
    let cancelled = UsageRecord {
        outcome: Outcome::Cancelled,
        status: 200,
        ..sample(NOV_29 + 7_000, "claude-sonnet-4.5")
    };
    store
        .record_all(&[
            sample(last_ms_of_nov_28, "grok-4.6"),
            sample(last_ms_of_nov_28 - 60_000, "grok-4.6"),
            sample(NOV_29 - 3_600_000, "claude-sonnet-4.5"),
            sample(NOV_29, "grok-4.6"),
            failed,
            broken_stream,
            cancelled,
        ])
        .unwrap();
    store
}

#[test]
fn usage_is_grouped_by_utc_day_and_model_in_order() {
    let store = two_days_two_models();
    let rows = store.usage_by_day_and_model(None).unwrap();
    let row = |day: &str, model: &str, requests, errors, times| UsageRow {
        day: day.to_owned(),
        model: model.to_owned(),
        provider: "xai".to_owned(),
        front_end: FRONT_END_GATEWAY.to_owned(),
        requests,
        errors,
        tokens: tokens(times),
    };
    assert_eq!(
        rows,
        vec![
            row("2026-11-28", "claude-sonnet-4.5", 1, 0, 1),
            row("2026-11-28", "grok-4.6", 2, 0, 2),
            row("2026-11-29", "claude-sonnet-4.5", 1, 0, 1),
            // The 429 carried no tokens; the broken stream did and counts them.
            row("2026-11-29", "grok-4.6", 3, 2, 2),
        ]
    );
}

#[test]
fn each_front_end_gets_its_own_row_per_day_and_model() {
    let mut store = Store::open_in_memory().unwrap();
    let agent = |at, front_end: &str| UsageRecord {
        front_end: front_end.to_owned(),
        route: ROUTE_AGENT.to_owned(),
        inbound: "canonical".to_owned(),
        ..sample(at, "grok-4.6")
    };
    store
        .record_all(&[
            sample(NOV_29, "grok-4.6"),
            agent(NOV_29 + 1, "exec"),
            agent(NOV_29 + 2, "chat"),
            agent(NOV_29 + 3, "exec"),
        ])
        .unwrap();
    let rows: Vec<_> = store
        .usage_by_day_and_model(None)
        .unwrap()
        .into_iter()
        .map(|row| (row.model, row.front_end, row.requests))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("grok-4.6".to_owned(), "chat".to_owned(), 1),
            ("grok-4.6".to_owned(), "exec".to_owned(), 2),
            ("grok-4.6".to_owned(), "gateway".to_owned(), 1),
        ]
    );
    assert_eq!(store.totals(None).unwrap().requests, 4);
}

#[test]
fn since_keeps_requests_at_or_after_the_instant() {
    let store = two_days_two_models();
    let rows = store.usage_by_day_and_model(Some(NOV_29)).unwrap();
    let days_and_models: Vec<_> = rows
        .iter()
        .map(|row| (row.day.as_str(), row.model.as_str(), row.requests))
        .collect();
    assert_eq!(
        days_and_models,
        vec![
            ("2026-11-29", "claude-sonnet-4.5", 1),
            ("2026-11-29", "grok-4.6", 3)
        ]
    );
}

#[test]
fn totals_sum_everything_or_since() {
    let store = two_days_two_models();
    assert_eq!(
        store.totals(None).unwrap(),
        UsageTotals {
            requests: 7,
            errors: 2,
            tokens: tokens(6),
        }
    );
    assert_eq!(
        store.totals(Some(NOV_29)).unwrap(),
        UsageTotals {
            requests: 4,
            errors: 2,
            tokens: tokens(3),
        }
    );
}

#[test]
fn an_empty_ledger_has_zero_totals_and_no_rows() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.totals(None).unwrap(), UsageTotals::default());
    assert_eq!(store.usage_by_day_and_model(None).unwrap(), vec![]);
}

#[test]
fn every_field_round_trips() {
    let mut store = Store::open_in_memory().unwrap();
    let record = UsageRecord {
        front_end: "acp".to_owned(),
        route: "messages".to_owned(),
        inbound: "anthropic".to_owned(),
        provider: "anthropic".to_owned(),
        status: 0,
        outcome: Outcome::Cancelled,
        latency_ms: 77,
        ttfb_ms: None,
        attempts: 2,
        ..sample(NOV_29, "claude-sonnet-4.5")
    };
    store.record(&record).unwrap();
    let stored = store
        .conn
        .query_row(
            "SELECT at, route, inbound, provider, model, status, outcome, latency_ms, ttfb_ms,
                    input, cache_read, cache_write, output, reasoning, attempts, front_end
             FROM requests",
            [],
            |row| {
                Ok((
                    (
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, String>(4)?,
                        row.get::<_, u16>(5)?,
                        row.get::<_, String>(6)?,
                        row.get::<_, i64>(7)?,
                        row.get::<_, Option<i64>>(8)?,
                    ),
                    (
                        row.get::<_, i64>(9)?,
                        row.get::<_, i64>(10)?,
                        row.get::<_, i64>(11)?,
                        row.get::<_, i64>(12)?,
                        row.get::<_, i64>(13)?,
                        row.get::<_, u32>(14)?,
                        row.get::<_, String>(15)?,
                    ),
                ))
            },
        )
        .unwrap();
    assert_eq!(
        stored,
        (
            (
                NOV_29,
                "messages".to_owned(),
                "anthropic".to_owned(),
                "anthropic".to_owned(),
                "claude-sonnet-4.5".to_owned(),
                0,
                "cancelled".to_owned(),
                77,
                None,
            ),
            (100, 20, 10, 50, 5, 2, "acp".to_owned()),
        )
    );
}

#[test]
fn prompts_are_stored_only_when_the_caller_gives_one() {
    let mut store = Store::open_in_memory().unwrap();
    store.record(&sample(NOV_29, "grok-4.6")).unwrap();
    store
        .record(&UsageRecord {
            prompt: Some("write a haiku".to_owned()),
            ..sample(NOV_29 + 1, "grok-4.6")
        })
        .unwrap();
    let mut statement = store
        .conn
        .prepare("SELECT prompt FROM requests ORDER BY at")
        .unwrap();
    let prompts: Vec<Option<String>> = statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(prompts, vec![None, Some("write a haiku".to_owned())]);
}

#[test]
fn outcome_names_match_the_column_values() {
    let names: Vec<_> = [
        Outcome::Ok,
        Outcome::Error,
        Outcome::StreamError,
        Outcome::Cancelled,
    ]
    .into_iter()
    .map(Outcome::as_str)
    .collect();
    assert_eq!(names, ["ok", "error", "stream_error", "cancelled"]);
}

#[test]
fn cost_charges_each_count_at_its_price_and_reasoning_once() {
    let price = Price {
        input: 3.0,
        cached_input: 0.75,
        cache_write: 3.75,
        output: 15.0,
    };
    let tokens = Tokens {
        input: 1_000_000,
        cache_read: 2_000_000,
        cache_write: 400_000,
        output: 100_000,
        reasoning: 60_000,
    };
    // 3.00 + 1.50 + 1.50 + 1.50
    let dollars = cost(&tokens, &price);
    assert!((dollars - 7.5).abs() < 1e-9, "{dollars}");
    assert_eq!(cost(&Tokens::default(), &price), 0.0);
    let one_output_token = Tokens {
        output: 1,
        ..Tokens::default()
    };
    assert!((cost(&one_output_token, &price) - 0.000_015).abs() < 1e-15);
}

#[test]
fn total_input_includes_cache_reads_and_writes() {
    assert_eq!(tokens(1).total_input(), 130);
}

#[test]
fn now_is_after_2025() {
    assert!(now_ms() > 1_735_689_600_000);
}

#[test]
fn the_routing_key_index_and_rule_are_stored() {
    let mut store = Store::open_in_memory().unwrap();
    store
        .record(&UsageRecord {
            key_index: Some(1),
            rule: Some("background".to_owned()),
            ..sample(NOV_29, "grok-4.6")
        })
        .unwrap();
    let (key, rule): (Option<u32>, Option<String>) = store
        .conn
        .query_row("SELECT key_index, rule FROM requests", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((key, rule.as_deref()), (Some(1), Some("background")));
}

/// One model name served by two providers (a local server and a hosted one) stays two rows.
#[test]
fn one_model_from_two_providers_is_two_rows() {
    let mut store = Store::open_in_memory().unwrap();
    store
        .record_all(&[
            sample(NOV_29, "qwen2.5-coder"),
            UsageRecord {
                provider: "llamacpp".to_owned(),
                ..sample(NOV_29 + 1, "qwen2.5-coder")
            },
        ])
        .unwrap();
    let rows = store.usage_by_day_and_model(None).unwrap();
    let providers: Vec<&str> = rows.iter().map(|row| row.provider.as_str()).collect();
    assert_eq!(providers, ["llamacpp", "xai"]);
}

#[test]
fn priced_uses_configured_prices_then_the_shipped_catalog() {
    let tokens = Tokens {
        input: 1_000_000,
        cache_read: 1_000_000,
        output: 1_000_000,
        ..Tokens::default()
    };
    let mut prices = std::collections::BTreeMap::new();
    // grok-4 from the catalog: $3 in, $0.75 cached, $15 out.
    assert_eq!(priced(&prices, "grok-4", &tokens), Some(18.75));
    // A dated snapshot is priced as its model.
    assert_eq!(
        priced(&prices, "claude-sonnet-4-5-20250929", &tokens),
        Some(18.3)
    );
    prices.insert(
        "grok-4".to_owned(),
        Price {
            input: 1.0,
            cached_input: 0.5,
            cache_write: 1.0,
            output: 2.0,
        },
    );
    assert_eq!(priced(&prices, "grok-4", &tokens), Some(3.5));
    assert_eq!(
        price_of(&prices, "grok-4").map(|price| price.output),
        Some(2.0)
    );
    assert_eq!(priced(&prices, "my-local-model", &tokens), None);
}
