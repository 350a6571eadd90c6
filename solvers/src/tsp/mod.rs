//! The symmetric travelling salesman problem (TSPLIB), with Ant System on candidate lists
//! (Dawson & Stewart's CPU reference).
//!
//! - [`distance`], TSPLIB's integer distance functions;
//! - [`instance`], the model and the exact tour length;
//! - [`mod@parse`], the `.tsp` and `.tour` readers;
//! - [`candidates`], k-nearest-neighbour candidate lists;
//! - [`ant_system`], the CPU Ant System;
//! - [`features`], features and the size x layout class.

pub mod ant_system;
pub mod candidates;
pub mod distance;
pub mod features;
pub mod gpu;
pub mod instance;
pub mod parse;

pub use ant_system::{ant_system, AntSystem, AsParams, InitialPheromone, DEFAULT_AS_ITERATIONS};
pub use candidates::CandidateLists;
pub use distance::EdgeWeightType;
pub use features::{Class, Features, Layout, SizeBand};
pub use instance::Instance;
pub use parse::{looks_like_tsplib, parse, parse_tour, read, read_tour};
