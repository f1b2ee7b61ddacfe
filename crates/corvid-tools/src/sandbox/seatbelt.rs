//! macOS: the sandbox policy as a Seatbelt profile for `/usr/bin/sandbox-exec`. Pure text
//! generation (compiled on macOS, and for the tests everywhere), so what it allows is tested
//! on any machine; only a Mac runs it.
//!
//! The profile denies by default and then allows what commands need: running programs (in the
//! same sandbox: children inherit it), reading files (minus the hidden paths: corvid's own
//! folder and the secret stores), writing only beneath the writable roots (the project and the
//! temp folders, minus the hidden paths) and to the terminal devices, the system services a
//! command-line program looks up (user and group names, logging, the keychain's trust
//! evaluation for TLS), and the network only when widened. Paths are not written into the
//! profile's text: each is a `-D NAME=PATH` parameter the profile reads with `(param …)`, so no
//! path can change the profile's meaning.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where macOS keeps the program.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What the profile is made from: already canonical paths (macOS's `/tmp` is
/// `/private/tmp`, and Seatbelt matches the real path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profile {
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) hidden: Vec<PathBuf>,
    pub(crate) network: bool,
}

/// The system services a command-line program reaches through launchd: user and group lookup,
/// the system log, notifications of configuration changes, TLS trust evaluation, DNS (the
/// last two only matter with the network on).
const SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.system.notification_center",
    "com.apple.trustd.agent",
    "com.apple.SecurityServer",
    "com.apple.coreservices.launchservicesd",
    "com.apple.CoreServices.coreservicesd",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.dnssd.service",
    "com.apple.mDNSResponder",
];

impl Profile {
    /// The profile for what the helper was asked to enforce, with every path made real. A
    /// read-only policy (`Sandbox::read_only_command`) has only the character devices
    /// writable, so its profile grants no write beneath the project or the temp folders.
    pub(crate) fn for_policy(policy: &super::SandboxPolicy) -> Self {
        Self {
            writable: policy.writable.iter().map(|path| real_path(path)).collect(),
            hidden: policy
                .read_hidden
                .iter()
                .map(|path| real_path(path))
                .collect(),
            network: policy.network,
        }
    }

    /// The profile's text and its parameters (`WRITABLE_<n>`, `HIDDEN_<n>`).
    pub(crate) fn render(&self) -> (String, Vec<(String, PathBuf)>) {
        let mut params = Vec::new();
        let mut text = String::from(
            "(version 1)\n\
             (deny default)\n\
             ; programs, and their children in this same sandbox\n\
             (allow process-exec)\n\
             (allow process-fork)\n\
             (allow signal (target same-sandbox))\n\
             (allow process-info* (target same-sandbox))\n\
             (allow sysctl-read)\n\
             (allow ipc-posix-sem)\n\
             (allow ipc-posix-shm)\n\
             (allow pseudo-tty)\n\
             (allow file-ioctl)\n",
        );
        text.push_str("(allow mach-lookup\n");
        for service in SERVICES {
            text.push_str(&format!("  (global-name \"{service}\")\n"));
        }
        text.push_str(")\n; reads everywhere\n(allow file-read*)\n");
        text.push_str("; writes beneath the writable roots, and to the terminal devices\n");
        text.push_str("(allow file-write*\n");
        for (index, root) in self.writable.iter().enumerate() {
            let name = format!("WRITABLE_{index}");
            text.push_str(&format!("  (subpath (param \"{name}\"))\n"));
            params.push((name, root.clone()));
        }
        for device in [
            "/dev/null",
            "/dev/zero",
            "/dev/tty",
            "/dev/ptmx",
            "/dev/dtracehelper",
        ] {
            text.push_str(&format!("  (literal \"{device}\")\n"));
        }
        text.push_str("  (regex #\"^/dev/ttys[0-9]+$\")\n)\n");
        if !self.hidden.is_empty() {
            // Later rules win: the hidden paths are neither read nor written, even inside a
            // writable root.
            text.push_str(
                "; corvid's own files and the secret stores\n(deny file-read* file-write*\n",
            );
            for (index, path) in self.hidden.iter().enumerate() {
                let name = format!("HIDDEN_{index}");
                text.push_str(&format!("  (subpath (param \"{name}\"))\n"));
                params.push((name, path.clone()));
            }
            text.push_str(")\n");
        }
        if self.network {
            text.push_str("; the network, as widened for this command\n(allow network*)\n(allow system-socket)\n");
        } else {
            // Local UNIX sockets only (a build's own helpers); no address on any network,
            // loopback included.
            text.push_str(
                "; no network: local UNIX sockets only\n\
                 (allow network* (local unix-socket))\n\
                 (allow network-outbound (remote unix-socket))\n\
                 (allow system-socket (socket-domain AF_UNIX))\n",
            );
        }
        (text, params)
    }

