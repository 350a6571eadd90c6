//! A token stream over benchmark files whose line breaks carry no meaning (QAPLIB, Taillard).
//!
//! Parsers pull typed numbers from it; every failure names the file and the line of the
//! offending token (or the last line, when the data ends too early).

use std::path::{Path, PathBuf};

use crate::error::InputError;

/// Whitespace-separated tokens with the 1-based line each one sits on.
pub struct Tokens<'a> {
    path: PathBuf,
    tokens: Vec<(usize, &'a str)>,
    next: usize,
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
        let mut tokens = Vec::new();
        let mut last_line = 1;
        for (index, line) in text.lines().enumerate() {
            let line_no = index + 1;
            let mut any = false;
            for token in line
                .split(|c: char| c.is_whitespace() || extra.contains(&c))
                .filter(|t| !t.is_empty())
            {
                tokens.push((line_no, token));
                any = true;
            }
            if any || line_no == 1 {
                last_line = line_no;
            }
        }
        Tokens {
            path: path.to_path_buf(),
            tokens,
            next: 0,
            last_line,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tokens not yet consumed.
    pub fn remaining(&self) -> usize {
        self.tokens.len() - self.next
    }

    /// The line of the next token, or of the last token when none is left.
    pub fn line(&self) -> usize {
        self.tokens
            .get(self.next)
            .map(|&(line, _)| line)
            .unwrap_or(self.last_line)
    }

    /// The next raw token, or an error saying what was expected.
    pub fn next_str(&mut self, what: &str) -> Result<(usize, &'a str), InputError> {
        match self.tokens.get(self.next) {
            Some(&(line, token)) => {
                self.next += 1;
                Ok((line, token))
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
        token.parse::<i64>().map_err(|_| {
            InputError::syntax(
                &self.path,
                line,
                format!("expected {what} (an integer), found {token:?}"),
            )
        })
    }

    /// The next token as a size or count, with an upper bound that protects allocations.
    pub fn next_usize(&mut self, what: &str, max: usize) -> Result<usize, InputError> {
        let line = self.line();
        let value = self.next_i64(what)?;
        if value < 0 || value as u64 > max as u64 {
            return Err(InputError::syntax(
                &self.path,
                line,
                format!("{what} must be between 0 and {max}, found {value}"),
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
        if let Some(&(line, token)) = self.tokens.get(self.next) {
            return Err(InputError::syntax(
                &self.path,
                line,
                format!(
                    "unexpected data after {what}: {token:?} ({} extra values)",
                    self.remaining()
                ),
            ));
        }
        Ok(())
    }
}
