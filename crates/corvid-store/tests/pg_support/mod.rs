//! What the PostgreSQL test binaries share.

use corvid_store::team::new_request_id;

/// A fresh, empty database on the test server, or `None` (and a note) without one.
pub(crate) async fn fresh_database() -> Option<String> {
    let Ok(admin_url) = std::env::var("CORVID_TEST_POSTGRES_URL") else {
        eprintln!("skipped: CORVID_TEST_POSTGRES_URL is not set (run under scripts/team-services)");
        return None;
    };
    let (client, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let name = format!("t_{}", &new_request_id()[..16]);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    Some(admin_url.replace("/postgres", &format!("/{name}")))
}
