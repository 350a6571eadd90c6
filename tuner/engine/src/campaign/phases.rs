//! A campaign of several budgets (`[run] budgets_s`) tunes every class once per budget, in
//! increasing order: each budget is a phase with its own production run, its own seeds and
//! its own class names (`CLASS@BUDGETs`, see `results::budget`).
//!
//! A trial's identity in the store is (point, instance, seed, device): the budget is not part
//! of it, so each phase draws its seeds from a range of its own, and a trial at 0.5 s is never
//! reused as one at 5 s.

use anyhow::Result;

use super::config::RunMode;
use super::CampaignFile;

/// How far apart the seed ranges of two budgets lie: beyond the verification's fresh seeds
/// (`seed + 1_000_000 + k`) and any seed count a campaign may ask for.
pub const BUDGET_SEED_STRIDE: u64 = 100_000_000;

/// One budget's tuning of every class.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Position in `budgets_s` (0 for a campaign of one budget).
    pub index: usize,
    /// The budget, when the campaign names several; `None`: the campaign's own run mode.
    pub budget_s: Option<f64>,
    /// Seeds of the search's production runs on one instance.
    pub seeds: Vec<u64>,
    /// The seed the phase's verification derives its fresh seeds from.
    pub base_seed: u64,
}

impl Phase {
    /// The name of `class` in this phase's runs and summary.
    pub fn class_name(&self, class: &str) -> String {
        match self.budget_s {
            Some(b) => results::budget_class(class, b),
            None => class.to_string(),
        }
    }

    /// The production run of this phase, given the campaign's (first budget's) run.
    pub fn mode(&self, campaign: RunMode) -> RunMode {
        match self.budget_s {
            Some(budget_s) => RunMode::Budget { budget_s },
            None => campaign,
        }
    }
}

/// The phases of a campaign: one with the campaign's own run and seeds, or one per budget of
/// `budgets_s` (later ones with `later_seeds` seeds where given).
pub fn phases(file: &CampaignFile) -> Result<Vec<Phase>> {
    let seeds = file.run_seeds()?;
    let budgets = file.budgets()?;
    let seed = file.config.seed;
    if budgets.len() <= 1 {
        return Ok(vec![Phase {
            index: 0,
            budget_s: None,
            seeds,
            base_seed: seed,
        }]);
    }
    let later = file
        .config
        .run
        .later_seeds
        .map_or(seeds.len(), |n| n as usize);
    Ok(budgets
        .iter()
        .enumerate()
        .map(|(index, &b)| {
            let offset = BUDGET_SEED_STRIDE.wrapping_mul(index as u64);
            let count = if index == 0 { seeds.len() } else { later };
            Phase {
                index,
                budget_s: Some(b),
                seeds: (0..count as u64)
                    .map(|k| seed.wrapping_add(offset).wrapping_add(k))
                    .collect(),
                base_seed: seed.wrapping_add(offset),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign(run: &str) -> anyhow::Result<CampaignFile> {
        let text = format!(
            "name = \"c\"\nobjective = \"gap@budget\"\n[run]\n{run}\n[instances]\n\
             paths = [\"x.dat\"]\n[cpu]\nspace = \"s.toml\"\nbaseline = {{ algorithm = \"tabu\" }}\n"
        );
        CampaignFile::parse(std::path::Path::new("c.toml"), text)
    }

    #[test]
    fn each_budget_has_its_own_seeds_names_and_run() {
        let f = campaign("budgets_s = [0.5, 5, 60]\nseeds = 3\nlater_seeds = 2").unwrap();
        assert_eq!(f.run_mode().unwrap(), RunMode::Budget { budget_s: 0.5 });
        let p = phases(&f).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].seeds, [1, 2, 3]);
        assert_eq!(p[1].seeds, [1 + BUDGET_SEED_STRIDE, 2 + BUDGET_SEED_STRIDE]);
        assert_eq!(p[2].seeds.len(), 2);
        assert_eq!(p[2].class_name("small"), "small@60s");
        assert_eq!(
            p[1].mode(RunMode::Budget { budget_s: 0.5 }),
            RunMode::Budget { budget_s: 5.0 }
        );
        // No seed of one budget is a seed of another, verification's fresh seeds included.
        let all: Vec<u64> = p.iter().flat_map(|p| p.seeds.clone()).collect();
        let mut distinct = all.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), all.len());
        assert!(p[1].seeds[0] > 1 + 1_000_000 + 10_000);
    }

    #[test]
    fn one_budget_is_the_plain_campaign_and_bad_lists_name_the_key() {
        let f = campaign("budgets_s = [2]").unwrap();
        let p = phases(&f).unwrap();
        assert_eq!((p.len(), p[0].budget_s), (1, None));
        assert_eq!(p[0].class_name("small"), "small");
        assert_eq!(f.run_mode().unwrap(), RunMode::Budget { budget_s: 2.0 });
        for (run, needle) in [
            ("budgets_s = [5, 0.5]", "increasing"),
            ("budgets_s = [1, 1]", "increasing"),
            ("budgets_s = []", "1 to 8"),
            ("budgets_s = [-1]", "budgets_s"),
            ("budget_s = 1\nbudgets_s = [1, 2]", "not both"),
            ("budget_s = 1\nlater_seeds = 2", "later_seeds"),
        ] {
            let e = format!("{:#}", campaign(run).unwrap_err());
            assert!(
                e.contains(needle) && e.contains("c.toml, line"),
                "{run}: {e}"
            );
        }
    }
}
