use std::path::PathBuf;

use super::*;

/// Landlock's rules (Linux only: the module they test is).
#[cfg(target_os = "linux")]
mod landlock_rules {
    use super::super::rules::{Grant, canonical_hidden, split};

    #[test]
    fn a_grant_without_hidden_paths_is_one_rule() {
        let dir = tempfile::tempdir().unwrap();
        let mut rules = Vec::new();
        split(dir.path(), Grant::Write, &[], &mut rules);
        assert_eq!(rules, vec![(dir.path().to_path_buf(), Grant::Write)]);
    }

    #[test]
    fn a_hidden_path_is_carved_out_by_granting_its_siblings() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("home/code")).unwrap();
        std::fs::write(root.join("home/.bashrc"), "").unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/link-to-ssh")).unwrap();
        let hidden = canonical_hidden(&[root.join("home/link-to-ssh"), root.join("missing")]);
        assert_eq!(hidden, vec![root.join("home/.ssh")]);
        let mut rules = Vec::new();
        split(&root, Grant::Read, &hidden, &mut rules);
        rules.sort();
        let mut expected = vec![
            (root.clone(), Grant::List),
            (root.join("home"), Grant::List),
            (root.join("home/.bashrc"), Grant::Read),
            (root.join("home/code"), Grant::Read),
            (root.join("other"), Grant::Read),
        ];
        expected.sort();
        assert_eq!(
            rules, expected,
            "no rule reaches .ssh, not even through the link"
        );
        let mut writes = Vec::new();
        split(&root, Grant::Write, &hidden, &mut writes);
        assert!(
            writes.iter().all(|(path, grant)| *grant == Grant::Write
                && path != &root
                && path != &root.join("home")),
            "folders on the way to a hidden path get no write right: {writes:?}"
        );
        let mut inside = Vec::new();
        split(&root.join("home/.ssh"), Grant::Write, &hidden, &mut inside);
        assert!(inside.is_empty(), "a grant inside a hidden path is dropped");
    }
}

// The words are Landlock's (macOS describes Seatbelt).
#[cfg(target_os = "linux")]
#[test]
fn confinement_follows_the_mode_and_the_widening() {
    let probe = SandboxProbe {
        landlock_abi: Some(7),
        seccomp: true,
        namespaces: false,
    };
    let sandbox = Sandbox::with_probe("/helper", Vec::new(), None, probe);
    assert!(sandbox.is_enforced());
    assert_eq!(
        sandbox.confinement(Widening::default()),
        Confinement::Sandboxed
    );
    let network = Widening {
        network: true,
        ..Widening::default()
    };
    assert_eq!(sandbox.confinement(network), Confinement::Widened(network));
    assert_eq!(
        sandbox.describe(),
        "landlock ABI 7 + seccomp; writes only in the project and temp folders; \
         .git/hooks and .git/config NOT protected (no user namespaces); network off"
    );

    let missing = Sandbox::with_probe(
        "/helper",
        Vec::new(),
        None,
        SandboxProbe {
            landlock_abi: None,
            seccomp: true,
            namespaces: false,
        },
    );
    assert!(matches!(
        missing.confinement(Widening::default()),
        Confinement::Unavailable(reason) if reason.contains("no Landlock")
    ));
    assert_eq!(Sandbox::off().confinement(network), Confinement::Off);
}

#[test]
fn the_secret_stores_are_hidden_under_home() {
    let sandbox = Sandbox::with_probe(
        "/helper",
        vec![PathBuf::from("/cfg/corvid")],
        Some(PathBuf::from("/home/u")),
        SandboxProbe {
            landlock_abi: Some(7),
            seccomp: true,
            namespaces: false,
        },
    );
    let hidden = sandbox.hidden_paths();
    assert!(hidden.contains(&PathBuf::from("/cfg/corvid")));
    assert!(hidden.contains(&PathBuf::from("/home/u/.ssh")));
    assert!(hidden.contains(&PathBuf::from("/home/u/.docker/config.json")));
}

#[test]
fn the_probe_reads_this_kernel() {
    let probe = SandboxProbe::detect();
    eprintln!("sandbox probe on this machine: {probe:?}");
    if let Some(abi) = probe.landlock_abi {
        assert!(abi >= 1);
    }
}

#[test]
fn credential_variables_are_recognised() {
    for name in [
        "XAI_API_KEY",
        "CORVID_HOME",
        "SUPERGROK_ZED_ENV",
        "GITHUB_TOKEN",
        "aws_secret_access_key",
        "PGPASSWORD",
    ] {
        assert!(is_secret_variable(std::ffi::OsStr::new(name)), "{name}");
    }
    for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "TERM"] {
        assert!(!is_secret_variable(std::ffi::OsStr::new(name)), "{name}");
    }
}
