//! Choosing the agent's sandbox: the user's setting (`--sandbox`, `sandbox =` in config.toml),
//! this binary as the sandbox helper, and what corvid itself keeps secret.

use corvid_config::{Loaded, SandboxSetting};
use corvid_tools::Sandbox;

/// The sandbox for the agent's commands: this binary's hidden `sandbox-exec` subcommand on this
/// kernel, hiding corvid's configuration, env file and database and the secret stores under
/// `$HOME`; off when the user said so (commands still start through the helper so they die
/// with corvid).
pub(crate) fn sandbox(loaded: &Loaded, flag: Option<SandboxSetting>) -> Sandbox {
    let helper = std::env::current_exe();
    if flag.unwrap_or(loaded.config.sandbox) == SandboxSetting::Off {
        return match helper {
            Ok(helper) => Sandbox::off_with_helper(helper),
            Err(_) => Sandbox::off(),
        };
    }
    let helper = match helper {
        Ok(helper) => helper,
        Err(error) => {
            return Sandbox::without_helper(format!(
                "corvid cannot find its own program to run the sandbox helper ({error})"
            ));
        }
    };
    let paths = &loaded.paths;
    let hidden = vec![
        paths.dir.clone(),
        paths.data_dir.clone(),
        paths.env_file.clone(),
        paths.config_file.clone(),
    ];
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(std::path::PathBuf::from);
    Sandbox::new(helper, hidden, home)
}

/// A `--sandbox` value that is neither on nor off.
#[derive(Debug, thiserror::Error)]
#[error("expected on or off, got {0:?}")]
pub(crate) struct NotOnOrOff(String);

/// `--sandbox on|off`.
pub(crate) fn parse_setting(value: &str) -> Result<SandboxSetting, NotOnOrOff> {
    SandboxSetting::parse(value).ok_or_else(|| NotOnOrOff(value.to_owned()))
}
