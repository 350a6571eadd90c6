//! One writer per campaign folder: an advisory lock on `OUT/.mats-lock`, held for as long as
//! a `mats tune` works on the folder.
//!
//! The operating system drops the lock when its holder exits, however it exits (kill -9,
//! panic, power loss), so a crash never leaves the folder stuck; the file's content (pid and
//! start time) only serves the message that refuses a second writer. The store alone cannot
//! give this guarantee: SQLite serialises writes, but a second `--resume` would turn the
//! first process's running trials into `crashed` ones and measure them again.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

/// The lock file's name inside a campaign folder.
pub const LOCK_FILE: &str = ".mats-lock";

/// A held folder lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
    // Held open: closing the file releases the lock.
    _file: File,
}

/// Why a folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{} is in use by another mats process ({holder}); wait for it to finish or stop it, \
         or use another output folder",
        folder.display()
    )]
    Held { folder: PathBuf, holder: String },
    #[error("{}: cannot lock the campaign folder: {reason}", path.display())]
    Io {
        path: PathBuf,
        reason: std::io::Error,
    },
}

impl FolderLock {
    /// Takes the folder's lock without waiting, or says who holds it.
    pub fn acquire(folder: &Path) -> Result<FolderLock, LockError> {
        let path = folder.join(LOCK_FILE);
        let io = |reason| LockError::Io {
            path: path.clone(),
            reason,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // Called through the trait: std's inherent File::try_lock is newer than our MSRV.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Held {
                    folder: folder.to_path_buf(),
                    holder: if holder.is_empty() {
                        "its pid is not recorded yet".into()
                    } else {
                        holder.chars().take(200).collect()
                    },
                });
            }
            Err(fs4::TryLockError::Error(e)) => return Err(io(e)),
        }
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let me = format!("pid {}, started at unix time {started}", std::process::id());
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(me.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(FolderLock { path, _file: file })
    }

    /// Who holds `folder`'s lock now (a running `mats tune`), without taking it or writing
    /// anything; None where nobody does (or the folder has no lock file).
    pub fn holder(folder: &Path) -> Option<String> {
        let mut file = OpenOptions::new()
            .read(true)
            .open(folder.join(LOCK_FILE))
            .ok()?;
        match fs4::FileExt::try_lock(&file) {
            // Free: closing the file (at return) releases the lock just taken.
            Ok(()) => None,
            Err(_) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                Some(holder.trim().chars().take(200).collect())
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
