//! The random task-graph generator of Hou et al. (after Arató et al. and Wu et al.).
//!
//! Draws, in this order, from ChaCha8 stream 0 of the seed (`run::stream_rng(seed, 0)`):
//!
//! 1. n software costs `s_i ~ U[1, 100]` (real), each rounded to the nearest integer;
//! 2. n hardware costs `h_i ~ N(k s_i, k lambda s_i)` (Box–Muller; s_i the rounded value),
//!    redrawn until positive, then rounded and raised to at least 1;
//! 3. m distinct edges: uniform node pairs u != v, a pair already drawn is drawn again
//!    (a uniform simple graph G(n, m); it need not be connected);
//! 4. m communication costs `c ~ U[0, 2 rho s_max]` (real, s_max the largest s_i), rounded;
//! 5. R ~ U[0, sum s / 2] (R = low) or U[sum s / 2, sum s] (R = high), rounded.
//!
//! Rounding (half away from zero) keeps the paper's distributions up to +-0.5 and makes the
//! objective and the constraint exact in `i64`. The paper's k has no algorithmic effect
//! and lambda "did not impact" its results; the defaults are k = 1 and lambda = 0.3.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::instance::Instance;
use crate::run::{stream_rng, SolverRng};

/// The R levels of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RLevel {
    Low,
    High,
}

impl fmt::Display for RLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RLevel::Low => "low",
            RLevel::High => "high",
        })
    }
}

impl FromStr for RLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "low" => Ok(RLevel::Low),
            "high" => Ok(RLevel::High),
            _ => Err(format!("unknown R level {s:?}; known: low, high")),
        }
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorSpec {
    pub nodes: usize,
    pub edges: usize,
    /// Communication-to-computation ratio rho (the paper: 0.1, 1, 10).
    pub ccr: f64,
    pub r_level: RLevel,
    pub seed: u64,
    pub k: f64,
    pub lambda: f64,
}

impl GeneratorSpec {
    pub fn new(nodes: usize, edges: usize, ccr: f64, r_level: RLevel, seed: u64) -> Self {
        GeneratorSpec {
            nodes,
            edges,
            ccr,
            r_level,
            seed,
            k: 1.0,
            lambda: 0.3,
        }
    }

    /// Checks the arguments; messages name the command-line options.
    pub fn check(&self) -> Result<(), String> {
        if self.nodes < 2 {
            return Err(format!("--nodes must be at least 2, found {}", self.nodes));
        }
        if self.nodes > 1_000_000 {
            return Err(format!(
                "--nodes must be at most 1000000, found {}",
                self.nodes
            ));
        }
        let max_edges = self.nodes as u128 * (self.nodes as u128 - 1) / 2;
        if self.edges as u128 > max_edges || self.edges > 10_000_000 {
            return Err(format!(
                "--edges must be at most n (n - 1) / 2 = {} (and 10^7), found {}",
                max_edges.min(10_000_000),
                self.edges
            ));
        }
        if !(self.ccr.is_finite() && self.ccr >= 0.0) {
            return Err(format!(
                "--ccr must be a finite number >= 0, found {}",
                self.ccr
            ));
        }
        if !(self.k.is_finite() && self.k > 0.0 && self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err("k must be > 0 and lambda >= 0".into());
        }
        Ok(())
    }

    /// The command that regenerates this instance.
    pub fn command(&self) -> String {
        format!(
            "mats instance generate hwsw --nodes {} --edges {} --ccr {} --r-level {} --seed {}",
            self.nodes, self.edges, self.ccr, self.r_level, self.seed
        )
    }
}

fn uniform(rng: &mut SolverRng, low: f64, high: f64) -> f64 {
    low + rng.random::<f64>() * (high - low)
}

fn standard_normal(rng: &mut SolverRng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Generates an instance named `hwsw-{n}-{m}-ccr{rho}-{level}-s{seed}`; the comments record
/// the command and the parameters.
pub fn generate(spec: &GeneratorSpec) -> Result<Instance, String> {
    spec.check()?;
    let (n, m) = (spec.nodes, spec.edges);
    let mut rng = stream_rng(spec.seed, 0);
    let software: Vec<i64> = (0..n)
        .map(|_| uniform(&mut rng, 1.0, 100.0).round() as i64)
        .collect();
    let hardware: Vec<i64> = software
        .iter()
        .map(|&s| {
            let mean = spec.k * s as f64;
            let sd = spec.k * spec.lambda * s as f64;
            loop {
                let h = mean + sd * standard_normal(&mut rng);
                if h > 0.0 {
                    break (h.round() as i64).max(1);
                }
            }
        })
        .collect();
    let mut seen = HashSet::with_capacity(m);
    let mut pairs = Vec::with_capacity(m);
    while pairs.len() < m {
        let u = rng.random_range(0..n);
        let v = rng.random_range(0..n);
        if u != v && seen.insert((u.min(v), u.max(v))) {
            pairs.push((u, v));
        }
    }
    let s_max = software.iter().copied().max().unwrap_or(0) as f64;
    let edges: Vec<(usize, usize, i64)> = pairs
        .into_iter()
        .map(|(u, v)| {
            (
                u,
                v,
                uniform(&mut rng, 0.0, 2.0 * spec.ccr * s_max).round() as i64,
            )
        })
        .collect();
    let total: f64 = software.iter().sum::<i64>() as f64;
    let r = match spec.r_level {
        RLevel::Low => uniform(&mut rng, 0.0, total / 2.0),
        RLevel::High => uniform(&mut rng, total / 2.0, total),
    }
    .round() as i64;
    let name = format!(
        "hwsw-{n}-{m}-ccr{}-{}-s{}",
        spec.ccr, spec.r_level, spec.seed
    );
    let mut inst = Instance::new(name, software, hardware, edges, r)?;
    inst.comments = vec![
        "SYNTHETIC HW/SW partitioning instance (not a published benchmark graph)".into(),
        format!("generated by: {}", spec.command()),
        format!(
            "generator: Hou et al. after Arato et al.; k = {}, lambda = {}, costs rounded to \
             integers",
            spec.k, spec.lambda
        ),
    ];
    Ok(inst)
}
