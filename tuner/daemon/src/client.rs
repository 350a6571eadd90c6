//! The client side of the protocol: one blocking connection, one request line, one reply
//! line each time. The commands that print replies (`mats submit`, `status`, `cancel`,
//! `logs`) live in the binary.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::PathBuf;

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

/// Sends one request, returns the reply's object (an `ok: false` reply becomes the error).
pub fn request(address: &DaemonAddress, request: &Request) -> Result<serde_json::Value> {
    let mut line = serde_json::to_value(request)?;
    let reply = match &address.connect {
        Some(addr) => {
            let path = address
                .token_file
                .as_deref()
                .context("--connect needs --token-file")?;
            let token = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?;
            line["token"] = token.trim().into();
            let stream = std::net::TcpStream::connect(addr)
                .with_context(|| format!("cannot reach the daemon at {addr}"))?;
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

fn exchange<S: std::io::Read + std::io::Write>(
    mut stream: S,
    line: &serde_json::Value,
) -> Result<serde_json::Value> {
    stream
        .write_all(format!("{line}\n").as_bytes())
        .context("cannot send the request to the daemon")?;
    let mut reply = Vec::new();
    BufReader::new(stream)
        .take(MAX_REPLY_BYTES as u64)
        .read_until(b'\n', &mut reply)
        .context("no reply from the daemon")?;
    if reply.is_empty() {
        bail!("the daemon closed the connection without a reply");
    }
    serde_json::from_slice(&reply).context("the daemon's reply is not valid JSON")
}
