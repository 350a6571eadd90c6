//! Errors for everything a user hands to mats: instance files, solution files, tables.
//!
//! Every variant names the file it came from, and the line where a line makes sense, so that
//! one message is enough to find and fix the input.

use std::path::PathBuf;

/// An instance, solution or table that could not be read or does not make sense.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A syntax problem at a known line (1-based).
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The file parses but its content is not a valid instance or solution.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// A file of several instances read without saying which (`--index`).
    #[error("{}: file holds {count} instances; pass --index 1..{count}", path.display())]
    Several { path: PathBuf, count: usize },
}

impl InputError {
    pub fn syntax(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        InputError::Syntax {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        InputError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The largest input file read, in bytes, unless `MATS_MAX_INPUT_BYTES` says otherwise. The
/// largest benchmark files are a few MB (pla85900: 2 MB; an explicit 20,000-city matrix in
/// full would be about 1.6 GB and is the reason for the variable).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 << 20;

/// The cap on input files: `MATS_MAX_INPUT_BYTES` when set, else the default; a value that is
/// not a positive number of bytes is an error naming the variable (ignoring it would cap the
/// file at the default while the error asked the user to raise the variable).
pub fn max_input_bytes() -> Result<u64, String> {
    match std::env::var("MATS_MAX_INPUT_BYTES") {
        Err(_) => Ok(DEFAULT_MAX_INPUT_BYTES),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|b| *b > 0)
            .ok_or_else(|| {
                format!(
                    "MATS_MAX_INPUT_BYTES must be a positive number of bytes (e.g. 2000000000), \
                 found {:?}",
                    crate::limits::cut(&v)
                )
            }),
    }
}

/// Reads a whole input file, at most [`max_input_bytes`] of it, turning I/O failures into an
/// [`InputError`] naming the file. Endless or huge inputs (`/dev/zero`) end with one error
/// instead of growing memory.
pub fn read_to_string(path: &std::path::Path) -> Result<String, InputError> {
    let cap = max_input_bytes().map_err(|e| InputError::invalid(path, e))?;
    read_capped(path, cap)
}

/// The most mats reads of each kind of file that is not an instance: each is far above what
/// mats writes or users write by hand, and far below what would cost memory (`/dev/zero` as a
/// campaign used to grow to 24 GB; as a bundle's index, to 20 GB).
pub mod caps {
    /// Campaign and space TOML.
    pub const TOML: u64 = 16 << 20;
    /// An export's `index.json`.
    pub const INDEX: u64 = 16 << 20;
    /// A bundle's `manifest.json`.
    pub const MANIFEST: u64 = 4 << 20;
    /// A campaign's `summary.json`.
    pub const SUMMARY: u64 = 64 << 20;
    /// The daemon's token file.
    pub const TOKEN: u64 = 4 << 10;
    /// A solution to score (`mats instance score --solution`): a permutation or assignment
    /// of at most a few million values.
    pub const SOLUTION: u64 = 64 << 20;
}

/// [`read_to_string`] with an explicit cap.
pub fn read_capped(path: &std::path::Path, cap: u64) -> Result<String, InputError> {
    read_text(
        path,
        cap,
        "the file",
        "set MATS_MAX_INPUT_BYTES to raise it",
    )
}

/// Reads a file of one `kind` (named in the error, e.g. "a campaign file") of at most `cap`
/// bytes: the capped reader every file mats reads goes through.
pub fn read_kind(path: &std::path::Path, kind: &str, cap: u64) -> Result<String, InputError> {
    read_text(path, cap, kind, "the limit for this kind of file")
}

fn read_text(
    path: &std::path::Path,
    cap: u64,
    kind: &str,
    hint: &str,
) -> Result<String, InputError> {
    let mut file = std::fs::File::open(path).map_err(io_at(path))?;
    read_stream(&mut file, path, cap, kind, hint)
}

/// An I/O failure on `path`, as an input error naming it.
fn io_at(path: &std::path::Path) -> impl Fn(std::io::Error) -> InputError + '_ {
    move |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// [`read_kind`] for a stream (standard input): `label` names it in errors.
pub fn read_stream_kind(
    reader: &mut impl std::io::Read,
    label: &std::path::Path,
    kind: &str,
    cap: u64,
) -> Result<String, InputError> {
    read_stream(reader, label, cap, kind, "the limit for this kind of file")
}

fn read_stream(
    file: &mut impl std::io::Read,
    path: &std::path::Path,
    cap: u64,
    kind: &str,
    hint: &str,
) -> Result<String, InputError> {
    let io = io_at(path);
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let got = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        // No benchmark format holds a NUL byte; stopping at the first one ends binary
        // input (`/dev/zero`, images) at once instead of after the cap.
        if let Some(k) = chunk[..got].iter().position(|&b| b == 0) {
            let line = bytes
                .iter()
                .chain(&chunk[..k])
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            return Err(InputError::syntax(
                path,
                line,
                "not a text file: it holds a NUL byte",
            ));
        }
        bytes.extend_from_slice(&chunk[..got]);
        if bytes.len() as u64 > cap {
            break;
        }
    }
    if bytes.len() as u64 > cap {
        return Err(InputError::invalid(
            path,
            format!("{kind} is larger than {cap} bytes, the most mats reads ({hint})"),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        InputError::syntax(path, line, "not a text file: invalid UTF-8")
    })?;
    Ok(plain_text(text))
}

/// Text as every parser reads it: without the byte-order mark some editors put first (it
/// stuck to the first token: `"\u{feff}3"` was not a size), and with lines that end in CR
/// alone (classic Mac files, one line to `str::lines`) ending in LF.
fn plain_text(text: String) -> String {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    if text.contains('\r') && !text.contains('\n') {
        text.replace('\r', "\n")
    } else {
        text
    }
}

/// User text as a message quotes it: Debug-escaped, and cut after 60 characters so that one
/// bad line of a megabyte does not become a megabyte of message.
pub fn quoted(text: &str) -> String {
    if text.chars().count() <= 60 {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(60).collect();
        format!("{head:?}... ({} bytes)", text.len())
    }
}

#[cfg(test)]
mod text_tests {
    #[test]
    fn a_byte_order_mark_and_lone_carriage_returns_are_read_as_plain_text() {
        assert_eq!(super::plain_text("\u{feff}3\n1 2".into()), "3\n1 2");
        assert_eq!(
            super::plain_text("NAME: x\rDIMENSION: 3\r".into()),
            "NAME: x\nDIMENSION: 3\n"
        );
        // CRLF stays: the parsers' lines() take it apart already.
        assert_eq!(super::plain_text("a\r\nb".into()), "a\r\nb");
    }
}
