//! The class evaluator: what a strategy calls. A point's value on a class is the mean over the
//! class's instances of its trials; a trial already in the store is reused (the store is the
//! cache), anything else is measured now. Every trial is written `started` before it runs.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use results::{EvaluationRow, EvaluationStatus, Measurement, Point, TrialStatus};

use super::Tuning;
use crate::campaign::Metric;
use crate::runner::TrialResult;
use crate::search::{Evaluator, Objectives};

/// The baseline's figures on a class: speedups and the quality guard are relative to them.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub time_s: f64,
    pub gap_percent: f64,
    /// Per member instance: the baseline's objective (the quality reference when no best
    /// known value exists).
    pub objectives: Vec<Option<i64>>,
}

/// The evaluator of one search run on one class.
pub struct ClassEvaluator<'t> {
    pub t: &'t mut Tuning,
    pub class: String,
    /// Indices into the campaign's instances.
    pub members: Vec<usize>,
    pub run_id: i64,
    /// Evaluations this run already recorded before an interruption: replayed (from the
    /// store) without being recorded again.
    pub recorded: u32,
    pub seq: u32,
    pub baseline: Option<Baseline>,
    pub metric: Option<Metric>,
    memo: HashMap<Point, Option<Objectives>>,
    /// Best value of `metric` so far, for the progress line.
    pub best: Option<f64>,
    pub best_point: Option<Point>,
    /// Set when the evaluation of a batch was cut short (budget or Ctrl-C).
    pub incomplete: bool,
}

/// The aggregate of a point's trials on a class.
struct Aggregate {
    status: EvaluationStatus,
    /// What strategies see: None for a failed or rejected point.
    objectives: Option<Objectives>,
    /// What was measured, rejected points included (the report draws them).
    measured: Option<Objectives>,
    gap: Option<f64>,
    new_trials: u32,
}

impl Aggregate {
    fn failed(new_trials: u32) -> Aggregate {
        Aggregate {
            status: EvaluationStatus::Failed,
            objectives: None,
            measured: None,
            gap: None,
            new_trials,
        }
    }
}

/// A point's evaluation on a class, as the baseline needs it.
pub struct Evaluated {
    /// None when a trial failed (no guard applies to the baseline).
    pub objectives: Option<Objectives>,
    /// Mean gap over the class's instances.
    pub gap_percent: Option<f64>,
    /// Per member instance, the re-scored objective.
    pub instance_objectives: Vec<Option<i64>>,
}

