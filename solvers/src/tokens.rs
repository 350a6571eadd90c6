//! A token stream over benchmark files whose line breaks carry no meaning (QAPLIB, Taillard).
//!
//! Parsers pull typed numbers from it; every failure names the file and the line of the
//! offending token (or the last line, when the data ends too early).

use std::path::{Path, PathBuf};

use crate::error::{quoted, InputError};

/// Whitespace-separated tokens with the 1-based line each one sits on, read lazily: memory
/// does not grow with the number of tokens (a file of 10^8 one-digit values once took 24
/// bytes per token before any check ran).
pub struct Tokens<'a> {
    path: PathBuf,
    text: &'a str,
    extra: Vec<char>,
    /// Which ASCII bytes separate tokens: looked up per byte, the hot path of a large file.
    ascii_separators: [bool; 128],
    /// Byte offset of the next unread character.
    pos: usize,
    /// The line `pos` is on.
    line_at_pos: usize,
    total: usize,
    consumed: usize,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    /// Splits on whitespace only.
    pub fn new(text: &'a str, path: &Path) -> Self {
        Self::with_separators(text, path, &[])
    }

    /// Splits on whitespace and on the given extra separator characters (some QAPLIB
    /// solution files separate values with commas).
    pub fn with_separators(text: &'a str, path: &Path, extra: &[char]) -> Self {
        let mut ascii_separators = [false; 128];
        for (b, slot) in ascii_separators.iter_mut().enumerate() {
            let c = char::from(b as u8);
            *slot = c.is_whitespace() || extra.contains(&c);
        }
        let mut tokens = Tokens {
            path: path.to_path_buf(),
            text,
            extra: extra.to_vec(),
            ascii_separators,
            pos: 0,
            line_at_pos: 1,
            total: 0,
            consumed: 0,
            last_line: 1,
        };
        // One counting pass, so that counts can be checked before anything is allocated.
        let mut probe = tokens.clone_position();
        while let Some((line, _)) = probe.advance() {
            tokens.total += 1;
            tokens.last_line = line;
        }
        tokens
    }

    fn clone_position(&self) -> Tokens<'a> {
        Tokens {
            path: PathBuf::new(),
            text: self.text,
            extra: self.extra.clone(),
            ascii_separators: self.ascii_separators,
            pos: self.pos,
            line_at_pos: self.line_at_pos,
            total: 0,
            consumed: 0,
            last_line: 1,
        }
    }

    fn is_separator(&self, c: char) -> bool {
        c.is_whitespace() || self.extra.contains(&c)
    }

    /// The first byte offset at or after `from` where a character is (`separator` true) or
    /// is not a separator, and the line breaks passed on the way. Bytes looked up in a table,
    /// not `char_indices` and `char::is_whitespace`: nearly every byte is ASCII, and the scan
    /// runs twice per token (a count, then the read) over files of up to 256 MB.
    fn find(&self, from: usize, separator: bool) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        let (mut i, mut breaks) = (from, 0);
        while let Some(&b) = bytes.get(i) {
            let (is_separator, len) = if b.is_ascii() {
                (self.ascii_separators[usize::from(b)], 1)
            } else {
                // `i` always sits on a character boundary: it moves by whole characters.
                match self.text[i..].chars().next() {
                    Some(c) => (self.is_separator(c), c.len_utf8()),
                    None => break,
                }
            };
            if is_separator == separator {
                return (i, breaks);
            }
            breaks += usize::from(b == b'\n');
            i += len;
        }
        (bytes.len(), breaks)
    }

    /// Where the next token starts (byte offset, line), without moving.
    fn next_start(&self) -> (usize, usize) {
        let (start, breaks) = self.find(self.pos, false);
        (start, self.line_at_pos + breaks)
    }

    /// The token starting at `start` (empty at the end of the text).
    fn token_at(&self, start: usize) -> &'a str {
        let (end, _) = self.find(start, true);
        &self.text[start..end]
    }

    /// The next token without consuming it.
    pub fn peek(&self) -> Option<&'a str> {
        let token = self.token_at(self.next_start().0);
        (!token.is_empty()).then_some(token)
    }

    /// Moves past the next token and returns it with its line.
    fn advance(&mut self) -> Option<(usize, &'a str)> {
        let (start, line) = self.next_start();
        let token = self.token_at(start);
        self.pos = start + token.len();
        self.line_at_pos = line;
        (!token.is_empty()).then_some((line, token))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tokens not yet consumed.
    pub fn remaining(&self) -> usize {
        self.total - self.consumed
    }

    /// The line of the next token, or of the last token when none is left.
    pub fn line(&self) -> usize {
        if self.remaining() == 0 {
            self.last_line
        } else {
            self.next_start().1
        }
    }

    /// The next raw token, or an error saying what was expected.
    pub fn next_str(&mut self, what: &str) -> Result<(usize, &'a str), InputError> {
        match self.advance() {
            Some(found) => {
                self.consumed += 1;
                Ok(found)
            }
            None => Err(InputError::syntax(
                &self.path,
                self.last_line,
                format!("file ends early: expected {what}"),
            )),
        }
    }

    /// The next token as an integer.
    pub fn next_i64(&mut self, what: &str) -> Result<i64, InputError> {
        let (line, token) = self.next_str(what)?;
        token.parse::<i64>().map_err(|e| {
            let message = match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    format!(
                        "{what} {} is out of range (integers up to 2^63 - 1 in magnitude)",
                        quoted(token)
                    )
                }
                _ => format!("expected {what} (an integer), found {}", quoted(token)),
            };
            InputError::syntax(&self.path, line, message)
        })
    }

    /// The next token as a size or count within `range`; the upper bound protects
    /// allocations, the lower one says what the format needs (one job, one node...).
    pub fn next_usize(
        &mut self,
        what: &str,
        range: std::ops::RangeInclusive<usize>,
    ) -> Result<usize, InputError> {
        let line = self.line();
        let value = self.next_i64(what)?;
        let (min, max) = (*range.start(), *range.end());
        if value < min as i64 || value as u64 > max as u64 {
            return Err(InputError::syntax(
                &self.path,
                line,
                format!("{what} must be between {min} and {max}, found {value}"),
            ));
        }
        Ok(value as usize)
    }

    /// Reads `count` integers into a vector; `what` describes one of them.
    pub fn next_i64_vec(&mut self, count: usize, what: &str) -> Result<Vec<i64>, InputError> {
        // The count was checked against the data present, so this allocation is bounded by
        // the file size, never by a declared size alone.
        if count > self.remaining() {
            return Err(InputError::syntax(
                &self.path,
                self.last_line,
                format!(
                    "file ends early: expected {count} values for {what}, found only {}",
                    self.remaining()
                ),
            ));
        }
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            values.push(self.next_i64(what)?);
        }
        Ok(values)
    }

    /// Fails if any token is left over.
    pub fn expect_end(&self, what: &str) -> Result<(), InputError> {
        if let Some(token) = self.peek() {
            return Err(InputError::syntax(
                &self.path,
                self.line(),
                format!(
                    "unexpected data after {what}: {} ({} extra values)",
                    quoted(token),
                    self.remaining()
                ),
            ));
        }
        Ok(())
    }
}
