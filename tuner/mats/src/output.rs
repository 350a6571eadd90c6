//! What happens when mats's own output cannot be written: a closed pipe (`mats ... | head`)
//! ends the process quietly with the status a shell expects (killed by SIGPIPE, 141), and a
//! full disk or `/dev/full` gives one error line and exit status 1, never a panic.
//!
//! Rust ignores SIGPIPE, so `println!` on a closed pipe panics ("failed printing to
//! stdout"). Restoring SIGPIPE's default action for the whole process would also kill mats
//! when a GPU worker or a daemon client disappears mid-write, which mats handles as an
//! error; so the default action is restored only at the moment stdout is found closed: by the
//! panic hook below for the `print!` family, and by [`exit_for`] for errors returned from
//! explicit writes. Nothing recorded is lost either way: every store write is committed
//! before the command prints about it.

use std::io::ErrorKind;

/// A failed write to standard output. Only these end quietly on a closed pipe: a broken
/// pipe to a daemon or a worker is an error to report.
#[derive(Debug)]
pub struct StdoutError(pub std::io::Error);

impl std::fmt::Display for StdoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// Wraps an error of a write to standard output (see [`StdoutError`]).
pub fn stdout_error(e: std::io::Error) -> anyhow::Error {
    anyhow::Error::new(StdoutError(e))
}

/// Folders that must not outlive the process even where it dies of SIGPIPE (a standalone
/// executable's unpacked bundle): removed by [`die_of_sigpipe`], which runs no destructors.
static REMOVE_AT_EXIT: std::sync::Mutex<Vec<std::path::PathBuf>> =
    std::sync::Mutex::new(Vec::new());

/// Registers `folder` for removal should the process die of a closed pipe.
pub fn remove_at_exit(folder: &std::path::Path) {
    if let Ok(mut list) = REMOVE_AT_EXIT.lock() {
        list.push(folder.to_path_buf());
    }
}

/// Dies as a process killed by SIGPIPE would, without a word.
pub fn die_of_sigpipe() -> ! {
    // Not `lock()`: the panic hook may run this while the list is held.
    if let Ok(list) = REMOVE_AT_EXIT.try_lock() {
        for folder in list.iter() {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
    // SAFETY: restoring a signal's default action and raising it in this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Unreachable unless SIGPIPE is blocked; 141 is what a shell reports for it.
    std::process::exit(128 + libc::SIGPIPE)
}

/// A command stopped by the user (Ctrl-C, SIGTERM) after saving what it had: reported as one
/// line and exit status 130, as a shell reports a process ended by SIGINT, so that
/// `mats tune C && mats export C` does not export a campaign that never finished.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// For an error a command returned: a closed pipe ends quietly, an interruption with 130;
/// `None` for anything else.
pub fn exit_for(error: &anyhow::Error) -> Option<std::process::ExitCode> {
    if let Some(Interrupted(message)) = error.downcast_ref::<Interrupted>() {
        eprintln!("mats: {message}");
        return Some(std::process::ExitCode::from(130));
    }
    let closed = error
        .chain()
        .filter_map(|c| c.downcast_ref::<StdoutError>())
        .any(|e| e.0.kind() == ErrorKind::BrokenPipe);
    if closed {
        die_of_sigpipe();
    }
    None
}

/// Installs the hook that turns `print!`'s panics on stdout into the endings above; other
/// panics go to the hook that was there.
pub fn install() {
    // A file size limit (`ulimit -f`) would otherwise kill mats with SIGXFSZ at the write
    // that crosses it; ignored, the write fails with EFBIG and is reported like a full disk.
    // SAFETY: setting a signal's disposition to ignore at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(reason) = message.strip_prefix("failed printing to stdout: ") {
            if reason.contains("Broken pipe") || reason.contains("os error 32") {
                die_of_sigpipe();
            }
            eprintln!("mats: error: cannot write to standard output: {reason}");
            std::process::exit(1);
        }
        previous(info)
    }));
}
