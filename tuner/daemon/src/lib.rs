//! `mats daemon`: queues campaigns, runs them, and shares the GPUs among them.
//!
//! - `protocol`: line-delimited JSON requests and replies, bounded and strictly parsed.
//! - `queue`: the queue in its own SQLite file; what survives kill -9 and reboots.
//! - `progress`: trials done, best so far and ETA, read from a campaign's store.
//! - `server` (this file): the Unix socket (0600, in a 0700 folder, peers of another uid
//!   refused), the optional TCP listener (token), the scheduler and the children.
//! - `client`: `mats submit | status | cancel | logs`.
//!
//! Each campaign runs as a child `mats tune CAMPAIGN --out OUT --resume --quiet` rather than
//! as a task inside the daemon: the tuner is synchronous and keeps process-wide state (its
//! Ctrl-C flag, the folder lock, GPU worker processes), a campaign that fails or aborts cannot
//! take the daemon or the other campaigns with it, cancel is a signal, the log is the child's
//! output, and a restart resumes through exactly the path a user's `--resume` takes, so
//! nothing finished is measured twice. GPUs are shared through the per-device lock
//! ([`measure::device_lock`]) that every measuring process takes trial by trial: the
//! daemon's campaigns and any plain `mats tune` take turns, one trial per GPU at a time.
//! Priority orders the queue; `--jobs` campaigns run at once.

/// The daemon's own log line, on stderr: after a terminal hang-up (SIGHUP is ignored, so that
/// the daemon outlives its login) stderr may be gone, and `eprintln!` would panic there.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod client;
mod progress;
pub mod protocol;
mod queue;
mod status;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use protocol::{error_reply, parse_request, reply, Request, LOG_CHUNK_BYTES, MAX_REQUEST_BYTES};
use queue::{NewEntry, Queue};

/// The default socket: `$MATS_DAEMON_SOCKET`, else `RUNTIME/daemon.sock`.
pub fn default_socket() -> PathBuf {
    match std::env::var_os("MATS_DAEMON_SOCKET").filter(|s| !s.is_empty()) {
        Some(s) => PathBuf::from(s),
        None => measure::user_dirs::runtime_dir().join("daemon.sock"),
    }
}

/// Connections kept open at once. At the cap, a new connection closes the oldest idle one
/// (waiting for a request, or in the middle of sending one) instead of waiting: 64 idle
/// connections used to lock every other client out.
const MAX_CONNECTIONS: usize = 256;
/// A connection idle this long (no request begun) is closed.
const IDLE: Duration = Duration::from_secs(600);
/// A request, once its first byte arrived, must arrive whole within this time, and a reply
/// must be taken within it: slow clients cannot hold a connection for long.
const SLOW: Duration = Duration::from_secs(10);

/// The open connections, oldest first, and which of them are idle (evictable).
#[derive(Default)]
struct Connections {
    next: u64,
    /// id -> (busy answering a request, close signal).
    open: std::collections::BTreeMap<u64, (bool, Arc<tokio::sync::Notify>)>,
}

/// One connection's entry; removed when the connection ends.
struct Slot {
    id: u64,
    close: Arc<tokio::sync::Notify>,
    all: Arc<Mutex<Connections>>,
}

impl Slot {
    /// Registers a new connection; at the cap, the oldest idle one is told to close.
    fn admit(all: &Arc<Mutex<Connections>>) -> Slot {
        let mut c = all.lock().unwrap_or_else(|p| p.into_inner());
        if c.open.len() >= MAX_CONNECTIONS {
            // Ids grow with time, so the first idle entry is the oldest connection; an entry
            // whose last request ended long ago is as idle as one that never sent any.
            let oldest = c
                .open
                .iter()
                .find(|(_, (busy, _))| !busy)
                .map(|(id, _)| *id);
            if let Some(id) = oldest {
                if let Some((_, close)) = c.open.remove(&id) {
                    close.notify_one();
                }
            }
        }
        let id = c.next;
        c.next += 1;
        let close = Arc::new(tokio::sync::Notify::new());
        c.open.insert(id, (false, close.clone()));
        Slot {
            id,
            close,
            all: all.clone(),
        }
    }

