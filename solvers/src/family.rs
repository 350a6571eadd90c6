//! The solver families behind one interface: detect a file's family, load it, describe it,
//! and run a CPU reference solver on it by name.
//!
//! This is what the command line and, later, the tuner call; each family module stays free of
//! knowledge about the others.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::{read_to_string, InputError};
use crate::run::{Outcome, RunOptions};
use crate::{hwsw, pfsp, qap, tsp};

/// A problem family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Qap,
    Pfsp,
    Tsp,
    Hwsw,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Qap, Family::Pfsp, Family::Tsp, Family::Hwsw];

    pub fn name(self) -> &'static str {
        match self {
            Family::Qap => "qap",
            Family::Pfsp => "pfsp",
            Family::Tsp => "tsp",
            Family::Hwsw => "hwsw",
        }
    }

    /// The CPU algorithms of this family, the default first.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Family::Qap => &[Algorithm::QapTabu, Algorithm::QapTwoOpt],
            Family::Pfsp => &[Algorithm::PfspIg, Algorithm::PfspTabu],
            Family::Tsp => &[Algorithm::TspAs, Algorithm::TspMmas, Algorithm::TspFocused],
            Family::Hwsw => &[Algorithm::HwswSts],
        }
    }

    /// Finds an algorithm of this family by its command-line name.
    pub fn algorithm(self, name: &str) -> Result<Algorithm, String> {
        self.algorithms()
            .iter()
            .copied()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                let known: Vec<_> = self.algorithms().iter().map(|a| a.name()).collect();
                format!(
                    "unknown {} algorithm {name:?}; known: {}",
                    self.name(),
                    known.join(", ")
                )
            })
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Family {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Family::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown family {s:?}; known: qap, pfsp, tsp, hwsw"))
    }
}

