//! The quadratic assignment problem (QAPLIB).
//!
//! Minimise `sum_ij a[i][j] * b[p(i)][p(j)]` over permutations p, in exact `i64` arithmetic.

pub mod delta;
pub mod features;
pub mod generate;
pub mod gpu;
mod instance;
pub mod solution;
pub mod tabu;
pub mod two_opt;

pub use features::{Class, Features, Level};
pub use generate::{generate, to_dat_text};
pub use instance::{looks_like_qap, parse, read, Instance, MAX_N};
pub use solution::{parse_solution, read_solution, Convention, RawSolution, Solution};
pub use tabu::{robust_tabu, RotsParams, ROTS_LAUNCH_ITERATIONS, ROTS_RESTART_STALL};
pub use two_opt::{two_opt, TwoOptParams};
