//! Campaigns: the TOML file ([`config`]) resolved once into the typed [`plan`] the engine
//! consumes: its instances and classes ([`instances`]), its backend's setup ([`setup`]), its
//! budgets ([`phases`]), a share of its classes ([`shard`]) and what it minimises (an
//! [`search::Objective`]).

pub mod config;
pub mod instances;
pub mod phases;
pub mod plan;
pub mod setup;
pub mod shard;

pub use config::{CampaignConfig, CampaignFile};
pub use plan::{CampaignPlan, Resolve};
pub use search::{Metric, Objective};

/// The metrics an objective reads.
pub fn metrics(objective: Objective) -> Vec<Metric> {
    match objective {
        Objective::Pareto(a, b) => vec![a, b],
        single => single.metric().into_iter().collect(),
    }
}