    /// Marks the connection busy (answering: not evictable) or idle again.
    fn busy(&self, busy: bool) {
        let mut c = self.all.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = c.open.get_mut(&self.id) {
            entry.0 = busy;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.all.lock().unwrap_or_else(|p| p.into_inner());
        c.open.remove(&self.id);
    }
}

/// Raises this process's open-file limit to its hard limit (at most 65,536): each connection
/// is a descriptor, and the usual soft limit of 1,024 is below the connection cap plus the
/// queue, logs and children.
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a valid struct for this process.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            let want = limit.rlim_max.min(65_536);
            if limit.rlim_cur < want {
                limit.rlim_cur = want;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}

struct Daemon {
    queue: Mutex<Queue>,
    state_dir: PathBuf,
    exe: PathBuf,
    jobs: usize,
    /// Running children: campaign id -> pid.
    running: Mutex<HashMap<i64, u32>>,
    wake: tokio::sync::Notify,
    stopping: AtomicBool,
    token: Option<String>,
}

impl Daemon {
    fn log_path(&self, id: i64) -> PathBuf {
        self.state_dir.join("logs").join(format!("{id}.log"))
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A panic while holding the lock leaves a usable connection; keep serving.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<i64, u32>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether a peer of the Unix socket may talk to the daemon: only the daemon's own user.
pub fn peer_allowed(peer_uid: u32, daemon_uid: u32) -> bool {
    peer_uid == daemon_uid
}

/// Equal-time comparison of tokens, so that response timing does not reveal a prefix.
fn token_matches(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, x) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ x);
    }
    diff == 0
}

/// Reads the TCP token: at least 16 characters, in a file only its owner can read.
fn read_token(path: &Path) -> Result<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        bail!(
            "the token file {} is readable by other users; chmod 600 it",
            path.display()
        );
    }
    let token = solvers::error::read_kind(path, "a token file", solvers::error::caps::TOKEN)
        .with_context(|| format!("cannot read the token file {}", path.display()))?
        .trim()
        .to_string();
    if token.chars().count() < 16 {
        bail!(
            "the token in {} is shorter than 16 characters",
            path.display()
        );
    }
    Ok(token)
}

/// Runs the daemon until SIGINT or SIGTERM.
/// What `mats daemon` was asked for: where to listen, where to keep the queue and logs, how
/// many campaigns at once.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The Unix socket (the default one when `None`).
    pub socket: Option<std::path::PathBuf>,
    /// The queue's and logs' folder (the user's state folder when `None`).
    pub state_dir: Option<std::path::PathBuf>,
    /// Campaigns run at once.
    pub jobs: usize,
    /// A TCP address to listen on too (requires `token_file`).
    pub listen: Option<String>,
    pub token_file: Option<std::path::PathBuf>,
}

pub fn serve(args: &ServeOptions) -> Result<()> {
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(measure::user_dirs::state_dir);
    measure::user_dirs::create_private_dir(&state_dir.join("logs"))
        .with_context(|| format!("cannot create the state folder {}", state_dir.display()))?;
    measure::user_dirs::create_private_dir(&state_dir)
        .with_context(|| format!("cannot create the state folder {}", state_dir.display()))?;
    // One daemon per state folder (the lock names the holder's pid).
    let _lock = results::FolderLock::acquire(&state_dir).map_err(|e| match e {
        results::LockError::Held { folder, holder } => anyhow::anyhow!(
            "a mats daemon already runs on the state folder {} ({holder}); talk to it with \
             `mats status`, stop it first, or start another daemon with its own --state-dir \
             (or MATS_STATE_DIR) and --socket",
            folder.display()
        ),
        other => other.into(),
    })?;
    let socket = args.socket.clone().unwrap_or_else(default_socket);
    // A network listener without a token would serve anyone who can reach the port.
    if args.listen.is_some() && args.token_file.is_none() {
        bail!(
            "--listen needs --token-file: every request over TCP must carry the token \
             (see docs/daemon.md)"
        );
    }
    let token = args.token_file.as_deref().map(read_token).transpose()?;
    raise_descriptor_limit();
    // `mats daemon &` from a login shell gets SIGHUP when the terminal hangs up, which would
    // end it (and, through their parent-death signal, its campaigns mid-trial): the daemon
    // outlives its login, as nohup would make it. Its children get the default back.
    // SAFETY: sets this process's disposition of one signal, before any thread starts.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let queue = Queue::open(&state_dir.join("queue.sqlite"))?;
    for left in queue.requeue_running()? {
        let under = left.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        if left.cancel {
            // A cancel was on its way when the last daemon died: the user's word stands.
            if let Some(entry) = queue.get(left.id)? {
                queue.set_progress(left.id, &progress::read(&entry))?;
            }
            queue.finish(
                left.id,
                "cancelled",
                Some("cancelled by `mats cancel`; the daemon stopped before the campaign did"),
            )?;
            say!(
                "campaign {} was being cancelled under the last daemon{under}; it is cancelled",
                left.id
            );
        } else {
            say!(
                "campaign {} was running under the last daemon{under}; it resumes",
                left.id
            );
        }
        if let Some(pid) = left.pid {
            wait_gone(pid);
        }
    }
    let daemon = Arc::new(Daemon {
        queue: Mutex::new(queue),
        state_dir,
        exe: std::env::current_exe().context("cannot find the mats executable")?,
        jobs: args.jobs,
        running: Mutex::new(HashMap::new()),
        wake: tokio::sync::Notify::new(),
        stopping: AtomicBool::new(false),
        token,
    });
    // One thread: the children's parent-death signal follows the thread that spawned them,
    // and the daemon's work is I/O and short queries.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the daemon's runtime")?;
    rt.block_on(run(daemon, socket, args.listen.clone()))
}

