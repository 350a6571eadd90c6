//! The QAP instance model and the QAPLIB `.dat` reader.
//!
//! A `.dat` file holds `n`, then matrix A (n x n), then matrix B (n x n), as integers separated
//! by any whitespace: line breaks carry no meaning. QAPLIB does not fix which matrix is the
//! flow and which the distance; the objective is the same either way:
//! `cost(p) = sum_ij a[i][j] * b[p(i)][p(j)]`, where p maps facility i to location p(i).
//! Matrices may be asymmetric and have nonzero diagonals (bur26*, tai64c, tai256c).

use std::path::Path;

use crate::error::{read_to_string, InputError};
use crate::tokens::Tokens;

/// The largest n accepted; beyond it the matrices would not fit in memory anyway, and the
/// bound keeps `n * n` from overflowing on hostile input.
pub const MAX_N: usize = 46_340;

/// A QAP instance: two n x n integer matrices, stored row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub name: String,
    n: usize,
    a: Vec<i64>,
    b: Vec<i64>,
    /// Transposes, so the swap delta reads columns as contiguous rows.
    a_t: Vec<i64>,
    b_t: Vec<i64>,
}

impl Instance {
    /// Builds an instance from row-major matrices; fails when the sizes disagree or n = 0.
    pub fn new(
        name: impl Into<String>,
        n: usize,
        a: Vec<i64>,
        b: Vec<i64>,
    ) -> Result<Self, String> {
        if n == 0 {
            return Err("n must be at least 1".into());
        }
        if n > MAX_N {
            return Err(format!("n = {n} exceeds the supported maximum {MAX_N}"));
        }
        if a.len() != n * n || b.len() != n * n {
            return Err(format!(
                "matrices must have n x n = {} entries, found {} and {}",
                n * n,
                a.len(),
                b.len()
            ));
        }
        // Swap deltas and their O(1) updates form up to 32 products of entry differences,
        // so small n is rounded up to 6 (36 > 32) for the bound to cover them too.
        let side = n.max(6) as i128;
        let worst = crate::exact::mul(
            crate::exact::mul(side * side, crate::exact::max_abs(a.iter().copied())),
            crate::exact::max_abs(b.iter().copied()),
        );
        crate::exact::check_worst_case(worst, "max(n, 6)^2 x max|A| x max|B|")?;
        let transpose = |m: &[i64]| {
            let mut t = vec![0; n * n];
            for i in 0..n {
                for j in 0..n {
                    t[j * n + i] = m[i * n + j];
                }
            }
            t
        };
        let (a_t, b_t) = (transpose(&a), transpose(&b));
        Ok(Instance {
            name: name.into(),
            n,
            a,
            b,
            a_t,
            b_t,
        })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    #[inline]
    pub fn a(&self, i: usize, j: usize) -> i64 {
        self.a[i * self.n + j]
    }

    #[inline]
    pub fn b(&self, i: usize, j: usize) -> i64 {
        self.b[i * self.n + j]
    }

    /// Row i of A.
    #[inline]
    pub fn a_row(&self, i: usize) -> &[i64] {
        &self.a[i * self.n..(i + 1) * self.n]
    }

    /// Column j of A (a row of its transpose).
    #[inline]
    pub fn a_col(&self, j: usize) -> &[i64] {
        &self.a_t[j * self.n..(j + 1) * self.n]
    }

    /// Row i of B.
    #[inline]
    pub fn b_row(&self, i: usize) -> &[i64] {
        &self.b[i * self.n..(i + 1) * self.n]
    }

    /// Column j of B.
    #[inline]
    pub fn b_col(&self, j: usize) -> &[i64] {
        &self.b_t[j * self.n..(j + 1) * self.n]
    }

    /// Both matrices equal their transposes (most QAPLIB instances): the two halves of every
    /// swap-delta term agree, which the CPU and GPU delta code exploit.
    pub fn is_symmetric(&self) -> bool {
        self.a == self.a_t && self.b == self.b_t
    }

    /// Matrix A, row-major (n x n).
    pub fn a_matrix(&self) -> &[i64] {
        &self.a
    }

    /// Matrix B, row-major (n x n).
    pub fn b_matrix(&self) -> &[i64] {
        &self.b
    }

    /// The exact objective `sum_ij a[i][j] * b[p(i)][p(j)]` of a permutation (O(n^2)).
    pub fn cost(&self, p: &[usize]) -> i64 {
        debug_assert_eq!(p.len(), self.n);
        let n = self.n;
        let mut total = 0i64;
        for i in 0..n {
            let a_row = &self.a[i * n..(i + 1) * n];
            let b_row = &self.b[p[i] * n..(p[i] + 1) * n];
            for j in 0..n {
                total += a_row[j] * b_row[p[j]];
            }
        }
        total
    }
}

/// Reads a QAPLIB `.dat` file; the instance is named after the file stem.
pub fn read(path: &Path) -> Result<Instance, InputError> {
    let text = read_to_string(path)?;
    parse(&text, path)
}

/// Parses QAPLIB `.dat` text; `path` names the source in errors and gives the instance name.
pub fn parse(text: &str, path: &Path) -> Result<Instance, InputError> {
    let mut tokens = Tokens::new(text, path);
    let n_line = tokens.line();
    let n = tokens.next_usize("the instance size n", 1..=MAX_N)?;
    let expected = 2 * n * n;
    if tokens.remaining() != expected {
        return Err(InputError::invalid(
            path,
            format!(
                "n = {n} (line {n_line}) needs 2 x {n} x {n} = {expected} matrix entries, \
                 but the file holds {}",
                tokens.remaining()
            ),
        ));
    }
    let a = tokens.next_i64_vec(n * n, "an entry of matrix A")?;
    let b = tokens.next_i64_vec(n * n, "an entry of matrix B")?;
    tokens.expect_end("matrix B")?;
    Instance::new(name_of(path), n, a, b).map_err(|message| InputError::invalid(path, message))
}

/// QAPLIB looks: one integer n, then exactly 2 n^2 integers. Used to detect the family.
pub fn looks_like_qap(text: &str) -> bool {
    let mut tokens = text.split_whitespace();
    let Some(Ok(n)) = tokens.next().map(str::parse::<usize>) else {
        return false;
    };
    n > 0 && n <= MAX_N && tokens.count() == 2 * n * n
}

/// The instance name: the file stem (`tai12a` for `data/qap/tai12a.dat`).
pub(crate) fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
