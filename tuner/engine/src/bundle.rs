//! Tuned bundles: what `mats export` writes (`index.json`, one `manifest.json` per bundle)
//! and `mats solve --tuned` reads, and the choice of a class for an instance, in one place.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use results::Point;
use serde::{Deserialize, Serialize};

/// Beyond this normalised feature distance (see [`nearest_class`]) an instance is too unlike
/// every tuned class, and `solve --tuned` runs the family's default instead.
pub const DEFAULT_MAX_CLASS_DISTANCE: f64 = 0.25;

/// `index.json` of an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Index {
    pub campaign: String,
    pub family: String,
    pub backend: String,
    pub device: String,
    /// GPU exports: the compute capability the kernels were built for (e.g. 90).
    pub arch: Option<u32>,
    pub driver: Option<String>,
    pub nvrtc: Option<String>,
    pub classes: BTreeMap<String, ClassEntry>,
    /// What a production run was (the first budget's where there are several); absent in
    /// exports written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<results::RunMode>,
    /// The preference the campaign's own objective answers (`energy` for `energy@budget`,
    /// `power` for a fixed-work power campaign): its verdict and holdout note are on that
    /// bundle, which `--prefer tuned` runs. Absent in exports written before it was recorded
    /// (then `quality`, or `time` in fixed work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassEntry {
    /// Bundle folder per preference ("quality" in gap and target campaigns, "time", "energy",
    /// "power"); power and energy only where they were measured.
    pub bundles: BTreeMap<String, String>,
    /// The class's front: the campaign's front re-measured on fresh seeds where it made one,
    /// else the points non-dominated in gap, time, energy and power together, the bundles'
    /// own among them (what a cap in `solve --tuned` chooses from).
    pub pareto: Vec<Measured>,
    /// The range of each numeric feature over the class's instances (nested features
    /// flattened to `a.density`), for choosing the nearest class of an untuned instance.
    /// Absent in exports written before it was recorded.
    #[serde(default)]
    pub features: BTreeMap<String, FeatureRange>,
    /// A campaign of several budgets: the bundles and the front per budget, in increasing
    /// order (`bundles` and `pareto` above are then the first budget's, for older readers).
    /// Empty for a campaign of one budget: the class's `bundles` and `pareto` are its only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<BudgetEntry>,
    /// The instances the campaign put in this class (tuned and held out), by name and file
    /// content: with a class table the class is the campaign's word, not the features', and
    /// `solve --tuned` on one of these files runs this class's bundle. Empty in exports
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Member>,
}

/// An instance of a class, as the campaign measured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// [`crate::tune::settings::file_sha`] of its file.
    pub sha256: String,
}

/// The class that lists the instance `name` whose file has the content hash `sha256`
/// (renamed or edited copies are not members: their features decide).
pub fn member_class<'a>(index: &'a Index, name: &str, sha256: &str) -> Option<&'a str> {
    index
        .classes
        .iter()
        .find(|(_, entry)| {
            entry
                .members
                .iter()
                .any(|m| m.name == name && m.sha256 == sha256)
        })
        .map(|(class, _)| class.as_str())
}

/// A class's bundles and front at one budget of a campaign of several.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BudgetEntry {
    pub budget_s: f64,
    pub bundles: BTreeMap<String, String>,
    pub pareto: Vec<Measured>,
}

/// The smallest and largest value of one feature over a class's instances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FeatureRange {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub point: Point,
    pub time_s: f64,
    pub power_w: Option<f64>,
    pub energy_j: Option<f64>,
    pub gap_percent: Option<f64>,
    /// The bundle folder that runs this point (front points; absent in older exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// The front re-measure's highest per-instance mean power and energy, which a cap is
    /// compared with where present (absent in older exports: the mean is used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_energy_j: Option<f64>,
}

/// `manifest.json` of one bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub point: Point,
    pub flags: Vec<String>,
    pub values: BTreeMap<String, results::Value>,
    pub backend: String,
    pub device: String,
    pub arch: Option<u32>,
    pub driver: Option<String>,
    pub nvrtc: Option<String>,
    /// Classes this bundle serves, with what was measured there.
    pub measured: BTreeMap<String, Measured>,
    /// GPU: kernel per problem size.
    pub kernels: Vec<KernelFile>,
    /// What the campaign tuned for: its objective and what a production run was (a budget,
    /// a target with its cap, or fixed work). `solve --tuned` runs at that budget.
    #[serde(default)]
    pub objective: Option<String>,
    #[serde(default)]
    pub run: Option<results::RunMode>,
    /// Why this point was chosen over the search's best, if it was (the default or the
    /// baseline won the final re-measure).
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelFile {
    /// The first instance it was built for (instances of one size and shape share a kernel).
    pub instance: String,
    pub source: String,
    pub source_sha256: String,
    pub options: Vec<String>,
    /// The kernel cache key (source, headers, options, NVRTC version).
    pub cache_key: String,
}

