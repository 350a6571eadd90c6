//! The HW/SW partitioning model (Arató et al.'s problem P, as Hou et al. state it) and its
//! plain-text file format.
//!
//! A task graph G(V, E): node i has software cost s_i and hardware cost h_i, edge (i, j) a
//! communication cost c_ij paid when its ends lie on different sides. A solution is a 0/1
//! vector x, x_i = 1 meaning software. Minimise `H(x) = sum h_i (1 - x_i)` subject to
//! `S(x) + C(x) <= R` with `S(x) = sum s_i x_i` and `C(x) = sum_(i,j) c_ij |x_i - x_j|`.
//! All costs are integers, so objective and constraint are exact in `i64`.
//!
//! # File format
//!
//! Plain text; `#` starts a comment that runs to the end of the line; line breaks between
//! values carry no meaning.
//!
//! ```text
//! # any comments (the generator writes its command and parameters here)
//! HWSW <n> <m> <R>
//! <s_1> <h_1>            n lines: software and hardware cost of each node
//! ...
//! <u> <v> <c_uv>         m lines: an undirected edge between nodes u != v (1-based)
//! ```
//!
//! Costs and R are integers >= 0; an edge may appear once (in either direction).

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{read_to_string, InputError};
use crate::tokens::Tokens;

/// Largest number of nodes or edges a file may declare.
pub const MAX_NODES: usize = 10_000_000;

/// A HW/SW partitioning instance with its adjacency lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub name: String,
    software: Vec<i64>,
    hardware: Vec<i64>,
    edges: Vec<(usize, usize, i64)>,
    r: i64,
    /// CSR adjacency: neighbours of i are `adj[start[i]..start[i + 1]]` as (node, cost).
    start: Vec<usize>,
    adj: Vec<(usize, i64)>,
    /// Comment lines to keep when the instance is written (the generator's provenance).
    pub comments: Vec<String>,
}

/// The three costs of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Costs {
    pub hardware: i64,
    pub software: i64,
    pub communication: i64,
}

impl Instance {
    /// Builds an instance from 0-based edges; fails on negative costs, self-loops, edges out
    /// of range and duplicate edges.
    pub fn new(
        name: impl Into<String>,
        software: Vec<i64>,
        hardware: Vec<i64>,
        edges: Vec<(usize, usize, i64)>,
        r: i64,
    ) -> Result<Self, String> {
        let n = software.len();
        if n == 0 {
            return Err("the graph needs at least one node".into());
        }
        if hardware.len() != n {
            return Err(format!(
                "{n} software costs but {} hardware costs",
                hardware.len()
            ));
        }
        if r < 0 {
            return Err(format!("the constraint R must be >= 0, found {r}"));
        }
        for (i, (&s, &h)) in software.iter().zip(&hardware).enumerate() {
            if s < 0 || h < 0 {
                return Err(format!(
                    "node {} has a negative cost (s = {s}, h = {h})",
                    i + 1
                ));
            }
        }
        // H, S and C are each at most their sum over all nodes or edges; the bound covers
        // S + C and every flip delta.
        let worst = crate::exact::sum_abs(software.iter().copied())
            .saturating_add(crate::exact::sum_abs(hardware.iter().copied()))
            .saturating_add(crate::exact::sum_abs(edges.iter().map(|e| e.2)));
        crate::exact::check_worst_case(worst, "(the sum of all node and edge costs)")?;
        let mut degree = vec![0usize; n + 1];
        let mut seen = std::collections::HashSet::with_capacity(edges.len());
        for (k, &(u, v, c)) in edges.iter().enumerate() {
            if u >= n || v >= n {
                return Err(format!("edge {} joins a node outside 1..={n}", k + 1));
            }
            if u == v {
                return Err(format!("edge {} is a self-loop on node {}", k + 1, u + 1));
            }
            if c < 0 {
                return Err(format!("edge {} has a negative cost {c}", k + 1));
            }
            if !seen.insert((u.min(v), u.max(v))) {
                return Err(format!(
                    "edge {} ({}, {}) appears twice",
                    k + 1,
                    u + 1,
                    v + 1
                ));
            }
            degree[u] += 1;
            degree[v] += 1;
        }
        let mut start = vec![0usize; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + degree[i];
        }
        let mut fill = start.clone();
        let mut adj = vec![(0usize, 0i64); 2 * edges.len()];
        for &(u, v, c) in &edges {
            adj[fill[u]] = (v, c);
            fill[u] += 1;
            adj[fill[v]] = (u, c);
            fill[v] += 1;
        }
        Ok(Instance {
            name: name.into(),
            software,
            hardware,
            edges,
            r,
            start,
            adj,
            comments: Vec::new(),
        })
    }

