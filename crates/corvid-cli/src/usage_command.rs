//! `corvid usage [--days N] [--json]`: requests, tokens and costs per UTC day, model and front
//! end (`gateway` for the HTTP APIs; `chat`, `exec`, … for the agent's own model calls), read
//! from the usage ledger in `<data_dir>/corvid.db`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context;
use corvid_config::{Loaded, Price};
use corvid_store::{Store, Tokens, UsageRow, now_ms};

const DAY_MS: i64 = 86_400_000;

/// The usage report as text: a table (or, with `json`, a JSON array of rows). `days` keeps the
/// last N UTC days, today included.
pub(crate) fn usage(loaded: &Loaded, days: Option<u32>, json: bool) -> anyhow::Result<String> {
    let path = loaded.paths.database();
    if !path.exists() {
        return Ok(if json {
            "[]\n".to_owned()
        } else {
            format!("no usage recorded yet ({})\n", path.display())
        });
    }
    let store = Store::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let since = days.map(|days| since_ms(days, now_ms()));
    let rows = store
        .usage_by_day_and_model(since)
        .with_context(|| format!("cannot read usage from {}", path.display()))?;
    let prices = &loaded.config.prices;
    if json {
        return render_json(&rows, prices);
    }
    if rows.is_empty() {
        return Ok(match days {
            Some(days) => format!(
                "no usage recorded in the last {} ({})\n",
                plural(days.max(1), "day"),
                path.display()
            ),
            None => format!("no usage recorded yet ({})\n", path.display()),
        });
    }
    Ok(render_table(&rows, prices, &loaded.paths.config_file))
}

/// The start of the UTC day `days - 1` days before `now_ms` (`days` 0 counts as 1: today).
fn since_ms(days: u32, now_ms: i64) -> i64 {
    let today = now_ms - now_ms.rem_euclid(DAY_MS);
    today - i64::from(days.max(1) - 1) * DAY_MS
}

fn render_json(rows: &[UsageRow], prices: &BTreeMap<String, Price>) -> anyhow::Result<String> {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            serde_json::json!({
                "day": row.day,
                "model": row.model,
                "provider": row.provider,
                "front_end": row.front_end,
                "requests": row.requests,
                "errors": row.errors,
                "input": row.tokens.input,
                "cache_read": row.tokens.cache_read,
                "cache_write": row.tokens.cache_write,
                "output": row.tokens.output,
                "reasoning": row.tokens.reasoning,
                "cache_hit_rate": hit_rate(&row.tokens),
                "cost_usd": corvid_store::priced(prices, &row.model, &row.tokens),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&rows)?;
    text.push('\n');
    Ok(text)
}

const COLUMNS: usize = 8;

const HEADER: [&str; COLUMNS] = [
    "day",
    "model",
    "front end",
    "requests",
    "errors",
    "input (cached)",
    "output (reasoning)",
    "cost",
];

/// Day, model and front end are left-aligned; the numbers are right-aligned.
const LEFT_ALIGNED: usize = 3;

/// The share of input read from a provider's cache, when any input was cacheable.
fn hit_rate(tokens: &Tokens) -> Option<f64> {
    let total = tokens.total_input();
    (total > 0).then(|| tokens.cache_read as f64 / total as f64)
}

/// Model names that more than one provider served: their rows say `provider/model`.
fn shared_models(rows: &[UsageRow]) -> BTreeSet<&str> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut shared = BTreeSet::new();
    for row in rows {
        match seen.insert(&row.model, &row.provider) {
            Some(other) if other != row.provider => {
                shared.insert(row.model.as_str());
            }
            _ => {}
        }
    }
    shared
}