/// A CPU reference algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    QapTwoOpt,
    QapTabu,
    PfspTabu,
    PfspIg,
    TspAs,
    TspMmas,
    TspFocused,
    HwswSts,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::QapTwoOpt => "2opt",
            Algorithm::QapTabu | Algorithm::PfspTabu => "tabu",
            Algorithm::PfspIg => "ig",
            Algorithm::TspAs => "as",
            Algorithm::TspMmas => "mmas",
            Algorithm::TspFocused => "focused",
            Algorithm::HwswSts => "sts",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Algorithm::QapTwoOpt | Algorithm::QapTabu => Family::Qap,
            Algorithm::PfspTabu | Algorithm::PfspIg => Family::Pfsp,
            Algorithm::TspAs | Algorithm::TspMmas | Algorithm::TspFocused => Family::Tsp,
            Algorithm::HwswSts => Family::Hwsw,
        }
    }

    /// The independent starts (walks) this algorithm runs in parallel where `starts` is not
    /// given; `None` for algorithms without starts (their threads, if any, split one search).
    pub fn default_starts(self) -> Option<usize> {
        match self {
            Algorithm::QapTwoOpt => Some(qap::TwoOptParams::default().starts),
            Algorithm::QapTabu => Some(qap::RotsParams::default().starts),
            Algorithm::PfspIg => Some(pfsp::IgParams::default().starts),
            Algorithm::HwswSts => Some(hwsw::StsParams::default().starts),
            _ => None,
        }
    }

    /// The tuning knobs this algorithm reads from [`AlgorithmParams`].
    pub fn knobs(self) -> &'static [&'static str] {
        match self {
            Algorithm::QapTwoOpt => &["starts"],
            Algorithm::QapTabu => &[
                "starts",
                "restarts",
                "tenure_min",
                "tenure_max",
                "aspiration",
                "perturbation",
                "restart_stall",
            ],
            Algorithm::PfspTabu => &["tenure"],
            Algorithm::HwswSts => &["tenure", "starts"],
            Algorithm::TspAs | Algorithm::TspMmas => {
                &["ants", "alpha", "beta", "rho", "candidates"]
            }
            Algorithm::TspFocused => &[
                "ants",
                "alpha",
                "beta",
                "rho",
                "candidates",
                "ls_neighbours",
                "min_new_edges",
                "source",
                "or_opt",
                "lists",
            ],
            Algorithm::PfspIg => &["starts", "destruction", "temperature"],
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

/// Algorithm parameters given by name; `None` keeps the algorithm's default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AlgorithmParams {
    /// Independent starts (QAP `2opt`, `tabu`; PFSP `ig`; HW/SW `sts`).
    pub starts: Option<usize>,
    /// Tabu tenure in iterations (PFSP `tabu`); tabu list length (HW/SW `sts`).
    pub tenure: Option<usize>,
    /// Jobs removed per destruction (PFSP `ig`).
    pub destruction: Option<usize>,
    /// Temperature factor T (PFSP `ig`).
    pub temperature: Option<f64>,
    /// Ants per iteration (TSP `as`, default n).
    pub ants: Option<usize>,
    /// Pheromone exponent (TSP `as`, default 1).
    pub alpha: Option<f64>,
    /// Heuristic exponent (TSP `as`, default 2).
    pub beta: Option<f64>,
    /// Evaporation rate (TSP `as`, default 0.5).
    pub rho: Option<f64>,
    /// Candidate list length (TSP `as`, default 32).
    pub candidates: Option<usize>,
    /// List entries the local search tries per city (TSP `focused`, default 10).
    pub ls_neighbours: Option<usize>,
    /// New edges per construction (TSP `focused`, default 8).
    pub min_new_edges: Option<usize>,
    /// Source tour rule (TSP `focused`: best or own, default best).
    pub source: Option<tsp::SourceRule>,
    /// Or-opt after 2-opt (TSP `focused`, default on).
    pub or_opt: Option<bool>,
    /// Candidate lists (TSP `focused`: nearest, quadrant or auto, default auto).
    pub lists: Option<tsp::ListRule>,
    /// QAP `tabu`: iterated (restarts, the GPU blocks' settings) or Taillard's single
    /// trajectory (off); unset: iterated where the flow dominance is below 200, Taillard's
    /// settings elsewhere.
    pub restarts: Option<bool>,
    /// QAP `tabu`: the tenure range as factors of n (`tenure_min`, `tenure_max`), the
    /// long-term aspiration as a factor of n^2 (0 = off), the random swaps of a restart as a
    /// factor of n, and the restart stall in rots-block's launches of 10 n iterations (a
    /// restart after `restart_stall` x 10 n iterations without improving; 0 = never): the
    /// GPU's flags and space parameters, with their meaning, over the settings `restarts`
    /// chose.
    pub tenure_range: Option<(f64, f64)>,
    pub aspiration: Option<f64>,
    pub perturbation: Option<f64>,
    pub restart_stall: Option<u32>,
}

impl AlgorithmParams {
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.starts.is_some() {
            given.push("starts");
        }
        if self.tenure.is_some() {
            given.push("tenure");
        }
        if self.destruction.is_some() {
            given.push("destruction");
        }
        if self.temperature.is_some() {
            given.push("temperature");
        }
        for (name, given_value) in [
            ("ants", self.ants.is_some()),
            ("alpha", self.alpha.is_some()),
            ("beta", self.beta.is_some()),
            ("rho", self.rho.is_some()),
            ("candidates", self.candidates.is_some()),
            ("ls_neighbours", self.ls_neighbours.is_some()),
            ("min_new_edges", self.min_new_edges.is_some()),
            ("source", self.source.is_some()),
            ("or_opt", self.or_opt.is_some()),
            ("lists", self.lists.is_some()),
            ("restarts", self.restarts.is_some()),
            ("tenure_min", self.tenure_range.is_some()),
            ("tenure_max", self.tenure_range.is_some()),
            ("aspiration", self.aspiration.is_some()),
            ("perturbation", self.perturbation.is_some()),
            ("restart_stall", self.restart_stall.is_some()),
        ] {
            if given_value {
                given.push(name);
            }
        }
        given
    }

    /// Rejects parameters the algorithm does not read and values out of range, so a typo in
    /// a command line never silently runs the defaults.
    pub fn check(&self, algorithm: Algorithm) -> Result<(), String> {
        for knob in self.given() {
            if !algorithm.knobs().contains(&knob) {
                return Err(format!(
                    "parameter `{knob}` does not apply to {} {}; it takes: {}",
                    algorithm.family(),
                    algorithm,
                    algorithm.knobs().join(", ")
                ));
            }
        }
        self.check_values()
    }

    /// Rejects values out of range, whichever algorithm reads them.
    pub fn check_values(&self) -> Result<(), String> {
        let positive = |name: &str, v: Option<usize>| match v {
            Some(0) => Err(format!("parameter `{name}` must be at least 1")),
            _ => Ok(()),
        };
        positive("starts", self.starts)?;
        positive("tenure", self.tenure)?;
        positive("destruction", self.destruction)?;
        positive("ants", self.ants)?;
        positive("candidates", self.candidates)?;
        positive("ls_neighbours", self.ls_neighbours)?;
        positive("min_new_edges", self.min_new_edges)?;
        for (name, value) in [("alpha", self.alpha), ("beta", self.beta)] {
            if let Some(v) = value {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("parameter `{name}` must be >= 0, found {v}"));
                }
            }
        }
        if let Some(r) = self.rho {
            if !(r > 0.0 && r <= 1.0) {
                return Err(format!("parameter `rho` must be in (0, 1], found {r}"));
            }
        }
        if let Some(t) = self.temperature {
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("parameter `temperature` must be >= 0, found {t}"));
            }
        }
        if let Some((lo, hi)) = self.tenure_range {
            qap::tabu::check_tenure(lo, hi)?;
        }
        if let Some(a) = self.aspiration {
            qap::tabu::check_aspiration(a)?;
        }
        if let Some(f) = self.perturbation {
            qap::tabu::check_perturbation(f)?;
        }
        if self.restarts == Some(false) && self.restart_stall.is_some_and(|s| s > 0) {
            return Err(
                "parameter `restart_stall` restarts the search, which `restarts` = off turns off"
                    .into(),
            );
        }
        Ok(())
    }
}

