//! A routing fallback under a budget, end to end on PostgreSQL: a key (in a team, both with
//! budgets) asks for a route whose first target fails (500, then 429) and whose second answers.
//! The request takes one hold (one reservation per budget, however many attempts), every
//! attempt is a ledger row of its own (`<id>`, `<id>.1`), the hold is released when the request
//! ends, and the budgets' spend is the sum of the rows' costs.
//! `scripts/team-services cargo test -p corvid-cli --test team_fallback`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use http::StatusCode;
use serde_json::{Value, json};
use team::*;

/// The route's name: xAI's grok-4.6 first, the backup provider's second.
const ROUTE: &str = "team-route";

/// A chat request for [`ROUTE`] capped at 10 output tokens. A stream begins another
/// conversation than a plain request (its first turn differs), so stickiness does not send the
/// second straight to where the first ended.
fn routed_body(stream: bool) -> Value {
    let mut body = chat_body(10, stream);
    body["model"] = json!(ROUTE);
    if !stream {
        body["messages"][0]["content"] = json!("hello again");
    }
    body
}

/// The hold [`routed_body`] takes, in µ$ (as [`estimate`] counts it).
fn routed_estimate(stream: bool) -> i64 {
    let bytes = serde_json::to_vec(&routed_body(stream)).unwrap().len() as i64;
    (bytes + 2) / 3 + 10 * 1000
}

/// Sends a request for [`ROUTE`] with `key`.
async fn routed(
    http: &reqwest::Client,
    server: &Server,
    key: &str,
    stream: bool,
) -> reqwest::Response {
    http.post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&routed_body(stream))
        .send()
        .await
        .unwrap()
}

/// The ledger's rows of the request whose first attempt's id is `id`: (request id, provider,
/// outcome, cost), in the order written.
async fn attempts(db: &tokio_postgres::Client, id: &str) -> Vec<(String, String, String, i64)> {
    db.query(
        "SELECT request_id, provider, outcome, cost_micros FROM usage_events
         WHERE split_part(request_id, '.', 1) = $1 ORDER BY request_id",
        &[&id],
    )
    .await
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
    .collect()
}

/// The one request id with a row from the backup provider and none seen before.
async fn newest_request(db: &tokio_postgres::Client, seen: &[String]) -> String {
    for _ in 0..200 {
        let rows = db
            .query(
                "SELECT split_part(request_id, '.', 1) FROM usage_events WHERE provider = 'backup'",
                &[],
            )
            .await
            .unwrap();
        let fresh: Vec<String> = rows
            .iter()
            .map(|row| row.get::<_, String>(0))
            .filter(|id| !seen.contains(id))
            .collect();
        if let [id] = fresh.as_slice() {
            return id.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no new row from the backup provider");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_takes_one_hold_charges_every_attempt_and_releases_it() {
    let backup = MockUpstream::start().await;
    let routing = format!(
        "\n[providers.backup]\nkind = \"openai-chat\"\nbase_url = \"{}\"\n\
         api_key_env = \"XAI_API_KEY\"\n\
         [routes.{ROUTE}]\ntargets = [\"xai/{MODEL}\", \"backup/{MODEL}\"]\n",
        backup.base_url()
    );
    let Some(team) = Team::migrated(&routing).await else {
        return;
    };
    let (home, database) = (team.home(), team.database.clone());
    stdout(&run(corvid(home, &database).args([
        "teams",
        "create",
        "--name",
        "eng",
        "--budget-usd",
        "10",
        "--period",
        "day",
    ])));
    let key = create_key(
        home,
        &database,
        &["--name", "fred", "--team", "eng", "--budget-usd", "5"],
    );
    let server = start_server(home, &database).await;
    let http = client();
    let db = connect(&database).await;

    // A streamed answer from the second target, slow enough to look at the hold mid-way.
    team.upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": "upstream broke", "type": "server_error"}}),
        ),
    );
    backup.enqueue(
        "/v1/chat/completions",
        slow_stream(Duration::from_millis(150), 6),
    );
    let mut stream = routed(&http, &server, &key, true).await;
    assert_eq!(stream.status(), 200);
    assert_eq!(
        stream.headers()["x-corvid-target"],
        format!("backup/{MODEL}").as_str()
    );
    stream.chunk().await.unwrap();
    // One hold: one reservation per budget (key and team), both of one request.
    let held = db
        .query(
            "SELECT r.request_id, b.scope, r.amount FROM reservations r
             JOIN budgets b ON b.id = r.budget_id ORDER BY b.scope",
            &[],
        )
        .await
        .unwrap();
    let holds: Vec<(String, String, i64)> = held
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    assert_eq!(holds.len(), 2, "{holds:?}");
    assert_eq!(holds[0].0, holds[1].0, "one request's hold: {holds:?}");
    assert_eq!(
        (holds[0].1.as_str(), holds[1].1.as_str()),
        ("key:fred", "team:eng")
    );
    assert_eq!(holds[0].2, routed_estimate(true));
    assert_eq!(holds[1].2, routed_estimate(true));
    while stream.chunk().await.unwrap().is_some() {}
    let first = holds[0].0.clone();

    // The same with a 429 first, not streamed.
    team.upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::TOO_MANY_REQUESTS,
            json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
        )
        .with_header("retry-after", "30"),
    );
    let answered = routed(&http, &server, &key, false).await;
    assert_eq!(answered.status(), 200);
    let body: Value = answered.json().await.unwrap();
    assert_eq!(body["usage"]["completion_tokens"], 5, "{body}");
    let second = newest_request(&db, std::slice::from_ref(&first)).await;

    // Every hold released, the rows settled: spend is the rows' sum, to the micro-dollar.
    let spent = settled(&db, "key:fred", Duration::from_secs(10)).await;
    let team_spent = settled(&db, "team:eng", Duration::from_secs(10)).await;
    let mut total = 0;
    for id in [&first, &second] {
        let rows = attempts(&db, id).await;
        assert_eq!(rows.len(), 2, "two attempts of {id}: {rows:?}");
        assert_eq!(
            (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].2.as_str()),
            (id.as_str(), "xai", "error"),
            "{rows:?}"
        );
        assert_eq!(
            (rows[1].0.clone(), rows[1].1.as_str(), rows[1].2.as_str()),
            (format!("{id}.1"), "backup", "ok"),
            "{rows:?}"
        );
        // 12 input tokens at 1 µ$, 5 output at 1,000 µ$.
        assert_eq!(rows[1].3, 5_012, "{rows:?}");
        total += rows.iter().map(|row| row.3).sum::<i64>();
    }
    assert_eq!(spent, total);
    assert_eq!(team_spent, total);
    let left: i64 = db
        .query_one("SELECT count(*) FROM reservations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "no hold left");
    server.stop();
}