impl<'t> ClassEvaluator<'t> {
    pub fn new(
        t: &'t mut Tuning,
        class: &str,
        members: Vec<usize>,
        run_id: i64,
        recorded: u32,
        baseline: Option<Baseline>,
        metric: Option<Metric>,
    ) -> ClassEvaluator<'t> {
        ClassEvaluator {
            t,
            class: class.to_string(),
            members,
            run_id,
            recorded,
            seq: 0,
            baseline,
            metric,
            memo: HashMap::new(),
            best: None,
            best_point: None,
            incomplete: false,
        }
    }

    /// Evaluates one point, with its quality per instance (the baseline needs them).
    pub fn evaluate_point(&mut self, point: &Point) -> Result<Evaluated> {
        Ok(self
            .evaluate_all(std::slice::from_ref(point))?
            .pop()
            .expect("one point in, one out"))
    }

    fn evaluate_all(&mut self, points: &[Point]) -> Result<Vec<Evaluated>> {
        // Trials per (point, member): from the store, or measured.
        let mut results: Vec<Vec<Option<TrialResult>>> =
            vec![vec![None; self.members.len()]; points.len()];
        let mut fresh: Vec<Vec<bool>> = vec![vec![false; self.members.len()]; points.len()];
        let mut pending: Vec<(usize, usize, i64, i64)> = Vec::new();
        for (pi, point) in points.iter().enumerate() {
            let point_id = self.t.store.point(self.t.campaign_id, point)?;
            for (mi, &inst) in self.members.iter().enumerate() {
                let instance_id = self.t.instance_ids[inst];
                match self.t.cached(point_id, instance_id)? {
                    Some(row) => {
                        results[pi][mi] = Some(TrialResult {
                            status: row.status,
                            measurement: row.measurement,
                            log: row.log,
                        })
                    }
                    None => pending.push((pi, mi, point_id, instance_id)),
                }
            }
        }
        let measured = self.measure(points, &pending)?;
        for ((pi, mi, _, _), result) in pending.iter().zip(measured) {
            if let Some(r) = result {
                results[*pi][*mi] = Some(r);
                fresh[*pi][*mi] = true;
            }
        }

        let mut evaluated = Vec::with_capacity(points.len());
        for (pi, point) in points.iter().enumerate() {
            if results[pi].iter().any(Option::is_none) {
                // Cut short before all its trials ran: neither a value nor a record.
                self.incomplete = true;
                evaluated.push(Evaluated {
                    objectives: None,
                    gap_percent: None,
                    instance_objectives: Vec::new(),
                });
                continue;
            }
            let trials: Vec<TrialResult> = results[pi].iter().flatten().cloned().collect();
            let new_trials = fresh[pi].iter().filter(|&&f| f).count() as u32;
            let agg = self.aggregate(&trials, new_trials);
            self.record(point, &agg)?;
            if let (Some(metric), Some(o)) = (self.metric, agg.objectives) {
                if let Some(v) = metric.of(&o) {
                    if self.best.is_none_or(|b| v < b) {
                        self.best = Some(v);
                        self.best_point = Some(point.clone());
                    }
                }
            }
            self.memo.insert(point.clone(), agg.objectives);
            evaluated.push(Evaluated {
                objectives: agg.objectives,
                gap_percent: agg.gap,
                instance_objectives: trials.iter().map(|t| t.measurement.objective).collect(),
            });
        }
        if let Some(best) = self.best_point.clone() {
            self.t.speculate_around(&best, &self.members);
        }
        Ok(evaluated)
    }

    /// Measures the pending (point, member) pairs in order; `None` for those not measured
    /// because the budget ran out or the user stopped.
    fn measure(
        &mut self,
        points: &[Point],
        pending: &[(usize, usize, i64, i64)],
    ) -> Result<Vec<Option<TrialResult>>> {
        let mut jobs = Vec::with_capacity(pending.len());
        for &(pi, mi, point_id, instance_id) in pending {
            let realised = self.t.realise(&points[pi]);
            jobs.push(super::TrialJob {
                point_id,
                instance_id,
                instance: self.members[mi],
                realised,
            });
        }
        let label = format!("class {}", self.class);
        self.t.run_trials(&jobs, &label)
    }

    fn aggregate(&self, trials: &[TrialResult], new_trials: u32) -> Aggregate {
        if trials.iter().any(|t| t.status != TrialStatus::Ok) {
            return Aggregate::failed(new_trials);
        }
        let mean = |f: &dyn Fn(&Measurement) -> Option<f64>| -> Option<f64> {
            let values: Vec<f64> = trials.iter().filter_map(|t| f(&t.measurement)).collect();
            (values.len() == trials.len() && !values.is_empty())
                .then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let Some(time_s) = mean(&|m| m.time_s) else {
            return Aggregate::failed(new_trials);
        };
        let objectives = Objectives {
            time_s,
            power_w: mean(&|m| m.power_w),
            energy_j: mean(&|m| m.energy_j),
        };
        let gap = self.quality(trials);
        let rejected = match (&self.baseline, gap) {
            (Some(b), Some(g)) => g > b.gap_percent + self.t.margin_percent + 1e-9,
            _ => false,
        };
        Aggregate {
            status: if rejected {
                EvaluationStatus::Rejected
            } else {
                EvaluationStatus::Ok
            },
            objectives: (!rejected).then_some(objectives),
            measured: Some(objectives),
            gap,
            new_trials,
        }
    }

    /// Mean gap in percent to the best known value, or where none is known to the baseline's
    /// objective on that instance.
    fn quality(&self, trials: &[TrialResult]) -> Option<f64> {
        let mut gaps = Vec::new();
        for (k, t) in trials.iter().enumerate() {
            let objective = t.measurement.objective?;
            let reference = self.t.instances[self.members[k]]
                .record
                .best_known
                .or_else(|| self.baseline.as_ref().and_then(|b| b.objectives[k]))
                .unwrap_or(objective);
            gaps.push(solvers::bks::gap_percent(objective, reference).unwrap_or(0.0));
        }
        Some(gaps.iter().sum::<f64>() / gaps.len().max(1) as f64)
    }

    fn record(&mut self, point: &Point, agg: &Aggregate) -> Result<()> {
        let seq = self.seq;
        self.seq += 1;
        if seq < self.recorded {
            return Ok(());
        }
        let point_id = self.t.store.point(self.t.campaign_id, point)?;
        let objectives = agg.measured;
        self.t.store.record_evaluation(
            &(&EvaluationRow {
                run_id: self.run_id,
                seq,
                point_id,
                point: point.clone(),
                status: agg.status,
                time_s: objectives.map(|o| o.time_s),
                power_w: objectives.and_then(|o| o.power_w),
                energy_j: objectives.and_then(|o| o.energy_j),
                gap_percent: agg.gap,
                new_trials: agg.new_trials,
            })
                .into(),
        )?;
        self.t
            .progress_note(&self.class, self.best, self.baseline.as_ref());
        Ok(())
    }

    /// Evaluations this run has made (for the cost budget).
    fn run_evaluations(&self) -> u64 {
        u64::from(self.seq)
    }
}

