//! Fast neighbour evaluation from heads and tails of the completion-time table.
//!
//! Both NEH/IG insertion and the tabu swap move change only part of a sequence; the jobs
//! before the change keep their completion times (the heads `e`) and the jobs after it keep
//! their times-to-the-end (the tails `q`). Taillard (1990) uses this to evaluate all n+1
//! insertion positions of a job in O(n m) instead of O(n^2 m); the same heads and tails let
//! a swap of positions i < j be evaluated in O((j - i + 1) m) instead of O(n m). The swap
//! variant is the prefix reuse of Wu et al. (heads), extended with tails.
//!
//! Tables are position-major with one row per position: `e[i * m + k]`.

use super::instance::{advance, Instance};

/// Reusable buffers for best-insertion queries, so the hot loops do not allocate.
#[derive(Debug, Clone, Default)]
pub struct Insertion {
    heads: Vec<i64>,
    tails: Vec<i64>,
    completion: Vec<i64>,
    values: Vec<i64>,
}

impl Insertion {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makespan of `sequence` with `job` inserted at each position 0..=len, written into
    /// `out` (cleared first). Taillard's acceleration: O(len * m).
    pub fn evaluate_all(
        &mut self,
        inst: &Instance,
        sequence: &[usize],
        job: usize,
        out: &mut Vec<i64>,
    ) {
        let m = inst.machines;
        let len = sequence.len();
        self.heads.clear();
        self.heads.resize(len * m, 0);
        self.tails.clear();
        // One extra row of zeros: the tail after the last position.
        self.tails.resize((len + 1) * m, 0);
        self.completion.clear();
        self.completion.resize(m, 0);
        for (i, &j) in sequence.iter().enumerate() {
            advance(&mut self.completion, inst.job_times(j));
            self.heads[i * m..(i + 1) * m].copy_from_slice(&self.completion);
        }
        for i in (0..len).rev() {
            let times = inst.job_times(sequence[i]);
            let mut below = 0i64; // tail of the same position on machine k + 1
            for k in (0..m).rev() {
                let after = self.tails[(i + 1) * m + k];
                below = below.max(after) + times[k];
                self.tails[i * m + k] = below;
            }
        }

        out.clear();
        let times = inst.job_times(job);
        for position in 0..=len {
            let before: &[i64] = if position == 0 {
                &self.tails[len * m..] // the zero row: nothing precedes position 0
            } else {
                &self.heads[(position - 1) * m..position * m]
            };
            let after = &self.tails[position * m..(position + 1) * m];
            let mut previous = 0i64;
            let mut best = 0i64;
            for ((&e, &q), &p) in before.iter().zip(after).zip(times) {
                previous = previous.max(e) + p;
                best = best.max(previous + q);
            }
            out.push(best);
        }
    }

    /// The first position with the smallest makespan for inserting `job` into `sequence`,
    /// and that makespan (ties to the first position, as in NEH).
    pub fn best(&mut self, inst: &Instance, sequence: &[usize], job: usize) -> (usize, i64) {
        self.best_except(inst, sequence, job, None)
    }

    /// [`Insertion::best`] with position `skip` left out (ig-grid puts a job back anywhere but
    /// where it was); `(0, i64::MAX)` where no position is left.
    pub fn best_except(
        &mut self,
        inst: &Instance,
        sequence: &[usize],
        job: usize,
        skip: Option<usize>,
    ) -> (usize, i64) {
        let mut values = std::mem::take(&mut self.values);
        self.evaluate_all(inst, sequence, job, &mut values);
        let mut best = (0, i64::MAX);
        for (position, &value) in values.iter().enumerate() {
            if value < best.1 && Some(position) != skip {
                best = (position, value);
            }
        }
        self.values = values;
        best
    }
}

/// Heads and tails of one full sequence, for evaluating swap moves against it.
#[derive(Debug, Clone)]
pub struct SwapEvaluator {
    m: usize,
    /// `heads[i * m + k]`: completion time of position i on machine k.
    heads: Vec<i64>,
    /// `tails[i * m + k]`: from the start of position i on machine k to the end of the
    /// schedule; row n is zero.
    tails: Vec<i64>,
}

impl SwapEvaluator {
    pub fn new(inst: &Instance, sequence: &[usize]) -> Self {
        let m = inst.machines;
        let n = sequence.len();
        let mut heads = vec![0i64; n * m];
        let mut tails = vec![0i64; (n + 1) * m];
        let mut completion = vec![0i64; m];
        for (i, &j) in sequence.iter().enumerate() {
            advance(&mut completion, inst.job_times(j));
            heads[i * m..(i + 1) * m].copy_from_slice(&completion);
        }
        for i in (0..n).rev() {
            let times = inst.job_times(sequence[i]);
            let mut below = 0i64;
            for k in (0..m).rev() {
                below = below.max(tails[(i + 1) * m + k]) + times[k];
                tails[i * m + k] = below;
            }
        }
        SwapEvaluator { m, heads, tails }
    }

    /// Makespan of the sequence itself.
    pub fn makespan(&self) -> i64 {
        // Row 0 of the tails holds the whole schedule's length on machine 0.
        self.tails.first().copied().unwrap_or(0)
    }

    /// Makespan after swapping positions `i < j` of `sequence` (the sequence this evaluator
    /// was built from). `scratch` must hold at least m values.
    pub fn swap(
        &self,
        inst: &Instance,
        sequence: &[usize],
        i: usize,
        j: usize,
        scratch: &mut [i64],
    ) -> i64 {
        debug_assert!(i < j && j < sequence.len());
        let m = self.m;
        let completion = &mut scratch[..m];
        if i == 0 {
            completion.fill(0);
        } else {
            completion.copy_from_slice(&self.heads[(i - 1) * m..i * m]);
        }
        advance(completion, inst.job_times(sequence[j]));
        for &job in &sequence[i + 1..j] {
            advance(completion, inst.job_times(job));
        }
        advance(completion, inst.job_times(sequence[i]));
        let tail = &self.tails[(j + 1) * m..(j + 2) * m];
        completion
            .iter()
            .zip(tail)
            .map(|(c, q)| c + q)
            .max()
            .unwrap_or(0)
    }
}
