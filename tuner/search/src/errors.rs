//! Error messages as users read them: one line, each cause once, the file with line and
//! column, and no names of internal types.

/// The whole error chain as one line: causes already quoted by the message before them are
/// dropped (an I/O error that both wraps and prints its source would otherwise appear
/// twice), and multi-line causes (TOML's snippets) are folded into one line.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = fold(&cause.to_string());
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    cut_long_values(&line)
}

/// The longest run of non-blank characters an error line quotes whole: paths and values
/// are far shorter; a 100 KB value used to be echoed back whole (over the daemon's socket
/// too).
const LONGEST_WORD: usize = 200;

/// `line` with every longer run of non-blank characters cut to its head and its length.
pub fn cut_long_values(line: &str) -> String {
    if line.len() <= LONGEST_WORD {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len().min(4 * LONGEST_WORD));
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if word.chars().count() > LONGEST_WORD {
            out.extend(word.chars().take(60));
            out.push_str(&format!("... ({} bytes)", word.len()));
        } else {
            out.push_str(word);
        }
    }
    out
}

/// A TOML error as one line: `ORIGIN:LINE:COLUMN: message`.
pub fn toml_line(origin: &str, text: &str, error: &toml::de::Error) -> String {
    let message = plain(error.message().trim());
    match error.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            format!("{origin}:{line}:{column}: {message}")
        }
        None => format!("{origin}: {message}"),
    }
}

/// Folds a multi-line message: TOML's "TOML parse error at line L, column C" header, code
/// snippet and message become `L:C: message`; other lines are joined with "; ".
fn fold(message: &str) -> String {
    let message = message.trim();
    if !message.contains('\n') {
        return plain(message);
    }
    let mut lines = message.lines().map(str::trim_end);
    let first = lines.next().unwrap_or_default();
    // Snippet lines look like `  |`, `4 | values = [1, 2` or `  |     ^`.
    let rest: Vec<&str> = lines
        .filter(|l| {
            let t = l.trim_start();
            !(t.is_empty() || t.starts_with('|') || is_snippet_line(t))
        })
        .collect();
    const HEADER: &str = "TOML parse error at line ";
    if let Some(at) = first.find(HEADER) {
        let position = first[at + HEADER.len()..].replace(", column ", ":");
        let prefix = first[..at].trim_end().trim_end_matches(':');
        let body = plain(&rest.join("; "));
        return if prefix.is_empty() {
            format!("line {position}: {body}")
        } else {
            format!("{prefix}:{position}: {body}")
        };
    }
    plain(
        &std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join("; "),
    )
}

fn is_snippet_line(t: &str) -> bool {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && t[digits..].trim_start().starts_with('|')
}

/// serde's wording for a value that fits none of an enum's shapes names the Rust type; say
/// what was expected instead.
fn plain(message: &str) -> String {
    const UNTAGGED: &str = "data did not match any variant of untagged enum ";
    let Some(at) = message.find(UNTAGGED) else {
        return message.to_string();
    };
    let rest = &message[at + UNTAGGED.len()..];
    let name_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let expected = match &rest[..name_len] {
        "Value" => "expected an integer or a string",
        "ClassesConfig" => "expected \"auto\" or a table of class = [instance names]",
        "ObjectiveConfig" => "expected an objective name or a list of names",
        _ => "the value has none of the accepted forms",
    };
    format!("{}{expected}{}", &message[..at], &rest[name_len..])
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let mut start = offset;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |k| k + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Reads a text file of at most `cap` bytes; `kind` names the file in the error ("space
/// file", "campaign file"), so that `/dev/zero` or a huge file fails at once with the cap
/// named instead of exhausting memory.
pub fn read_text_capped(path: &std::path::Path, cap: u64, kind: &str) -> anyhow::Result<String> {
    use anyhow::Context as _;
    use std::io::Read as _;
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open {kind} {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {kind} {}", path.display()))?;
    if bytes.len() as u64 > cap {
        anyhow::bail!(
            "{}: {kind} larger than {} MiB, the limit for this kind of file",
            path.display(),
            cap >> 20
        );
    }
    if bytes.contains(&0) {
        anyhow::bail!("{}: not a text file: it holds a NUL byte", path.display());
    }
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: {kind} is not valid UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_snippets_fold_into_one_line() {
        let e = "space.toml: TOML parse error at line 4, column 15\n  |\n4 | values = [1, 2\n  |               ^\nunclosed array, expected `]`\n";
        assert_eq!(fold(e), "space.toml:4:15: unclosed array, expected `]`");
    }

    #[test]
    fn causes_appear_once() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        );
        let e = anyhow::Error::new(io)
            .context("cannot read x.toml: stream did not contain valid UTF-8");
        assert_eq!(
            one_line(&e),
            "cannot read x.toml: stream did not contain valid UTF-8"
        );
    }

    #[test]
    fn untagged_enum_names_become_expectations() {
        let m = plain("data did not match any variant of untagged enum Value");
        assert_eq!(m, "expected an integer or a string");
        assert!(!plain("data did not match any variant of untagged enum Foo").contains("Foo"));
    }
}
