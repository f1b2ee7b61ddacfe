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
    /// A named key or team does not exist.
    #[error("no such {0}")]
    NotFound(String),
    /// A key or team of that name exists already.
    #[error("{0} exists already")]
    Exists(String),
    /// PostgreSQL refused a statement or the connection failed.
    #[error("PostgreSQL error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had from the pool in time.
    #[error("PostgreSQL is unreachable: {0}")]
    Unreachable(String),
    /// The PostgreSQL schema is not the one this corvid was built for.
    #[error(
        "the database schema is at version {found}, this corvid needs version {needed}: run `corvid migrate`{hint}"
    )]
    SchemaMismatch {
        found: i64,
        needed: i64,
        /// Extra advice when the database is newer than this corvid.
        hint: &'static str,
    },
    /// A setting is unusable (a malformed database URL).
    #[error("{0}")]
    Config(String),
}

impl StoreError {
    /// A uniqueness violation as [`StoreError::Exists`] naming `what`; anything else as is.
    pub(crate) fn conflict_or(error: rusqlite::Error, what: String) -> Self {
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) => Self::Exists(what),
            _ => Self::Sqlite(error),
        }
    }

    /// Whether the store could not be reached (as opposed to refusing a statement): the caller
    /// may retry later.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Self::Unreachable(_) => true,
            Self::Postgres(error) => error.is_closed() || error.code().is_none(),
            _ => false,
        }
    }
}
