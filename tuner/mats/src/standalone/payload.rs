//! The payload a standalone executable carries after the `mats` binary it was copied from:
//!
//! ```text
//! [mats executable] [files, back to back] [header: JSON] [trailer: 40 bytes]
//! trailer = header length (u64 LE) | files length (u64 LE) | format (u32 LE) | 0 (u32)
//!           | MAGIC (16 bytes)
//! ```
//!
//! A tiny length-prefixed format rather than tar: the header is JSON the rest of mats already
//! speaks, every file carries its SHA-256 (a truncated or altered copy is refused, naming the
//! file), and unpacking writes only relative paths the header validated, so no archive crate
//! and its path-traversal rules come in. Reading starts from the end, so the executable part
//! needs no change at all: the ELF loader ignores bytes past the program headers.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Ends every standalone executable; a plain `mats` binary never ends in it.
pub const MAGIC: &[u8; 16] = b"mats-standalone\n";
/// The payload layout this build reads and writes.
pub const FORMAT: u32 = 1;
pub const TRAILER_LEN: u64 = 40;
/// The header is a few hundred bytes per file; far beyond any export.
pub const MAX_HEADER_BYTES: u64 = 4 << 20;
/// Bundles are manifests and CUBINs (kilobytes to a few MiB each).
pub const MAX_FILES_BYTES: u64 = 1 << 30;
pub const MAX_FILES: usize = 100_000;
const MAX_PATH_BYTES: usize = 1024;

/// What a standalone executable was built from and for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The executable's file name as written (the class, made safe for a file name).
    pub name: String,
    /// The tuned class whose bundle it runs.
    pub class: String,
    pub campaign: String,
    pub family: String,
    /// `cpu` or `gpu`.
    pub backend: String,
    /// The device the campaign measured on (`cpu (N threads)` for CPU exports).
    pub device: String,
    /// The compute capability the kernels were built for (e.g. 90); none for CPU exports.
    pub arch: Option<u32>,
    /// The mats version that wrote it.
    pub mats_version: String,
    /// The export's files, in payload order.
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the export folder, `/`-separated.
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// Where a payload sits in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// Where the files start (= the length of the executable part).
    files_at: u64,
    files_len: u64,
    header_len: u64,
}

/// The length of `path`'s executable part: all of it, or what precedes its payload.
pub fn executable_len(path: &Path) -> Result<u64> {
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(match layout(&mut file, path)? {
        Some(l) => l.files_at,
        None => file_len(&file, path)?,
    })
}

/// The header of `path`'s payload; `None` when the file has none (a plain `mats`).
pub fn read_header(path: &Path) -> Result<Option<Header>> {
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let Some(l) = layout(&mut file, path)? else {
        return Ok(None);
    };
    header_at(&mut file, path, l).map(Some)
}

/// Writes `executable`'s first `exe_len` bytes, then `files` (relative path -> file on
/// disk), a header made from `header` (its `files` filled in here) and the trailer, to `out`
/// (through a temporary file renamed into place, so no half executable is ever left there).
pub fn write(
    executable: &Path,
    exe_len: u64,
    files: &[(String, PathBuf)],
    mut header: Header,
    out: &Path,
) -> Result<()> {
    let folder = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("cannot create a file in {}", folder.display()))?;
    let wrote = |e| anyhow::Error::new(e).context(format!("cannot write {}", out.display()));
    let mut exe =
        File::open(executable).with_context(|| format!("cannot read {}", executable.display()))?;
    let copied = std::io::copy(&mut (&mut exe).take(exe_len), tmp.as_file_mut()).map_err(wrote)?;
    if copied != exe_len {
        bail!(
            "{} shrank while it was copied ({copied} of {exe_len} bytes)",
            executable.display()
        );
    }
    header.files.clear();
    let mut files_len = 0u64;
    for (rel, source) in files {
        check_path(rel)?;
        let bytes = read_capped(source, MAX_FILES_BYTES - files_len)?;
        tmp.as_file_mut().write_all(&bytes).map_err(wrote)?;
        files_len += bytes.len() as u64;
        header.files.push(FileEntry {
            path: rel.clone(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
        });
    }
    let header_json = serde_json::to_vec(&header)?;
    let mut trailer = Vec::with_capacity(TRAILER_LEN as usize);
    trailer.extend_from_slice(&(header_json.len() as u64).to_le_bytes());
    trailer.extend_from_slice(&files_len.to_le_bytes());
    trailer.extend_from_slice(&FORMAT.to_le_bytes());
    trailer.extend_from_slice(&0u32.to_le_bytes());
    trailer.extend_from_slice(MAGIC);
    let f = tmp.as_file_mut();
    f.write_all(&header_json).map_err(wrote)?;
    f.write_all(&trailer).map_err(wrote)?;
    f.sync_all().map_err(wrote)?;
    set_executable(f).map_err(wrote)?;
    tmp.persist(out).map_err(|e| wrote(e.error)).map(|_| ())
}

