//! Features of a QAP instance and its dataset class.
//!
//! The tuner tunes per class, so the class must separate instances that behave differently on
//! the GPU and be stable for instances of one generator. Three measures are taken of each of
//! the two matrices:
//!
//! - density: the share of nonzero off-diagonal entries;
//! - symmetry: the share of off-diagonal pairs i < j with `m[i][j] == m[j][i]`;
//! - dominance (Vollmann and Buffa's flow dominance): `100 * std / mean` over all n^2 entries
//!   (population standard deviation; 0 for an all-zero matrix).
//!
//! QAPLIB does not fix which matrix is the flow, so the class combines the two matrices in a
//! way that does not depend on their order: the instance is as dense as its sparser matrix
//! (a zero in either matrix removes the term), as symmetric as its less symmetric matrix, and as
//! dominant as its more dominant matrix. Each combined measure maps to low / normal / high with
//! the thresholds below, chosen from the distribution over the 136 QAPLIB instances so that
//! every level occurs, and so that instances of one generator share a class (the symmetry
//! threshold sits at 0.45 rather than 0.5 because lipa50b measures 0.496 and its siblings
//! lipa20b..lipa90b 0.55..0.58). Across QAPLIB 9 of the 27 classes occur. To see the numbers:
//! `cargo run -p mats-solvers --example qap_features -- ../shared/data/qaplib/instances/*.dat`;
//! the test `all_levels_occur_across_qaplib` keeps every level in use.
//!
//! | measure   | low        | normal             | high        |
//! |-----------|------------|--------------------|-------------|
//! | density   | < 0.5      | 0.5 ..< 0.9        | >= 0.9      |
//! | symmetry  | < 0.45     | 0.45 ..< 1         | = 1 (fully symmetric) |
//! | dominance | < 80       | 80 ..< 200         | >= 200      |

use std::fmt;

use super::Instance;

pub const DENSITY_NORMAL: f64 = 0.5;
pub const DENSITY_HIGH: f64 = 0.9;
pub const SYMMETRY_NORMAL: f64 = 0.45;
pub const DOMINANCE_NORMAL: f64 = 80.0;
pub const DOMINANCE_HIGH: f64 = 200.0;

/// The three measures of one matrix.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MatrixFeatures {
    pub density: f64,
    pub symmetry: f64,
    pub dominance: f64,
    pub zero_diagonal: bool,
}

/// The features of an instance: per matrix, and combined as the class uses them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Features {
    pub n: usize,
    pub a: MatrixFeatures,
    pub b: MatrixFeatures,
    pub density: f64,
    pub symmetry: f64,
    pub dominance: f64,
}

/// A three-level scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Low,
    Normal,
    High,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Low => "low",
            Level::Normal => "normal",
            Level::High => "high",
        })
    }
}

/// The dataset class of a QAP instance: one of 27.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Class {
    pub density: Level,
    pub symmetry: Level,
    pub dominance: Level,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "qap:density={},symmetry={},dominance={}",
            self.density, self.symmetry, self.dominance
        )
    }
}

fn matrix_features(m: &[i64], n: usize) -> MatrixFeatures {
    let off_diagonal = n * n - n;
    let mut nonzero = 0usize;
    let mut symmetric_pairs = 0usize;
    let mut zero_diagonal = true;
    for i in 0..n {
        zero_diagonal &= m[i * n + i] == 0;
        for j in 0..n {
            if i != j && m[i * n + j] != 0 {
                nonzero += 1;
            }
            if i < j && m[i * n + j] == m[j * n + i] {
                symmetric_pairs += 1;
            }
        }
    }
    let count = (n * n) as f64;
    let mean = m.iter().map(|&x| x as f64).sum::<f64>() / count;
    let variance = m.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / count;
    MatrixFeatures {
        // A 1 x 1 matrix has no off-diagonal entries: call it dense and symmetric.
        density: if off_diagonal == 0 {
            1.0
        } else {
            nonzero as f64 / off_diagonal as f64
        },
        symmetry: if off_diagonal == 0 {
            1.0
        } else {
            symmetric_pairs as f64 / (off_diagonal / 2) as f64
        },
        dominance: if mean == 0.0 {
            0.0
        } else {
            100.0 * variance.sqrt() / mean.abs()
        },
        zero_diagonal,
    }
}

impl Instance {
    pub fn features(&self) -> Features {
        let a = matrix_features(self.a_matrix(), self.n());
        let b = matrix_features(self.b_matrix(), self.n());
        Features {
            n: self.n(),
            a,
            b,
            density: a.density.min(b.density),
            symmetry: a.symmetry.min(b.symmetry),
            dominance: a.dominance.max(b.dominance),
        }
    }

    pub fn class(&self) -> Class {
        self.features().class()
    }
}

impl Features {
    pub fn class(&self) -> Class {
        let level = |x: f64, normal: f64, high: f64| {
            if x >= high {
                Level::High
            } else if x >= normal {
                Level::Normal
            } else {
                Level::Low
            }
        };
        Class {
            density: level(self.density, DENSITY_NORMAL, DENSITY_HIGH),
            symmetry: level(self.symmetry, SYMMETRY_NORMAL, 1.0),
            dominance: level(self.dominance, DOMINANCE_NORMAL, DOMINANCE_HIGH),
        }
    }
}