impl Index {
    /// Reads `DIR/index.json`.
    pub fn read(dir: &Path) -> Result<Index> {
        read_json(
            &dir.join("index.json"),
            dir,
            "an export's index.json",
            solvers::error::caps::INDEX,
        )
    }

    /// Every bundle folder the index names: the classes' bundles per preference and budget,
    /// and their fronts' points.
    pub fn bundle_folders(&self) -> std::collections::BTreeSet<String> {
        let mut folders = std::collections::BTreeSet::new();
        for entry in self.classes.values() {
            let budgets = entry.budgets.iter().map(|b| (&b.bundles, &b.pareto));
            for (bundles, pareto) in std::iter::once((&entry.bundles, &entry.pareto)).chain(budgets)
            {
                folders.extend(bundles.values().cloned());
                folders.extend(pareto.iter().filter_map(|m| m.bundle.clone()));
            }
        }
        folders
    }
}

impl Manifest {
    /// Reads a bundle folder's `manifest.json`; `dir` is the export it belongs to.
    pub fn read(folder: &Path, dir: &Path) -> Result<Manifest> {
        read_json(
            &folder.join("manifest.json"),
            dir,
            "a bundle's manifest.json",
            solvers::error::caps::MANIFEST,
        )
    }

    /// The wall-clock limit of one run the bundle was tuned for, range-checked as the
    /// campaign's was (a hand-edited `budget_s` of -1 or 1e308 used to panic in the duration
    /// conversion of `solve --tuned`).
    pub fn tuned_limit(&self) -> Result<Option<std::time::Duration>, String> {
        let key = match self.run {
            Some(results::RunMode::Target { .. }) => "run.cap_s",
            _ => "run.budget_s",
        };
        self.run
            .and_then(|r| r.limit_s())
            .map(|s| solvers::limits::seconds(s).map_err(|e| format!("`{key}`: {e}")))
            .transpose()
    }

    /// The bundle's point as the runners read it.
    pub fn realised(&self) -> crate::runner::Realised {
        crate::runner::Realised {
            flags: self.flags.clone(),
            defines: Vec::new(),
            values: self.values.clone(),
        }
    }

    /// The GPU configuration of a GPU bundle of `family`.
    pub fn gpu_config(&self, family: solvers::family::Family) -> Result<solvers::gpu::GpuConfig> {
        crate::runner::gpu::config(family, &self.realised()).map_err(anyhow::Error::msg)
    }
}

// Capped per kind: a /dev/zero index or manifest used to be read for 20 GB.
fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    dir: &Path,
    kind: &str,
    cap: u64,
) -> Result<T> {
    let text = solvers::error::read_kind(path, kind, cap).with_context(|| {
        format!(
            "cannot read {} (is {} a folder written by `mats export`?)",
            path.display(),
            dir.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("{} is not {kind}", path.display()))
}

/// Numeric leaves of a features value, nested objects joined with `.` (`a.density`).
pub fn flatten_features(features: &serde_json::Value) -> BTreeMap<String, f64> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, f64>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            serde_json::Value::Number(n) => {
                if let Some(x) = n.as_f64().filter(|x| x.is_finite()) {
                    out.insert(prefix.to_string(), x);
                }
            }
            serde_json::Value::Bool(b) => {
                out.insert(prefix.to_string(), f64::from(u8::from(*b)));
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    walk("", features, &mut out);
    out
}

/// The ranges of each feature over a set of instances' features.
pub fn feature_ranges<'a>(
    features: impl IntoIterator<Item = &'a serde_json::Value>,
) -> BTreeMap<String, FeatureRange> {
    let mut ranges: BTreeMap<String, FeatureRange> = BTreeMap::new();
    for f in features {
        for (k, x) in flatten_features(f) {
            ranges
                .entry(k)
                .and_modify(|r| {
                    r.min = r.min.min(x);
                    r.max = r.max.max(x);
                })
                .or_insert(FeatureRange { min: x, max: x });
        }
    }
    ranges
}

/// The class chosen for an instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassChoice {
    pub class: String,
    /// 0 inside the class's feature ranges (or the same class label); else how far outside,
    /// as a root-mean-square over features of the distance to the class's range, each in
    /// units of that feature's span over all tuned classes.
    pub distance: f64,
    /// Whether the instance's own class label is a tuned class.
    pub exact: bool,
}

