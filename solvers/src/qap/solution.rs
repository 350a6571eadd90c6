//! The QAPLIB `.sln` reader.
//!
//! A `.sln` file holds `n cost`, then the permutation. The published files are not consistent
//! (see ../shared/data/PROVENANCE.md): most are 1-based p, six store the inverse permutation,
//! tai40a.sln is 0-based and ste36a.sln separates values with commas. Rather than keep a list
//! of exceptions, the reader tries each reading and keeps the one whose re-scored cost equals
//! the stated cost.

use std::path::Path;

use super::Instance;
use crate::error::{read_to_string, InputError};
use crate::permutation;
use crate::tokens::Tokens;

/// A solution as stored in a `.sln` file, before it is matched to an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSolution {
    pub n: usize,
    pub stated_cost: i64,
    /// The values as written in the file.
    pub values: Vec<i64>,
}

/// How the file's values were turned into the 0-based permutation p.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Convention {
    OneBased,
    OneBasedInverse,
    ZeroBased,
    ZeroBasedInverse,
}

impl Convention {
    /// In words, for text output: how the file's values map facilities to locations.
    pub fn describe(self) -> &'static str {
        match self {
            Convention::OneBased => "1-based, the i-th value the location of facility i",
            Convention::OneBasedInverse => "1-based, the i-th value the facility at location i",
            Convention::ZeroBased => "0-based, the i-th value the location of facility i",
            Convention::ZeroBasedInverse => "0-based, the i-th value the facility at location i",
        }
    }
}

/// A solution matched to its instance: p is 0-based and `cost(p) == stated_cost`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solution {
    pub permutation: Vec<usize>,
    pub cost: i64,
    pub convention: Convention,
}

/// Reads a `.sln` file.
pub fn read_solution(path: &Path) -> Result<RawSolution, InputError> {
    let text = read_to_string(path)?;
    parse_solution(&text, path)
}

/// Parses `.sln` text: `n cost` then n values, separated by whitespace or commas.
pub fn parse_solution(text: &str, path: &Path) -> Result<RawSolution, InputError> {
    let mut tokens = Tokens::with_separators(text, path, &[',']);
    let n_line = tokens.line();
    let n = tokens.next_usize("the solution size n", 1..=super::instance::MAX_N)?;
    let stated_cost = tokens.next_i64("the solution cost")?;
    if tokens.remaining() != n {
        return Err(InputError::invalid(
            path,
            format!(
                "n = {n} (line {n_line}) but the file holds {} permutation values",
                tokens.remaining()
            ),
        ));
    }
    let values = tokens.next_i64_vec(n, "a permutation value")?;
    Ok(RawSolution {
        n,
        stated_cost,
        values,
    })
}

impl RawSolution {
    /// Finds the reading of the values that is a permutation scoring the stated cost.
    pub fn resolve(&self, instance: &Instance, path: &Path) -> Result<Solution, InputError> {
        if self.n != instance.n() {
            return Err(InputError::invalid(
                path,
                format!(
                    "solution has n = {} but instance {} has n = {}",
                    self.n,
                    instance.name,
                    instance.n()
                ),
            ));
        }
        let mut last_error = None;
        let mut costs = Vec::new();
        for (offset, base) in [(1, true), (0, false)] {
            let shifted: Option<Vec<usize>> = self
                .values
                .iter()
                .map(|&v| usize::try_from(v.checked_sub(offset)?).ok())
                .collect();
            let Some(p) = shifted else { continue };
            if let Err(e) = permutation::check(&p, self.n) {
                last_error = Some((base, e));
                continue;
            }
            for (inverse, convention) in [
                (
                    false,
                    if base {
                        Convention::OneBased
                    } else {
                        Convention::ZeroBased
                    },
                ),
                (
                    true,
                    if base {
                        Convention::OneBasedInverse
                    } else {
                        Convention::ZeroBasedInverse
                    },
                ),
            ] {
                let candidate = if inverse {
                    permutation::inverse(&p)
                } else {
                    p.clone()
                };
                let cost = instance.cost(&candidate);
                if cost == self.stated_cost {
                    return Ok(Solution {
                        permutation: candidate,
                        cost,
                        convention,
                    });
                }
                costs.push(cost);
            }
        }
        if costs.is_empty() {
            let detail = last_error
                .map(|(base, e)| {
                    let base = usize::from(base);
                    format!(" ({base}-based reading: {})", e.describe(base))
                })
                .unwrap_or_default();
            return Err(InputError::invalid(
                path,
                format!(
                    "the values are not a permutation of 1..{0} or 0..{0}{detail}",
                    self.n
                ),
            ));
        }
        Err(InputError::invalid(
            path,
            format!(
                "no reading of the permutation scores the stated cost {} on {} \
                 (readings score {costs:?})",
                self.stated_cost, instance.name
            ),
        ))
    }
}
