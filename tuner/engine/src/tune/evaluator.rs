//! The class evaluator: what a strategy calls. A point's value on a class is the mean over the
//! class's instances of its trials; a trial already in the store is reused (the store is the
//! cache), anything else is measured now. Every trial is written `started` before it runs.

use search::MetricValue as _;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use results::{EvaluationRow, EvaluationStatus, Measurement, Point, TrialStatus};

use super::Tuning;
use crate::campaign::config::RunMode;
use crate::campaign::Metric;
use crate::runner::TrialResult;
use search::{Evaluator, Objectives};

/// The baseline's figures on a class: speedups and the quality guard are relative to them.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub time_s: f64,
    pub gap_percent: f64,
    /// Per member instance: the best objective the baseline reached over the seeds (the
    /// quality reference when no best known value exists).
    pub objectives: Vec<Option<i64>>,
    /// Everything measured, for summaries.
    pub measured: Objectives,
    /// Per (seed, member) pair: the values racing compares, by metric.
    pub pairs: Vec<PairValues>,
}

/// One trial's contribution to a point's objectives under the campaign's run mode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairValues {
    pub time_s: f64,
    pub power_w: Option<f64>,
    pub energy_j: Option<f64>,
    pub gap_percent: Option<f64>,
}

impl PairValues {
    pub fn metric(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Time => Some(self.time_s),
            Metric::Power => self.power_w,
            Metric::Energy => self.energy_j,
            Metric::Gap => self.gap_percent,
        }
    }
}

/// A run's evaluations as a resume finds them: each point's latest row (what decides whether
/// a replayed evaluation is new) and the next free position.
///
/// Matching by point rather than by position: a resumed search need not ask for the same
/// points in the same order (changed strategy options or racing, a crashed trial measured
/// again, another number of GPUs), and skipping "the first N" lost the new ones, so export
/// could not find the point the campaign chose.
#[derive(Debug, Default, Clone)]
pub struct Recorded {
    latest: HashMap<i64, RowKey>,
    next_seq: u32,
}

/// What makes two evaluations of one point the same row: status and values, bit for bit
/// (a replay recomputes them from the same stored trials).
type RowKey = (
    EvaluationStatus,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
);

fn row_key(
    status: EvaluationStatus,
    time_s: Option<f64>,
    power_w: Option<f64>,
    energy_j: Option<f64>,
    gap_percent: Option<f64>,
) -> RowKey {
    let bits = |v: Option<f64>| v.map(f64::to_bits);
    (
        status,
        bits(time_s),
        bits(power_w),
        bits(energy_j),
        bits(gap_percent),
    )
}

impl Recorded {
    /// The rows `run_id` holds.
    pub fn of_run(store: &results::Store, run_id: i64) -> Result<Recorded> {
        let mut recorded = Recorded::default();
        for e in store.evaluations_of_run(run_id)? {
            recorded.next_seq = recorded.next_seq.max(e.seq + 1);
            recorded.latest.insert(
                e.point_id,
                row_key(e.status, e.time_s, e.power_w, e.energy_j, e.gap_percent),
            );
        }
        Ok(recorded)
    }
}

