//! The on-disk compile cache: a variant is compiled once across runs and campaigns.
//!
//! The key hashes everything that changes the CUBIN: the source text, the defines, the full
//! option list (which includes the target arch) and the NVRTC version. A CUBIN and its
//! metadata (log, resources, original compile time) are written to a temporary name and
//! renamed, so a crash never leaves a half-written entry that a later run would trust.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::KernelError;
use crate::nvrtc::{self, Compiled};
use crate::variant::Variant;

/// Where a compiled variant came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheStatus {
    /// Read from the disk cache.
    Hit,
    /// Compiled now (and stored).
    Miss,
}

/// A folder of compiled variants.
#[derive(Debug, Clone)]
pub struct KernelCache {
    dir: PathBuf,
    /// The NVRTC version a prebuilt folder (a tuned bundle's) was compiled under: its entries
    /// are found under that version's keys first, so they load with another NVRTC or none.
    prebuilt_nvrtc: Option<(i32, i32)>,
    /// A compile still running at this instant is abandoned ([`KernelCache::until`]).
    deadline: Option<Instant>,
}

impl KernelCache {
    pub fn new(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache {
            dir: dir.into(),
            prebuilt_nvrtc: None,
            deadline: None,
        }
    }

    /// This cache, giving up on a compile that has not finished by `deadline`:
    /// [`get_or_compile`](Self::get_or_compile) then answers [`KernelError::OutOfTime`] at the
    /// deadline instead of when NVRTC is done, so a run's time limit holds on a cold cache
    /// (a compile takes 0.1-2 s). Hits are unaffected; an abandoned compile stores nothing.
    pub fn until(mut self, deadline: Instant) -> KernelCache {
        self.deadline = Some(deadline);
        self
    }

    /// This cache, whose entries were compiled under NVRTC `version` (`"12.8"`, as bundles
    /// record it): [`get_or_compile`](Self::get_or_compile) looks under that version's keys
    /// before asking the installed NVRTC, so prebuilt kernels run on a machine with another
    /// NVRTC or none (the same CUBIN the tuning measured). A version that does not parse
    /// changes nothing.
    pub fn prebuilt_under(mut self, version: Option<&str>) -> KernelCache {
        self.prebuilt_nvrtc = version.and_then(|v| {
            let (major, minor) = v.split_once('.')?;
            Some((major.parse().ok()?, minor.parse().ok()?))
        });
        self
    }