/// A child of a killed daemon dies with it (parent-death signal), but not instantly; resuming
/// while it still holds its folder lock would fail, so wait for it (at most 10 s).
fn wait_gone(pid: i64) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    for _ in 0..100 {
        // SAFETY: kill with signal 0 only checks for existence.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn bind_socket(path: &Path) -> Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt as _;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.exists() {
        measure::user_dirs::create_private_dir(parent)
            .with_context(|| format!("cannot create the socket folder {}", parent.display()))?;
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!(
                "another daemon listens on {}; stop it first or use --socket",
                path.display()
            );
        }
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
    }
    // SAFETY: umask only changes this process's file creation mask; the socket is created
    // 0600 from the start (no window in which others could connect), then the mask returns.
    let old = unsafe { libc::umask(0o177) };
    let listener = tokio::net::UnixListener::bind(path);
    unsafe { libc::umask(old) };
    let listener = listener.with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {}", path.display()))?;
    Ok(listener)
}

async fn run(daemon: Arc<Daemon>, socket: PathBuf, listen: Option<String>) -> Result<()> {
    let unix = bind_socket(&socket)?;
    let tcp = match &listen {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?,
        ),
        None => None,
    };
    say!(
        "mats daemon (pid {}) listening on {}{}; queue in {}",
        std::process::id(),
        socket.display(),
        listen
            .as_ref()
            .map(|a| format!(" and tcp {a} (token)"))
            .unwrap_or_default(),
        daemon.state_dir.join("queue.sqlite").display()
    );
    let connections = Arc::new(Mutex::new(Connections::default()));
    let me = unsafe { libc::geteuid() };

    let scheduler = tokio::spawn(schedule(daemon.clone()));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch SIGTERM")?;
    loop {
        tokio::select! {
            accepted = unix.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors, most likely: let connections close, then go on.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                let allowed = stream.peer_cred().map(|c| peer_allowed(c.uid(), me));
                let slot = Slot::admit(&connections);
                let d = daemon.clone();
                tokio::spawn(async move {
                    match allowed {
                        Ok(true) => serve_connection(d, stream, false, slot).await,
                        Ok(false) | Err(_) => {
                            let mut s = stream;
                            let reply = error_reply(
                                "refused: this daemon serves only its own user (peer \
                                 credentials of another uid)",
                            );
                            let _ = s.write_all(format!("{reply}\n").as_bytes()).await;
                        }
                    }
                });
            }
            accepted = async { match &tcp { Some(l) => l.accept().await, None => std::future::pending().await } } => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                let slot = Slot::admit(&connections);
                let d = daemon.clone();
                tokio::spawn(async move {
                    serve_connection(d, stream, true, slot).await;
                });
            }
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
        }
    }
    say!("mats daemon stopping: running campaigns are interrupted and resume at the next start");
    daemon.stopping.store(true, Ordering::SeqCst);
    let pids: Vec<u32> = daemon.running().values().copied().collect();
    for pid in pids {
        interrupt(pid, libc::SIGINT);
    }
    // The children stop after their current trial; the waiters put them back in the queue.
    for _ in 0..600 {
        if daemon.running().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    scheduler.abort();
    let _ = std::fs::remove_file(&socket);
    Ok(())
}