/// An instance of any family.
#[derive(Debug, Clone)]
pub enum Instance {
    Qap(qap::Instance),
    Pfsp(pfsp::Instance),
    Tsp(tsp::Instance),
    Hwsw(hwsw::Instance),
}

impl Instance {
    /// Whether `algorithm`'s independent starts are how it puts worker threads to work on
    /// this instance: true for the algorithms with starts, except a HW/SW search large enough
    /// to split its own neighbourhood over every thread.
    pub fn starts_use_threads(&self, algorithm: Algorithm) -> bool {
        let splits = match self {
            Instance::Hwsw(i) => hwsw::tabu::splits_the_neighbourhood(i.n()),
            _ => false,
        };
        algorithm.default_starts().is_some() && !splits
    }

    pub fn family(&self) -> Family {
        match self {
            Instance::Qap(_) => Family::Qap,
            Instance::Pfsp(_) => Family::Pfsp,
            Instance::Tsp(_) => Family::Tsp,
            Instance::Hwsw(_) => Family::Hwsw,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Instance::Qap(i) => &i.name,
            Instance::Pfsp(i) => &i.name,
            Instance::Tsp(i) => &i.name,
            Instance::Hwsw(i) => &i.name,
        }
    }

    /// A short size description: `n=20` or `jobs=20,machines=5`.
    pub fn size(&self) -> String {
        match self {
            Instance::Qap(i) => format!("n={}", i.n()),
            Instance::Pfsp(i) => format!("jobs={},machines={}", i.jobs, i.machines),
            Instance::Tsp(i) => format!("n={}", i.n()),
            Instance::Hwsw(i) => format!("nodes={},edges={}", i.n(), i.m()),
        }
    }

    /// The dataset class label the tuner tunes for.
    pub fn class(&self) -> String {
        match self {
            Instance::Qap(i) => i.class().to_string(),
            Instance::Pfsp(i) => i.class().to_string(),
            Instance::Tsp(i) => i.class().to_string(),
            Instance::Hwsw(i) => i.class().to_string(),
        }
    }

    /// The features as JSON-ready data.
    pub fn features(&self) -> FeaturesView {
        match self {
            Instance::Qap(i) => FeaturesView::Qap(i.features()),
            Instance::Pfsp(i) => FeaturesView::Pfsp(i.features()),
            Instance::Tsp(i) => FeaturesView::Tsp(i.features()),
            Instance::Hwsw(i) => FeaturesView::Hwsw(i.features()),
        }
    }

    /// The exact objective of a solution after checking it: a 0-based permutation (QAP,
    /// PFSP, TSP tour), or 0/1 values x_i (HW/SW, 1 = software) that satisfy the constraint.
    pub fn objective(&self, solution: &[usize]) -> Result<i64, SolutionError> {
        match self {
            Instance::Qap(i) => {
                crate::permutation::check(solution, i.n())?;
                Ok(i.cost(solution))
            }
            Instance::Pfsp(i) => {
                crate::permutation::check(solution, i.jobs)?;
                Ok(i.makespan(solution))
            }
            Instance::Tsp(i) => {
                crate::permutation::check(solution, i.n())?;
                Ok(i.tour_length(solution))
            }
            Instance::Hwsw(i) => i.objective(solution).map_err(SolutionError::Invalid),
        }
    }

