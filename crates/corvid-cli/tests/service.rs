//! `corvid service` on Linux: the systemd user unit it writes is one systemd accepts.

#![cfg(target_os = "linux")] // the launchd agent's plist is checked by a unit test
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Output, Stdio};

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

fn corvid(home: &Path, args: &[&str]) -> Output {
    Command::new(CORVID)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORVID_HOME", home.join("corvid"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn install_writes_a_unit_systemd_accepts_and_uninstall_removes_it() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("my config.toml");
    std::fs::write(&config, "port = 8799\n").unwrap();
    let installed = corvid(
        home.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "service",
            "install",
            "--no-start",
        ],
    );
    assert!(installed.status.success(), "{installed:?}");
    let unit = home.path().join("config/systemd/user/corvid.service");
    let said = String::from_utf8_lossy(&installed.stdout);
    assert!(
        said.contains(&format!("wrote {}", unit.display())),
        "{said}"
    );
    assert!(said.contains(
        "systemctl --user daemon-reload && systemctl --user enable --now corvid.service"
    ));
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains(&format!(
            "ExecStart=\"{CORVID}\" \"serve\" \"--config\" \"{}\"",
            config.display()
        )),
        "{text}"
    );

    let status = corvid(home.path(), &["service", "status"]);
    assert!(status.status.success(), "{status:?}");
    assert!(
        String::from_utf8_lossy(&status.stdout)
            .contains(&format!("service file: {}", unit.display()))
    );

    match Command::new("systemd-analyze").arg("--version").output() {
        Ok(found) if found.status.success() => {
            let verified = Command::new("systemd-analyze")
                .arg("verify")
                .arg(&unit)
                .output()
                .unwrap();
            assert!(
                verified.status.success() && verified.stderr.is_empty(),
                "systemd-analyze verify: {}",
                String::from_utf8_lossy(&verified.stderr)
            );
        }
        _ => println!("skipped `systemd-analyze verify`: systemd-analyze is not installed here"),
    }

    let removed = corvid(home.path(), &["service", "uninstall"]);
    assert!(removed.status.success(), "{removed:?}");
    assert!(!unit.exists());
    let again = corvid(home.path(), &["service", "uninstall"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("no service file at"));
}
