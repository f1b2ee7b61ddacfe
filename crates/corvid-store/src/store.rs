//! Opening the database: the file and its directory, connection settings, migrations.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rusqlite::{Connection, TransactionBehavior};

use crate::StoreError;
use crate::migrations::MIGRATIONS;

/// How long a statement waits for another connection's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The one store of a process, shared by everything in it that reads or writes the database
/// (the gateway's ledger writer, the agent's sessions, the page's reports): one connection, so
/// one process never holds two to the same file. Lock it for one piece of work at a time, off
/// the async threads. A `parking_lot` mutex does not poison: a panic while it was held leaves
/// no half-written transaction behind (SQLite rolls back an unfinished one).
pub type SharedStore = Arc<Mutex<Store>>;

/// An open, migrated corvid database.
///
/// One `Store` is one SQLite connection: `Send`, not `Sync`. Open one per thread that needs it;
/// in WAL mode readers do not wait for the writer.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
}

impl Store {
    /// Opens the database at `path`, creating its parent directory (mode 0700) and the file
    /// (mode 0600) when missing, switches it to WAL with `synchronous=NORMAL`, a busy timeout
    /// and foreign keys, and applies any schema steps it lacks.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            create_private_dir(parent)?;
        }
        create_private_file(path)?;
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_owned(),
            source,
        })?;
        let mut store = Store { conn };
        store.configure(JournalMode::Wal)?;
        store.migrate(MIGRATIONS)?;
        Ok(store)
    }

    /// A private in-memory database with the full schema, for tests.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: PathBuf::from(":memory:"),
            source,
        })?;
        let mut store = Store { conn };
        store.configure(JournalMode::Memory)?;
        store.migrate(MIGRATIONS)?;
        Ok(store)
    }

    /// This store as the process's one shared store.
    pub fn into_shared(self) -> SharedStore {
        Arc::new(Mutex::new(self))
    }

    /// The schema version (`PRAGMA user_version`): how many migration steps have been applied.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))?)
    }

    fn configure(&self, journal: JournalMode) -> Result<(), StoreError> {
        // The busy timeout comes first so that switching the journal mode waits for a
        // concurrent opener instead of failing with SQLITE_BUSY.
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        if journal == JournalMode::Wal {
            let mode: String =
                self.conn
                    .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                // Some file systems (network mounts) cannot do WAL; SQLite keeps the old mode.
                tracing::warn!(%mode, "the database could not switch to WAL mode");
            }
        }
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(())
    }

    /// Applies the steps of `steps` that this database has not applied yet, in order, in one
    /// transaction that also moves `user_version`. The transaction is `IMMEDIATE` (it takes the
    /// write lock up front), so two processes opening the same file at once cannot both run a
    /// step: the second waits, then finds the version already current.
    pub(crate) fn migrate(&mut self, steps: &[&str]) -> Result<(), StoreError> {
        let known = i64::try_from(steps.len()).unwrap_or(i64::MAX);
        if self.schema_version()? == known {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if found > known {
            return Err(StoreError::TooNew { found, known });
        }
        let applied = usize::try_from(found).unwrap_or(0);
        for (index, step) in steps.iter().enumerate().skip(applied) {
            tx.execute_batch(step)?;
            let version = i64::try_from(index + 1).unwrap_or(i64::MAX);
            tx.pragma_update(None, "user_version", version)?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JournalMode {
    Wal,
    Memory,
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| StoreError::Create {
            path: dir.to_owned(),
            source,
        })
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|source| StoreError::Create {
        path: dir.to_owned(),
        source,
    })
}

/// Creates the database file readable by its owner only (it may hold prompts). SQLite gives
/// the `-wal` and `-shm` files the database file's permissions. An existing file is left as is.
fn create_private_file(path: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map(drop)
        .map_err(|source| StoreError::Create {
            path: path.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests;