/// The evaluator of one search run on one class.
pub struct ClassEvaluator<'t> {
    pub t: &'t mut Tuning,
    pub class: String,
    /// Indices into the campaign's instances.
    pub members: Vec<usize>,
    pub run_id: i64,
    /// What this run already recorded before an interruption: a replayed evaluation (from
    /// the store) equal to one of these is not recorded again; anything else is appended.
    pub recorded: Recorded,
    pub seq: u32,
    pub baseline: Option<Baseline>,
    pub metric: Option<Metric>,
    memo: HashMap<Point, Option<Objectives>>,
    /// Best value of `metric` so far, for the progress line.
    pub best: Option<f64>,
    pub best_point: Option<Point>,
    /// The pair values of the best point so far: what racing compares a candidate with.
    incumbent: Option<Vec<PairValues>>,
    /// Candidates racing dropped, and trials it saved.
    pub raced: u32,
    pub saved_trials: u32,
    /// Set when the evaluation of a batch was cut short (budget or Ctrl-C).
    pub incomplete: bool,
    /// Whether the quality guard compares gaps with `baseline`'s (the search's seeds). A
    /// verification on other seeds turns it off and compares roles measured side by side.
    pub guard: bool,
    /// Where an instance has neither a best-known value nor a baseline objective, its gaps
    /// are to the best objective over every trial of the evaluation (all its points), not
    /// each trial to itself (0% for every point). The baseline's own evaluation sets it (its
    /// best becomes every later point's reference), and so does a comparison of roles
    /// without a baseline (the holdouts), so that the roles share one reference.
    pub reference_from_trials: bool,
    /// The search optimises a Pareto pair (`metric` is its first): never raced.
    pub pareto: bool,
}

