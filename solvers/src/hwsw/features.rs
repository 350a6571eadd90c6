//! Features of a HW/SW instance and its class: CCR x R level x size band (2 x 3 x 3 = 18).
//!
//! The class is read from the data, so it also works for files that did not come from the
//! generator:
//!
//! - **CCR** estimate `mean(c) / s_max` (the generator's c has mean rho s_max), mapped to the
//!   nearest of the paper's 0.1, 1, 10 on a log scale: `0.1` below 0.316, `1` from 0.316 to
//!   below 3.16, `10` from 3.16 (a graph without edges counts as 0.1);
//! - **R level** `R / sum s`: `low` below 0.5, `high` from 0.5 (the generator's two ranges);
//! - **size band** by the paper's `size = 2 n + 3 m` (Table 1): `small` below 1000 (crc32,
//!   patricia, dijkstra), `medium` below 5000 (clustering, rc6), `large` from 5000
//!   (random1-9).

use std::fmt;

use super::generator::RLevel;
use super::instance::Instance;

pub const SIZE_MEDIUM: usize = 1000;
pub const SIZE_LARGE: usize = 5000;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Features {
    pub nodes: usize,
    pub edges: usize,
    /// 2 n + 3 m, Hou et al.'s size measure.
    pub size: usize,
    pub total_software: i64,
    pub total_hardware: i64,
    pub max_software: i64,
    pub total_communication: i64,
    pub r: i64,
    /// R / sum s.
    pub r_ratio: f64,
    /// mean(c) / s_max.
    pub ccr: f64,
    pub mean_degree: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeBand {
    Small,
    Medium,
    Large,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Class {
    /// 0.1, 1 or 10, written as in the paper.
    pub ccr: CcrLevel,
    pub r: RLevel,
    pub size: SizeBand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum CcrLevel {
    #[serde(rename = "0.1")]
    Tenth,
    #[serde(rename = "1")]
    One,
    #[serde(rename = "10")]
    Ten,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ccr = match self.ccr {
            CcrLevel::Tenth => "0.1",
            CcrLevel::One => "1",
            CcrLevel::Ten => "10",
        };
        let size = match self.size {
            SizeBand::Small => "small",
            SizeBand::Medium => "medium",
            SizeBand::Large => "large",
        };
        write!(f, "hwsw:ccr={ccr},r={},size={size}", self.r)
    }
}

impl Instance {
    pub fn features(&self) -> Features {
        let (n, m) = (self.n(), self.m());
        let total_software: i64 = self.software().iter().sum();
        let max_software = self.software().iter().copied().max().unwrap_or(0);
        let total_communication: i64 = self.edges().iter().map(|e| e.2).sum();
        Features {
            nodes: n,
            edges: m,
            size: 2 * n + 3 * m,
            total_software,
            total_hardware: self.hardware().iter().sum(),
            max_software,
            total_communication,
            r: self.r(),
            r_ratio: if total_software > 0 {
                self.r() as f64 / total_software as f64
            } else {
                1.0
            },
            ccr: if m > 0 && max_software > 0 {
                total_communication as f64 / m as f64 / max_software as f64
            } else {
                0.0
            },
            mean_degree: 2.0 * m as f64 / n as f64,
        }
    }

    pub fn class(&self) -> Class {
        self.features().class()
    }
}

impl Features {
    pub fn class(&self) -> Class {
        let ccr = if self.ccr >= 10f64.sqrt() {
            CcrLevel::Ten
        } else if self.ccr >= 0.1f64.sqrt() {
            CcrLevel::One
        } else {
            CcrLevel::Tenth
        };
        let size = if self.size >= SIZE_LARGE {
            SizeBand::Large
        } else if self.size >= SIZE_MEDIUM {
            SizeBand::Medium
        } else {
            SizeBand::Small
        };
        Class {
            ccr,
            r: if self.r_ratio < 0.5 {
                RLevel::Low
            } else {
                RLevel::High
            },
            size,
        }
    }
}
