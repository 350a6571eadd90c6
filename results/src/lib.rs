//! Trial records of tuning campaigns, their SQLite store, Pareto sets and queries.
//!
//! Empty for now: it is filled with the tuner (campaigns, strategies, the store). Nothing in
//! the workspace uses it yet.
