//! Campaigns: the TOML file ([`config`]), its instances and classes ([`instances`]) and what
//! it minimises (an [`search::Objective`]).

pub mod config;
pub mod instances;

pub use config::{CampaignConfig, CampaignFile};
pub use search::{Metric, Objective};

/// The metrics an objective reads.
pub fn metrics(objective: Objective) -> Vec<Metric> {
    match objective {
        Objective::Pareto(a, b) => vec![a, b],
        single => single.metric().into_iter().collect(),
    }
}