impl Evaluator for ClassEvaluator<'_> {
    fn evaluate(&mut self, points: &[Point]) -> Result<Vec<Option<Objectives>>> {
        let mut out = vec![None; points.len()];
        let mut todo = Vec::new();
        for (i, p) in points.iter().enumerate() {
            match self.memo.get(p) {
                Some(v) => out[i] = *v,
                None => todo.push(i),
            }
        }
        // The cost budget counts evaluations: cut the batch where it runs out.
        if let Some(limit) = self.t.budget.per_run_evaluations {
            let left = limit.saturating_sub(self.run_evaluations()) as usize;
            if todo.len() > left {
                todo.truncate(left);
                self.incomplete = true;
            }
        }
        let batch: Vec<Point> = todo.iter().map(|&i| points[i].clone()).collect();
        let evaluated = self.evaluate_all(&batch)?;
        for (e, i) in evaluated.into_iter().zip(todo) {
            out[i] = e.objectives;
        }
        Ok(out)
    }

    fn exhausted(&self) -> bool {
        self.t.budget.exhausted()
            || self
                .t
                .budget
                .per_run_evaluations
                .is_some_and(|limit| self.run_evaluations() >= limit)
    }
}

/// How long a trial took outside its measurement window (overhead), for the summary.
#[derive(Debug, Default, Clone)]
pub struct TrialClock {
    pub wall: Vec<Duration>,
    pub busy: Vec<Duration>,
}

impl TrialClock {
    pub fn push(&mut self, started: Instant, busy_s: f64) {
        self.wall.push(started.elapsed());
        self.busy.push(Duration::from_secs_f64(busy_s));
    }

    /// Median of wall - busy over trials, seconds.
    pub fn median_overhead_s(&self) -> Option<f64> {
        let mut o: Vec<f64> = self
            .wall
            .iter()
            .zip(&self.busy)
            .map(|(w, b)| (w.as_secs_f64() - b.as_secs_f64()).max(0.0))
            .collect();
        if o.is_empty() {
            return None;
        }
        o.sort_by(f64::total_cmp);
        Some(o[o.len() / 2])
    }
}
