//! `--shard K/N`: a deterministic share of a campaign's classes, so several processes (or
//! machines) tune one campaign together and `mats merge` joins their folders.

use serde::Serialize;

/// A deterministic share of a campaign: shard `index` (1-based) of `count` takes the classes
/// whose position in name order is `index - 1` modulo `count`. Every process computes the same
/// classes from the same campaign, so the shards cover each class exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("expected K/N with 1 <= K <= N <= 10000 (e.g. 2/3), found {s:?}");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count || count > 10_000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the class at `position` (in name order) belongs to this shard.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}