    /// A solution as users read it: permutations 1-based (as benchmark files write them),
    /// HW/SW vectors as their 0/1 values.
    pub fn solution_for_output(&self, solution: &[usize]) -> Vec<usize> {
        match self {
            Instance::Hwsw(_) => solution.to_vec(),
            _ => crate::permutation::one_based(solution),
        }
    }

    /// Runs a CPU reference algorithm; the algorithm must belong to this family.
    pub fn solve(
        &self,
        algorithm: Algorithm,
        params: &AlgorithmParams,
        options: &RunOptions,
    ) -> Result<Outcome, String> {
        if algorithm.family() != self.family() {
            return Err(format!(
                "algorithm {} {} cannot solve a {} instance",
                algorithm.family(),
                algorithm,
                self.family()
            ));
        }
        params.check(algorithm)?;
        Ok(match (self, algorithm) {
            (Instance::Qap(i), Algorithm::QapTwoOpt) => {
                let mut p = qap::TwoOptParams::default();
                p.starts = params.starts.unwrap_or(p.starts);
                qap::two_opt(i, &p, options)
            }
            (Instance::Qap(i), Algorithm::QapTabu) => {
                // Iterated (the GPU's search) by default where the flow dominance is below 200
                // (uniform instances such as tai*a): at 8 s on one core it ended at 0.72% on
                // tai60a and 0.91% on tai100a where Taillard's settings ended at 1.16% and
                // 1.24%. Taillard's settings at 200 and above (tai*b, tai*c, real-life
                // instances), where the iterated search's restarts lose: 10 s on 16 cores,
                // tai150b 1.53% against 0.34% (2 seeds); 4 s on 2 cores, tai80b 1.17 / 2.17%
                // against 0.06 / 0.003%, tai100b 0.63 / 1.25% against 0.51 / 0.47% (seeds
                // 1-2). The same split as rots-block's crossover default (docs/qap-gpu.md).
                let iterated = params
                    .restarts
                    .unwrap_or_else(|| i.features().dominance < qap::features::DOMINANCE_HIGH);
                let mut p = if iterated {
                    qap::RotsParams::gpu_defaults(i.n())
                } else {
                    qap::RotsParams::default()
                };
                p.starts = params.starts.unwrap_or(p.starts);
                if let Some((lo, hi)) = params.tenure_range {
                    (p.tenure_min, p.tenure_max) = (lo, hi);
                }
                p.aspiration = params.aspiration.unwrap_or(p.aspiration);
                p.perturbation = params.perturbation.unwrap_or(p.perturbation);
                if let Some(launches) = params.restart_stall {
                    p.restart_stall = qap::RotsParams::stall_iterations(launches, i.n());
                }
                qap::robust_tabu(i, &p, options)
            }
            (Instance::Pfsp(i), Algorithm::PfspTabu) => {
                let mut p = pfsp::TabuParams::default();
                p.tenure = params.tenure.unwrap_or(p.tenure);
                pfsp::tabu(i, &p, options)
            }
            (Instance::Pfsp(i), Algorithm::PfspIg) => {
                let mut p = pfsp::IgParams::default();
                p.starts = params.starts.unwrap_or(p.starts);
                p.destruction = params.destruction.unwrap_or(p.destruction);
                p.temperature = params.temperature.unwrap_or(p.temperature);
                pfsp::iterated_greedy(i, &p, options)
            }
            (Instance::Tsp(i), Algorithm::TspAs) => {
                let mut p = tsp::AsParams::default();
                p.ants = params.ants.or(p.ants);
                p.alpha = params.alpha.unwrap_or(p.alpha);
                p.beta = params.beta.unwrap_or(p.beta);
                p.rho = params.rho.unwrap_or(p.rho);
                p.candidates = params.candidates.unwrap_or(p.candidates);
                tsp::ant_system(i, &p, options)?
            }
            (Instance::Tsp(i), Algorithm::TspMmas) => {
                let mut p = tsp::MmasParams::default();
                p.ants = params.ants.unwrap_or(p.ants);
                p.alpha = params.alpha.unwrap_or(p.alpha);
                p.beta = params.beta.unwrap_or(p.beta);
                p.rho = params.rho.unwrap_or(p.rho);
                p.candidates = params.candidates.unwrap_or(p.candidates);
                p.ls_neighbours = p.ls_neighbours.min(p.candidates);
                tsp::mmas(i, &p, options)?
            }
            (Instance::Tsp(i), Algorithm::TspFocused) => {
                let mut p = tsp::FocusedParams::default();
                p.ants = params.ants.unwrap_or(p.ants);
                p.alpha = params.alpha.unwrap_or(p.alpha);
                p.beta = params.beta.unwrap_or(p.beta);
                p.rho = params.rho.unwrap_or(p.rho);
                p.candidates = params.candidates.unwrap_or(p.candidates);
                // A shorter candidate list also shortens the default local search list.
                p.ls_neighbours = params
                    .ls_neighbours
                    .unwrap_or(p.ls_neighbours.min(p.candidates));
                p.min_new_edges = params.min_new_edges.unwrap_or(p.min_new_edges);
                p.source = params.source.unwrap_or(p.source);
                p.or_opt = params.or_opt.unwrap_or(p.or_opt);
                p.lists = params.lists.unwrap_or(p.lists);
                tsp::focused(i, &p, options)?
            }
            (Instance::Hwsw(i), Algorithm::HwswSts) => {
                let mut p = hwsw::StsParams::default();
                p.tabu_length = params.tenure.unwrap_or(p.tabu_length);
                p.starts = params.starts.unwrap_or(p.starts);
                hwsw::sts(i, &p, options)
            }
            _ => unreachable!("family checked above"),
        })
    }
}

