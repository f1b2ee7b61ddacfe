//! The helper's command line, `--policy <json> -- <program> [arguments…]`, on macOS and the
//! platforms without a sandbox (Linux's `enforce` reads it with its own typed errors).

use std::ffi::OsString;

use super::SandboxPolicy;

pub(super) fn parse(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(SandboxPolicy, Vec<OsString>), String> {
    let mut args = args.into_iter();
    let mut policy = None;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--policy") => {
                let text = args.next().ok_or("--policy needs a value")?;
                let text = text.to_str().ok_or("the policy is not UTF-8")?;
                policy = Some(
                    serde_json::from_str(text).map_err(|error| format!("bad policy: {error}"))?,
                );
            }
            Some("--") => break,
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    let policy = policy.ok_or("--policy is required")?;
    Ok((policy, args.collect()))
}
