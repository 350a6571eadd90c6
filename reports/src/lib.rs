//! Plots (Pareto fronts, convergence, the paper's figures) and the HTML report of a campaign.
//!
//! Empty for now: it is filled once the results store exists. Nothing in the workspace uses
//! it yet.