fn render_table(rows: &[UsageRow], prices: &BTreeMap<String, Price>, config_file: &Path) -> String {
    let mut cells: Vec<[String; COLUMNS]> = vec![HEADER.map(str::to_owned)];
    let shared = shared_models(rows);
    let mut total = Total::default();
    let mut unpriced = BTreeSet::new();
    for row in rows {
        let dollars = corvid_store::priced(prices, &row.model, &row.tokens);
        match dollars {
            Some(dollars) => total.cost = Some(total.cost.unwrap_or(0.0) + dollars),
            None => {
                unpriced.insert(row.model.as_str());
            }
        }
        total.add(row);
        let model = if shared.contains(row.model.as_str()) {
            format!("{}/{}", row.provider, row.model)
        } else {
            row.model.clone()
        };
        cells.push(line(
            [&row.day, &model, &row.front_end],
            row.requests,
            row.errors,
            &row.tokens,
            dollars,
        ));
    }
    cells.push(line(
        ["total", "", ""],
        total.requests,
        total.errors,
        &total.tokens,
        total.cost,
    ));

    let mut widths = [0; COLUMNS];
    for line in &cells {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for line in &cells {
        let mut out = String::new();
        for (column, (cell, width)) in line.iter().zip(widths).enumerate() {
            if column > 0 {
                out.push_str("  ");
            }
            let pad = " ".repeat(width - cell.chars().count());
            if column < LEFT_ALIGNED {
                out.push_str(cell);
                out.push_str(&pad);
            } else {
                out.push_str(&pad);
                out.push_str(cell);
            }
        }
        text.push_str(out.trim_end());
        text.push('\n');
    }
    if !unpriced.is_empty() {
        let models: Vec<&str> = unpriced.into_iter().collect();
        text.push_str(&format!(
            "no price for {}: add [prices.\"<model>\"] input = …, output = … ($ per million tokens) to {}\n",
            models.join(", "),
            config_file.display()
        ));
    }
    text
}

#[derive(Default)]
struct Total {
    requests: u64,
    errors: u64,
    tokens: Tokens,
    /// The sum over priced rows; `None` when no row had a price.
    cost: Option<f64>,
}

impl Total {
    fn add(&mut self, row: &UsageRow) {
        self.requests += row.requests;
        self.errors += row.errors;
        let (sum, add) = (&mut self.tokens, &row.tokens);
        sum.input += add.input;
        sum.cache_read += add.cache_read;
        sum.cache_write += add.cache_write;
        sum.output += add.output;
        sum.reasoning += add.reasoning;
    }
}

fn line(
    [day, model, front_end]: [&str; 3],
    requests: u64,
    errors: u64,
    tokens: &Tokens,
    dollars: Option<f64>,
) -> [String; COLUMNS] {
    [
        day.to_owned(),
        model.to_owned(),
        front_end.to_owned(),
        thousands(requests),
        thousands(errors),
        match hit_rate(tokens).filter(|_| tokens.cache_read > 0) {
            // The cache hit rate, where a provider cache served any of it.
            Some(rate) => format!(
                "{} ({}, {:.0}% hit)",
                thousands(tokens.total_input()),
                thousands(tokens.cache_read),
                rate * 100.0
            ),
            None => format!(
                "{} ({})",
                thousands(tokens.total_input()),
                thousands(tokens.cache_read)
            ),
        },
        format!(
            "{} ({})",
            thousands(tokens.output),
            thousands(tokens.reasoning)
        ),
        dollars.map_or_else(|| "—".to_owned(), |dollars| format!("${dollars:.4}")),
    ]
}

/// `1234567` → `1,234,567`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn plural(count: u32, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use corvid_config::Flags;
    use corvid_store::{Outcome, UsageRecord};

    /// 2025-01-01T00:00:00Z in Unix milliseconds: long enough ago that `--days 1` skips it.
    const JAN_1: i64 = 1_735_689_600_000;

    fn loaded(home: &Path, config_toml: &str) -> Loaded {
        std::fs::write(home.join("config.toml"), config_toml).unwrap();
        let env = HashMap::from([("CORVID_HOME".to_owned(), home.display().to_string())]);
        corvid_config::load(&Flags::default(), &env).unwrap()
    }

    fn record(at: i64, model: &str, outcome: Outcome, tokens: Tokens) -> UsageRecord {
        UsageRecord {
            at,
            front_end: "gateway".to_owned(),
            route: "chat_completions".to_owned(),
            inbound: "openai-chat".to_owned(),
            provider: "xai".to_owned(),
            model: model.to_owned(),
            status: if outcome == Outcome::Error { 502 } else { 200 },
            outcome,
            latency_ms: 900,
            ttfb_ms: Some(250),
            tokens,
            attempts: 1,
            prompt: None,
            billing: None,
            key_index: None,
            rule: None,
        }
    }

    fn tokens(
        input: u64,
        cache_read: u64,
        cache_write: u64,
        output: u64,
        reasoning: u64,
    ) -> Tokens {
        Tokens {
            input,
            cache_read,
            cache_write,
            output,
            reasoning,
        }
    }

    const PRICES: &str = r#"
[prices."grok-4.6"]
input = 3.0
cached_input = 0.75
output = 15.0
"#;

    /// Two days, two models; only grok-4.6 has a price.
    fn seeded(home: &Path) -> Loaded {
        let loaded = loaded(home, PRICES);
        let mut store = Store::open(&loaded.paths.database()).unwrap();
        store
            .record_all(&[
                record(
                    JAN_1 - 1,
                    "grok-4.6",
                    Outcome::Ok,
                    tokens(1_000_000, 2_000_000, 0, 100_000, 60_000),
                ),
                record(JAN_1 - 2, "grok-4.6", Outcome::Error, Tokens::default()),
                record(
                    JAN_1 + 1,
                    "claude-sonnet-4.5",
                    Outcome::Ok,
                    tokens(1_200, 800, 400, 300, 0),
                ),
                record(
                    JAN_1 + 2,
                    "grok-4.6",
                    Outcome::StreamError,
                    tokens(10, 0, 0, 5, 2),
                ),
                // An agent turn in `corvid exec`: its own row beside the gateway's.
                UsageRecord {
                    front_end: "exec".to_owned(),
                    route: "agent".to_owned(),
                    inbound: "canonical".to_owned(),
                    ..record(
                        JAN_1 + 3,
                        "grok-4.6",
                        Outcome::Ok,
                        tokens(1_000, 0, 0, 100, 0),
                    )
                },
            ])
            .unwrap();
        loaded
    }

    #[test]
    fn the_table_shows_each_day_and_model_and_a_total() {
        let home = tempfile::tempdir().unwrap();
        let loaded = seeded(home.path());
        let text = usage(&loaded, None, false).unwrap();
        let config = loaded.paths.config_file.display();
        let expected = format!(
            "\
day         model              front end  requests  errors                  input (cached)  output (reasoning)     cost
2024-12-31  grok-4.6           gateway           2       1  3,000,000 (2,000,000, 67% hit)    100,000 (60,000)  $6.0000
2025-01-01  claude-sonnet-4.5  gateway           1       0            2,400 (800, 33% hit)             300 (0)        —
2025-01-01  grok-4.6           exec              1       0                       1,000 (0)             100 (0)  $0.0045
2025-01-01  grok-4.6           gateway           1       1                          10 (0)               5 (2)  $0.0001
total                                            5       2  3,003,410 (2,000,800, 67% hit)    100,405 (60,002)  $6.0046
no price for claude-sonnet-4.5: add [prices.\"<model>\"] input = …, output = … ($ per million tokens) to {config}
"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn json_is_an_array_of_rows_with_cost_or_null() {
        let home = tempfile::tempdir().unwrap();
        let loaded = seeded(home.path());
        let text = usage(&loaded, None, true).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let row =
            |day: &str, model: &str, front_end: &str, counts: [u64; 7], cost: serde_json::Value| {
                let input = counts[2] + counts[3] + counts[4];
                serde_json::json!({
                    "day": day, "model": model, "provider": "xai", "front_end": front_end,
                    "requests": counts[0], "errors": counts[1],
                    "input": counts[2], "cache_read": counts[3], "cache_write": counts[4],
                    "output": counts[5], "reasoning": counts[6],
                    "cache_hit_rate": counts[3] as f64 / input as f64, "cost_usd": cost,
                })
            };
        assert_eq!(
            value,
            serde_json::json!([
                row(
                    "2024-12-31",
                    "grok-4.6",
                    "gateway",
                    [2, 1, 1_000_000, 2_000_000, 0, 100_000, 60_000],
                    serde_json::json!(6.0)
                ),
                row(
                    "2025-01-01",
                    "claude-sonnet-4.5",
                    "gateway",
                    [1, 0, 1_200, 800, 400, 300, 0],
                    serde_json::Value::Null
                ),
                row(
                    "2025-01-01",
                    "grok-4.6",
                    "exec",
                    [1, 0, 1_000, 0, 0, 100, 0],
                    serde_json::json!((1_000.0 * 3.0 + 100.0 * 15.0) / 1e6)
                ),
                row(
                    "2025-01-01",
                    "grok-4.6",
                    "gateway",
                    [1, 1, 10, 0, 0, 5, 2],
                    serde_json::json!((10.0 * 3.0 + 5.0 * 15.0) / 1e6)
                ),
            ])
        );
    }

    #[test]
    fn days_keeps_only_recent_days() {
        let home = tempfile::tempdir().unwrap();
        let loaded = seeded(home.path());
        // The seeded records are from 2024-12-31 and 2025-01-01; add one from today.
        let mut store = Store::open(&loaded.paths.database()).unwrap();
        store
            .record(&record(
                now_ms(),
                "grok-4.6",
                Outcome::Ok,
                tokens(1, 0, 0, 1, 0),
            ))
            .unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&usage(&loaded, Some(1), true).unwrap()).unwrap();
        let rows = value.as_array().unwrap();
        assert_eq!(rows.len(), 1, "{value:#}");
        assert_eq!(rows[0]["requests"], 1);
    }

    #[test]
    fn since_is_the_start_of_the_utc_day_n_minus_one_days_ago() {
        let noon = JAN_1 + DAY_MS / 2;
        assert_eq!(since_ms(1, noon), JAN_1);
        assert_eq!(since_ms(0, noon), JAN_1);
        assert_eq!(since_ms(7, noon), JAN_1 - 6 * DAY_MS);
        assert_eq!(since_ms(1, JAN_1), JAN_1);
    }

    #[test]
    fn without_a_database_it_says_so_and_creates_nothing() {
        let home = tempfile::tempdir().unwrap();
        let loaded = loaded(home.path(), "");
        let path = loaded.paths.database();
        assert_eq!(
            usage(&loaded, None, false).unwrap(),
            format!("no usage recorded yet ({})\n", path.display())
        );
        assert_eq!(usage(&loaded, Some(7), true).unwrap(), "[]\n");
        assert!(!path.exists());
    }

    #[test]
    fn an_empty_range_says_how_many_days_were_searched() {
        let home = tempfile::tempdir().unwrap();
        let loaded = loaded(home.path(), "");
        drop(Store::open(&loaded.paths.database()).unwrap());
        assert_eq!(
            usage(&loaded, Some(7), false).unwrap(),
            format!(
                "no usage recorded in the last 7 days ({})\n",
                loaded.paths.database().display()
            )
        );
    }

    #[test]
    fn thousands_groups_digits() {
        let grouped: Vec<String> = [0, 999, 1_000, 123_456, 1_234_567]
            .into_iter()
            .map(thousands)
            .collect();
        assert_eq!(grouped, ["0", "999", "1,000", "123,456", "1,234,567"]);
    }

    /// One model name served by two providers (a local server and a hosted one) is shown as
    /// `provider/model`; a name one provider served stays bare.
    #[test]
    fn a_model_two_providers_served_is_named_with_its_provider() {
        let row = |model: &str, provider: &str| UsageRow {
            day: "2025-01-01".to_owned(),
            model: model.to_owned(),
            provider: provider.to_owned(),
            front_end: "gateway".to_owned(),
            requests: 1,
            errors: 0,
            tokens: Tokens::default(),
        };
        let rows = [
            row("qwen2.5-coder", "llamacpp"),
            row("qwen2.5-coder", "openrouter"),
            row("grok-4.6", "xai"),
        ];
        assert_eq!(
            shared_models(&rows).into_iter().collect::<Vec<_>>(),
            ["qwen2.5-coder"]
        );
        let table = render_table(&rows, &BTreeMap::new(), Path::new("config.toml"));
        assert!(table.contains("llamacpp/qwen2.5-coder"), "{table}");
        assert!(table.contains("openrouter/qwen2.5-coder"), "{table}");
        assert!(!table.contains("xai/grok-4.6"), "{table}");
    }

    /// Issue 22 item 6: a model corvid's catalog knows is priced without `[prices]`.
    #[test]
    fn the_catalog_prices_what_config_does_not() {
        let home = tempfile::tempdir().unwrap();
        let loaded = loaded(home.path(), "");
        let mut store = Store::open(&loaded.paths.database()).unwrap();
        store
            .record_all(&[record(
                JAN_1 + 1,
                "claude-sonnet-4-5-20250929",
                Outcome::Ok,
                tokens(1_000_000, 0, 0, 100_000, 0),
            )])
            .unwrap();
        let table = usage(&loaded, None, false).unwrap();
        // $3 per million in, $15 per million out.
        assert!(table.contains("$4.5000"), "{table}");
        assert!(!table.contains("no price"), "{table}");
    }
}
