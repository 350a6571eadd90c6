//! The symmetric travelling salesman problem (TSPLIB), with Ant System on candidate lists
//! (Dawson & Stewart's CPU reference).
//!
//! - [`distance`], TSPLIB's integer distance functions;
//! - [`instance`], the model and the exact tour length;
//! - [`mod@parse`], the `.tsp` and `.tour` readers;
//! - [`candidates`], k-nearest-neighbour candidate lists;
//! - [`ant_system`], the CPU Ant System;
//! - [`local_search`], 2-opt on candidate lists with don't-look bits;
//! - [`focused`], focused ACO: bounded changes of a source tour, O(n k) pheromone, 2-opt
//!   and Or-opt around the changed edges;
//! - [`generate`], uniform random EUC_2D instances;
//! - [`mmas`], MAX-MIN Ant System with 2-opt (the CPU ACO with local search);
//! - [`gpu`], the GPU kernels' host side;
//! - [`features`], features and the size x layout class.

pub mod ant_system;
pub mod candidates;
mod curve;
pub mod distance;
pub mod features;
pub mod focused;
pub mod generate;
pub mod gpu;
pub mod instance;
pub mod local_search;
pub mod mmas;
pub mod parse;

pub use ant_system::{ant_system, AntSystem, AsParams, InitialPheromone, DEFAULT_AS_ITERATIONS};
pub use candidates::{CandidateLists, ListRule};
pub use distance::EdgeWeightType;
pub use features::{Class, Features, Layout, SizeBand};
pub use focused::{focused, FocusedParams, SourceRule, DEFAULT_FOCUSED_ITERATIONS};
pub use instance::Instance;
pub use mmas::{mmas, MmasParams, DEFAULT_MMAS_ITERATIONS};
pub use parse::{looks_like_tsplib, parse, parse_tour, read, read_tour};