/// The aggregate of a point's trials on a class.
struct Aggregate {
    status: EvaluationStatus,
    /// What strategies see: None for a failed, rejected or raced-out point.
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

/// A point's evaluation on a class, as the baseline and the final comparison need it.
pub struct Evaluated {
    /// None when a trial failed (no guard applies to the baseline).
    pub objectives: Option<Objectives>,
    /// Mean gap over the class's instances and seeds.
    pub gap_percent: Option<f64>,
    /// Per member instance, the best re-scored objective over the seeds.
    pub instance_objectives: Vec<Option<i64>>,
    /// Per (seed, member) pair, in the order of [`ClassEvaluator::pairs`].
    pub pairs: Vec<PairValues>,
}

/// The quality guard: a mean gap above the baseline's by more than the margin (percentage
/// points; the search's guard and the final check's apply the same rule).
pub fn beyond_margin(gap: f64, baseline_gap: f64, margin: f64) -> bool {
    gap > baseline_gap + margin + 1e-9
}

/// The pairs a raced candidate runs before its first comparison: `first_pairs` rounded up to
/// whole rounds of seeds (pairs go seed by seed over the members), so a point is never judged
/// on the instances listed first (a class's small ones, say) alone.
pub fn first_stage(first_pairs: usize, members: usize, pairs: usize) -> usize {
    let m = members.max(1);
    (first_pairs.div_ceil(m) * m).min(pairs)
}

/// Mean and sample standard deviation.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Whether `candidate` is clearly worse than `incumbent` on the same pairs: the mean paired
/// difference is positive and more than `z` standard errors above zero (a one-sided paired
/// test; with identical differences, any positive difference counts).
pub fn clearly_worse(candidate: &[f64], incumbent: &[f64], z: f64) -> bool {
    let d: Vec<f64> = candidate
        .iter()
        .zip(incumbent)
        .map(|(c, i)| c - i)
        .collect();
    if d.is_empty() {
        return false;
    }
    let (mean, sd) = mean_sd(&d);
    mean > 1e-12 && mean > z * sd / (d.len() as f64).sqrt()
}

impl<'t> ClassEvaluator<'t> {
    pub fn new(
        t: &'t mut Tuning,
        class: &str,
        members: Vec<usize>,
        run_id: i64,
        recorded: Recorded,
        baseline: Option<Baseline>,
        metric: Option<Metric>,
    ) -> ClassEvaluator<'t> {
        let incumbent = baseline.as_ref().map(|b| b.pairs.clone());
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
            incumbent,
            raced: 0,
            saved_trials: 0,
            incomplete: false,
            guard: true,
            reference_from_trials: false,
            pareto: false,
        }
    }

    /// The (member index, seed) pairs of an evaluation: seed by seed over the members, so a
    /// race's first stages already see every instance.
    pub fn pairs(&self) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        for &seed in &self.t.seeds {
            for mi in 0..self.members.len() {
                out.push((mi, seed));
            }
        }
        out
    }

    /// Evaluates points on every pair, interleaved pair by pair; never raced (the final
    /// comparison of a class's winner with the baseline and the default).
    pub fn evaluate_interleaved(&mut self, points: &[Point]) -> Result<Vec<Evaluated>> {
        self.evaluate_all(points, false)
    }

    /// Evaluates one point on every pair, with its quality per instance (the baseline needs
    /// them); never raced.
    pub fn evaluate_point(&mut self, point: &Point) -> Result<Evaluated> {
        Ok(self
            .evaluate_all(std::slice::from_ref(point), false)?
            .pop()
            .expect("one point in, one out"))
    }

    fn evaluate_all(&mut self, points: &[Point], race: bool) -> Result<Vec<Evaluated>> {
        let pairs = self.pairs();
        // A Pareto search is not raced: racing compares one metric, and would drop the
        // frugal points with a somewhat worse gap that a power or energy cap looks for.
        let race = race
            && self.t.racing.enabled
            && self.t.mode != RunMode::FixedWork
            && self.metric.is_some()
            && !self.pareto
            && self.incumbent.is_some();
        // Trials per (point, pair): from the store, or measured.
        let mut results: Vec<Vec<Option<TrialResult>>> =
            vec![vec![None; pairs.len()]; points.len()];
        let mut fresh: Vec<Vec<bool>> = vec![vec![false; pairs.len()]; points.len()];
        let mut ids = Vec::with_capacity(points.len());
        for (pi, point) in points.iter().enumerate() {
            let point_id = self.t.store.point(self.t.campaign_id, point)?;
            ids.push(point_id);
            for (k, &(mi, seed)) in pairs.iter().enumerate() {
                let instance_id = self.t.instance_ids[self.members[mi]];
                if let Some(row) = self.t.cached(point_id, instance_id, seed)? {
                    results[pi][k] = Some(TrialResult {
                        status: row.status,
                        measurement: row.measurement,
                        log: row.log,
                    });
                }
            }
        }
        // Stages: all pairs at once, or (racing) the first few, then one seed round at a time.
        let mut alive = vec![true; points.len()];
        let mut raced = vec![false; points.len()];
        let mut end = if race {
            first_stage(self.t.racing.first_pairs, self.members.len(), pairs.len())
        } else {
            pairs.len()
        };
        let mut start = 0;
        loop {
            // Pair by pair, the points in turn: candidates compared on a pair are measured
            // next to each other, so a drift of the machine touches all of them alike.
            let mut pending = Vec::new();
            for (k, &(mi, seed)) in pairs.iter().enumerate().take(end).skip(start) {
                for pi in 0..points.len() {
                    if alive[pi] && results[pi][k].is_none() {
                        let instance_id = self.t.instance_ids[self.members[mi]];
                        pending.push((pi, k, ids[pi], instance_id, mi, seed));
                    }
                }
            }
            let measured = self.measure(points, &pending)?;
            for (&(pi, k, ..), result) in pending.iter().zip(measured) {
                if let Some(r) = result {
                    results[pi][k] = Some(r);
                    fresh[pi][k] = true;
                }
            }
            if end >= pairs.len() {
                break;
            }
            if race {
                let metric = self.metric.expect("racing needs a metric");
                let reference = self.reference_of(&results, &pairs);
                let incumbent = self.incumbent.clone().unwrap_or_default();
                for pi in 0..points.len() {
                    if !alive[pi] || results[pi][..end].iter().any(Option::is_none) {
                        continue;
                    }
                    let trials: Vec<TrialResult> =
                        results[pi][..end].iter().flatten().cloned().collect();
                    if trials.iter().any(|t| t.status != TrialStatus::Ok) {
                        alive[pi] = false; // failed: no point measuring more
                        continue;
                    }
                    let mine: Option<Vec<f64>> = self
                        .pair_values(&trials, &pairs[..end], &reference)
                        .iter()
                        .map(|v| v.metric(metric))
                        .collect();
                    let theirs: Option<Vec<f64>> = incumbent
                        .iter()
                        .take(end)
                        .map(|v| v.metric(metric))
                        .collect();
                    if let (Some(mine), Some(theirs)) = (mine, theirs) {
                        if theirs.len() == end && clearly_worse(&mine, &theirs, self.t.racing.z) {
                            alive[pi] = false;
                            raced[pi] = true;
                            self.raced += 1;
                            self.saved_trials += (pairs.len() - end) as u32;
                        }
                    }
                }
            }
            start = end;
            end = (end + self.members.len().max(1)).min(pairs.len());
        }

        let reference = self.reference_of(&results, &pairs);
        let mut evaluated = Vec::with_capacity(points.len());
        for (pi, point) in points.iter().enumerate() {
            let new_trials = fresh[pi].iter().filter(|&&f| f).count() as u32;
            let done = if raced[pi] {
                results[pi].iter().take_while(|r| r.is_some()).count()
            } else {
                pairs.len()
            };
            let complete = results[pi][..done].iter().all(Option::is_some);
            let any_failed = results[pi]
                .iter()
                .flatten()
                .any(|t| t.status != TrialStatus::Ok);
            if !complete && !any_failed {
                // Cut short before all its trials ran: neither a value nor a record.
                self.incomplete = true;
                evaluated.push(Evaluated {
                    objectives: None,
                    gap_percent: None,
                    instance_objectives: Vec::new(),
                    pairs: Vec::new(),
                });
                continue;
            }
            let trials: Vec<TrialResult> = results[pi][..done].iter().flatten().cloned().collect();
            let values = self.pair_values(&trials, &pairs[..trials.len()], &reference);
            let mut agg = self.aggregate(&trials, &values, new_trials);
            if raced[pi] {
                agg.status = EvaluationStatus::Rejected;
                agg.objectives = None;
            }
            self.record(point, &agg)?;
            if let (Some(metric), Some(o)) = (self.metric, agg.objectives) {
                if let Some(v) = metric.of(&o) {
                    if self.best.is_none_or(|b| v < b) {
                        self.best = Some(v);
                        self.best_point = Some(point.clone());
                        if values.len() == pairs.len() {
                            self.incumbent = Some(values.clone());
                        }
                    }
                }
            }
            self.memo.insert(point.clone(), agg.objectives);
            let mut per_member: Vec<Option<i64>> = vec![None; self.members.len()];
            for (t, &(mi, _)) in trials.iter().zip(&pairs) {
                if let Some(o) = t.measurement.objective {
                    per_member[mi] = Some(per_member[mi].map_or(o, |b: i64| b.min(o)));
                }
            }
            evaluated.push(Evaluated {
                objectives: agg.objectives,
                gap_percent: agg.gap,
                instance_objectives: per_member,
                pairs: values,
            });
        }
        if let Some(best) = self.best_point.clone() {
            self.t.speculate_around(&best, &self.members);
        }
        Ok(evaluated)
    }

    /// Measures the pending (point, pair) trials in order; `None` for those not measured
    /// because the budget ran out or the user stopped.
    fn measure(
        &mut self,
        points: &[Point],
        pending: &[(usize, usize, i64, i64, usize, u64)],
    ) -> Result<Vec<Option<TrialResult>>> {
        let mut jobs = Vec::with_capacity(pending.len());
        for &(pi, _, point_id, instance_id, mi, seed) in pending {
            let realised = self.t.realise(&points[pi]);
            jobs.push(super::TrialJob {
                point_id,
                instance_id,
                instance: self.members[mi],
                seed,
                realised,
            });
        }
        let label = format!("class {}", self.class);
        self.t.run_trials(&jobs, &label)
    }

    /// Per member, the best objective over every trial measured so far (all points) where
    /// [`Self::reference_from_trials`] asks for it, else nothing.
    fn reference_of(
        &self,
        results: &[Vec<Option<TrialResult>>],
        pairs: &[(usize, u64)],
    ) -> Vec<Option<i64>> {
        let mut best: Vec<Option<i64>> = vec![None; self.members.len()];
        if self.reference_from_trials {
            for point in results {
                for (t, &(mi, _)) in point.iter().zip(pairs) {
                    let ok = t.as_ref().filter(|t| t.status == TrialStatus::Ok);
                    if let Some(o) = ok.and_then(|t| t.measurement.objective) {
                        best[mi] = Some(best[mi].map_or(o, |b: i64| b.min(o)));
                    }
                }
            }
        }
        best
    }

    /// What each trial contributes under the run mode (PAR-k for unreached targets);
    /// `reference` is each member's objective to measure gaps against where no value is
    /// known.
    fn pair_values(
        &self,
        trials: &[TrialResult],
        pairs: &[(usize, u64)],
        reference: &[Option<i64>],
    ) -> Vec<PairValues> {
        trials
            .iter()
            .zip(pairs)
            .map(|(t, &(mi, _))| {
                let m = &t.measurement;
                let gap = self.gap_of(m, mi, reference[mi]);
                match self.t.mode {
                    RunMode::FixedWork => PairValues {
                        time_s: m.time_s.unwrap_or(f64::INFINITY),
                        power_w: m.power_w,
                        energy_j: m.energy_j,
                        gap_percent: gap,
                    },
                    RunMode::Budget { .. } => PairValues {
                        time_s: m.run_s.or(m.time_s).unwrap_or(f64::INFINITY),
                        power_w: m.power_w,
                        energy_j: m.energy_j,
                        gap_percent: gap,
                    },
                    RunMode::Target { cap_s, penalty, .. } => {
                        let reached = m.target_s.is_some();
                        let factor = if reached { 1.0 } else { penalty };
                        PairValues {
                            time_s: m.target_s.unwrap_or(penalty * cap_s),
                            power_w: m.power_w,
                            energy_j: m.energy_j.map(|e| e * factor),
                            gap_percent: gap,
                        }
                    }
                }
            })
            .collect()
    }

    /// Gap in percent to the best known value, or where none is known to the baseline's best
    /// objective on that instance, else to `from_trials` ([`Self::reference_of`]).
    fn gap_of(&self, m: &Measurement, mi: usize, from_trials: Option<i64>) -> Option<f64> {
        let objective = m.objective?;
        let reference = self.t.instances[self.members[mi]]
            .record
            .best_known
            .or_else(|| self.baseline.as_ref().and_then(|b| b.objectives[mi]))
            .or(from_trials)
            .unwrap_or(objective);
        // A reference of 0 (a baseline that found 0 where nothing is known) gives no
        // percentage: only 0 itself matches it; anything else is no gap, not a gap of 0.
        solvers::bks::gap_percent(objective, reference).or((objective == reference).then_some(0.0))
    }

    fn aggregate(
        &self,
        trials: &[TrialResult],
        values: &[PairValues],
        new_trials: u32,
    ) -> Aggregate {
        if trials.is_empty() || trials.iter().any(|t| t.status != TrialStatus::Ok) {
            return Aggregate::failed(new_trials);
        }
        let mean = |f: &dyn Fn(&PairValues) -> Option<f64>| -> Option<f64> {
            let v: Vec<f64> = values.iter().filter_map(f).collect();
            (v.len() == values.len() && !v.is_empty()).then(|| mean_sd(&v).0)
        };
        let Some(time_s) = mean(&|v| Some(v.time_s)).filter(|t| t.is_finite()) else {
            return Aggregate::failed(new_trials);
        };
        let gap = mean(&|v| v.gap_percent);
        let objectives = Objectives {
            time_s,
            power_w: mean(&|v| v.power_w),
            energy_j: mean(&|v| v.energy_j),
            gap_percent: gap,
        };
        // The quality guard protects fixed-work objectives from buying speed with worse
        // solutions; quality objectives measure the quality itself.
        let rejected = self.t.mode == RunMode::FixedWork
            && self.guard
            && match (&self.baseline, gap) {
                (Some(b), Some(g)) => beyond_margin(g, b.gap_percent, self.t.margin_percent),
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

    fn record(&mut self, point: &Point, agg: &Aggregate) -> Result<()> {
        self.seq += 1;
        let point_id = self.t.store.point(self.t.campaign_id, point)?;
        let objectives = agg.measured;
        let key = row_key(
            agg.status,
            objectives.map(|o| o.time_s),
            objectives.and_then(|o| o.power_w),
            objectives.and_then(|o| o.energy_j),
            agg.gap,
        );
        if self.recorded.latest.get(&point_id) == Some(&key) {
            return Ok(()); // a replay of what the interrupted run recorded
        }
        let seq = self.recorded.next_seq;
        self.recorded.next_seq += 1;
        self.recorded.latest.insert(point_id, key);
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
        let best = self.metric.zip(self.best);
        self.t
            .progress_note(&self.class, best, self.baseline.as_ref());
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
        let mut todo: Vec<usize> = Vec::new();
        // A point asked twice in one batch is measured once and answered twice.
        let mut repeats: Vec<(usize, usize)> = Vec::new();
        for (i, p) in points.iter().enumerate() {
            if let Some(v) = self.memo.get(p) {
                out[i] = *v;
            } else if let Some(&first) = todo.iter().find(|&&j| points[j] == *p) {
                repeats.push((i, first));
            } else {
                todo.push(i);
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
        let evaluated = self.evaluate_all(&batch, true)?;
        for (e, i) in evaluated.into_iter().zip(todo) {
            out[i] = e.objectives;
        }
        for (i, first) in repeats {
            out[i] = out[first];
        }
        Ok(out)
    }

    /// Enough points that each GPU has a trial: an evaluation is one trial per (instance,
    /// seed) pair, so a class of one instance and one seed on two GPUs takes two points.
    fn parallel_points(&self) -> usize {
        let trials = self.t.seeds.len() * self.members.len();
        self.t.measuring_slots().div_ceil(trials.max(1))
    }

    fn exhausted(&self) -> bool {
        // Asked by a strategy before it goes on: a yes cuts its search short.
        if self.t.budget.exhausted() {
            self.t.budget.mark_cut();
            return true;
        }
        self.t
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

#[cfg(test)]
mod tests {
    use super::{clearly_worse, first_stage, mean_sd};

    /// Racing's first comparison sees every instance of the class (6 instances, 4 first
    /// pairs: it judged points on the first 4 alone).
    #[test]
    fn the_first_race_stage_is_whole_rounds_of_seeds() {
        assert_eq!(first_stage(4, 6, 18), 6);
        assert_eq!(first_stage(4, 2, 10), 4);
        assert_eq!(first_stage(5, 2, 10), 6);
        assert_eq!(first_stage(4, 6, 3), 3);
        assert_eq!(first_stage(4, 0, 0), 0);
    }

    #[test]
    fn racing_drops_only_clearly_worse_candidates() {
        let incumbent = [1.0, 2.0, 0.5, 0.0];
        // Worse on every pair by a steady margin: dropped.
        assert!(clearly_worse(&[1.5, 2.4, 1.0, 0.6], &incumbent, 2.0));
        // Worse on average but noisy: kept.
        assert!(!clearly_worse(&[3.0, 0.5, 1.5, 0.0], &incumbent, 2.0));
        // Equal (ties at the optimum): kept; better: kept.
        assert!(!clearly_worse(&incumbent, &incumbent, 2.0));
        assert!(!clearly_worse(&[0.5, 1.5, 0.0, 0.0], &incumbent, 2.0));
        assert!(!clearly_worse(&[], &[], 2.0));
        let (m, sd) = mean_sd(&[1.0, 3.0]);
        assert!((m - 2.0).abs() < 1e-12 && (sd - 2f64.sqrt()).abs() < 1e-12);
    }
}
