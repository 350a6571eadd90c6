//! The daemon's protocol: one JSON object per line each way, a request then its reply.
//!
//! A request is `{"op": "...", ...}` (plus `"token"` over TCP); a reply is
//! `{"ok": true, ...}` or `{"ok": false, "error": "one line"}`. Requests are bounded
//! ([`MAX_REQUEST_BYTES`]) and parsed strictly (unknown ops and fields are refused), and a
//! request that cannot be parsed gets an error reply: nothing a client sends stops the daemon.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The longest request line, newline excluded. A campaign is submitted by path, so real
/// requests are a few hundred bytes.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// The longest reply a client accepts (a status of thousands of campaigns fits).
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// The longest log chunk one `logs` reply carries.
pub const LOG_CHUNK_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// Is the daemon there (and which pid, version)?
    Ping,
    /// Validate a campaign file and queue it. Paths are absolute (the client resolves them).
    Submit {
        campaign: PathBuf,
        #[serde(default)]
        out: Option<PathBuf>,
        #[serde(default)]
        priority: i64,
        /// The submitter's working folder: a campaign's default output folder is relative
        /// to it.
        cwd: PathBuf,
        /// Continue the campaign in a folder that holds its results.
        #[serde(default)]
        resume: bool,
    },
    /// The queue, or one campaign.
    Status {
        #[serde(default)]
        id: Option<i64>,
    },
    Cancel {
        id: i64,
    },
    /// A campaign's log from byte `offset` on.
    Logs {
        id: i64,
        #[serde(default)]
        offset: u64,
    },
}

/// The reply to each request, as the daemon writes it (beside `"ok": true`) and a client reads
/// it back ([`crate::client::request_as`]): no field is looked up by name.
pub mod reply {
    use std::path::PathBuf;

    use serde::{Deserialize, Serialize};

    pub use crate::queue::Entry;
    pub use crate::status::{Best, Progress};

    /// `ping`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Pong {
        pub pid: u32,
        pub version: String,
    }

    /// `submit`: the campaign's queue id, name and output folder.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Submitted {
        pub id: i64,
        pub name: String,
        pub out: PathBuf,
    }

    /// A campaign as `status` shows it: the queue's entry (with its live progress while it
    /// runs) and, for a campaign described in full, its log file.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct Campaign {
        #[serde(flatten)]
        pub entry: Entry,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub log: Option<PathBuf>,
    }

    /// `status` of one campaign.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct One {
        pub campaign: Campaign,
    }

    /// `status` of the whole queue.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    pub struct All {
        pub jobs: usize,
        pub campaigns: Vec<Campaign>,
    }

    /// `cancel`: the campaign's state after the request.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Cancelled {
        pub id: i64,
        pub state: String,
    }

    /// `logs`: the text from the offset asked for, the offset after it, and whether the
    /// campaign has ended (so a follower stops).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct LogChunk {
        pub text: String,
        pub offset: u64,
        pub state: String,
        pub ended: bool,
    }
}

/// A parsed request line: the request and the token it carried, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub request: Request,
    pub token: Option<String>,
}

/// Parses one request line (without its newline). Every failure is one line for the reply.
pub fn parse_request(line: &[u8]) -> Result<Parsed, String> {
    if line.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "request of {} bytes is longer than the limit of {MAX_REQUEST_BYTES}",
            line.len()
        ));
    }
    let text = std::str::from_utf8(line).map_err(|_| "request is not UTF-8".to_string())?;
    let mut value: serde_json::Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("request is not valid JSON ({e})"))?;
    let Some(object) = value.as_object_mut() else {
        return Err("request must be a JSON object with an \"op\"".into());
    };
    let token = match object.remove("token") {
        None => None,
        Some(serde_json::Value::String(t)) => Some(t),
        Some(_) => return Err("\"token\" must be a string".into()),
    };
    // serde's deny_unknown_fields does not reach the variants of an internally tagged enum
    // (`{"op":"ping","x":1}` was accepted), so the fields are checked here, per op.
    let op = object.get("op").and_then(|v| v.as_str()).unwrap_or("");
    let allowed: &[&str] = match op {
        "ping" => &[],
        "submit" => &["campaign", "out", "priority", "cwd", "resume"],
        "status" => &["id"],
        "cancel" => &["id"],
        "logs" => &["id", "offset"],
        _ => &[], // serde names the unknown op below
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| k.as_str() != "op" && !allowed.contains(&k.as_str()))
    {
        return Err(format!(
            "bad request: unknown field {} for op {}{}",
            solvers::limits::cut(&format!("{unknown:?}")),
            solvers::limits::cut(&format!("{op:?}")),
            if allowed.is_empty() {
                String::new()
            } else {
                format!(" (fields: {})", allowed.join(", "))
            }
        ));
    }
    let request = serde_json::from_value(value).map_err(|e| {
        let e = e.to_string();
        format!("bad request: {}", e.chars().take(300).collect::<String>())
    })?;
    Ok(Parsed { request, token })
}

/// An error reply.
pub fn error_reply(message: &str) -> serde_json::Value {
    let message = search::errors::cut_long_values(message);
    serde_json::json!({"ok": false, "error": message.chars().take(2000).collect::<String>()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn requests_parse_and_bad_ones_say_why() {
        let p = parse_request(br#"{"op":"status","id":3}"#).unwrap();
        assert_eq!(p.request, Request::Status { id: Some(3) });
        let p = parse_request(br#"{"op":"ping","token":"abc"}"#).unwrap();
        assert_eq!(p.token.as_deref(), Some("abc"));
        for (line, why) in [
            (&b"not json"[..], "not valid JSON"),
            (b"[1,2]", "JSON object"),
            (br#"{"op":"explode"}"#, "bad request"),
            (br#"{"op":"cancel"}"#, "bad request"),
            (br#"{"op":"status","id":1,"extra":2}"#, "bad request"),
            (br#"{"op":"ping","extra":2}"#, "unknown field \"extra\""),
            (
                br#"{"op":"logs","id":1,"offset":0,"x":0}"#,
                "fields: id, offset",
            ),
            (br#"{"op":"ping","token":5}"#, "token"),
            (b"\xff\xfe", "UTF-8"),
        ] {
            let err = parse_request(line).unwrap_err();
            assert!(err.contains(why), "{line:?}: {err}");
        }
        let long = vec![b' '; MAX_REQUEST_BYTES + 1];
        assert!(parse_request(&long).unwrap_err().contains("limit"));
        // Deep nesting is refused by serde_json's recursion limit, not a stack overflow.
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse_request(deep.as_bytes()).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any bytes: a request or an error line, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse_request(&bytes);
        }

        /// Valid requests with one byte changed: still a request or an error line.
        #[test]
        fn mutated_requests_never_panic(
            which in 0usize..5,
            at in any::<proptest::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let base = [
                r#"{"op":"ping"}"#,
                r#"{"op":"status","id":12}"#,
                r#"{"op":"submit","campaign":"/a/b.toml","cwd":"/","priority":-3}"#,
                r#"{"op":"logs","id":1,"offset":99}"#,
                r#"{"op":"cancel","id":7,"token":"t"}"#,
            ][which];
            let mut bytes = base.as_bytes().to_vec();
            let i = at.index(bytes.len());
            bytes[i] = byte;
            let _ = parse_request(&bytes);
        }
    }
}
