//! Problem families of mats.
//!
//! Each family module owns its instance model (parsers, generator), its exact objective in
//! `i64`, its features and dataset class, and its CPU reference solvers. The CPU solvers are
//! the oracles for the GPU kernels and the baselines of every speed-up figure, so they are
//! deterministic for a given seed and thread count does not change their answer.

pub mod bks;
pub mod error;
pub mod exact;
pub mod family;
pub mod fnv;
pub mod gpu;
pub mod hwsw;
pub mod limits;
pub mod memory;
pub mod permutation;
pub mod pfsp;
pub mod qap;
pub mod run;
pub mod tokens;
pub mod tsp;

pub use error::InputError;
pub use run::{Budget, Outcome, RunOptions};
