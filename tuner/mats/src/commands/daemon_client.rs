//! The daemon's clients: `mats submit`, `mats status`, `mats cancel`, `mats logs`, printing
//! the replies of [`daemon::client::request`].

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cli::{CancelArgs, LogsArgs, StatusArgs, SubmitArgs};
use daemon::client::request_as;
use daemon::protocol::reply::{All, Campaign, Cancelled, LogChunk, One, Submitted};
use daemon::protocol::Request;

fn absolute(path: &Path) -> Result<std::path::PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the working folder")?;
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    })
}

pub fn submit(args: &SubmitArgs) -> Result<()> {
    let campaign = std::fs::canonicalize(&args.campaign)
        .with_context(|| format!("cannot read {}", args.campaign.display()))?;
    // Checked here first, as `mats tune --check` would: a bad campaign is said whether or not
    // a daemon answers (the daemon checks it again, on its machine).
    let file = engine::campaign::CampaignFile::read(&campaign)?;
    engine::tune::check_anywhere(&file, None, None)?;
    let (reply, raw): (Submitted, _) = request_as(
        &args.daemon.to_address(),
        &Request::Submit {
            campaign,
            out: args.out.as_deref().map(absolute).transpose()?,
            priority: args.priority,
            cwd: std::env::current_dir().context("cannot read the working folder")?,
            resume: args.resume,
        },
    )?;
    if args.json {
        println!("{raw}");
    } else {
        println!("{}", reply.id);
        eprintln!(
            "queued campaign {} as {} (results in {}; follow with `mats status {1}` or `mats \
             logs {1} --follow`)",
            reply.name,
            reply.id,
            reply.out.display()
        );
    }
    Ok(())
}

fn seconds(s: Option<f64>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s < 90.0 => format!("{s:.0} s"),
        Some(s) if s < 5400.0 => format!("{:.0} min", s / 60.0),
        Some(s) => format!("{:.1} h", s / 3600.0),
    }
}

fn best(c: &Campaign) -> String {
    match c.entry.progress.as_ref().and_then(|p| p.best.as_ref()) {
        Some(b) if b.objective.starts_with("gap") => format!("{:.3}% {}", b.value, b.class),
        Some(b) => format!("{:.4} {} {}", b.value, b.objective, b.class),
        None => "-".into(),
    }
}

fn print_campaign(c: &Campaign) {
    let e = &c.entry;
    let progress = e.progress.as_ref();
    println!(
        "{:>4} {:<10} {:>4} {:<24} {:>7} {:>9} {:<28} {}",
        e.id,
        e.state,
        e.priority,
        e.name.chars().take(24).collect::<String>(),
        progress.map_or("-".into(), |p| p.trials_done.to_string()),
        match progress {
            // The wall-time budget bounds the search alone; the final re-measure follows it.
            Some(p) if p.eta_is_bound && p.eta_s == Some(0.0) => "final".into(),
            Some(p) if p.eta_is_bound && p.eta_s.is_some() => format!("{}+", seconds(p.eta_s)),
            _ => seconds(progress.and_then(|p| p.eta_s)),
        },
        best(c),
        e.reason.as_deref().unwrap_or("")
    );
}

const HEADER: &str = "  id state       pri name                      trials       ETA best so far                  note";

pub fn status(args: &StatusArgs) -> Result<()> {
    let address = args.daemon.to_address();
    loop {
        let request = Request::Status { id: args.id };
        let (ended, raw) = match args.id {
            Some(_) => {
                let (one, raw): (One, _) = request_as(&address, &request)?;
                let state = one.campaign.entry.state.as_str();
                let ended = !matches!(state, "queued" | "running");
                if !args.json {
                    println!("{HEADER}");
                    print_campaign(&one.campaign);
                    println!(
                        "     results {}, log {}, starts: {}",
                        one.campaign.entry.out_dir.display(),
                        one.campaign
                            .log
                            .as_ref()
                            .map_or("?".into(), |l| l.display().to_string()),
                        one.campaign.entry.starts
                    );
                }
                (ended, raw)
            }
            None => {
                let (all, raw): (All, _) = request_as(&address, &request)?;
                if !args.json {
                    println!("{HEADER}");
                    for c in &all.campaigns {
                        print_campaign(c);
                    }
                }
                (false, raw)
            }
        };
        if args.json {
            println!("{raw}");
        }
        if !args.watch || ended {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs(1));
        if !args.json {
            println!();
        }
    }
}

pub fn cancel(args: &CancelArgs) -> Result<()> {
    let (reply, raw): (Cancelled, _) =
        request_as(&args.daemon.to_address(), &Request::Cancel { id: args.id })?;
    if args.json {
        println!("{raw}");
    } else {
        println!("campaign {}: {}", reply.id, reply.state);
    }
    Ok(())
}

pub fn logs(args: &LogsArgs) -> Result<()> {
    let mut offset = 0u64;
    let mut out = std::io::stdout();
    loop {
        let (chunk, _): (LogChunk, _) = request_as(
            &args.daemon.to_address(),
            &Request::Logs {
                id: args.id,
                offset,
            },
        )?;
        out.write_all(chunk.text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(crate::output::stdout_error)?;
        offset = chunk.offset;
        if chunk.text.is_empty() {
            if !args.follow || chunk.ended {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}