/// Unpacks `path`'s payload files under `dir`, checking each one's length and SHA-256.
pub fn unpack(path: &Path, dir: &Path) -> Result<Header> {
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let l = layout(&mut file, path)?.with_context(|| {
        format!(
            "{} carries no standalone payload (not written by `mats export --binaries`)",
            path.display()
        )
    })?;
    let header = header_at(&mut file, path, l)?;
    file.seek(SeekFrom::Start(l.files_at))
        .with_context(|| format!("cannot read {}", path.display()))?;
    for entry in &header.files {
        let mut bytes = Vec::new();
        (&mut file)
            .take(entry.bytes)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if bytes.len() as u64 != entry.bytes || sha256_hex(&bytes) != entry.sha256 {
            bail!(
                "{}: the embedded {} is damaged (its length or SHA-256 differs from the \
                 header's); export the executable again",
                path.display(),
                entry.path
            );
        }
        let target = dir.join(&entry.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, &bytes)
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    Ok(header)
}

/// The payload's place in `file`, from its trailer; `None` without the magic.
fn layout(file: &mut File, path: &Path) -> Result<Option<Layout>> {
    let len = file_len(file, path)?;
    if len < TRAILER_LEN {
        return Ok(None);
    }
    let mut trailer = [0u8; TRAILER_LEN as usize];
    file.seek(SeekFrom::Start(len - TRAILER_LEN))
        .and_then(|_| file.read_exact(&mut trailer))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if &trailer[24..40] != MAGIC {
        return Ok(None);
    }
    let u64_at = |k: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&trailer[k..k + 8]);
        u64::from_le_bytes(b)
    };
    let (header_len, files_len) = (u64_at(0), u64_at(8));
    let format = u32::from_le_bytes([trailer[16], trailer[17], trailer[18], trailer[19]]);
    if format != FORMAT {
        bail!(
            "{}: standalone payload format {format}, this mats reads format {FORMAT}; export \
             it again with this mats",
            path.display()
        );
    }
    if header_len > MAX_HEADER_BYTES || files_len > MAX_FILES_BYTES {
        bail!(
            "{}: the standalone payload declares {header_len} header bytes and {files_len} \
             file bytes, beyond the limits ({MAX_HEADER_BYTES} and {MAX_FILES_BYTES})",
            path.display()
        );
    }
    let payload = header_len + files_len + TRAILER_LEN;
    if payload > len {
        bail!(
            "{}: the standalone payload declares {payload} bytes but the file has {len}; it \
             was truncated",
            path.display()
        );
    }
    Ok(Some(Layout {
        files_at: len - payload,
        files_len,
        header_len,
    }))
}

fn header_at(file: &mut File, path: &Path, l: Layout) -> Result<Header> {
    let mut json = vec![0u8; l.header_len as usize];
    file.seek(SeekFrom::Start(l.files_at + l.files_len))
        .and_then(|_| file.read_exact(&mut json))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let header: Header = serde_json::from_slice(&json)
        .with_context(|| format!("{}: the standalone payload's header", path.display()))?;
    if header.files.len() > MAX_FILES {
        bail!(
            "{}: the standalone payload lists {} files, more than {MAX_FILES}",
            path.display(),
            header.files.len()
        );
    }
    let mut total = 0u64;
    for entry in &header.files {
        check_path(&entry.path).with_context(|| format!("{}", path.display()))?;
        total = total.saturating_add(entry.bytes);
    }
    if total != l.files_len {
        bail!(
            "{}: the standalone payload's header lists {total} file bytes, its trailer {}",
            path.display(),
            l.files_len
        );
    }
    Ok(header)
}

