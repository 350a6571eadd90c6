//! Ctrl-C, SIGTERM and SIGHUP during `mats solve` (and a standalone executable): the first
//! asks the solvers to end at their next deadline check, so the run ends with its best so far,
//! which is printed and re-scored like any answer (exit status 130); a second ends the process
//! at once.

use std::sync::atomic::{AtomicI32, Ordering};

/// The first stop signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only async-signal-safe work here: atomic stores and `_exit`.
    if RECEIVED.swap(signal, Ordering::SeqCst) != 0 {
        // SAFETY: `_exit` is async-signal-safe; a second signal means "now".
        unsafe { libc::_exit(130) };
    }
    solvers::run::request_stop();
}

/// Installs the handlers (call once, before solving).
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only touches atomics and calls `_exit`.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// The signal that stopped the run, by name, if one did.
pub fn received() -> Option<&'static str> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGHUP => Some("SIGHUP"),
        _ => Some("a signal"),
    }
}
