//! The helper's command line, `--policy <json> -- <program> [arguments…]`, read the same way
//! on every platform (corvid builds it, so an error here is a bug, reported before anything runs).

use std::ffi::OsString;

use super::SandboxPolicy;

/// Why the helper's command line cannot be used.
#[derive(Debug, thiserror::Error)]
pub(super) enum HelperArgsError {
    #[error("--policy needs a value")]
    NoPolicyValue,
    #[error("the policy is not UTF-8")]
    PolicyNotUtf8,
    #[error("bad policy: {0}")]
    Policy(#[source] serde_json::Error),
    #[error("unexpected argument {0}")]
    Unexpected(String),
    #[error("--policy is required")]
    NoPolicy,
}

pub(super) fn parse(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(SandboxPolicy, Vec<OsString>), HelperArgsError> {
    let mut args = args.into_iter();
    let mut policy = None;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--policy") => {
                let text = args.next().ok_or(HelperArgsError::NoPolicyValue)?;
                let text = text.to_str().ok_or(HelperArgsError::PolicyNotUtf8)?;
                policy = Some(serde_json::from_str(text).map_err(HelperArgsError::Policy)?);
            }
            Some("--") => break,
            _ => {
                return Err(HelperArgsError::Unexpected(
                    arg.to_string_lossy().into_owned(),
                ));
            }
        }
    }
    let policy = policy.ok_or(HelperArgsError::NoPolicy)?;
    Ok((policy, args.collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    /// (A good command line is read by every sandboxed command the sandbox tests run.)
    #[test]
    fn a_wrong_command_line_is_named() {
        let said = |list: &[&str]| parse(args(list)).unwrap_err().to_string();
        assert_eq!(said(&["--policy"]), "--policy needs a value");
        assert_eq!(said(&["--", "ls"]), "--policy is required");
        assert_eq!(said(&["--verbose"]), "unexpected argument --verbose");
        assert!(said(&["--policy", "{"]).starts_with("bad policy: "));
    }
}