/// A payload path must stay inside the folder it unpacks into.
fn check_path(rel: &str) -> Result<()> {
    let p = Path::new(rel);
    let plain = !rel.is_empty()
        && rel.len() <= MAX_PATH_BYTES
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        bail!("the payload path {rel:?} is not a plain relative path");
    }
    Ok(())
}

fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > cap {
        bail!(
            "{}: the export's files pass the standalone payload's limit of {MAX_FILES_BYTES} bytes",
            path.display()
        );
    }
    Ok(bytes)
}

fn file_len(file: &File, path: &Path) -> Result<u64> {
    Ok(file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(unix)]
fn set_executable(file: &File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_: &File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            name: "c".into(),
            class: "qap:c".into(),
            campaign: "camp".into(),
            family: "qap".into(),
            backend: "cpu".into(),
            device: "cpu".into(),
            arch: None,
            mats_version: "0".into(),
            files: Vec::new(),
        }
    }

    /// A fake executable and two files, packed into `out`.
    fn packed(dir: &Path) -> (PathBuf, PathBuf) {
        let exe = dir.join("exe");
        std::fs::write(&exe, b"\x7fELF not really").unwrap();
        std::fs::write(dir.join("index.json"), b"{}").unwrap();
        std::fs::write(dir.join("cubin"), [0u8, 1, 2, 255]).unwrap();
        let files = vec![
            ("index.json".to_string(), dir.join("index.json")),
            ("b/kernels/k.cubin".to_string(), dir.join("cubin")),
        ];
        let out = dir.join("out");
        let len = executable_len(&exe).unwrap();
        write(&exe, len, &files, header(), &out).unwrap();
        (exe, out)
    }

    #[test]
    fn a_payload_round_trips_and_a_repack_keeps_one_executable_part() {
        let tmp = tempfile::tempdir().unwrap();
        let (exe, out) = packed(tmp.path());
        assert_eq!(read_header(&exe).unwrap(), None);
        let exe_len = std::fs::metadata(&exe).unwrap().len();
        assert_eq!(executable_len(&out).unwrap(), exe_len);
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(&std::fs::read(&exe).unwrap()));

        let dir = tmp.path().join("unpacked");
        let h = unpack(&out, &dir).unwrap();
        assert_eq!(h.files.len(), 2);
        assert_eq!(h.files[1].path, "b/kernels/k.cubin");
        assert_eq!(
            std::fs::read(dir.join("b/kernels/k.cubin")).unwrap(),
            [0, 1, 2, 255]
        );
        assert_eq!(read_header(&out).unwrap(), Some(h.clone()));

        // Packing from a standalone copies only its executable part.
        let again = tmp.path().join("again");
        write(&out, executable_len(&out).unwrap(), &[], header(), &again).unwrap();
        assert_eq!(executable_len(&again).unwrap(), exe_len);
        assert!(read_header(&again).unwrap().unwrap().files.is_empty());
    }

    #[test]
    fn damaged_truncated_and_escaping_payloads_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (exe, out) = packed(tmp.path());
        let good = std::fs::read(&out).unwrap();
        let exe_len = std::fs::metadata(&exe).unwrap().len() as usize;

        let mut damaged = good.clone();
        damaged[exe_len] ^= 0xff; // the first byte of index.json
        let path = tmp.path().join("damaged");
        std::fs::write(&path, &damaged).unwrap();
        let err = format!("{:#}", unpack(&path, &tmp.path().join("d")).unwrap_err());
        assert!(err.contains("index.json is damaged"), "{err}");

        let path = tmp.path().join("truncated");
        std::fs::write(&path, &good[exe_len + 3..]).unwrap();
        let err = format!("{:#}", read_header(&path).unwrap_err());
        assert!(err.contains("truncated"), "{err}");

        let mut future = good.clone();
        let at = good.len() - 24;
        future[at] = 9;
        std::fs::write(&path, &future).unwrap();
        let err = format!("{:#}", read_header(&path).unwrap_err());
        assert!(err.contains("format 9"), "{err}");

        for bad in ["../x", "/etc/passwd", "a/../../x", ""] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        assert!(check_path("bundle-00/kernels/k.cubin").is_ok());
    }
}
