//! What the model-based and evolutionary strategies know about a space beyond its points:
//! each parameter's ordered domain and whether it is ordinal (threads, counts, levels: a step
//! goes to the next value) or categorical (flags, variants: any other value is one step away),
//! a numeric encoding of points for surrogate models, and the valid point nearest to an
//! arbitrary combination of values (so that crossover and perturbation never spend an
//! evaluation on a point the constraints exclude).

use std::collections::{BTreeMap, HashMap};

use rand::seq::IndexedRandom;
use rand::Rng;
use results::{Point, Value};

use super::SearchSpace;

/// Spaces with more valid points than this are not listed; the strategies then draw
/// candidates with `random_point` instead of scanning the list.
pub(crate) const MAX_LISTED: usize = 200_000;

#[derive(Debug, Clone)]
pub(crate) struct Param {
    pub name: String,
    /// Values in ascending order (numbers) or in order of first appearance (text).
    pub domain: Vec<Value>,
    /// Numbers with at least three values: neighbours are the next value up and down.
    pub ordinal: bool,
}

/// The parameters of a space and, for spaces of at most [`MAX_LISTED`] points, the list of
/// valid points with their encodings.
pub(crate) struct Geometry {
    pub params: Vec<Param>,
    /// All valid points (empty when the space is too large to list).
    pub points: Vec<Point>,
    index: HashMap<Point, usize>,
    /// `points[i]` encoded: `features[i * dims .. (i + 1) * dims]`.
    features: Vec<f64>,
    pub dims: usize,
}

impl Geometry {
    pub fn new(space: &dyn SearchSpace) -> Geometry {
        let names: Vec<String> = space.parameters().into_iter().map(|(n, _)| n).collect();
        let listed: Vec<Point> = space.points().take(MAX_LISTED + 1).collect();
        let complete = listed.len() <= MAX_LISTED;
        // Domains from the points themselves: what a parameter can take among valid points.
        let mut seen: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        let sample: Vec<Point> = if complete {
            Vec::new()
        } else {
            // Seeded: the order of a text parameter's values is the encoding a surrogate
            // model sees, and a campaign must search the same way every time it runs.
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
            (0..4096)
                .filter_map(|_| space.random_point(&mut rng))
                .collect()
        };
        for p in if complete { &listed } else { &sample } {
            for n in &names {
                if let Some(v) = p.get(n) {
                    let d = seen.entry(n.as_str()).or_default();
                    if !d.contains(v) {
                        d.push(v.clone());
                    }
                }
            }
        }
        let params: Vec<Param> = names
            .iter()
            .filter_map(|n| {
                let mut domain = seen.remove(n.as_str())?;
                let numeric = domain.iter().all(|v| v.as_int().is_some());
                if numeric {
                    domain.sort();
                }
                Some(Param {
                    name: n.clone(),
                    ordinal: numeric && domain.len() >= 3,
                    domain,
                })
            })
            .collect();
        let dims = params.len();
        let mut g = Geometry {
            params,
            points: Vec::new(),
            index: HashMap::new(),
            features: Vec::new(),
            dims,
        };
        if complete {
            g.features = listed.iter().flat_map(|p| g.encode(p)).collect();
            g.index = listed
                .iter()
                .enumerate()
                .map(|(i, p)| (p.clone(), i))
                .collect();
            g.points = listed;
        }
        g
    }

    pub fn listed(&self) -> bool {
        !self.points.is_empty()
    }

    /// The position of `p` in `points`, if listed.
    pub fn position(&self, p: &Point) -> Option<usize> {
        self.index.get(p).copied()
    }

    pub fn features_of(&self, i: usize) -> &[f64] {
        &self.features[i * self.dims..(i + 1) * self.dims]
    }

    /// Each parameter as a number in [0, 1]: ordinal ones by rank (so 16 -> 32 threads is the
    /// same step as 512 -> 1024), categorical ones by their index, with -0.5 for a parameter
    /// the point does not carry. Categorical distances are coarse, but a GP with one length
    /// scale per space cannot do better without one-hot dimensions, which cost more than they
    /// gave on these spaces.
    pub fn encode(&self, p: &Point) -> Vec<f64> {
        self.params
            .iter()
            .map(|param| match p.get(&param.name) {
                None => -0.5,
                Some(v) => {
                    let i = param.domain.iter().position(|d| d == v).unwrap_or(0);
                    if param.domain.len() <= 1 {
                        0.0
                    } else {
                        i as f64 / (param.domain.len() - 1) as f64
                    }
                }
            })
            .collect()
    }

