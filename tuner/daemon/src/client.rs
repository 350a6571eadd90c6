//! The client side of the protocol: one blocking connection, one request line, one reply
//! line each time. The commands that print replies (`mats submit`, `status`, `cancel`,
//! `logs`) live in the binary.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::protocol::{Request, MAX_REPLY_BYTES};

/// How a client reaches the daemon: its Unix socket (the default one when `socket` is
/// `None`), or a TCP address with the token file a `--listen` daemon requires.
#[derive(Debug, Clone, Default)]
pub struct DaemonAddress {
    pub socket: Option<PathBuf>,
    pub connect: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// How long a client waits for the daemon (connecting, sending, and the reply):
/// `MATS_DAEMON_TIMEOUT` seconds, default 60 (a submit validates the campaign, reading its
/// instances, before it answers). A daemon that accepts but never answers used to leave the
/// client waiting forever.
pub fn timeout() -> Result<Duration> {
    match std::env::var("MATS_DAEMON_TIMEOUT") {
        Err(_) => Ok(Duration::from_secs(60)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .map_err(|_| {
                solvers::limits::range_message(format!("{v:?}"), &solvers::limits::seconds_range())
            })
            .and_then(solvers::limits::seconds)
            .map_err(|e| anyhow::anyhow!("MATS_DAEMON_TIMEOUT: {e}")),
    }
}

/// Sends one request, returns the reply's object (an `ok: false` reply becomes the error).
pub fn request(address: &DaemonAddress, request: &Request) -> Result<serde_json::Value> {
    let mut line = serde_json::to_value(request)?;
    let wait = timeout()?;
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
            let stream = connect_tcp(addr, wait)?;
            stream.set_read_timeout(Some(wait))?;
            stream.set_write_timeout(Some(wait))?;
            exchange(stream, &line, wait)?
        }
        None => {
            let socket = address.socket.clone().unwrap_or_else(crate::default_socket);
            let stream = std::os::unix::net::UnixStream::connect(&socket).with_context(|| {
                format!(
                    "cannot reach the mats daemon at {} (is `mats daemon` running? see \
                     docs/daemon.md)",
                    socket.display()
                )
            })?;
            stream.set_read_timeout(Some(wait))?;
            stream.set_write_timeout(Some(wait))?;
            exchange(stream, &line, wait)?
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

/// Sends one request and reads its reply as the type the protocol gives it
/// ([`crate::protocol::reply`]); also returns the reply as written, for `--json`.
pub fn request_as<T: serde::de::DeserializeOwned>(
    address: &DaemonAddress,
    request: &Request,
) -> Result<(T, serde_json::Value)> {
    let raw = self::request(address, request)?;
    let typed = serde_json::from_value(raw.clone()).with_context(|| {
        format!(
            "the daemon's reply does not have the fields this mats expects (a daemon of \
             another version?): {}",
            solvers::limits::cut(&raw.to_string())
        )
    })?;
    Ok((typed, raw))
}

/// A TCP connection to `addr` within [`timeout`].
fn connect_tcp(addr: &str, wait: Duration) -> Result<std::net::TcpStream> {
    use std::net::ToSocketAddrs as _;
    let mut last = None;
    for a in addr
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve the daemon's address {addr}"))?
    {
        match std::net::TcpStream::connect_timeout(&a, wait) {
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
    wait: Duration,
) -> Result<serde_json::Value> {
    let waited = || {
        anyhow::anyhow!(
            "the daemon did not answer within {:.0} s (is it stuck? set MATS_DAEMON_TIMEOUT \
             to wait longer)",
            wait.as_secs_f64()
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
