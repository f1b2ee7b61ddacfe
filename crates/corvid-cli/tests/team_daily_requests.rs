//! A key's daily request quota on PostgreSQL (`corvid keys create --daily-requests N`), across
//! two `corvid serve` instances: exactly N requests a UTC day are admitted however they are
//! spread, the rest get 429 in the caller's dialect naming the quota, with `Retry-After` until
//! midnight UTC; other keys are not touched.
//! `scripts/team-services cargo test -p corvid-cli --test team_daily_requests`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use serde_json::{Value, json};
use team::*;

/// Seconds until the next midnight UTC.
fn until_midnight_s() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    86_400 - now % 86_400
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_daily_request_quota_holds_across_two_instances() {
    let Some(team) = Team::migrated("").await else {
        return;
    };
    let (home, database) = (team.home(), team.database.clone());
    let key = create_key(
        home,
        &database,
        &["--name", "dana", "--daily-requests", "3"],
    );
    let other = create_key(home, &database, &["--name", "erin"]);
    let listed = stdout(&run(corvid(home, &database).args(["keys", "list"])));
    assert!(listed.contains("3 requests/day"), "{listed}");
    let a = start_server(home, &database).await;
    let b = start_server(home, &database).await;
    let http = client();

    // Eight at once, split across both instances: three admitted.
    let asks: Vec<_> = (0..8)
        .map(|index| {
            let (http, key) = (http.clone(), key.clone());
            let server = if index % 2 == 0 { &a } else { &b };
            let url = server.url("/v1/chat/completions");
            tokio::spawn(async move {
                http.post(url)
                    .bearer_auth(key)
                    .json(&chat_body(10, false))
                    .send()
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut admitted = 0;
    for ask in asks {
        let response = ask.await.unwrap();
        match response.status().as_u16() {
            200 => admitted += 1,
            429 => {
                let wait: u64 = response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                let midnight = until_midnight_s();
                assert!(
                    wait > 0 && wait.abs_diff(midnight) <= 5,
                    "Retry-After {wait} s, midnight in {midnight} s"
                );
                let answer: Value = response.json().await.unwrap();
                let message = answer["error"]["message"].as_str().unwrap();
                assert!(
                    message.contains("daily request quota (3 requests)"),
                    "{answer}"
                );
            }
            status => panic!("unexpected {status}"),
        }
    }
    assert_eq!(admitted, 3);

    // In Anthropic's dialect too, through the other instance.
    let refused = http
        .post(b.url("/v1/messages"))
        .header("x-api-key", &key)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": MODEL, "max_tokens": 10,
                      "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().get("retry-after").is_some());
    let answer: Value = refused.json().await.unwrap();
    assert_eq!(answer["type"], "error", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("daily request quota"),
        "{answer}"
    );

    // Another key has no quota; the count lives in PostgreSQL.
    assert_eq!(chat(&http, &a, Some(&other), 10, false).await.status(), 200);
    let db = connect(&database).await;
    let counted: i32 = db
        .query_one(
            "SELECT requests FROM key_daily_requests d JOIN client_keys k ON k.id = d.key_id
             WHERE k.name = 'dana'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(counted, 3);
    a.stop();
    b.stop();
}