fn interrupt(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: sends a signal to our own child.
        unsafe { libc::kill(pid, signal) };
    }
}

/// Reads request lines and answers each; a line over the limit gets an error reply and ends
/// the connection (its end cannot be found without reading it all).
/// Timeouts: [`IDLE`] for a request to begin, [`SLOW`] for it to end and for the reply to be
/// taken; the connection also ends when a newer one evicts it (see [`Slot::admit`]).
async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    d: Arc<Daemon>,
    stream: S,
    tcp: bool,
    slot: Slot,
) {
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = async {
            // The first byte may take IDLE; the rest of the line only SLOW.
            match tokio::time::timeout(IDLE, reader.fill_buf()).await {
                Ok(Ok([])) => return Some(0),
                Ok(Ok(_)) => {}
                _ => return None,
            }
            match tokio::time::timeout(
                SLOW,
                (&mut reader)
                    .take(MAX_REQUEST_BYTES as u64 + 1)
                    .read_until(b'\n', &mut line),
            )
            .await
            {
                Ok(Ok(n)) => Some(n),
                _ => None,
            }
        };
        let n = tokio::select! {
            n = read => n,
            _ = slot.close.notified() => None,
        };
        let Some(n) = n else {
            return; // idle, too slow, evicted, or the client went away
        };
        if n == 0 {
            return;
        }
        let complete = line.last() == Some(&b'\n');
        if complete {
            line.pop();
        } else if line.len() > MAX_REQUEST_BYTES {
            let reply = error_reply(&format!(
                "request longer than the limit of {MAX_REQUEST_BYTES} bytes"
            ));
            let _ = write.write_all(format!("{reply}\n").as_bytes()).await;
            return;
        }
        slot.busy(true);
        let reply = match parse_request(&line) {
            Err(e) => error_reply(&e),
            Ok(p) => match (&d.token, tcp) {
                (Some(expected), true)
                    if !p
                        .token
                        .as_deref()
                        .is_some_and(|t| token_matches(t, expected)) =>
                {
                    error_reply("refused: missing or wrong token")
                }
                (None, true) => error_reply("refused: no token configured"),
                _ => answer(&d, p.request).await,
            },
        };
        let sent =
            tokio::time::timeout(SLOW, write.write_all(format!("{reply}\n").as_bytes())).await;
        if !matches!(sent, Ok(Ok(()))) {
            return;
        }
        slot.busy(false);
        if !complete {
            return; // the client closed after an unterminated request
        }
    }
}

