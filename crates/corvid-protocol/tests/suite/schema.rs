//! The checked-in schema is the one the types generate.

use std::path::PathBuf;

use corvid_protocol::schema_json;

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/protocol.schema.json")
}

#[test]
fn checked_in_schema_is_current() {
    let generated = schema_json();
    let path = schema_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is out of date with the protocol types; regenerate it with \
         `UPDATE_SCHEMA=1 cargo test -p corvid-protocol` and commit the result",
        path.display()
    );
}
