//! `mats bench daemon`: the daemon's figures, measured on CPU campaigns in one run against a
//! private daemon (its own socket, state folder and a fake device lock):
//!
//! 1. submit-to-first-trial: from the client sending `submit` to the first trial's `started`
//!    row in the campaign's store (validation, queue write, scheduling, process start,
//!    campaign setup), over several submissions;
//! 2. `status` latency with many campaigns queued (one running, the rest waiting): the
//!    request as `mats status` makes it (connect, request, reply, parse), in-process, and the
//!    whole `mats status --json` process;
//! 3. the device's busy share (the fake device's lease time over the span of the leases) for
//!    one campaign alone and two campaigns sharing the device, from the lock trace: the CPU
//!    stand-in for the GPU-busy share.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::cli::BenchDaemonArgs;
use daemon::client::DaemonAddress;
use daemon::client::{request, request_as};
use daemon::protocol::reply::{All, Entry, One, Submitted};
use daemon::protocol::Request;

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

struct Bench {
    dir: PathBuf,
    repo: PathBuf,
    address: DaemonAddress,
    daemon: Option<Child>,
    exe: PathBuf,
}

/// Ctrl-C or SIGTERM (crate::interrupt): ends the bench through its errors, so that `Bench`
/// is dropped and its daemon and temporary folder go with it (both were left behind).
fn stopped() -> Result<()> {
    match crate::interrupt::received() {
        Some(signal) => Err(crate::output::Interrupted(format!(
            "bench daemon stopped by {signal}; its daemon and temporary folder are removed"
        ))
        .into()),
        None => Ok(()),
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Bench {
    fn campaign(
        &self,
        name: &str,
        instances: &[&str],
        iterations: u64,
        extra: &str,
    ) -> Result<PathBuf> {
        let paths: Vec<String> = instances
            .iter()
            .map(|i| {
                format!(
                    "\"{}\"",
                    self.repo.join(format!("data/qap/{i}.dat")).display()
                )
            })
            .collect();
        let text = format!(
            "name = \"{name}\"\nbackend = \"cpu\"\nseed = 7\n\n[instances]\npaths = [{}]\n\n\
             [cpu]\nspace = \"{}\"\niterations = {iterations}\n\
             baseline = {{ algorithm = \"tabu\", threads = 1, starts = 1 }}\n\n\
             [cpu.overrides.params.algorithm]\nvalues = [\"tabu\"]\n\
             [cpu.overrides.params.threads]\nvalues = [1]\n\
             [cpu.overrides.params.starts]\nvalues = [1, 2, 4, 8]\n\n\
             [strategy]\nname = \"exhaustive\"\n\n[budget]\ntrials = 500\n{extra}\n\n\
             [measurement]\nwarmup_runs = 0\ntimed_runs = 1\n",
            paths.join(", "),
            self.repo.join("spaces/qap-cpu.toml").display()
        );
        let path = self.dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    fn start(&mut self, jobs: u32) -> Result<()> {
        self.stop();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("daemon.log"))?;
        let socket = self.address.socket.clone().context("no socket")?;
        let child = Command::new(&self.exe)
            .args(["daemon", "--jobs", &jobs.to_string(), "--socket"])
            .arg(&socket)
            .arg("--state-dir")
            .arg(self.dir.join("state"))
            .env("MATS_CPU_DEVICE_LOCK", "bench-fake-device")
            .env("MATS_LOCK_DIR", self.dir.join("locks"))
            .env("MATS_LOCK_TRACE", self.dir.join("trace"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start the daemon")?;
        self.daemon = Some(child);
        let end = Instant::now() + Duration::from_secs(20);
        while request(&self.address, &Request::Ping).is_err() {
            if Instant::now() > end {
                bail!(
                    "the daemon did not answer within 20 s; see {}",
                    self.dir.join("daemon.log").display()
                );
            }
            stopped()?;
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.daemon.take() {
            if let Ok(pid) = libc::pid_t::try_from(c.id()) {
                // SAFETY: our own child; SIGTERM lets it stop its campaigns.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let _ = c.wait();
        }
    }

    fn submit(&self, campaign: &Path, out: &str) -> Result<i64> {
        let (reply, _): (Submitted, _) = request_as(
            &self.address,
            &Request::Submit {
                campaign: campaign.to_path_buf(),
                out: Some(self.dir.join(out)),
                priority: 0,
                cwd: self.dir.clone(),
                resume: false,
            },
        )?;
        Ok(reply.id)
    }

    fn status(&self, id: i64) -> Result<Entry> {
        let (one, _): (One, _) = request_as(&self.address, &Request::Status { id: Some(id) })?;
        Ok(one.campaign.entry)
    }

    fn wait_ended(&self, id: i64, timeout: Duration) -> Result<Entry> {
        let end = Instant::now() + timeout;
        loop {
            let s = self.status(id)?;
            if !matches!(s.state.as_str(), "queued" | "running") {
                return Ok(s);
            }
            if Instant::now() > end {
                bail!("campaign {id} did not end within {timeout:?}: {}", s.state);
            }
            stopped()?;
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Busy share of the fake device over the span of its leases, and the lease count.
    fn busy_share(&self) -> Result<(f64, usize)> {
        let text = std::fs::read_to_string(self.dir.join("trace")).unwrap_or_default();
        let mut spans = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if let [_, _, a, b] = f[..] {
                spans.push((a.parse::<u128>()?, b.parse::<u128>()?));
            }
        }
        let (Some(first), Some(last)) = (
            spans.iter().map(|s| s.0).min(),
            spans.iter().map(|s| s.1).max(),
        ) else {
            bail!("no leases were traced");
        };
        let busy: u128 = spans.iter().map(|(a, b)| b - a).sum();
        Ok((busy as f64 / (last - first).max(1) as f64, spans.len()))
    }
}

/// Mean, standard deviation (NaN for fewer than two values: one run has no spread), median
/// and 95th percentile.
fn stats(v: &[f64]) -> (f64, f64, f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() < 2 {
        f64::NAN
    } else {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    // Linear between the two nearest ranks: the median of an even count is the mean of its
    // middle pair (rounding the rank took the upper one).
    let q = |p: f64| {
        let Some(last) = s.len().checked_sub(1) else {
            return f64::NAN;
        };
        let at = p * last as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        s[lo] + (s[hi] - s[lo]) * (at - lo as f64)
    };
    (mean, sd, q(0.5), q(0.95))
}

pub fn run(args: &BenchDaemonArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    crate::interrupt::install();
    let repo = std::fs::canonicalize(&args.repo)
        .with_context(|| format!("cannot find the repository {}", args.repo.display()))?;
    if !repo.join("data/qap/tai12a.dat").is_file() || !repo.join("spaces/qap-cpu.toml").is_file() {
        bail!(
            "{} lacks data/qap or spaces/qap-cpu.toml; run from the repository or pass --repo",
            repo.display()
        );
    }
    let dir = std::env::temp_dir().join(format!("mats-bench-daemon-{}", std::process::id()));
    measure::user_dirs::create_private_dir(&dir)?;
    let mut b = Bench {
        address: DaemonAddress {
            socket: Some(dir.join("daemon.sock")),
            connect: None,
            token_file: None,
        },
        dir,
        repo,
        daemon: None,
        exe: std::env::current_exe().context("cannot find the mats executable")?,
    };
    let small = b.campaign("small", &["tai12a"], 2000, "")?;

    // 1. Submit to first trial.
    b.start(1)?;
    let (mut first, mut submit_rtt) = (Vec::new(), Vec::new());
    for r in 0..args.repeats {
        let t0 = now();
        let id = b.submit(&small, &format!("first-{r}"))?;
        submit_rtt.push(now() - t0);
        let end = Instant::now() + Duration::from_secs(60);
        let at = loop {
            let s = b.status(id)?;
            if let Some(at) = s.progress.as_ref().and_then(|p| p.first_trial_at) {
                break at;
            }
            if Instant::now() > end || !matches!(s.state.as_str(), "queued" | "running") {
                bail!("campaign {id} recorded no trial (state {})", s.state);
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        first.push(at - t0);
        b.wait_ended(id, Duration::from_secs(120))?;
    }

    // 2. Status latency with campaigns queued behind a running one.
    let blocker = b.campaign("blocker", &["tai40a"], 2_000_000, "wall_s = 600")?;
    let blocker_id = b.submit(&blocker, "blocker")?;
    let mut ids = Vec::new();
    for q in 0..args.queued {
        ids.push(b.submit(&small, &format!("queued-{q}"))?);
    }
    let (all, raw): (All, _) = request_as(&b.address, &Request::Status { id: None })?;
    let listed = all.campaigns.len();
    let waiting = all
        .campaigns
        .iter()
        .filter(|c| c.entry.state == "queued")
        .count();
    let reply_bytes = raw.to_string().len();
    let mut status_s = Vec::new();
    for _ in 0..args.requests {
        stopped()?;
        let t = Instant::now();
        request(&b.address, &Request::Status { id: None })?;
        status_s.push(t.elapsed().as_secs_f64());
    }
    let mut cli_s = Vec::new();
    // Each is a process start: at most 20 of the --requests.
    for _ in 0..args.requests.min(20) {
        let t = Instant::now();
        let out = Command::new(&b.exe)
            .args(["status", "--json", "--socket"])
            .arg(b.address.socket.as_ref().context("no socket")?)
            .stdout(Stdio::null())
            .status()?;
        cli_s.push(t.elapsed().as_secs_f64());
        if !out.success() {
            bail!("mats status failed");
        }
    }
    for id in ids {
        request(&b.address, &Request::Cancel { id })?;
    }
    request(&b.address, &Request::Cancel { id: blocker_id })?;
    std::thread::sleep(Duration::from_millis(200));
    let _ = request(&b.address, &Request::Cancel { id: blocker_id }); // no waiting for its trial
    b.wait_ended(blocker_id, Duration::from_secs(60))?;

    // 3. Device busy share: one campaign alone, then two at once (jobs 2).
    let shared = b.campaign("shared", &["tai20a", "nug12"], 20_000, "")?;
    let mut alone = Vec::new();
    let mut two = Vec::new();
    let rounds = args.repeats.min(3);
    b.start(2)?;
    for r in 0..rounds {
        let _ = std::fs::remove_file(b.dir.join("trace"));
        let id = b.submit(&shared, &format!("alone-{r}"))?;
        b.wait_ended(id, Duration::from_secs(300))?;
        alone.push(b.busy_share()?);
        let _ = std::fs::remove_file(b.dir.join("trace"));
        let x = b.submit(&shared, &format!("two-a-{r}"))?;
        let y = b.submit(&shared, &format!("two-b-{r}"))?;
        b.wait_ended(x, Duration::from_secs(300))?;
        b.wait_ended(y, Duration::from_secs(300))?;
        two.push(b.busy_share()?);
    }
    b.stop();

    // No spread is shown where one value has none.
    let spread = |sd: f64, scale: f64| {
        if sd.is_nan() {
            String::new()
        } else {
            format!(" ± {:.1}", sd * scale)
        }
    };
    let ms = |v: &[f64]| {
        let (mean, sd, med, p95) = stats(v);
        format!(
            "mean {:.1} ms{}, median {:.1}, p95 {:.1}, max {:.1} (n = {})",
            mean * 1e3,
            spread(sd, 1e3),
            med * 1e3,
            p95 * 1e3,
            v.iter().copied().fold(0.0, f64::max) * 1e3,
            v.len()
        )
    };
    let shares = |v: &[(f64, usize)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
    let (a_mean, a_sd, _, _) = stats(&shares(&alone));
    let (t_mean, t_sd, _, _) = stats(&shares(&two));
    println!(
        "mats bench daemon (CPU campaigns, fake device lock; on {})",
        engine::runner::cpu::device_name()
    );
    println!("submit-to-first-trial: {}", ms(&first));
    println!(
        "  of which the submit request (validation, queue write): {}",
        ms(&submit_rtt)
    );
    println!(
        "status with {waiting} campaigns queued and 1 running ({listed} listed, {reply_bytes} bytes): {}",
        ms(&status_s)
    );
    println!("  `mats status --json` as a process: {}", ms(&cli_s));
    println!(
        "device busy share: one campaign alone {:.1}%{}, two sharing the device {:.1}%{} (ratio {:.2}; {rounds} rounds, {} and {} leases in the last)",
        a_mean * 100.0,
        spread(a_sd, 100.0),
        t_mean * 100.0,
        spread(t_sd, 100.0),
        t_mean / a_mean.max(1e-9),
        alone.last().map_or(0, |x| x.1),
        two.last().map_or(0, |x| x.1),
    );
    if let Some(path) = &args.json {
        super::write_json(
            path,
            &serde_json::json!({
                "device": engine::runner::cpu::device_name(),
                "submit_to_first_trial_s": first,
                "submit_request_s": submit_rtt,
                "status_queued": waiting,
                "status_listed": listed,
                "status_reply_bytes": reply_bytes,
                "busy_share_rounds": rounds,
                "leases_alone_last": alone.last().map(|x| x.1),
                "leases_two_last": two.last().map(|x| x.1),
                "status_request_s": status_s,
                "status_process_s": cli_s,
                "busy_share_alone": shares(&alone),
                "busy_share_two": shares(&two),
            }),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_median_of_an_even_count_is_the_middle_pairs_mean() {
        let (mean, _, median, p95) = super::stats(&[0.0667, 0.0351]);
        assert!((median - 0.0509).abs() < 1e-12 && (mean - 0.0509).abs() < 1e-12);
        assert!((p95 - (0.0351 + 0.95 * (0.0667 - 0.0351))).abs() < 1e-12);
        assert_eq!(super::stats(&[3.0, 1.0, 2.0]).2, 2.0);
        // One value has no spread (it printed "± 0.0").
        assert!(super::stats(&[0.066]).1.is_nan());
    }
}
