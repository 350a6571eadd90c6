//! The daemon's clients: `mats submit`, `mats status`, `mats cancel`, `mats logs`. One
//! blocking connection, one request line, one reply line each time.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::protocol::{Request, MAX_REPLY_BYTES};
use crate::cli::{CancelArgs, DaemonAddress, LogsArgs, StatusArgs, SubmitArgs};

/// How long a client waits for the daemon (connecting, sending, and the reply):
/// `MATS_DAEMON_TIMEOUT` seconds, default 60 (a submit validates the campaign, reading its
/// instances, before it answers). A daemon that accepts but never answers used to leave the
/// client waiting forever.
pub fn timeout() -> Duration {
    std::env::var("MATS_DAEMON_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|s| crate::limits::seconds(s).ok())
        .unwrap_or(Duration::from_secs(60))
}

/// Sends one request, returns the reply's object (an `ok: false` reply becomes the error).
pub fn request(address: &DaemonAddress, request: &Request) -> Result<serde_json::Value> {
    let mut line = serde_json::to_value(request)?;
    let reply = match &address.connect {
        Some(addr) => {
            let path = address
                .token_file
                .as_deref()
                .context("--connect needs --token-file")?;
            let token =
                solvers::error::read_kind(path, "a token file", solvers::error::caps::TOKEN)
                    .with_context(|| format!("cannot read the token file {}", path.display()))?;
            line["token"] = token.trim().into();
            let stream = connect_tcp(addr)?;
            stream.set_read_timeout(Some(timeout()))?;
            stream.set_write_timeout(Some(timeout()))?;
            exchange(stream, &line)?
        }
        None => {
            let socket = address.socket.clone().unwrap_or_else(super::default_socket);
            let stream = std::os::unix::net::UnixStream::connect(&socket).with_context(|| {
                format!(
                    "cannot reach the mats daemon at {} (is `mats daemon` running? see \
                     docs/daemon.md)",
                    socket.display()
                )
            })?;
            stream.set_read_timeout(Some(timeout()))?;
            stream.set_write_timeout(Some(timeout()))?;
            exchange(stream, &line)?
        }
    };
    if reply["ok"] == true {
        Ok(reply)
    } else {
        bail!(
            "{}",
            reply["error"]
                .as_str()
                .unwrap_or("the daemon refused the request")
        )
    }
}

/// A TCP connection to `addr` within [`timeout`].
fn connect_tcp(addr: &str) -> Result<std::net::TcpStream> {
    use std::net::ToSocketAddrs as _;
    let mut last = None;
    for a in addr
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve the daemon's address {addr}"))?
    {
        match std::net::TcpStream::connect_timeout(&a, timeout()) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => anyhow::Error::new(e),
        None => anyhow::anyhow!("no address"),
    })
    .with_context(|| format!("cannot reach the daemon at {addr}"))
}

/// Whether an I/O error is a timeout of a socket with a read or write timeout.
fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn exchange<S: std::io::Read + std::io::Write>(
    mut stream: S,
    line: &serde_json::Value,
) -> Result<serde_json::Value> {
    let waited = || {
        anyhow::anyhow!(
            "the daemon did not answer within {:.0} s (is it stuck? set MATS_DAEMON_TIMEOUT \
             to wait longer)",
            timeout().as_secs_f64()
        )
    };
    if let Err(e) = stream.write_all(format!("{line}\n").as_bytes()) {
        if timed_out(&e) {
            return Err(waited());
        }
        return Err(anyhow::Error::new(e).context("cannot send the request to the daemon"));
    }
    let mut reply = Vec::new();
    if let Err(e) = BufReader::new(stream)
        .take(MAX_REPLY_BYTES as u64)
        .read_until(b'\n', &mut reply)
    {
        if timed_out(&e) {
            return Err(waited());
        }
        return Err(anyhow::Error::new(e).context("no reply from the daemon"));
    }
    if reply.is_empty() {
        bail!("the daemon closed the connection without a reply");
    }
    serde_json::from_slice(&reply).context("the daemon's reply is not valid JSON")
}

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
        &args.daemon,
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
        let reply = request(&args.daemon, &Request::Status { id: args.id })?;
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
    let reply = request(&args.daemon, &Request::Cancel { id: args.id })?;
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
            &args.daemon,
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
