//! GPU ownership across processes: an advisory lock per device (fs4 on
//! `RUNTIME/locks/device-<key>.lock`, key = the GPU's UUID), held by a process for the length
//! of each measurement on that device.
//!
//! Why per measurement and not per campaign: two campaigns (two `mats tune`, or the daemon's
//! campaigns and a plain `mats tune`) then share a GPU trial by trial, each measurement alone
//! on the device, and one campaign's CPU work between trials (re-scoring, the store, the
//! search) overlaps the other's measurements. The kernel releases the lock when its holder
//! dies however it dies, so a crash never leaves a GPU owned. The lock file's content (pid and
//! what it runs) only serves the message of a process that has to wait.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The folder of the device locks: `MATS_LOCK_DIR`, else `RUNTIME/locks`.
pub fn lock_dir() -> PathBuf {
    match std::env::var_os("MATS_LOCK_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => crate::user_dirs::runtime_dir().join("locks"),
    }
}

/// One device's lock file, kept open; [`DeviceLock::lease`] takes it for one measurement.
#[derive(Debug)]
pub struct DeviceLock {
    key: String,
    path: PathBuf,
    file: File,
    /// False for another user's lock file that only opens read-only.
    writable: bool,
    /// What this process is, for the messages of the processes that wait for it.
    note: String,
    /// The holder last reported waiting for, so that two processes taking turns do not print
    /// a line per trial.
    reported: Option<String>,
    /// Seconds spent waiting for other processes.
    pub waited: Duration,
}

/// The device is held by this process until the lease is dropped.
#[must_use = "the lock is released when the lease is dropped"]
pub struct Lease<'a> {
    lock: &'a DeviceLock,
    since: std::time::SystemTime,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        trace(&self.lock.key, self.since);
        // Closing the process also releases it; an unlock error leaves it to that.
        let _ = fs4::FileExt::unlock(&self.lock.file);
    }
}

/// A lock file name from a device key: UUIDs and indices pass unchanged, anything else is
/// reduced to a safe name.
fn file_name(key: &str) -> String {
    let safe: String = key
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("device-{safe}.lock")
}

