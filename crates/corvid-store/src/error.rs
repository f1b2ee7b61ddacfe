//! The store's one error type.

use std::path::PathBuf;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database's directory or file could not be created.
    #[error("could not create {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused to open the file.
    #[error("could not open the database {path}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer corvid, whose schema this one does not know.
    #[error(
        "the database has schema version {found}, newer than this corvid understands ({known}); upgrade corvid"
    )]
    TooNew { found: i64, known: i64 },
    /// A statement failed.
    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),
    /// The usage writer thread could not be started.
    #[error("could not start the usage writer thread")]
    Spawn(#[source] std::io::Error),
    /// The usage writer thread has stopped (it panicked), so nothing more can be written.
    #[error("the usage writer thread has stopped")]
    WriterStopped,
}