    pub fn n(&self) -> usize {
        self.software.len()
    }

    pub fn m(&self) -> usize {
        self.edges.len()
    }

    pub fn r(&self) -> i64 {
        self.r
    }

    pub fn software(&self) -> &[i64] {
        &self.software
    }

    pub fn hardware(&self) -> &[i64] {
        &self.hardware
    }

    /// Edges, 0-based, in file order.
    pub fn edges(&self) -> &[(usize, usize, i64)] {
        &self.edges
    }

    /// Neighbours of node i with the edge costs.
    #[inline]
    pub fn neighbours(&self, i: usize) -> &[(usize, i64)] {
        &self.adj[self.start[i]..self.start[i + 1]]
    }

    /// H, S and C of a 0/1 vector (not checked).
    pub fn costs(&self, x: &[u8]) -> Costs {
        let mut costs = Costs::default();
        #[allow(clippy::needless_range_loop)]
        for i in 0..self.n() {
            if x[i] == 1 {
                costs.software += self.software[i];
            } else {
                costs.hardware += self.hardware[i];
            }
        }
        costs.communication = self
            .edges
            .iter()
            .filter(|&&(u, v, _)| x[u] != x[v])
            .map(|&(_, _, c)| c)
            .sum();
        costs
    }

    /// The exact objective H(x) of a solution given as 0/1 values, after checking its length,
    /// its values and the constraint S(x) + C(x) <= R.
    pub fn objective(&self, x: &[usize]) -> Result<i64, String> {
        if x.len() != self.n() {
            return Err(format!("has {} entries, expected {}", x.len(), self.n()));
        }
        if let Some(k) = x.iter().position(|&v| v > 1) {
            // Counted from 1, as the file numbers its nodes and permutation errors positions.
            return Err(format!(
                "value {} (node {}) is {}, not 0 (hardware) or 1 (software)",
                k + 1,
                k + 1,
                x[k]
            ));
        }
        let bits: Vec<u8> = x.iter().map(|&v| v as u8).collect();
        let c = self.costs(&bits);
        if c.software + c.communication > self.r {
            return Err(format!(
                "infeasible: S + C = {} + {} = {} exceeds R = {}",
                c.software,
                c.communication,
                c.software + c.communication,
                self.r
            ));
        }
        Ok(c.hardware)
    }

    /// The instance in the file format of this module.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for line in &self.comments {
            let _ = writeln!(text, "# {line}");
        }
        let _ = writeln!(text, "HWSW {} {} {}", self.n(), self.m(), self.r);
        for (s, h) in self.software.iter().zip(&self.hardware) {
            let _ = writeln!(text, "{s} {h}");
        }
        for &(u, v, c) in &self.edges {
            let _ = writeln!(text, "{} {} {c}", u + 1, v + 1);
        }
        text
    }
}

/// The text with every `#` comment blanked (line numbers are kept).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.split('#').next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The file starts (after comments) with the word `HWSW`.
pub fn looks_like_hwsw(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.split_whitespace().next() == Some("HWSW"))
}

