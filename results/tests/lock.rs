//! One writer per campaign folder: a second lock is refused naming the holder's pid, and a
//! holder killed with SIGKILL leaves nothing stuck.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use results::{FolderLock, LockError};

const CHILD_ENV: &str = "MATS_RESULTS_LOCK_CHILD";

#[test]
fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(FolderLock::holder(dir.path()), None, "no lock file yet");
    let first = FolderLock::acquire(dir.path()).unwrap();
    // `mats export` asks who writes the folder without taking the lock.
    let holder = FolderLock::holder(dir.path()).expect("held");
    assert!(
        holder.contains(&format!("pid {}", std::process::id())),
        "{holder}"
    );
    let err = FolderLock::acquire(dir.path()).unwrap_err();
    assert!(matches!(err, LockError::Held { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("pid {}", std::process::id())),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    drop(first);
    // Another test of this binary may fork a child at any moment; until that child execs it
    // shares every open file, this lock included, so allow it a moment to let go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while FolderLock::acquire(dir.path()).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "free again once the holder is gone"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The holder for the crash test: takes the lock, says so, and waits to be killed.
#[test]
#[ignore = "the child process of a_killed_holder_leaves_the_folder_free"]
fn lock_holder_child() {
    let dir = std::env::var(CHILD_ENV)
        .unwrap_or_else(|_| panic!("{CHILD_ENV} must name the folder: this is a child process"));
    let _lock = FolderLock::acquire(std::path::Path::new(&dir)).unwrap();
    println!("locked");
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
fn a_killed_holder_leaves_the_folder_free() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lock_holder_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let locked = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("locked"));
    assert!(locked, "the child took the lock");

    let message = FolderLock::acquire(dir.path()).unwrap_err().to_string();
    assert!(
        message.contains(&format!("pid {}", child.id())),
        "{message}"
    );

    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    FolderLock::acquire(dir.path()).expect("the kernel released the dead holder's lock");
}