    /// The neighbourhood that knows the parameter kinds: for an ordinal parameter the nearest
    /// valid value below and above, for a categorical one every other valid value (and, where
    /// a change of one parameter brings others with it, those changes as the space gives them).
    pub fn adjacent(&self, space: &dyn SearchSpace, p: &Point) -> Vec<Point> {
        let all = space.neighbours(p, &[]);
        let mut out: Vec<Point> = Vec::new();
        for param in &self.params {
            let Some(current) = p.get(&param.name) else {
                continue;
            };
            let changed: Vec<&Point> = all
                .iter()
                .filter(|n| n.get(&param.name).is_some_and(|v| v != current))
                .collect();
            if !param.ordinal {
                out.extend(changed.into_iter().cloned());
                continue;
            }
            let rank = |v: &Value| param.domain.iter().position(|d| d == v);
            let Some(here) = rank(current) else {
                out.extend(changed.into_iter().cloned());
                continue;
            };
            let mut below: Option<(usize, &Point)> = None;
            let mut above: Option<(usize, &Point)> = None;
            for n in changed {
                let Some(r) = n.get(&param.name).and_then(rank) else {
                    continue;
                };
                if r < here && below.is_none_or(|(b, _)| r > b) {
                    below = Some((r, n));
                }
                if r > here && above.is_none_or(|(a, _)| r < a) {
                    above = Some((r, n));
                }
            }
            out.extend(below.into_iter().chain(above).map(|(_, n)| n.clone()));
        }
        let mut unique = Vec::with_capacity(out.len());
        for n in out {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        unique
    }

    /// `p` with each parameter moved with probability `rate` (at least one): an ordinal one by
    /// a few steps of its domain, a categorical one to another value. The result may be
    /// invalid; [`Geometry::nearest_valid`] repairs it.
    pub fn perturb(
        &self,
        p: &Point,
        rate: f64,
        max_step: usize,
        rng: &mut dyn rand::RngCore,
    ) -> Point {
        let mut q = p.clone();
        let movable: Vec<&Param> = self
            .params
            .iter()
            .filter(|param| param.domain.len() > 1 && p.get(&param.name).is_some())
            .collect();
        if movable.is_empty() {
            return q;
        }
        let forced = rng.random_range(0..movable.len());
        for (k, param) in movable.iter().enumerate() {
            if k != forced && !rng.random_bool(rate.clamp(0.0, 1.0)) {
                continue;
            }
            let Some(here) = p
                .get(&param.name)
                .and_then(|v| param.domain.iter().position(|d| d == v))
            else {
                continue;
            };
            let to = if param.ordinal {
                let step = rng.random_range(1..=max_step.max(1)) as i64;
                let signed = if rng.random_bool(0.5) { step } else { -step };
                (here as i64 + signed).clamp(0, param.domain.len() as i64 - 1) as usize
            } else {
                let others: Vec<usize> = (0..param.domain.len()).filter(|&i| i != here).collect();
                *others.choose(rng).unwrap_or(&here)
            };
            q.set(param.name.clone(), param.domain[to].clone());
        }
        q
    }

    /// `p` itself when valid; otherwise the listed valid point nearest to it in the encoding
    /// (ties: the first listed), or for an unlisted space the nearest of `p`'s one-change
    /// neighbours and a few random points.
    pub fn nearest_valid(
        &self,
        space: &dyn SearchSpace,
        p: &Point,
        rng: &mut dyn rand::RngCore,
    ) -> Option<Point> {
        if space.is_valid(p) {
            return Some(p.clone());
        }
        let x = self.encode(p);
        let distance = |f: &[f64]| -> f64 { f.iter().zip(&x).map(|(a, b)| (a - b).powi(2)).sum() };
        if self.listed() {
            let best = (0..self.points.len()).min_by(|&a, &b| {
                distance(self.features_of(a)).total_cmp(&distance(self.features_of(b)))
            })?;
            return Some(self.points[best].clone());
        }
        let candidates: Vec<Point> = (0..64).filter_map(|_| space.random_point(rng)).collect();
        candidates
            .into_iter()
            .min_by(|a, b| distance(&self.encode(a)).total_cmp(&distance(&self.encode(b))))
    }
}
