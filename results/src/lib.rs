//! Trial records of tuning campaigns, their SQLite store, Pareto sets and exports.
//!
//! - `point`, `record`: plain data shared by the tuner (writer) and the reports (reader).
//! - `store`: the SQLite file of a campaign folder; every write is committed before its method
//!   returns, so a killed tuner loses nothing it was told was written.
//! - `pareto`: non-dominated sets (minimisation) for the reports and the Pareto search.
//! - `export`: CSV and JSON dumps of a store (`docs/results.md`).
//! - `merge` (inside `store`): shard stores of one campaign joined into one.
//! - `lock`: one writer per campaign folder (an advisory lock a crash cannot leave behind).

pub mod atomic;
pub mod budget;
pub mod error;
pub mod export;
pub mod lock;
pub mod metric;
pub mod pareto;
pub mod point;
pub mod record;
pub mod settings;
pub mod store;
pub mod summary;

pub use atomic::{write_atomically, write_json_atomically};
pub use budget::{budget_class, split_budget_class};
pub use error::StoreError;
pub use export::{write_csv, write_json, write_trials_json, ExportError, StoreDump};
pub use lock::{FolderLock, LockError};
pub use metric::Metric;
pub use pareto::{non_dominated, pareto_front};
pub use point::{Point, Value};
pub use record::{
    CampaignRow, Comparison, EvaluationRow, EvaluationStatus, ExportRow, InstanceRecord,
    InstanceRow, MeanSd, Measurement, NewEvaluation, RunRow, TrialRow, TrialStatus,
};
pub use settings::{CampaignSettings, Parameter, RunMode};
pub use store::{MergeCounts, Store};
pub use summary::{ClassSummary, FrontPoint, TuneSummary};