    /// `$MATS_CACHE_DIR`, else the user's cache folder (`~/.cache/mats/kernels` on Linux),
    /// else `.mats-cache/kernels` in the working folder.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("MATS_CACHE_DIR") {
            return PathBuf::from(dir).join("kernels");
        }
        dirs::cache_dir()
            .map(|d| d.join("mats").join("kernels"))
            .unwrap_or_else(|| PathBuf::from(".mats-cache").join("kernels"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache key of a variant under the installed NVRTC.
    pub fn key(variant: &Variant, nvrtc_version: (i32, i32)) -> Result<String, KernelError> {
        let source = variant
            .kernel_source()
            .map_err(KernelError::InvalidVariant)?;
        let options = variant
            .nvrtc_options()
            .map_err(KernelError::InvalidVariant)?;
        let mut hash = Sha256::new();
        hash.update(b"mats-kernel-cache-v1\0");
        hash.update(source.text.as_bytes());
        for (name, text) in source.headers {
            hash.update(b"\0header\0");
            hash.update(name.as_bytes());
            hash.update(text.as_bytes());
        }
        for option in &options {
            hash.update(b"\0");
            hash.update(option.as_bytes());
        }
        hash.update(format!("\0nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The cached CUBIN of a variant, compiling and storing it on a miss.
    pub fn get_or_compile(
        &self,
        variant: &Variant,
    ) -> Result<(Compiled, CacheStatus), KernelError> {
        if let Some(version) = self.prebuilt_nvrtc {
            let key = Self::key(variant, version)?;
            let hit = read_entry(
                &self.dir.join(format!("{key}.cubin")),
                &self.dir.join(format!("{key}.json")),
            );
            if let Some(hit) = hit {
                return Ok((hit, CacheStatus::Hit));
            }
        }
        let key = Self::key(variant, nvrtc::version()?)?;
        let (cubin_path, meta_path) = (
            self.dir.join(format!("{key}.cubin")),
            self.dir.join(format!("{key}.json")),
        );
        if let Some(hit) = read_entry(&cubin_path, &meta_path) {
            return Ok((hit, CacheStatus::Hit));
        }
        let compiled = match self.deadline {
            None => nvrtc::compile(variant)?,
            Some(deadline) => compile_by(variant, deadline)?,
        };
        // A cache that cannot be written (a read-only or full home) costs the next run a
        // compile, not this run its kernel: said once per process.
        if let Err(e) = self.store(&compiled, &cubin_path, &meta_path) {
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                eprintln!("warning: {e}; kernels run uncached (compiled again by each run)");
            }
        }
        Ok((compiled, CacheStatus::Miss))
    }

    fn store(
        &self,
        compiled: &Compiled,
        cubin_path: &Path,
        meta_path: &Path,
    ) -> Result<(), KernelError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| KernelError::Cache { path, source }
        };
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let meta = serde_json::to_vec_pretty(compiled).expect("Compiled serialises");
        // CUBIN first: an entry counts only once its metadata exists.
        write_atomically(cubin_path, &compiled.cubin).map_err(io(cubin_path))?;
        write_atomically(meta_path, &meta).map_err(io(meta_path))?;
        Ok(())
    }
}

/// Compile threads of [`compile_by`] still running.
static COMPILING: AtomicUsize = AtomicUsize::new(0);

/// Whether a compile given up at a deadline is still running. The process must then end
/// without the C++ destructors of `exit` (`libc::_exit` after flushing its output): they
/// unload NVRTC's state under the running compile, which crashed `mats solve` with SIGSEGV or
/// SIGABRT after its answer on the H200 (4 of 24 runs).
pub fn compiles_running() -> bool {
    COMPILING.load(Ordering::SeqCst) > 0
}

/// Compiles on a thread of its own and waits for it until `deadline`. NVRTC cannot be
/// interrupted, so a compile past the deadline is left to finish on its own and its result
/// dropped; the process may exit under it.
fn compile_by(variant: &Variant, deadline: Instant) -> Result<Compiled, KernelError> {
    if !nvrtc::available() {
        return Err(KernelError::NvrtcMissing);
    }
    let started = Instant::now();
    let out_of_time = || KernelError::OutOfTime {
        source_id: variant.source.clone(),
        waited_s: started.elapsed().as_secs_f64(),
    };
    let Some(left) = deadline.checked_duration_since(started) else {
        return Err(out_of_time());
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let job = variant.clone();
    COMPILING.fetch_add(1, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("nvrtc".into())
        .spawn(move || {
            let compiled = nvrtc::compile(&job);
            COMPILING.fetch_sub(1, Ordering::SeqCst);
            // The receiver is gone when the wait gave up; nothing else to do then.
            let _ = tx.send(compiled);
        })
        .map_err(|e| {
            COMPILING.fetch_sub(1, Ordering::SeqCst);
            KernelError::InvalidConfig(format!("cannot start a compile thread: {e}"))
        })?;
    match rx.recv_timeout(left) {
        Ok(compiled) => compiled,
        Err(_) => Err(out_of_time()),
    }
}

fn read_entry(cubin_path: &Path, meta_path: &Path) -> Option<Compiled> {
    let meta = std::fs::read(meta_path).ok()?;
    let cubin = std::fs::read(cubin_path).ok()?;
    // An unreadable entry (older format, damaged file) is simply compiled again.
    let mut compiled: Compiled = serde_json::from_slice(&meta).ok()?;
    if cubin.is_empty() {
        return None;
    }
    compiled.cubin = cubin;
    Some(compiled)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // One name per write: islands of one process compile the same variant at once, and a
    // name per process let one thread's CUBIN be renamed over by another's metadata.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{n}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Arch;

    /// A bundle's kernels folder holding one CUBIN compiled under NVRTC `version`.
    fn prebuilt(dir: &Path, variant: &Variant, version: (i32, i32), cubin: &[u8]) {
        let key = KernelCache::key(variant, version).unwrap();
        let compiled = Compiled {
            variant: variant.clone(),
            options: Vec::new(),
            cubin: Vec::new(),
            log: String::new(),
            resources: Vec::new(),
            relocatable: false,
            compile_seconds: 1.5,
        };
        std::fs::write(dir.join(format!("{key}.cubin")), cubin).unwrap();
        std::fs::write(
            dir.join(format!("{key}.json")),
            serde_json::to_vec(&compiled).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn a_prebuilt_folder_loads_under_its_own_nvrtc_version_without_asking_nvrtc() {
        let tmp = tempfile::tempdir().unwrap();
        let variant = Variant::new("probe/busy", Arch::SM90).define("N", 12);
        // No NVRTC was ever version 1.0: only the pinned lookup can find this entry.
        prebuilt(tmp.path(), &variant, (1, 0), b"not really a cubin");
        let cache = KernelCache::new(tmp.path()).prebuilt_under(Some("1.0"));
        let (hit, status) = cache.get_or_compile(&variant).unwrap();
        assert_eq!(status, CacheStatus::Hit);
        assert_eq!(hit.cubin, b"not really a cubin");
        assert_eq!(hit.compile_seconds, 1.5);

        // Another variant is not in the folder: the installed NVRTC's key is asked for
        // (which fails cleanly without NVRTC, or compiles).
        let other = variant.clone().define("N", 13);
        if let Ok((compiled, status)) = cache.get_or_compile(&other) {
            assert_eq!(status, CacheStatus::Miss);
            assert_ne!(compiled.cubin, b"not really a cubin");
        }
        // Versions that do not parse pin nothing.
        for bad in [None, Some("twelve"), Some("12"), Some("12.x")] {
            let c = KernelCache::new(tmp.path()).prebuilt_under(bad);
            assert_eq!(c.prebuilt_nvrtc, None, "{bad:?}");
        }
    }
}