/// Features of any family, serialised with the family's own field names.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum FeaturesView {
    Qap(qap::Features),
    Pfsp(pfsp::Features),
    Tsp(tsp::Features),
    Hwsw(hwsw::Features),
}

/// Why a solution is not valid for its instance.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolutionError {
    #[error(transparent)]
    Permutation(#[from] crate::permutation::PermutationError),
    #[error("{0}")]
    Invalid(String),
}

/// Guesses the family of a file from its content (and, failing that, its extension).
pub fn detect(text: &str, path: &Path) -> Result<Family, InputError> {
    if hwsw::looks_like_hwsw(text) {
        return Ok(Family::Hwsw);
    }
    if tsp::looks_like_tsplib(text) {
        return Ok(Family::Tsp);
    }
    if pfsp::looks_like_pfsp(text) {
        return Ok(Family::Pfsp);
    }
    if qap::looks_like_qap(text) {
        return Ok(Family::Qap);
    }
    match path.extension().and_then(|e| e.to_str()) {
        // Let the family's own parser explain what is wrong with the file.
        Some("dat") => Ok(Family::Qap),
        Some("tsp") => Ok(Family::Tsp),
        Some("hwsw") => Ok(Family::Hwsw),
        _ => Err(InputError::invalid(
            path,
            "cannot tell the problem family from the content (QAPLIB: n then 2 n^2 integers; \
             PFSP: Taillard's format or `n m` then the times; TSP: a TSPLIB header and \
             section; HW/SW: a `HWSW n m R` header); pass --family qap|pfsp|tsp|hwsw",
        )),
    }
}

/// Loads an instance; `index` picks one instance of a multi-instance (Taillard) file.
pub fn load(
    path: &Path,
    family: Option<Family>,
    index: Option<usize>,
) -> Result<Instance, InputError> {
    let text = read_to_string(path)?;
    let family = match family {
        Some(f) => f,
        None => detect(&text, path)?,
    };
    match family {
        Family::Qap => {
            if index.is_some_and(|k| k != 1) {
                return Err(InputError::invalid(
                    path,
                    "a QAPLIB file holds one instance; --index does not apply",
                ));
            }
            qap::parse(&text, path).map(Instance::Qap)
        }
        Family::Pfsp => pfsp::parse(&text, path, index).map(Instance::Pfsp),
        Family::Tsp | Family::Hwsw => {
            if index.is_some_and(|k| k != 1) {
                return Err(InputError::invalid(
                    path,
                    format!("a {family} file holds one instance; --index does not apply"),
                ));
            }
            if family == Family::Tsp {
                tsp::parse(&text, path).map(Instance::Tsp)
            } else {
                hwsw::parse(&text, path).map(Instance::Hwsw)
            }
        }
    }
}
