use pretty_assertions::assert_eq;

use super::*;
use crate::usage::tests::sample;

fn pragma_text(store: &Store, name: &str) -> String {
    store
        .conn
        .pragma_query_value(None, name, |row| row.get(0))
        .unwrap()
}

fn pragma_int(store: &Store, name: &str) -> i64 {
    store
        .conn
        .pragma_query_value(None, name, |row| row.get(0))
        .unwrap()
}

fn count(store: &Store) -> i64 {
    store
        .conn
        .query_row("SELECT COUNT(*) FROM requests", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn opening_twice_applies_migrations_once_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    store.record(&sample(1_000, "grok-4.6")).unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    assert_eq!(count(&store), 1);
}

/// A ledger written before the front-end column existed keeps its rows, each counted as the
/// gateway's (the only writer then).
#[test]
fn rows_from_before_the_front_end_column_are_the_gateways() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    {
        let mut store = Store {
            conn: rusqlite::Connection::open(&path).unwrap(),
        };
        store.migrate(&MIGRATIONS[..2]).unwrap();
        store
            .conn
            .execute(
                "INSERT INTO requests (at, route, inbound, provider, model, status, outcome, latency_ms)
                 VALUES (1000, 'chat_completions', 'openai-chat', 'xai', 'grok-4.6', 200, 'ok', 5)",
                [],
            )
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let rows = store.usage_by_day_and_model(None).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].front_end, "gateway");
}

#[test]
fn a_file_database_uses_wal_normal_sync_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("corvid.db")).unwrap();
    assert_eq!(pragma_text(&store, "journal_mode"), "wal");
    assert_eq!(pragma_int(&store, "synchronous"), 1); // NORMAL
    assert_eq!(pragma_int(&store, "foreign_keys"), 1);
    assert_eq!(pragma_int(&store, "busy_timeout"), 5_000);
}

#[test]
fn in_memory_store_has_the_schema() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(pragma_text(&store, "journal_mode"), "memory");
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    assert_eq!(count(&store), 0);
}

#[cfg(unix)]
#[test]
fn creates_a_private_directory_and_file() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("nested").join("corvid");
    let path = data_dir.join("corvid.db");
    let _store = Store::open(&path).unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data_dir), 0o700);
    assert_eq!(mode(&dir.path().join("nested")), 0o700);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn later_steps_apply_in_order_on_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let mut store = Store::open(&path).unwrap();
    store.record(&sample(1_000, "grok-4.6")).unwrap();

    let mut steps = MIGRATIONS.to_vec();
    steps.push("CREATE TABLE later_table (id INTEGER PRIMARY KEY, title TEXT NOT NULL);");
    steps.push("ALTER TABLE later_table ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;");
    store.migrate(&steps).unwrap();
    assert_eq!(store.schema_version().unwrap(), steps.len() as i64);
    store
        .conn
        .execute(
            "INSERT INTO later_table (title, created_at) VALUES ('x', 1)",
            [],
        )
        .unwrap();
    // Idempotent: running the same list again changes nothing.
    store.migrate(&steps).unwrap();
    assert_eq!(store.schema_version().unwrap(), steps.len() as i64);
    assert_eq!(count(&store), 1);
}

#[test]
fn a_failing_step_rolls_back_every_step_of_the_upgrade() {
    let mut store = Store::open_in_memory().unwrap();
    let mut steps = MIGRATIONS.to_vec();
    steps.push("CREATE TABLE good (x INTEGER);");
    steps.push("THIS IS NOT SQL;");
    assert!(matches!(store.migrate(&steps), Err(StoreError::Sqlite(_))));
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let good: i64 = store
        .conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'good'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(good, 0);
}

#[test]
fn a_database_from_a_newer_corvid_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let store = Store::open(&path).unwrap();
    store.conn.pragma_update(None, "user_version", 99).unwrap();
    drop(store);

    let error = Store::open(&path).unwrap_err();
    assert!(
        matches!(error, StoreError::TooNew { found: 99, known } if known == MIGRATIONS.len() as i64),
        "{error:?}"
    );
}
