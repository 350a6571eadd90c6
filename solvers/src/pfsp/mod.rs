//! Permutation flowshop scheduling (PFSP), makespan objective.
//!
//! n jobs visit m machines in the same order; a solution is a job permutation and its cost
//! is the completion time of the last job on the last machine (C_max), computed exactly in
//! `i64`.
//!
//! The family is split by concern so that the GPU kernels and the CLI can take what they
//! need without the rest:
//!
//! - [`instance`]: the model, the exact makespan, features and size classes;
//! - [`mod@parse`]: the Taillard, plain and VRF file formats (and writing Taillard's);
//! - [`generator`]: Taillard's 1993 generator, which reproduces his 120 instances;
//! - [`eval`]: heads/tails evaluation of insertions and swaps, shared by the solvers;
//! - [`mod@neh`], [`mod@tabu`], [`ig`]: the CPU reference solvers (NEH, tabu search after Wu et
//!   al., iterated greedy of Ruiz & Stützle);
//! - [`ig_warp`]: the CPU reference of the GPU `ig-warp` walk (same draws and moves);
//! - [`ig_grid`]: the walks of the GPU `ig-grid`, whose best-improvement local search asks a
//!   neighbourhood evaluator (the CPU reference here, the GPU's in [`gpu`]) for every move;
//! - [`beam`]: the bidirectional beam search (after Libralesso et al.) whose best sequences
//!   the GPU iterated greedy's walks start from, the CPU reference of `kernels/pfsp/beam.cu`;
//! - [`relink`]: path relinking between sequences by insertion moves, and the elite pool of
//!   the GPU iterated greedy's restarts;
//! - [`gpu`]: the host side of the CUDA variants in `kernels/pfsp/` (tabu-full, tabu-prefix,
//!   ig-block, ig-warp, ig-grid, and the beam search before their walks).

pub mod beam;
pub mod eval;
pub mod generator;
pub mod gpu;
pub mod ig;
pub mod ig_grid;
pub mod ig_warp;
pub mod instance;
pub mod neh;
pub mod parse;
pub mod relink;
pub mod tabu;

pub use generator::generate;
pub use ig::{iterated_greedy, IgParams, DEFAULT_IG_ITERATIONS};
pub use instance::{Features, Instance, SizeClass};
pub use neh::{neh, neh_until, neh_with_makespan};
pub use parse::{looks_like_pfsp, lower_bound, parse, parse_taillard, read, to_taillard_text};
pub use tabu::{tabu, tabu_trace, TabuMove, TabuParams, DEFAULT_TABU_ITERATIONS};
