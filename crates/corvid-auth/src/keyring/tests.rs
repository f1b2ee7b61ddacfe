use std::ffi::OsString;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::{KeyringBackend, KeyringError, SecretTool, from_hex, to_hex};
use crate::Secret;

/// A stand-in for `secret-tool` that keeps items as files next to the script. It is run through
/// `sh` rather than executed, so a freshly written script never races another test's fork.
pub(crate) const FAKE_SECRET_TOOL: &str = r#"
dir="$(dirname "$0")/items"
mkdir -p "$dir"
cmd="$1"; shift
account=""
while [ $# -gt 0 ]; do
  case "$1" in
    account) account="$2"; shift 2;;
    *) shift;;
  esac
done
case "$cmd" in
  store) cat > "$dir/$account";;
  lookup) [ -f "$dir/$account" ] || exit 1; cat "$dir/$account";;
  clear) rm -f "$dir/$account";;
  *) echo "unknown command" >&2; exit 2;;
esac
"#;

/// A fake `secret-tool` in `dir`.
pub(crate) fn fake_secret_tool(dir: &Path) -> SecretTool {
    let script = dir.join("secret-tool.sh");
    std::fs::write(&script, FAKE_SECRET_TOOL).unwrap();
    SecretTool::with_command(vec![OsString::from("sh"), script.into_os_string()])
}

#[test]
fn secret_tool_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let tool = fake_secret_tool(dir.path());
    assert_eq!(tool.load("xai-oauth").unwrap(), None);
    tool.store(
        "xai-oauth",
        "corvid xAI sign-in",
        &Secret::new("{\"a\":\"b c\"}"),
    )
    .unwrap();
    assert_eq!(
        tool.load("xai-oauth").unwrap(),
        Some(Secret::new("{\"a\":\"b c\"}"))
    );
    // The value went in on stdin, never on the command line.
    let stored = std::fs::read_to_string(dir.path().join("items/xai-oauth")).unwrap();
    assert_eq!(stored, "{\"a\":\"b c\"}");
    tool.delete("xai-oauth").unwrap();
    assert_eq!(tool.load("xai-oauth").unwrap(), None);
    tool.delete("xai-oauth").unwrap();
}

#[test]
fn secret_tool_errors_carry_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.sh");
    std::fs::write(
        &script,
        "echo 'Cannot autolaunch D-Bus without X11 $DISPLAY' >&2; exit 1\n",
    )
    .unwrap();
    let tool = SecretTool::with_command(vec![OsString::from("sh"), script.into_os_string()]);
    let err = tool.load("xai-oauth").unwrap_err();
    assert!(matches!(err, KeyringError::Failed { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "secret-tool failed: Cannot autolaunch D-Bus without X11 $DISPLAY"
    );
    assert!(tool.store("xai-oauth", "label", &Secret::new("v")).is_err());
}

#[test]
fn a_missing_tool_is_a_spawn_error() {
    let tool = SecretTool::new("/nonexistent/secret-tool".into());
    assert!(matches!(
        tool.load("x").unwrap_err(),
        KeyringError::Spawn { .. }
    ));
}

#[cfg(target_os = "linux")]
#[test]
fn linux_needs_the_tool_and_a_session_bus() {
    use super::choose_keyring;
    use std::collections::HashMap;

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret-tool"), "").unwrap();
    let path = dir.path().display().to_string();
    let env_with = |pairs: &[(&str, &str)]| {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name: &str| map.get(name).cloned()
    };

    let headless = env_with(&[("PATH", &path)]);
    assert!(choose_keyring(&headless).is_none());

    let no_tool = env_with(&[
        ("PATH", "/nonexistent"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:x"),
    ]);
    assert!(choose_keyring(&no_tool).is_none());

    let desktop = env_with(&[("PATH", &path), ("DBUS_SESSION_BUS_ADDRESS", "unix:x")]);
    let backend = choose_keyring(&desktop).unwrap();
    assert_eq!(backend.name(), "Secret Service (secret-tool)");

    let turned_off = env_with(&[
        ("PATH", &path),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:x"),
        ("CORVID_KEYRING", "off"),
    ]);
    assert!(choose_keyring(&turned_off).is_none());

    let runtime_dir = tempfile::tempdir().unwrap();
    std::fs::write(runtime_dir.path().join("bus"), "").unwrap();
    let runtime = runtime_dir.path().display().to_string();
    let via_runtime_dir = env_with(&[("PATH", &path), ("XDG_RUNTIME_DIR", &runtime)]);
    assert!(choose_keyring(&via_runtime_dir).is_some());
}

#[test]
fn hex_round_trip() {
    assert_eq!(to_hex("{\"a\": 1}"), "7b2261223a20317d");
    assert_eq!(from_hex("7b2261223a20317d").as_deref(), Some("{\"a\": 1}"));
    assert_eq!(from_hex("7b2"), None);
    assert_eq!(from_hex("zz"), None);
}
