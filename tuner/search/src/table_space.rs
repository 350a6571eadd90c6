//! A space given by the list of its valid points, as a brute-forced table (a Kernel Tuner
//! cache file, a campaign store) gives it: each parameter's domain is the values listed for
//! it, and the constraints are implied by which combinations the table holds.

use std::collections::HashSet;

use rand::Rng;
use results::{Point, Value};

use super::{ParamKind, SearchSpace};

#[derive(Debug, Clone)]
pub struct TableSpace {
    params: Vec<(String, ParamKind, Vec<Value>)>,
    points: Vec<Point>,
    valid: HashSet<Point>,
}

impl TableSpace {
    /// `params`: name, kind and domain (in the order neighbours are generated); `points`: the
    /// valid points (duplicates are dropped, the order is kept).
    pub fn new(params: Vec<(String, ParamKind, Vec<Value>)>, points: Vec<Point>) -> TableSpace {
        let mut valid = HashSet::with_capacity(points.len());
        let points: Vec<Point> = points
            .into_iter()
            .filter(|p| valid.insert(p.clone()))
            .collect();
        TableSpace {
            params,
            points,
            valid,
        }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

impl SearchSpace for TableSpace {
    fn parameters(&self) -> Vec<(String, ParamKind)> {
        self.params
            .iter()
            .map(|(n, k, _)| (n.clone(), *k))
            .collect()
    }

    fn points(&self) -> Box<dyn Iterator<Item = Point> + '_> {
        Box::new(self.points.iter().cloned())
    }

    fn random_point(&self, rng: &mut dyn rand::RngCore) -> Option<Point> {
        if self.points.is_empty() {
            return None;
        }
        Some(self.points[rng.random_range(0..self.points.len())].clone())
    }

    fn neighbours(&self, point: &Point, params: &[String]) -> Vec<Point> {
        let mut out = Vec::new();
        for (name, _, domain) in &self.params {
            if !params.is_empty() && !params.contains(name) {
                continue;
            }
            let Some(current) = point.get(name) else {
                continue;
            };
            for v in domain {
                if v != current {
                    let q = point.with(name, v.clone());
                    if self.valid.contains(&q) {
                        out.push(q);
                    }
                }
            }
        }
        out
    }

    fn is_valid(&self, point: &Point) -> bool {
        self.valid.contains(point)
    }
}
