//! Campaigns: the TOML file ([`config`]), its instances and classes ([`instances`]) and what
//! it minimises (an [`search::Objective`]).

pub mod config;
pub mod instances;

pub use config::{CampaignConfig, CampaignFile};
pub use search::{Metric, Objective};

/// The objective as runs record it: `time`, `power`, `energy` or `pareto:time,energy`.
pub fn objective_label(objective: Objective) -> String {
    objective.to_string()
}

/// The metrics an objective reads.
pub fn metrics(objective: Objective) -> Vec<Metric> {
    match objective {
        Objective::Pareto(a, b) => vec![a, b],
        single => single.metric().into_iter().collect(),
    }
}
