//! The measured quantities every part of mats speaks of: the tuner's objectives, the store's
//! evaluations, the report's figures and the bundles' fronts use this one type.

/// One measured quantity of a configuration; lower is better for each.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Seconds per production run.
    Time,
    /// Average watts over a run.
    Power,
    /// Joules per production run.
    Energy,
    /// Mean gap to the best-known value at the campaign's budget, percent.
    Gap,
}

impl Metric {
    pub const ALL: [Metric; 4] = [Metric::Time, Metric::Power, Metric::Energy, Metric::Gap];

    /// Lower-case name as objectives spell it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Power => "power",
            Metric::Energy => "energy",
            Metric::Gap => "gap",
        }
    }

    /// Parses a metric name, also as an objective label starts with it ("gap@budget",
    /// "energy@budget", "time-to-target").
    pub fn parse(text: &str) -> Option<Metric> {
        let t = text.trim();
        let head = t.split(['@', '-']).next().unwrap_or(t);
        Metric::ALL.into_iter().find(|m| m.name() == head)
    }

    /// The first metric of an objective label: its own (`gap@budget`), or the first of a
    /// Pareto pair (`pareto:energy,gap` -> energy), the one its single best is of.
    pub fn first_of(objective: &str) -> Option<Metric> {
        Metric::all_of(objective).first().copied()
    }

    /// The metrics an objective label optimises: one for `time` or `gap@budget`, two for a
    /// Pareto pair (`pareto:time,energy`); none for a label that names no metric.
    pub fn all_of(objective: &str) -> Vec<Metric> {
        let o = objective.trim();
        let list = o.strip_prefix("pareto:").unwrap_or(o);
        list.split(',').filter_map(Metric::parse).collect()
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Metric;

    #[test]
    fn names_round_trip_and_labels_parse() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.name()), Some(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
        }
        assert_eq!(Metric::parse("gap@budget"), Some(Metric::Gap));
        assert_eq!(Metric::parse("energy-to-target"), Some(Metric::Energy));
        assert_eq!(Metric::first_of("pareto:energy,gap"), Some(Metric::Energy));
        assert_eq!(Metric::first_of("gap@budget"), Some(Metric::Gap));
        assert_eq!(Metric::first_of("speed"), None);
        assert_eq!(Metric::all_of("time"), [Metric::Time]);
        assert_eq!(
            Metric::all_of("pareto:time,energy"),
            [Metric::Time, Metric::Energy]
        );
        assert!(Metric::all_of("nonsense").is_empty());
        assert_eq!(Metric::parse("speed"), None);
    }
}