pub fn read(path: &Path) -> Result<Instance, InputError> {
    let text = read_to_string(path)?;
    parse(&text, path)
}

/// Parses the format of this module; the instance is named after the file stem.
pub fn parse(text: &str, path: &Path) -> Result<Instance, InputError> {
    let clean = strip_comments(text);
    let mut tokens = Tokens::new(&clean, path);
    let (line, magic) = tokens.next_str("the header `HWSW n m R`")?;
    if magic != "HWSW" {
        return Err(InputError::syntax(
            path,
            line,
            format!("expected the header `HWSW n m R`, found {magic:?}"),
        ));
    }
    let n = tokens.next_usize("the number of nodes n", 1..=MAX_NODES)?;
    let m_line = tokens.line();
    let m = tokens.next_usize("the number of edges m", 0..=MAX_NODES)?;
    if m as u128 > (n as u128) * (n as u128 - 1) / 2 {
        return Err(InputError::syntax(
            path,
            m_line,
            format!("{m} edges cannot fit a simple graph of {n} nodes"),
        ));
    }
    let r_line = tokens.line();
    let r = tokens.next_i64("the constraint R")?;
    if r < 0 {
        return Err(InputError::syntax(
            path,
            r_line,
            format!("R must be >= 0, found {r}"),
        ));
    }
    let needed = 2 * n + 3 * m;
    if tokens.remaining() < needed {
        let last_line = clean
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .last()
            .map_or(1, |(k, _)| k + 1);
        return Err(InputError::syntax(
            path,
            last_line,
            format!(
                "file ends early: {n} nodes and {m} edges need {needed} values after the \
                 header, found {}",
                tokens.remaining()
            ),
        ));
    }
    let mut software = Vec::with_capacity(n);
    let mut hardware = Vec::with_capacity(n);
    for i in 0..n {
        for (what, out) in [("software", &mut software), ("hardware", &mut hardware)] {
            let line = tokens.line();
            let v = tokens.next_i64(&format!("the {what} cost of node {}", i + 1))?;
            if v < 0 {
                return Err(InputError::syntax(
                    path,
                    line,
                    format!("the {what} cost of node {} is negative ({v})", i + 1),
                ));
            }
            out.push(v);
        }
    }
    let mut edges = Vec::with_capacity(m);
    let mut seen = std::collections::HashSet::with_capacity(m);
    for k in 0..m {
        let line = tokens.line();
        let node = |tokens: &mut Tokens| -> Result<usize, InputError> {
            let v = tokens.next_i64(&format!("an end of edge {}", k + 1))?;
            if v < 1 || v as u64 > n as u64 {
                return Err(InputError::syntax(
                    path,
                    line,
                    format!("edge {} names node {v}, outside 1..={n}", k + 1),
                ));
            }
            Ok(v as usize - 1)
        };
        let u = node(&mut tokens)?;
        let v = node(&mut tokens)?;
        let c = tokens.next_i64(&format!("the communication cost of edge {}", k + 1))?;
        if u == v {
            return Err(InputError::syntax(
                path,
                line,
                format!("edge {} is a self-loop on node {}", k + 1, u + 1),
            ));
        }
        if c < 0 {
            return Err(InputError::syntax(
                path,
                line,
                format!("edge {} has a negative cost {c}", k + 1),
            ));
        }
        if !seen.insert((u.min(v), u.max(v))) {
            return Err(InputError::syntax(
                path,
                line,
                format!("edge ({}, {}) appears twice", u + 1, v + 1),
            ));
        }
        edges.push((u, v, c));
    }
    tokens.expect_end(&format!("the {m} edges the header declares"))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hwsw".into());
    let mut inst = Instance::new(name, software, hardware, edges, r)
        .map_err(|message| InputError::invalid(path, message))?;
    inst.comments = text
        .lines()
        .filter_map(|l| l.split_once('#').map(|(_, c)| c.trim().to_string()))
        .collect();
    Ok(inst)
}
