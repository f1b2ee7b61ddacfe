//! Live settings for the desktop app: config.toml and the env file are watched (their size and
//! modification time, every second); a change is loaded and checked first, and only valid
//! settings make the app serve again with them (see `app::run`). An invalid edit keeps the
//! running settings and says why in the menu. Host and port stay as bound: a change to them
//! applies at the next start, and the menu says so.

use std::net::SocketAddr;
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
    /// The host and port the running settings asked for (not the bound port, which may differ
    /// when 0 was asked for).
    host: String,
    port: u16,
}

/// New settings to serve with, and a note for the menu.
pub(crate) type Changed = Result<(Loaded, Option<String>), String>;

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
            host: loaded.config.host.clone(),
            port: loaded.config.port,
        }
    }

    /// `None` when neither file changed since the last look; else the settings loaded again
    /// (to serve on `bound`), or why they cannot be used.
    pub(crate) fn changed(
        &mut self,
        load: impl FnOnce() -> anyhow::Result<Loaded>,
        bound: SocketAddr,
    ) -> Option<Changed> {
        let stamps: Vec<Stamp> = self.files.iter().map(stamp).collect();
        if stamps == self.stamps {
            return None;
        }
        self.stamps = stamps;
        let mut loaded = match load() {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "the changed settings are not valid; serving the previous ones");
                return Some(Err(format!(
                    "Settings not applied: {error:#}; still serving the previous ones"
                )));
            }
        };
        let note = (loaded.config.host != self.host || loaded.config.port != self.port)
            .then(|| "Host and port changes apply at the next start".to_owned());
        loaded.config.host = self.host.clone();
        loaded.config.port = bound.port();
        Some(Ok((loaded, note)))
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
    fn a_change_is_loaded_once_an_invalid_one_is_refused_and_the_port_stays() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), "port = 9100\n").unwrap();
        let mut watch = Watch::new(&load(home.path()).unwrap());
        let bound: SocketAddr = "127.0.0.1:9100".parse().unwrap();
        assert!(watch.changed(|| load(home.path()), bound).is_none());

        std::fs::write(
            home.path().join("config.toml"),
            "port = 9100\nmax_retries = 5\n",
        )
        .unwrap();
        let (again, note) = watch.changed(|| load(home.path()), bound).unwrap().unwrap();
        assert_eq!(again.config.max_retries, 5);
        assert_eq!(note, None);
        assert!(
            watch.changed(|| load(home.path()), bound).is_none(),
            "seen once"
        );

        std::fs::write(home.path().join("config.toml"), "port = \"not a port\"\n").unwrap();
        let refused = watch
            .changed(|| load(home.path()), bound)
            .unwrap()
            .unwrap_err();
        assert!(refused.starts_with("Settings not applied: "), "{refused}");
        assert!(refused.ends_with("still serving the previous ones"));

        std::fs::write(home.path().join("config.toml"), "port = 9200\n").unwrap();
        let (moved, note) = watch.changed(|| load(home.path()), bound).unwrap().unwrap();
        assert_eq!(moved.config.port, 9100);
        assert_eq!(
            note.as_deref(),
            Some("Host and port changes apply at the next start")
        );
    }
}