    /// `sandbox-exec -p <profile> -D NAME=PATH… -- <program> <arguments>…`, as arguments of
    /// [`SANDBOX_EXEC`].
    pub(crate) fn command_line(&self, program: &[OsString]) -> Vec<OsString> {
        let (text, params) = self.render();
        let mut line: Vec<OsString> = vec!["-p".into(), text.into()];
        for (name, path) in params {
            let mut define = OsString::from(format!("{name}="));
            define.push(path.as_os_str());
            line.push("-D".into());
            line.push(define);
        }
        line.push("--".into());
        line.extend(program.iter().cloned());
        line
    }
}

/// `path` as Seatbelt sees it (symbolic links resolved); a path that does not exist yet keeps
/// its resolved parent and its own name, so a hidden file created later is still covered.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real_path(parent).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(network: bool) -> Profile {
        Profile {
            writable: vec![
                PathBuf::from("/Users/me/project"),
                PathBuf::from("/private/tmp"),
            ],
            hidden: vec![
                PathBuf::from("/Users/me/.config/corvid"),
                PathBuf::from("/Users/me/.ssh"),
            ],
            network,
        }
    }

    /// The rules of the profile after the line starting `( allow|deny <operation>`.
    fn block<'a>(text: &'a str, opening: &str) -> &'a str {
        let start = text
            .find(opening)
            .unwrap_or_else(|| panic!("no {opening} in\n{text}"));
        let rest = &text[start..];
        let end = rest.find("\n)\n").map_or(rest.len(), |end| end + 3);
        &rest[..end]
    }

    /// The policy the helper gets for a command, from `Sandbox::command_line`.
    fn policy_of(sandbox: &super::super::Sandbox, read_only: bool) -> super::super::SandboxPolicy {
        let project = std::env::temp_dir().join("corvid-seatbelt-project");
        let writes = if read_only {
            super::super::Writes::Nothing
        } else {
            super::super::Writes::Usual(super::super::Widening::default())
        };
        let (_, line) = sandbox.command_line(&project, "ls".as_ref(), &[], writes);
        serde_json::from_str(line[2].to_str().unwrap()).unwrap()
    }

    #[test]
    fn a_read_only_profile_writes_nowhere_but_the_character_devices() {
        let sandbox = super::super::Sandbox::with_probe(
            "/helper",
            vec![PathBuf::from("/Users/me/.config/corvid")],
            None,
            super::super::SandboxProbe {
                landlock_abi: Some(7),
                seccomp: false,
                namespaces: false,
            },
        );
        let usual = Profile::for_policy(&policy_of(&sandbox, false));
        let read_only = Profile::for_policy(&policy_of(&sandbox, true));
        assert!(
            usual.writable.len() > read_only.writable.len(),
            "the usual profile writes in the project and temp folders: {usual:?}"
        );
        assert!(!read_only.network);
        let (text, params) = read_only.render();
        let writes = block(&text, "(allow file-write*");
        // Every writable root left is a character device under /dev.
        let roots: Vec<&PathBuf> = params
            .iter()
            .filter(|(name, _)| name.starts_with("WRITABLE_"))
            .map(|(_, path)| path)
            .collect();
        assert!(!roots.is_empty());
        for root in &roots {
            assert!(
                root.starts_with("/dev") || root.starts_with("/private/dev"),
                "only devices are writable: {root:?}"
            );
            assert!(!root.ends_with("shm"), "not the shared-memory tmpfs");
        }
        assert!(
            !params.iter().any(|(_, path)| path
                .to_string_lossy()
                .contains("corvid-seatbelt-project")
                || path == &std::env::temp_dir()
                || path.starts_with("/tmp")
                || path.starts_with("/private/tmp")),
            "neither the project nor a temp folder is writable: {params:?}"
        );
        assert!(writes.contains("(literal \"/dev/null\")"));
        // The hidden paths are still denied.
        assert!(text.contains("(deny file-read* file-write*"));
    }

    #[test]
    fn everything_is_denied_unless_allowed_and_reads_are_allowed() {
        let (text, _) = profile(false).render();
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("\n(allow file-read*)\n"));
        assert!(text.contains("\n(allow process-exec)\n"));
        assert!(text.contains("(allow signal (target same-sandbox))"));
    }

    #[test]
    fn writes_only_beneath_the_writable_roots_passed_as_parameters() {
        let (text, params) = profile(false).render();
        let writes = block(&text, "(allow file-write*");
        assert!(writes.contains("(subpath (param \"WRITABLE_0\"))"));
        assert!(writes.contains("(subpath (param \"WRITABLE_1\"))"));
        assert!(writes.contains("(literal \"/dev/null\")"));
        // No path of the user's is in the text itself.
        assert!(!text.contains("/Users/me"));
        assert!(!text.contains("/private/tmp"));
        assert_eq!(
            params[..2],
            [
                ("WRITABLE_0".to_owned(), PathBuf::from("/Users/me/project")),
                ("WRITABLE_1".to_owned(), PathBuf::from("/private/tmp")),
            ]
        );
        // Only one place grants writes.
        assert_eq!(text.matches("(allow file-write*").count(), 1);
    }

    #[test]
    fn hidden_paths_are_neither_read_nor_written_and_come_after_the_grants() {
        let (text, params) = profile(false).render();
        let denied = block(&text, "(deny file-read* file-write*");
        assert!(denied.contains("(subpath (param \"HIDDEN_0\"))"));
        assert!(denied.contains("(subpath (param \"HIDDEN_1\"))"));
        // Seatbelt lets the last matching rule decide: the deny follows both grants.
        let deny_at = text.find("(deny file-read* file-write*").unwrap();
        assert!(deny_at > text.find("(allow file-read*)").unwrap());
        assert!(deny_at > text.find("(allow file-write*").unwrap());
        assert!(params.contains(&("HIDDEN_1".to_owned(), PathBuf::from("/Users/me/.ssh"))));
    }

    #[test]
    fn the_network_is_off_but_local_sockets_unless_widened() {
        let (off, _) = profile(false).render();
        assert!(!off.contains("(allow network*)\n"));
        assert!(off.contains("(allow network* (local unix-socket))"));
        assert!(off.contains("(allow system-socket (socket-domain AF_UNIX))"));
        let (on, _) = profile(true).render();
        assert!(on.contains("\n(allow network*)\n"));
        assert!(!on.contains("unix-socket"));
    }

    #[test]
    fn the_command_line_passes_the_profile_its_parameters_and_the_command() {
        let line = profile(false).command_line(&["bash".into(), "-c".into(), "ls".into()]);
        assert_eq!(line[0], "-p");
        assert!(line[1].to_string_lossy().starts_with("(version 1)"));
        let defines: Vec<String> = line
            .windows(2)
            .filter(|pair| pair[0] == "-D")
            .map(|pair| pair[1].to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            defines,
            [
                "WRITABLE_0=/Users/me/project",
                "WRITABLE_1=/private/tmp",
                "HIDDEN_0=/Users/me/.config/corvid",
                "HIDDEN_1=/Users/me/.ssh",
            ]
        );
        let after = line.iter().position(|arg| arg == "--").unwrap();
        assert_eq!(line[after + 1..], ["bash", "-c", "ls"].map(OsString::from));
    }

    #[test]
    fn every_opened_form_is_closed() {
        for network in [false, true] {
            let (text, _) = profile(network).render();
            let text: String = text
                .lines()
                .filter(|line| !line.trim_start().starts_with(';'))
                .collect();
            let mut depth = 0i32;
            let mut in_string = false;
            for c in text.chars() {
                match c {
                    '"' => in_string = !in_string,
                    '(' if !in_string => depth += 1,
                    ')' if !in_string => depth -= 1,
                    _ => {}
                }
                assert!(depth >= 0);
            }
            assert_eq!(depth, 0);
        }
    }

    #[test]
    fn a_path_not_there_yet_keeps_its_real_parent() {
        let temp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(temp.path()).unwrap();
        assert_eq!(real_path(temp.path()), real);
        assert_eq!(
            real_path(&temp.path().join("not-yet/env")),
            real.join("not-yet/env")
        );
    }
}
