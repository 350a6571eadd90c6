//! The one error type of the store. Every message starts with the database file, because a
//! campaign folder holds one store and a user with several campaigns must know which one.

use std::path::PathBuf;

/// What can go wrong with a results store. Each variant carries the database path so that its
/// message (`Display`) names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or created (missing folder, permissions).
    #[error("{}: cannot open results store: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        #[source]
        source: rusqlite::Error,
    },
    /// `Store::open_existing` on a path where there is no file.
    #[error("{}: no results store here (file not found)", path.display())]
    Missing {
        /// The path that was asked for.
        path: PathBuf,
    },
    /// The file exists but is not a mats results store: not SQLite at all, or an SQLite
    /// database that some other program made.
    #[error("{}: not a mats results store ({reason})", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What it is instead, in words.
        reason: String,
    },
    /// The store was written by a newer mats whose schema this build does not know; opening
    /// it anyway could corrupt it.
    #[error(
        "{}: results store has schema version {found}, this mats understands up to {supported}; \
         use a newer mats",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// `SCHEMA_VERSION` of this build.
        supported: i64,
    },
    /// SQLite refused an operation (busy beyond the timeout, disk full, constraint, I/O).
    #[error("{}: {op}: {source}", path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing, e.g. "begin trial".
        op: &'static str,
        /// SQLite's reason.
        #[source]
        source: rusqlite::Error,
    },
    /// A row the caller referred to does not exist (or is in another campaign, or is not in
    /// the state the operation needs, such as finishing a trial that is not `started`).
    #[error("{}: {what}", path.display())]
    NotFound {
        /// The database file.
        path: PathBuf,
        /// Which row, and what was expected of it.
        what: String,
    },
    /// The caller passed something the store will not write (e.g. finishing a trial as
    /// `started`).
    #[error("{}: {what}", path.display())]
    Invalid {
        /// The database file.
        path: PathBuf,
        /// What was refused, and why.
        what: String,
    },
    /// `PRAGMA integrity_check` reported problems.
    #[error("{}: integrity check failed: {report}", path.display())]
    Integrity {
        /// The database file.
        path: PathBuf,
        /// SQLite's report, lines joined by `; `.
        report: String,
    },
}

/// Result of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
