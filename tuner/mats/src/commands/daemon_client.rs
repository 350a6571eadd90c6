//! The daemon's clients: `mats submit`, `mats status`, `mats cancel`, `mats logs`, printing
//! the replies of [`daemon::client::request`].

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cli::{CancelArgs, LogsArgs, StatusArgs, SubmitArgs};
use daemon::client::request;
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
    let reply = request(
        &args.daemon.to_address(),
        &Request::Submit {
            campaign,
            out: args.out.as_deref().map(absolute).transpose()?,
            priority: args.priority,
            cwd: std::env::current_dir().context("cannot read the working folder")?,
        },
    )?;
    if args.json {
        println!("{reply}");
    } else {
        println!("{}", reply["id"]);
        eprintln!(
            "queued campaign {} as {} (results in {}; follow with `mats status {1}` or `mats \
             logs {1} --follow`)",
            reply["name"].as_str().unwrap_or("?"),
            reply["id"],
            reply["out"].as_str().unwrap_or("?")
        );
    }
    Ok(())
}

fn seconds(v: &serde_json::Value) -> String {
    match v.as_f64() {
        None => "-".into(),
        Some(s) if s < 90.0 => format!("{s:.0} s"),
        Some(s) if s < 5400.0 => format!("{:.0} min", s / 60.0),
        Some(s) => format!("{:.1} h", s / 3600.0),
    }
}

fn best(v: &serde_json::Value) -> String {
    let b = &v["progress"]["best"];
    match (b["objective"].as_str(), b["value"].as_f64()) {
        (Some(o), Some(x)) if o.starts_with("gap") => {
            format!("{x:.3}% {}", b["class"].as_str().unwrap_or(""))
        }
        (Some(o), Some(x)) => format!("{x:.4} {o} {}", b["class"].as_str().unwrap_or("")),
        _ => "-".into(),
    }
}

fn print_campaign(c: &serde_json::Value) {
    println!(
        "{:>4} {:<10} {:>4} {:<24} {:>7} {:>9} {:<28} {}",
        c["id"].to_string(),
        c["state"].as_str().unwrap_or("?"),
        c["priority"].to_string(),
        c["name"]
            .as_str()
            .unwrap_or("?")
            .chars()
            .take(24)
            .collect::<String>(),
        c["progress"]["trials_done"]
            .as_i64()
            .map_or("-".into(), |n| n.to_string()),
        seconds(&c["progress"]["eta_s"]),
        best(c),
        c["reason"].as_str().unwrap_or("")
    );
}

const HEADER: &str = "  id state       pri name                      trials       ETA best so far                  note";

pub fn status(args: &StatusArgs) -> Result<()> {
    loop {
        let reply = request(&args.daemon.to_address(), &Request::Status { id: args.id })?;
        let ended = args.id.is_some()
            && !matches!(
                reply["campaign"]["state"].as_str(),
                Some("queued" | "running")
            );
        if args.json {
            println!("{reply}");
        } else {
            println!("{HEADER}");
            match args.id {
                Some(_) => {
                    print_campaign(&reply["campaign"]);
                    println!(
                        "     results {}, log {}",
                        reply["campaign"]["out_dir"].as_str().unwrap_or("?"),
                        reply["campaign"]["log"].as_str().unwrap_or("?")
                    );
                }
                None => {
                    for c in reply["campaigns"].as_array().into_iter().flatten() {
                        print_campaign(c);
                    }
                }
            }
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
    let reply = request(&args.daemon.to_address(), &Request::Cancel { id: args.id })?;
    if args.json {
        println!("{reply}");
    } else {
        println!(
            "campaign {}: {}",
            args.id,
            reply["state"].as_str().unwrap_or("?")
        );
    }
    Ok(())
}

pub fn logs(args: &LogsArgs) -> Result<()> {
    let mut offset = 0u64;
    let mut out = std::io::stdout();
    loop {
        let reply = request(
            &args.daemon.to_address(),
            &Request::Logs {
                id: args.id,
                offset,
            },
        )?;
        let text = reply["text"].as_str().unwrap_or("");
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(crate::output::stdout_error)?;
        offset = reply["offset"].as_u64().unwrap_or(offset);
        if text.is_empty() {
            if !args.follow || reply["ended"] == true {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}
