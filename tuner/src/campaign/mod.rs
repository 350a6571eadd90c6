//! Campaigns: the TOML file ([`config`]), its instances and classes ([`instances`]) and what
//! it minimises ([`objective`]).

pub mod config;
pub mod instances;
pub mod objective;

pub use config::{CampaignConfig, CampaignFile};
pub use objective::{Metric, Objective};
