//! The one error type of the store. Every message starts with the database file, because a
//! campaign folder holds one store and a user with several campaigns must know which one.

use std::path::PathBuf;

/// What can go wrong with a results store. Each variant carries the database path so that its
/// message (`Display`) names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or created (missing folder, permissions).
    #[error("{}: cannot open results store: {}", path.display(), sqlite_reason(reason))]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason (shown without the SQL text; not a `source`, so that an error
        /// chain does not print it a second time).
        reason: rusqlite::Error,
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
    #[error("{}: {op}: {}", path.display(), sqlite_reason(reason))]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing, e.g. "begin trial".
        op: &'static str,
        /// SQLite's reason (see `Open`).
        reason: rusqlite::Error,
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
    #[error("{}: integrity check failed (the store is damaged; restore it from a copy): {report}", path.display())]
    Integrity {
        /// The database file.
        path: PathBuf,
        /// SQLite's report, lines joined by `; `.
        report: String,
    },
}

/// SQLite's reason in words: the message without the statement it came from (a damaged or
/// foreign schema used to print whole queries), and for a damaged file a hint what to do.
pub fn sqlite_reason(error: &rusqlite::Error) -> String {
    use rusqlite::Error as E;
    match error {
        E::SqliteFailure(code, message) => {
            let base = message.clone().unwrap_or_else(|| code.to_string());
            match code.code {
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase => {
                    format!("{base} (the file is damaged; `sqlite3 FILE .recover` may save it)")
                }
                _ => base,
            }
        }
        E::SqlInputError { msg, .. } => {
            format!("{msg} (the store's tables are not what this mats expects)")
        }
        other => {
            let text = other.to_string();
            // Some variants append the statement after " in "; keep the reason only.
            match text.find(" in SELECT").or_else(|| text.find(" in INSERT")) {
                Some(k) => text[..k].to_string(),
                None => text,
            }
        }
    }
}

/// Result of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