/// The unit a feature's distance is counted in: its span over the tuned classes, but at least
/// a quarter of its magnitude. Without that floor one class of near-identical instances (all
/// Taillard tai*a have a flow dominance of 60-62) would put another instance of the same kind
/// (tai50a at 60.5 beside a range 61.40-61.62) many units away.
fn feature_unit(lo: f64, hi: f64) -> f64 {
    let unit = (hi - lo).max(MAGNITUDE_SHARE * lo.abs().max(hi.abs()));
    if unit > 0.0 {
        unit
    } else {
        1.0
    }
}

/// See [`feature_unit`].
const MAGNITUDE_SHARE: f64 = 0.25;

/// The tuned class nearest an instance: its own class when tuned, else the class whose
/// feature ranges are nearest. `None` when the index has no classes.
pub fn nearest_class(
    index: &Index,
    class: &str,
    features: &serde_json::Value,
) -> Option<ClassChoice> {
    let measure = Distances::new(index, features);
    if let Some(entry) = index.classes.get(class) {
        let d = measure.to(entry);
        // The instance's own label: the class is its own even without recorded ranges.
        return Some(ClassChoice {
            class: class.to_string(),
            distance: if d.is_finite() { d } else { 0.0 },
            exact: true,
        });
    }
    index
        .classes
        .iter()
        .map(|(name, entry)| (name, measure.to(entry)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, d)| ClassChoice {
            class: name.clone(),
            distance: d,
            exact: false,
        })
}

/// The distance of an instance (`features`) to the tuned class `name` as [`nearest_class`]
/// measures any class that is not the instance's own label: infinite where the export holds
/// no feature ranges for it; `None` where the index has no such class.
pub fn distance_to(index: &Index, name: &str, features: &serde_json::Value) -> Option<f64> {
    let entry = index.classes.get(name)?;
    Some(Distances::new(index, features).to(entry))
}

/// An instance's features, and each feature's span over every tuned class: distances are in
/// units of it, so a size in the hundreds and a density in [0, 1] weigh alike.
struct Distances<'a> {
    own: BTreeMap<String, f64>,
    span: BTreeMap<&'a str, (f64, f64)>,
}

