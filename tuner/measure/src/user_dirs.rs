//! Where mats keeps per-user state outside campaign folders: device locks, the daemon's
//! socket, queue and logs.

use std::path::PathBuf;

/// `$MATS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/mats` (a per-user tmpfs that logging out
/// clears), else the user's cache folder (`~/.cache/mats`), else `.mats-runtime`.
pub fn runtime_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MATS_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::runtime_dir()
        .or_else(dirs::cache_dir)
        .map(|d| d.join("mats"))
        .unwrap_or_else(|| PathBuf::from(".mats-runtime"))
}

/// `$MATS_STATE_DIR`, else the user's cache folder (`~/.cache/mats/daemon`): state that must
/// survive a reboot (the daemon's queue and logs), unlike the runtime folder.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MATS_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .map(|d| d.join("mats").join("daemon"))
        .unwrap_or_else(|| PathBuf::from(".mats-daemon"))
}

/// Creates `dir` (and its parents) readable by its owner only: sockets and locks inside are
/// then out of other users' reach from the moment they exist.
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing folder keeps its mode on create; tighten it.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}