async fn answer(d: &Arc<Daemon>, request: Request) -> serde_json::Value {
    let result = match request {
        Request::Ping => ok(&reply::Pong {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
        Request::Submit {
            campaign,
            out,
            priority,
            cwd,
            resume,
        } => {
            // Validation reads the campaign, its space and instances: off the I/O thread.
            let d2 = d.clone();
            let submission = Submission {
                out,
                priority,
                resume,
            };
            match tokio::task::spawn_blocking(move || submit(&d2, &campaign, submission, &cwd))
                .await
            {
                Ok(r) => r,
                Err(e) => Err(anyhow::anyhow!("validation failed: {e}")),
            }
        }
        Request::Status { id } => status(d, id),
        Request::Cancel { id } => cancel(d, id),
        Request::Logs { id, offset } => logs(d, id, offset),
    };
    match result {
        Ok(v) => v,
        Err(e) => error_reply(&search::errors::one_line(&e)),
    }
}

/// What a submit asks beside its campaign and working folder.
struct Submission {
    out: Option<PathBuf>,
    priority: i64,
    resume: bool,
}

fn submit(
    d: &Daemon,
    campaign: &Path,
    Submission {
        out,
        priority,
        resume,
    }: Submission,
    cwd: &Path,
) -> Result<serde_json::Value> {
    if !campaign.is_absolute() || !cwd.is_absolute() {
        bail!("the campaign and working folder must be absolute paths");
    }
    let file = engine::campaign::CampaignFile::read(campaign)?;
    let plan =
        engine::campaign::CampaignPlan::resolve(&file, &engine::campaign::Resolve::check(out))?;
    // One spelling per folder (`runs/./x`, a symbolic link to it), so that the queue's "one
    // campaign per folder" compares folders, not strings.
    let out_dir = resolved(&if plan.out_dir.is_absolute() {
        plan.out_dir.clone()
    } else {
        cwd.join(&plan.out_dir)
    });
    // An output that exists must be a folder (`--out /dev/null` used to be queued, and
    // its campaign then failed in the child).
    if out_dir.exists() && !out_dir.is_dir() {
        bail!(
            "the output {} exists and is not a folder; give --out a folder (new or one of \
             results)",
            solvers::limits::cut(&out_dir.display().to_string())
        );
    }
    let store = out_dir.join(engine::tune::STORE_FILE);
    if store.exists() && !resume {
        bail!(
            "{} already holds results; submit with another --out, or continue them with \
             `mats submit {} --out {0} --resume`",
            out_dir.display(),
            campaign.display()
        );
    }
    // The child runs `mats tune --resume`, which refuses another campaign's folder; said here
    // it reaches the submitter instead of a failed entry.
    if store.exists() {
        let held = results::Store::open_existing(&store)?.campaigns()?;
        if let Some(other) = held.iter().find(|c| c.name != plan.name) {
            bail!(
                "{} holds campaign {:?}, not {:?}: --resume continues a campaign in its own \
                 folder",
                out_dir.display(),
                other.name,
                plan.name
            );
        }
    }
    let q = d.queue();
    if let Some(other) = q.active_in(&out_dir)? {
        bail!(
            "campaign {other} of the queue already writes into {}; use another --out",
            out_dir.display()
        );
    }
    let id = q.add(&NewEntry {
        name: &plan.name,
        campaign,
        out_dir: &out_dir,
        cwd,
        priority,
        max_trials: plan.budget.trials,
        wall_s: plan.budget.wall_s,
    })?;
    drop(q);
    d.wake.notify_one();
    ok(&reply::Submitted {
        id,
        name: plan.name,
        out: out_dir,
    })
}

/// An absolute path with its existing part resolved (symbolic links, `.` and `..`) and the
/// rest, not yet created, normalised lexically.
fn resolved(path: &Path) -> PathBuf {
    use std::path::Component;
    let parts: Vec<Component> = path.components().collect();
    // The longest prefix that exists, resolved; the rest applied to it by name.
    let Some((k, mut out)) = (1..=parts.len()).rev().find_map(|k| {
        Some((
            k,
            std::fs::canonicalize(parts[..k].iter().collect::<PathBuf>()).ok()?,
        ))
    }) else {
        return path.to_path_buf();
    };
    for part in &parts[k..] {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// A reply: `"ok": true` beside the fields of `body`.
fn ok<T: serde::Serialize>(body: &T) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(body).context("writing a reply")?;
    if let Some(map) = v.as_object_mut() {
        map.insert("ok".into(), true.into());
    }
    Ok(v)
}

/// A campaign with its live progress and its log file.
fn describe(d: &Daemon, e: &queue::Entry) -> reply::Campaign {
    let mut entry = e.clone();
    entry.progress = Some(progress::read(e));
    reply::Campaign {
        entry,
        log: Some(d.log_path(e.id)),
    }
}

fn status(d: &Daemon, id: Option<i64>) -> Result<serde_json::Value> {
    let q = d.queue();
    match id {
        Some(id) => {
            let e = q
                .get(id)?
                .with_context(|| format!("no campaign {id} in the queue"))?;
            drop(q);
            ok(&reply::One {
                campaign: describe(d, &e),
            })
        }
        None => {
            let all = q.all()?;
            drop(q);
            // Finished campaigns' stores are not read: status stays fast with a long history.
            let campaigns = all
                .iter()
                .map(|e| {
                    if e.state == "running" {
                        describe(d, e)
                    } else {
                        reply::Campaign {
                            entry: e.clone(),
                            log: None,
                        }
                    }
                })
                .collect();
            ok(&reply::All {
                jobs: d.jobs,
                campaigns,
            })
        }
    }
}

fn cancel(d: &Daemon, id: i64) -> Result<serde_json::Value> {
    let q = d.queue();
    let e = q
        .get(id)?
        .with_context(|| format!("no campaign {id} in the queue"))?;
    match e.state.as_str() {
        "queued" => {
            // `cancel` says a cancel was asked for, whatever the state it found.
            q.request_cancel(id)?;
            if e.starts > 0 {
                // Put back by a stop or a restart: it ran, and its folder holds what it
                // measured.
                q.set_progress(id, &progress::read(&e))?;
                q.finish(
                    id,
                    "cancelled",
                    Some("cancelled while queued to resume; its folder keeps what it measured"),
                )?;
            } else {
                q.finish(id, "cancelled", Some("cancelled before it started"))?;
            }
            ok(&reply::Cancelled {
                id,
                state: "cancelled".into(),
            })
        }
        "running" => {
            q.request_cancel(id)?;
            drop(q);
            if let Some(pid) = d.running().get(&id).copied() {
                // The first cancel lets the current trial finish; a second one does not wait
                // (to `mats tune` a second stop signal: it records the trial it leaves as
                // interrupted and exits).
                interrupt(
                    pid,
                    if e.cancel {
                        libc::SIGTERM
                    } else {
                        libc::SIGINT
                    },
                );
            }
            ok(&reply::Cancelled {
                id,
                // The second cancel ends the campaign at once: its current trial is
                // recorded as interrupted, and `mats tune ... --resume` repeats it.
                state: if e.cancel { "killed" } else { "cancelling" }.into(),
            })
        }
        other => bail!("campaign {id} is already {other}"),
    }
}

fn logs(d: &Daemon, id: i64, offset: u64) -> Result<serde_json::Value> {
    use std::io::{Read as _, Seek as _};
    let e = d
        .queue()
        .get(id)?
        .with_context(|| format!("no campaign {id} in the queue"))?;
    let path = d.log_path(id);
    let mut text = Vec::new();
    let mut next = offset;
    if let Ok(mut f) = std::fs::File::open(&path) {
        f.seek(std::io::SeekFrom::Start(offset))
            .with_context(|| format!("cannot read {}", path.display()))?;
        f.take(LOG_CHUNK_BYTES as u64)
            .read_to_end(&mut text)
            .with_context(|| format!("cannot read {}", path.display()))?;
        whole_characters(&mut text);
        next += text.len() as u64;
    }
    let ended = !matches!(e.state.as_str(), "queued" | "running");
    ok(&reply::LogChunk {
        text: String::from_utf8_lossy(&text).into_owned(),
        offset: next,
        state: e.state,
        ended,
    })
}

/// A log chunk that ends inside a UTF-8 character stops before it, so that the next chunk
/// starts there (each chunk is decoded on its own: the two halves became two U+FFFD).
fn whole_characters(chunk: &mut Vec<u8>) {
    if let Err(e) = std::str::from_utf8(chunk) {
        if e.error_len().is_none() {
            chunk.truncate(e.valid_up_to());
        }
    }
}

/// Starts queued campaigns while fewer than `jobs` run; woken by submits and ends.
async fn schedule(d: Arc<Daemon>) {
    loop {
        while !d.stopping.load(Ordering::SeqCst) && d.running().len() < d.jobs {
            let next = d.queue().next_queued();
            match next {
                Ok(Some(e)) => start(&d, e),
                Ok(None) => break,
                Err(err) => {
                    say!("queue: {err:#}");
                    break;
                }
            }
        }
        tokio::select! {
            _ = d.wake.notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
}

fn start(d: &Arc<Daemon>, e: queue::Entry) {
    let log_path = d.log_path(e.id);
    let spawned = (|| -> Result<tokio::process::Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("cannot open the log {}", log_path.display()))?;
        let mut cmd = tokio::process::Command::new(&d.exe);
        cmd.arg("tune")
            .arg(&e.campaign)
            .arg("--out")
            .arg(&e.out_dir)
            // Always --resume: a fresh folder starts, a restarted one continues, and
            // nothing finished is measured again.
            // Not --quiet: the log gets a progress line every few seconds.
            .arg("--resume")
            .current_dir(if e.cwd.is_dir() {
                &e.cwd
            } else {
                Path::new("/")
            })
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().context("cannot share the log")?)
            .stderr(log)
            .kill_on_drop(false);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                // Its own process group: a Ctrl-C meant for the daemon's terminal reaches the
                // daemon, which decides; and the child dies with the daemon (kill -9
                // included), so a restarted daemon never races an orphan.
                libc::setpgid(0, 0);
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        cmd.spawn()
            .with_context(|| format!("cannot start {}", d.exe.display()))
    })();
    let mut child = match spawned {
        Ok(c) => c,
        Err(err) => {
            let _ = d
                .queue()
                .finish(e.id, "failed", Some(&search::errors::one_line(&err)));
            return;
        }
    };
    let pid = child.id().unwrap_or(0);
    if let Err(err) = d.queue().mark_running(e.id, pid) {
        say!("queue: {err:#}");
    }
    d.running().insert(e.id, pid);
    say!(
        "campaign {} ({}) started{}: mats tune pid {pid}, log {}",
        e.id,
        e.name,
        if e.starts > 0 { " again (resume)" } else { "" },
        log_path.display()
    );
    let d = d.clone();
    tokio::spawn(async move {
        let status = child.wait().await;
        d.running().remove(&e.id);
        let cancelled = d.queue().get(e.id).ok().flatten().is_some_and(|x| x.cancel);
        let stopping = d.stopping.load(Ordering::SeqCst);
        let (state, reason) = match status {
            Ok(s) => ending(s, cancelled, stopping, &d.log_path(e.id)),
            Err(err) => ("failed", Some(format!("cannot wait for mats tune: {err}"))),
        };
        let progress = progress::read(&e);
        let q = d.queue();
        if let Err(err) = q
            .set_progress(e.id, &progress)
            .and_then(|()| q.finish(e.id, state, reason.as_deref()))
        {
            say!("queue: {err:#}");
        }
        drop(q);
        say!(
            "campaign {} ({}) {state}{}: {} trials in its store",
            e.id,
            e.name,
            reason.map(|r| format!(" ({r})")).unwrap_or_default(),
            progress.trials_done
        );
        d.wake.notify_one();
    });
}

/// The queue state (and its reason) of a campaign whose `mats tune` exited with `status`.
/// What the child said decides first: one that finished is done, and one that failed on its
/// own failed, even where a stop or a cancel was on its way to it. Only a child our signal
/// stopped (status 130, or killed by a signal) is cancelled or re-queued.
fn ending(
    status: std::process::ExitStatus,
    cancelled: bool,
    stopping: bool,
    log: &Path,
) -> (&'static str, Option<String>) {
    if status.success() {
        ("done", None)
    } else if cancelled && stopped_by_signal(status) {
        ("cancelled", Some("cancelled by `mats cancel`".to_string()))
    } else if stopping && stopped_by_signal(status) {
        (
            "queued",
            Some("interrupted by the daemon's stop; resumes".to_string()),
        )
    } else {
        ("failed", Some(failure_reason(log, status)))
    }
}

/// Whether `mats tune` ended because it was told to stop: status 130 (a stop signal it
/// handled: the trial under way recorded, the store consistent) or killed by a signal.
fn stopped_by_signal(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt as _;
    status.code() == Some(130) || status.signal().is_some()
}

/// The last line of the child's log (its error), or how it died.
fn failure_reason(log: &Path, status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let tail = std::fs::read(log)
        .ok()
        .map(|b| {
            let start = b.len().saturating_sub(4096);
            String::from_utf8_lossy(&b[start..]).to_string()
        })
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().chars().take(500).collect::<String>())
        });
    match (status.signal(), tail) {
        (Some(sig), _) => format!("mats tune was killed by signal {sig}"),
        (None, Some(line)) => line,
        (None, None) => format!("mats tune exited with {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_childs_own_exit_decides_before_a_pending_stop_or_cancel() {
        use std::os::unix::process::ExitStatusExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("campaign.log");
        std::fs::write(
            &log,
            "trial 3 of 9\nerror: tai12a.dat: line 2: expected 144 numbers\n",
        )
        .unwrap();
        let exited = |code: i32| std::process::ExitStatus::from_raw(code << 8);
        let killed = |sig: i32| std::process::ExitStatus::from_raw(sig);
        // (status, cancel pending, daemon stopping) -> state
        for (status, cancelled, stopping, state) in [
            (exited(0), true, false, "done"),
            (exited(0), false, true, "done"),
            (exited(1), true, false, "failed"),
            (exited(1), false, true, "failed"),
            (exited(1), false, false, "failed"),
            (exited(130), true, false, "cancelled"),
            (exited(130), true, true, "cancelled"),
            (exited(130), false, true, "queued"),
            (exited(130), false, false, "failed"),
            (killed(libc::SIGKILL), true, false, "cancelled"),
            (killed(libc::SIGTERM), false, true, "queued"),
            (killed(libc::SIGSEGV), false, false, "failed"),
        ] {
            let (got, reason) = ending(status, cancelled, stopping, &log);
            assert_eq!(got, state, "{status:?} cancel {cancelled} stop {stopping}");
            assert_eq!(reason.is_none(), state == "done");
        }
        // A failure on its own gives the log's last line; a death by a signal says which.
        let (_, reason) = ending(exited(1), false, false, &log);
        assert_eq!(
            reason.as_deref(),
            Some("error: tai12a.dat: line 2: expected 144 numbers")
        );
        let (_, reason) = ending(killed(libc::SIGSEGV), false, false, &log);
        assert_eq!(reason.as_deref(), Some("mats tune was killed by signal 11"));
    }

    #[test]
    fn a_log_chunk_ends_on_a_whole_character() {
        let mut chunk = b"gap 0.1 \xc2\xb1".to_vec(); // "gap 0.1 ±"
        whole_characters(&mut chunk);
        assert_eq!(chunk, "gap 0.1 ±".as_bytes());
        chunk.pop(); // half of the ±: kept for the next chunk
        whole_characters(&mut chunk);
        assert_eq!(chunk, b"gap 0.1 ");
        // Bytes that are not UTF-8 at all are the lossy decoding's, not held back.
        let mut bad = b"a\xffb".to_vec();
        whole_characters(&mut bad);
        assert_eq!(bad, b"a\xffb");
    }

    /// The queue's "one campaign per output folder" compares these: every spelling of one
    /// folder must resolve alike, whether it exists yet or not.
    #[test]
    fn spellings_of_one_output_folder_resolve_alike() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(root.join("runs")).unwrap();
        std::os::unix::fs::symlink(root.join("runs"), root.join("link")).unwrap();
        let want = root.join("runs/dup");
        for spelling in [
            "runs/dup",
            "runs/./dup",
            "link/dup",
            "runs/x/../dup",
            "./runs/dup",
        ] {
            assert_eq!(resolved(&tmp.path().join(spelling)), want, "{spelling}");
        }
        std::fs::create_dir(&want).unwrap();
        assert_eq!(resolved(&tmp.path().join("link/./dup")), want);
    }

    #[test]
    fn replies_are_written_with_ok_and_read_back_as_their_types() {
        let chunk = reply::LogChunk {
            text: "trial 1\n".into(),
            offset: 8,
            state: "running".into(),
            ended: false,
        };
        let written = ok(&chunk).unwrap();
        assert_eq!(written["ok"], true);
        let back: reply::LogChunk = serde_json::from_value(written).unwrap();
        assert_eq!(back, chunk);
        // A reply that lacks a field the type needs (a daemon of another version) is refused,
        // not read as a default.
        let short = serde_json::json!({"ok": true, "id": 4, "name": "c"});
        assert!(serde_json::from_value::<reply::Submitted>(short).is_err());
    }

    #[test]
    fn only_the_daemons_own_user_is_served() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(0, 1000));
        assert!(!peer_allowed(1001, 1000));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches("0123456789abcdef", "0123456789abcdef"));
        assert!(!token_matches("0123456789abcde", "0123456789abcdef"));
        assert!(!token_matches("0123456789abcdefg", "0123456789abcdef"));
        assert!(!token_matches("", "0123456789abcdef"));
        assert!(!token_matches("x123456789abcdef", "0123456789abcdef"));
    }
}
