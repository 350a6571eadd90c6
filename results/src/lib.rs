//! Trial records of tuning campaigns, their SQLite store, Pareto sets and queries.

pub mod point;
pub mod record;

pub use point::{Point, Value};
pub use record::{
    CampaignRow, EvaluationRow, EvaluationStatus, ExportRow, InstanceRecord, Measurement, RunRow,
    TrialRow, TrialStatus,
};
