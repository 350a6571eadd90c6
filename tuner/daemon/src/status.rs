//! What `status` reports about a campaign's progress: written by the reader of its store
//! (`progress.rs`), kept in the queue when it ends (`queue.rs`), sent in replies
//! (`protocol::reply`). Data only, so that all three can share it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Finished trials (any outcome) in the campaign's store.
    pub trials_done: i64,
    /// Unix seconds of the first trial's start, if any.
    pub first_trial_at: Option<f64>,
    /// The latest search's best evaluation: its class, objective and value.
    pub best: Option<Best>,
    /// Seconds left by the trial or wall-time budget at the pace so far (None when the
    /// campaign has neither or has not started).
    pub eta_s: Option<f64>,
    /// `eta_s` is only what is left of the wall-time budget (no trial budget gives a pace):
    /// the campaign may well end sooner, so it is shown as "at most".
    #[serde(default)]
    pub eta_is_bound: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub class: String,
    pub objective: String,
    pub value: f64,
}
