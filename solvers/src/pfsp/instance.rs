//! The instance model: processing times, the exact makespan, features and the size class.

use std::fmt;

/// A permutation flowshop instance: `jobs` jobs pass through `machines` machines in the same
/// order; the objective is the makespan C_max.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub name: String,
    pub jobs: usize,
    pub machines: usize,
    /// The seed of Taillard's generator when the instance came from it (or from a Taillard
    /// file header, which carries it).
    pub time_seed: Option<i64>,
    /// `times[machine * jobs + job]`: machine-major, the layout of Taillard's files and of
    /// the generator's draw order.
    times: Vec<i64>,
    /// The same times job-major (`by_job[job * machines + machine]`): every makespan
    /// evaluation walks one job across all machines, and this keeps that walk contiguous.
    by_job: Vec<i64>,
}

impl Instance {
    /// An instance from machine-major processing times (`times[machine * jobs + job]`).
    ///
    /// Fails when a dimension is zero, the vector does not hold `jobs * machines` values, or
    /// a time is negative.
    pub fn new(
        name: impl Into<String>,
        jobs: usize,
        machines: usize,
        times_machine_major: Vec<i64>,
    ) -> Result<Self, String> {
        if jobs == 0 {
            return Err("the number of jobs must be at least 1".into());
        }
        if machines == 0 {
            return Err("the number of machines must be at least 1".into());
        }
        let cells = jobs
            .checked_mul(machines)
            .ok_or_else(|| format!("{jobs} jobs x {machines} machines overflows"))?;
        if times_machine_major.len() != cells {
            return Err(format!(
                "{jobs} jobs x {machines} machines need {cells} processing times, got {}",
                times_machine_major.len()
            ));
        }
        if let Some(position) = times_machine_major.iter().position(|&t| t < 0) {
            return Err(format!(
                "processing time of job {} on machine {} is negative ({})",
                position % jobs + 1,
                position / jobs + 1,
                times_machine_major[position]
            ));
        }
        // A makespan never exceeds the sum of all times; insertion adds a head and a tail,
        // each at most that sum, which the bound's headroom covers.
        crate::exact::check_worst_case(
            crate::exact::sum_abs(times_machine_major.iter().copied()),
            "(the sum of all processing times)",
        )?;
        let mut by_job = vec![0; cells];
        for machine in 0..machines {
            for job in 0..jobs {
                by_job[job * machines + machine] = times_machine_major[machine * jobs + job];
            }
        }
        Ok(Instance {
            name: name.into(),
            jobs,
            machines,
            time_seed: None,
            times: times_machine_major,
            by_job,
        })
    }

    /// Processing time of `job` on `machine` (both 0-based).
    #[inline]
    pub fn time(&self, machine: usize, job: usize) -> i64 {
        self.times[machine * self.jobs + job]
    }

    /// The processing times of `job` on machines 0..m, contiguous.
    #[inline]
    pub(crate) fn job_times(&self, job: usize) -> &[i64] {
        &self.by_job[job * self.machines..(job + 1) * self.machines]
    }

    /// All times, machine-major (`[machine * jobs + job]`), the layout a GPU kernel uploads.
    pub fn times_machine_major(&self) -> &[i64] {
        &self.times
    }

    /// Total processing time of one job over all machines.
    pub fn job_total(&self, job: usize) -> i64 {
        self.job_times(job).iter().sum()
    }

    /// Makespan of the jobs in `order` processed in that order (0-based job indices).
    ///
    /// `order` is usually a full permutation, but a partial sequence is allowed (its
    /// makespan is that of the sub-schedule); an empty order has makespan 0.
    ///
    /// # Panics
    /// If an entry is not below `jobs`.
    pub fn makespan(&self, order: &[usize]) -> i64 {
        let mut completion = vec![0i64; self.machines];
        for &job in order {
            advance(&mut completion, self.job_times(job));
        }
        completion.last().copied().unwrap_or(0)
    }

    pub fn features(&self) -> Features {
        Features {
            jobs: self.jobs,
            machines: self.machines,
            cells: self.jobs * self.machines,
            total_time: self.times.iter().sum(),
        }
    }

    pub fn class(&self) -> SizeClass {
        SizeClass::of(self.jobs * self.machines)
    }
}

/// Appends one job to a schedule whose last job completes at `completion[k]` on machine k.
#[inline]
pub(crate) fn advance(completion: &mut [i64], times: &[i64]) {
    let mut previous = 0i64;
    for (c, &p) in completion.iter_mut().zip(times) {
        previous = previous.max(*c) + p;
        *c = previous;
    }
}

/// What the tuner and the reports know about an instance without solving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Features {
    pub jobs: usize,
    pub machines: usize,
    /// `jobs * machines`: the size of the completion-time table, which drives the cost of
    /// one makespan evaluation and the classes below.
    pub cells: usize,
    /// Sum of all processing times.
    pub total_time: i64,
}

/// Dataset classes by `jobs * machines`.
///
/// The thresholds are the crossovers of Wu et al. (Table 2): at or below 3000 cells reusing
/// the parent's completion table does not pay on the GPU, from 5000 on it does; the band in
/// between is where the two evaluations are on par.
///
/// - `Small`: cells <= 3000
/// - `Medium`: 3000 < cells <= 5000
/// - `Large`: cells > 5000
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum SizeClass {
    Small,
    Medium,
    Large,
}

impl SizeClass {
    pub const SMALL_MAX_CELLS: usize = 3000;
    pub const MEDIUM_MAX_CELLS: usize = 5000;

    pub fn of(cells: usize) -> Self {
        if cells <= Self::SMALL_MAX_CELLS {
            SizeClass::Small
        } else if cells <= Self::MEDIUM_MAX_CELLS {
            SizeClass::Medium
        } else {
            SizeClass::Large
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Large => "large",
        }
    }
}

impl fmt::Display for SizeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pfsp:size={}", self.as_str())
    }
}
