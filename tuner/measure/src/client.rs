//! The parent side of the worker protocol: starts `mats worker`, sends jobs, and turns a
//! worker that dies or hangs into a `crashed` outcome, starting a fresh worker for the next job.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::protocol::{Job, Outcome, Request, Response};

/// A measuring worker process, restarted after every crash.
pub struct WorkerClient {
    exe: PathBuf,
    running: Option<Running>,
    next_id: u64,
    /// Workers started so far (1 + restarts).
    pub started: u32,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl WorkerClient {
    /// `exe` is the `mats` binary (the current executable, or the test's binary).
    pub fn new(exe: impl Into<PathBuf>) -> WorkerClient {
        WorkerClient {
            exe: exe.into(),
            running: None,
            next_id: 1,
            started: 0,
        }
    }

    fn start(&mut self) -> Result<&mut Running, String> {
        if self.running.is_none() {
            let mut child = Command::new(&self.exe)
                .arg("worker")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start the worker {}: {e}", self.exe.display()))?;
            let stdin = child.stdin.take().expect("piped");
            let stdout = child.stdout.take().expect("piped");
            let stderr_pipe = child.stderr.take().expect("piped");
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            // Keep the last lines of stderr: they explain a crash (a panic, a driver message).
            let stderr = Arc::new(Mutex::new(VecDeque::new()));
            let tail = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == 20 {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
            self.started += 1;
            self.running = Some(Running {
                child,
                stdin,
                lines,
                stderr,
            });
        }
        Ok(self.running.as_mut().expect("just started"))
    }

    /// Sends a job and waits at most `timeout` for its answer.
    pub fn request(&mut self, job: Job, timeout: Duration) -> Outcome {
        let id = self.next_id;
        self.next_id += 1;
        let running = match self.start() {
            Ok(r) => r,
            Err(message) => return Outcome::Failed { message },
        };
        let mut line = serde_json::to_string(&Request { id, job }).expect("requests serialise");
        line.push('\n');
        if let Err(e) = running
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| running.stdin.flush())
        {
            return self.crashed(format!("the worker stopped reading requests: {e}"));
        }
        loop {
            let running = self.running.as_mut().expect("started above");
            match running.lines.recv_timeout(timeout) {
                Ok(line) => match serde_json::from_str::<Response>(&line) {
                    Ok(response) if response.id == id => {
                        if let Outcome::Crashed { message } = response.outcome {
                            return self.crashed(message);
                        }
                        return response.outcome;
                    }
                    // Ids start at 1: 0 answers a request the worker could not read at all.
                    Ok(response) if response.id == 0 => return response.outcome,
                    // An answer to an earlier, timed-out request: skip it.
                    Ok(_) => continue,
                    Err(e) => {
                        return self
                            .crashed(format!("the worker wrote an unreadable line ({e}): {line}"))
                    }
                },
                Err(RecvTimeoutError::Timeout) => {
                    return self.crashed(format!(
                        "no answer within {:.0} s; the worker was killed",
                        timeout.as_secs_f64()
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return self.crashed("the worker exited".to_string())
                }
            }
        }
    }

    /// Ends the current worker and describes why.
    fn crashed(&mut self, message: String) -> Outcome {
        let Some(mut running) = self.running.take() else {
            return Outcome::Crashed { message };
        };
        let _ = running.child.kill();
        let status = running.child.wait().ok();
        // Give the stderr reader a moment to drain the last lines.
        std::thread::sleep(Duration::from_millis(50));
        let tail: Vec<String> = running
            .stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        let mut message = message;
        if let Some(status) = status.and_then(|s| s.code()) {
            message.push_str(&format!(" (worker exit status {status})"));
        }
        if !tail.is_empty() {
            message.push_str(&format!("; worker stderr: {}", tail.join(" | ")));
        }
        Outcome::Crashed { message }
    }
}

impl Drop for WorkerClient {
    fn drop(&mut self) {
        if let Some(mut running) = self.running.take() {
            // Closing stdin ends a healthy worker; kill covers one that hangs.
            drop(running.stdin);
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
    }
}

/// Starts a worker that does `job` and exits, and returns at once without waiting for it:
/// work that should outlive the caller (filling the kernel cache after `mats solve` gave its
/// answer). The worker reads the one request, then end of input; its output goes nowhere.
pub fn detach(exe: &std::path::Path, job: Job) -> Result<(), String> {
    let mut child = Command::new(exe)
        .arg("worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the worker {}: {e}", exe.display()))?;
    let mut line = serde_json::to_string(&Request { id: 1, job }).expect("requests serialise");
    line.push('\n');
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(line.as_bytes())
        .map_err(|e| format!("cannot hand the worker its job: {e}"))?;
    // Dropping stdin ends the worker's input; dropping `child` neither waits nor kills.
    Ok(())
}