impl<'a> Distances<'a> {
    fn new(index: &'a Index, features: &serde_json::Value) -> Distances<'a> {
        let mut span: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
        for entry in index.classes.values() {
            for (k, r) in &entry.features {
                let s = span.entry(k.as_str()).or_insert((r.min, r.max));
                s.0 = s.0.min(r.min);
                s.1 = s.1.max(r.max);
            }
        }
        Distances {
            own: flatten_features(features),
            span,
        }
    }

    /// Root-mean-square over the features of how far outside the class's range the
    /// instance lies; infinite where no feature can be compared.
    fn to(&self, entry: &ClassEntry) -> f64 {
        let mut sum = 0.0;
        let mut count = 0usize;
        for (k, r) in &entry.features {
            let Some(&x) = self.own.get(k) else { continue };
            let (lo, hi) = self.span[k.as_str()];
            let width = feature_unit(lo, hi);
            // Within a few ulps of the range is inside: an index written before floats
            // round-tripped exactly put a class's own instances 1e-16 outside it.
            let slack = 1e-14 * x.abs().max(1.0);
            let outside = ((r.min - x).max(x - r.max) - slack).max(0.0) / width;
            sum += outside * outside;
            count += 1;
        }
        if count == 0 {
            f64::INFINITY
        } else {
            (sum / count as f64).sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(ranges: &[(&str, f64, f64)]) -> ClassEntry {
        ClassEntry {
            bundles: BTreeMap::new(),
            pareto: Vec::new(),
            features: ranges
                .iter()
                .map(|&(k, min, max)| (k.to_string(), FeatureRange { min, max }))
                .collect(),
            budgets: Vec::new(),
            members: Vec::new(),
        }
    }

    fn index(classes: Vec<(&str, ClassEntry)>) -> Index {
        Index {
            campaign: "c".into(),
            family: "qap".into(),
            backend: "cpu".into(),
            device: "cpu".into(),
            arch: None,
            driver: None,
            nvrtc: None,
            classes: classes
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            run: None,
            prefer: None,
        }
    }

    #[test]
    fn features_flatten_and_ranges_cover_every_instance() {
        let a = json!({"n": 20, "a": {"density": 0.5, "zero": true}, "name": "x"});
        let b = json!({"n": 40, "a": {"density": 0.25, "zero": false}});
        assert_eq!(
            flatten_features(&a).keys().cloned().collect::<Vec<_>>(),
            ["a.density", "a.zero", "n"]
        );
        let r = feature_ranges([&a, &b]);
        assert_eq!(
            r["n"],
            FeatureRange {
                min: 20.0,
                max: 40.0
            }
        );
        assert_eq!(
            r["a.density"],
            FeatureRange {
                min: 0.25,
                max: 0.5
            }
        );
    }

    #[test]
    fn the_own_class_wins_and_others_go_to_the_nearest_range() {
        let idx = index(vec![
            ("small", entry(&[("n", 10.0, 30.0), ("density", 0.9, 1.0)])),
            ("large", entry(&[("n", 60.0, 100.0), ("density", 0.9, 1.0)])),
        ]);
        let own = nearest_class(&idx, "large", &json!({"n": 20, "density": 0.95})).unwrap();
        assert_eq!((own.class.as_str(), own.exact), ("large", true));
        assert!(own.distance > 0.0, "n = 20 is outside large's range");

        let near_small = nearest_class(&idx, "medium", &json!({"n": 40, "density": 0.95}));
        let c = near_small.unwrap();
        assert_eq!((c.class.as_str(), c.exact), ("small", false));
        // 10 outside small's range, in units of the span 90 of n, over two features.
        let expected = ((10.0f64 / 90.0).powi(2) / 2.0).sqrt();
        assert!((c.distance - expected).abs() < 1e-12, "{}", c.distance);

        let inside = nearest_class(&idx, "other", &json!({"n": 70, "density": 0.95})).unwrap();
        assert_eq!((inside.class.as_str(), inside.distance), ("large", 0.0));
        let far = nearest_class(&idx, "other", &json!({"n": 1000, "density": 0.1})).unwrap();
        assert!(
            far.distance > DEFAULT_MAX_CLASS_DISTANCE,
            "{}",
            far.distance
        );
    }

    /// Found on the H100: one tuned class of tai35a and tai60a sent the holdout tai50a (the
    /// same generator) to the default at distance 2.96, because the class's flow dominance
    /// spans 61.40-61.62 and tai50a's is 60.5.
    #[test]
    fn a_narrow_feature_range_does_not_push_an_instance_of_the_same_kind_away() {
        let idx = index(vec![(
            "tai-a",
            entry(&[("n", 35.0, 60.0), ("dominance", 61.40, 61.62)]),
        )]);
        let near = nearest_class(&idx, "other", &json!({"n": 50, "dominance": 60.5})).unwrap();
        // 0.9 outside, in units of a quarter of 61.62, over two features.
        let expected = ((0.9f64 / (0.25 * 61.62)).powi(2) / 2.0).sqrt();
        assert!(
            (near.distance - expected).abs() < 1e-12,
            "{}",
            near.distance
        );
        assert!(near.distance < DEFAULT_MAX_CLASS_DISTANCE);
        // Another kind (an sko-like dominance of 25, n = 100) stays beyond the threshold.
        let far = nearest_class(&idx, "other", &json!({"n": 100, "dominance": 25.0})).unwrap();
        assert!(
            far.distance > DEFAULT_MAX_CLASS_DISTANCE,
            "{}",
            far.distance
        );
    }

    /// An index written without exact float round trips stored a class's density as
    /// 0.9696969696969696 where its own instance has 0.9696969696969697: that instance must
    /// still be inside (`--max-class-distance 0` refused the class's training instance).
    #[test]
    fn the_last_bit_of_a_stored_range_keeps_the_own_instances_inside() {
        let idx = index(vec![(
            "c",
            entry(&[("density", 0.9696969696969696, 0.9696969696969696)]),
        )]);
        let own = nearest_class(&idx, "other", &json!({"density": 0.9696969696969697})).unwrap();
        assert_eq!(own.distance, 0.0);
        // And the file round-trips floats exactly now.
        let x = 0.9696969696969697f64;
        let back: f64 = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), x.to_bits());
    }

    #[test]
    fn an_index_without_features_still_names_a_class_but_at_infinite_distance() {
        let idx = index(vec![("only", entry(&[]))]);
        let c = nearest_class(&idx, "other", &json!({"n": 5})).unwrap();
        assert_eq!(c.class, "only");
        assert!(c.distance.is_infinite());
        assert!(nearest_class(&index(vec![]), "x", &json!({})).is_none());
        // Named as `--tuned-class` does: as far, not 0 (which read as "inside its ranges").
        assert!(distance_to(&idx, "only", &json!({"n": 5})).is_some_and(f64::is_infinite));
        assert_eq!(distance_to(&idx, "none", &json!({"n": 5})), None);
    }
}
