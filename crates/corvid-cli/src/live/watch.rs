//! The settings files as the live host watches them: config.toml and the env file (keys and
//! sign-ins; `corvid login` in another terminal writes it), looked at by size and modification
//! time. A change is loaded and checked before anything uses it; what cannot change on a
//! running server (the bound host and port, the store) is kept and named as needing a restart.

use std::path::PathBuf;
use std::time::SystemTime;

use corvid_config::Loaded;

type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &PathBuf) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The settings files and how they looked at the last look.
#[derive(Debug)]
pub(crate) struct Watch {
    files: Vec<PathBuf>,
    stamps: Vec<Stamp>,
    /// What the running server was started with and keeps (see [`Watch::fixed`]).
    started: Fixed,
}

/// The settings a running server cannot take up: its socket, its store, and the key gate built
/// over the store (its admin key).
#[derive(Debug, Clone, PartialEq)]
struct Fixed {
    host: String,
    port: u16,
    allow_remote: bool,
    store: corvid_config::StoreConfig,
}

impl Fixed {
    fn of(loaded: &Loaded) -> Self {
        Self {
            host: loaded.config.host.clone(),
            port: loaded.config.port,
            allow_remote: loaded.config.allow_remote,
            store: loaded.config.store.clone(),
        }
    }
}

/// Settings that cannot be used (they do not load, or the app cannot be built from them): the
/// running ones stay. Its text is what the Status tab and the tray show.
#[derive(Debug, thiserror::Error)]
#[error("Settings not applied: {0:#}; still serving the previous ones")]
pub(crate) struct NotApplied(pub(crate) anyhow::Error);

/// Settings loaded again: what to serve with, and what waits for a restart.
#[derive(Debug)]
pub(crate) struct Reloaded {
    pub(crate) loaded: Loaded,
    pub(crate) needs_restart: Option<String>,
}

impl Watch {
    pub(crate) fn new(loaded: &Loaded) -> Self {
        let files = vec![
            loaded.paths.config_file.clone(),
            loaded.paths.env_file.clone(),
        ];
        let stamps = files.iter().map(stamp).collect();
        Self {
            files,
            stamps,
            started: Fixed::of(loaded),
        }
    }

    /// Whether either file changed since the last look (which this one becomes).
    pub(crate) fn changed(&mut self) -> bool {
        let stamps: Vec<Stamp> = self.files.iter().map(stamp).collect();
        if stamps == self.stamps {
            return false;
        }
        self.stamps = stamps;
        true
    }

    /// The settings loaded again, with the socket and store the server started with (a
    /// change to those is named in `needs_restart`); or why they cannot be used.
    pub(crate) fn reload(
        &mut self,
        load: impl FnOnce() -> anyhow::Result<Loaded>,
    ) -> Result<Reloaded, NotApplied> {
        // Whatever happens, this look counts: an invalid edit is reported once, not each tick.
        self.changed();
        let mut loaded = load().map_err(NotApplied)?;
        let wanted = Fixed::of(&loaded);
        let mut waiting = Vec::new();
        if wanted.host != self.started.host || wanted.port != self.started.port {
            waiting.push("host and port");
        }
        if wanted.allow_remote != self.started.allow_remote {
            waiting.push("allow_remote");
        }
        if wanted.store != self.started.store {
            waiting.push("the store");
        }
        let needs_restart = (!waiting.is_empty())
            .then(|| format!("Changes to {} apply at the next start", waiting.join(", ")));
        loaded.config.host = self.started.host.clone();
        loaded.config.port = self.started.port;
        loaded.config.allow_remote = self.started.allow_remote;
        loaded.config.store = self.started.store.clone();
        Ok(Reloaded {
            loaded,
            needs_restart,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `home` as a `CORVID_HOME` (never this machine's own).
    fn load(home: &std::path::Path) -> anyhow::Result<Loaded> {
        let env: std::collections::HashMap<String, String> =
            [("CORVID_HOME".to_owned(), home.display().to_string())].into();
        Ok(corvid_config::load(&corvid_config::Flags::default(), &env)?)
    }

    #[test]
    fn a_change_is_seen_once_an_invalid_one_is_refused_and_the_port_stays() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), "port = 9100\n").unwrap();
        let mut watch = Watch::new(&load(home.path()).unwrap());
        assert!(!watch.changed());

        std::fs::write(
            home.path().join("config.toml"),
            "port = 9100\nmax_retries = 5\n",
        )
        .unwrap();
        assert!(watch.changed());
        assert!(!watch.changed(), "seen once");
        let again = watch.reload(|| load(home.path())).unwrap();
        assert_eq!(again.loaded.config.max_retries, 5);
        assert_eq!(again.needs_restart, None);

        std::fs::write(home.path().join("config.toml"), "port = \"not a port\"\n").unwrap();
        let refused = watch.reload(|| load(home.path())).unwrap_err().to_string();
        assert!(refused.starts_with("Settings not applied: "), "{refused}");
        assert!(refused.ends_with("still serving the previous ones"));
        assert!(!watch.changed(), "a refused edit is not looked at again");

        std::fs::write(home.path().join("config.toml"), "port = 9200\n").unwrap();
        let moved = watch.reload(|| load(home.path())).unwrap();
        assert_eq!(moved.loaded.config.port, 9100);
        assert_eq!(
            moved.needs_restart.as_deref(),
            Some("Changes to host and port apply at the next start")
        );
    }
}