impl DeviceLock {
    /// Opens (creating) the lock file of device `key` in `dir`; takes nothing yet. A missing
    /// folder is created private (0700); an existing one is used as it is, so that users who
    /// share a GPU host can share one lock folder (e.g. mode 1777): a lock file created in a
    /// folder of another owner is made 0666, and one this user cannot write is still locked
    /// (read-only), only without the holder's note.
    pub fn open(dir: &Path, key: &str, note: &str) -> Result<DeviceLock> {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        if !dir.is_dir() {
            crate::user_dirs::create_private_dir(dir).with_context(|| {
                format!("cannot create the device lock folder {}", dir.display())
            })?;
        }
        let path = dir.join(file_name(key));
        let existed = path.exists();
        let mut writable = true;
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && existed => {
                writable = false;
                File::open(&path)
            }
            other => other,
        }
        .with_context(|| format!("cannot open the device lock {}", path.display()))?;
        let mine = std::fs::metadata(dir).map(|m| m.uid()).ok() == Some(effective_uid());
        if !existed && !mine {
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666));
        }
        Ok(DeviceLock {
            key: key.to_string(),
            path,
            file,
            writable,
            note: note.chars().take(300).collect(),
            reported: None,
            waited: Duration::ZERO,
        })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Who holds the lock, as its holder wrote it.
    fn holder(&self) -> String {
        let mut text = String::new();
        let mut file = &self.file;
        let _ = file.seek(SeekFrom::Start(0));
        let _ = file.read_to_string(&mut text);
        let text = text.trim();
        if text.is_empty() {
            "a process that has not recorded its pid yet".into()
        } else {
            text.chars().take(300).collect()
        }
    }

    /// Fails at once, naming the holder, when another process holds the device now.
    pub fn check_free(&mut self) -> Result<()> {
        match fs4::FileExt::try_lock(&self.file) {
            Ok(()) => {
                let _ = fs4::FileExt::unlock(&self.file);
                Ok(())
            }
            Err(fs4::TryLockError::WouldBlock) => bail!(
                "device {} is in use by {}; wait for it (run without --no-wait) or use another \
                 device",
                self.key,
                self.holder()
            ),
            Err(fs4::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", self.path.display()))
            }
        }
    }

    /// Takes the device for one measurement, waiting for other processes; the first wait for
    /// a given holder prints one line naming it on stderr.
    pub fn lease(&mut self) -> Result<Lease<'_>> {
        match fs4::FileExt::try_lock(&self.file) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                let holder = self.holder();
                if self.reported.as_deref() != Some(holder.as_str()) {
                    eprintln!("waiting for device {}: in use by {holder}", self.key);
                    self.reported = Some(holder);
                }
                let start = Instant::now();
                fs4::FileExt::lock(&self.file)
                    .with_context(|| format!("cannot lock {}", self.path.display()))?;
                self.waited += start.elapsed();
            }
            Err(fs4::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", self.path.display()))
            }
        }
        let me = format!("pid {} ({})", std::process::id(), self.note);
        let write = |mut file: &File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(me.as_bytes())?;
            file.flush()
        };
        // A lock file of another user opened read-only cannot carry our note; the lock
        // itself holds all the same.
        if self.writable {
            if let Err(e) = write(&self.file) {
                let _ = fs4::FileExt::unlock(&self.file);
                return Err(e).with_context(|| format!("cannot write {}", self.path.display()));
            }
        }
        Ok(Lease {
            lock: self,
            since: std::time::SystemTime::now(),
        })
    }
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// With `MATS_LOCK_TRACE=FILE`, each lease appends `key pid start_ns end_ns` (one short
/// `O_APPEND` write, atomic between processes) before it releases: the tests check from it
/// that no two processes ever held a device at once.
fn trace(key: &str, since: std::time::SystemTime) {
    let Some(path) = std::env::var_os("MATS_LOCK_TRACE").filter(|p| !p.is_empty()) else {
        return;
    };
    let ns = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    };
    let line = format!(
        "{key} {} {} {}\n",
        std::process::id(),
        ns(since),
        ns(std::time::SystemTime::now())
    );
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The lock a CPU campaign takes around each measurement when `MATS_CPU_DEVICE_LOCK` names a
/// (fake) device: tests exercise the GPU ownership path on machines without a GPU, and users
/// who want CPU timings undisturbed by their other campaigns can opt in.
pub fn cpu_lock(note: &str) -> Result<Option<DeviceLock>> {
    match std::env::var("MATS_CPU_DEVICE_LOCK") {
        Ok(key) if !key.is_empty() => Ok(Some(DeviceLock::open(&lock_dir(), &key, note)?)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_device_is_refused_with_the_holders_pid_and_free_again_after_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = DeviceLock::open(dir.path(), "GPU-1234", "mats tune a").unwrap();
        // A second open file description stands for another process: flock locks belong to
        // the open file, so they conflict within one process too.
        let mut b = DeviceLock::open(dir.path(), "GPU-1234", "mats tune b").unwrap();
        let lease = a.lease().unwrap();
        let err = format!("{:#}", b.check_free().unwrap_err());
        assert!(
            err.contains(&format!("pid {}", std::process::id())) && err.contains("mats tune a"),
            "{err}"
        );
        drop(lease);
        b.check_free().unwrap();
        let _lease = b.lease().unwrap();
        assert!(a.check_free().is_err());
    }

    #[test]
    fn odd_keys_become_safe_file_names() {
        assert_eq!(file_name("GPU-ab12-cd"), "device-GPU-ab12-cd.lock");
        assert_eq!(file_name("../x y"), "device-.._x_y.lock");
        assert!(!file_name("a/b").contains('/'));
    }
}
