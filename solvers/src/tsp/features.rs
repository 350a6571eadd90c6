//! Features of a TSP instance and its dataset class: size band x layout.
//!
//! - **Size band** by the number of cities n: `small` (n < 1000), `medium` (1000 <= n <
//!   5000), `large` (n >= 5000). Dawson and Stewart's GPU speed-up grows with n up to
//!   pr2392, and their earlier kernel fell off past pr1002 when the per-ant data left
//!   shared memory: the bands separate those regimes.
//! - **Layout** by the coefficient of variation (population std / mean) of the
//!   nearest-neighbour distances `min_{j != i} d(i, j)`: `regular` (cv < 0.35: grids and
//!   drilling patterns, where most cities have the same nearest distance), `uniform`
//!   (0.35 <= cv < 0.9: uniformly random points give about sqrt(4/pi - 1) = 0.52), and
//!   `clustered` (cv >= 0.9: dense clusters far apart). It is computed from the integer
//!   distances, so explicit matrices get it too. Cost O(n log n) for EUC_2D, CEIL_2D and
//!   ATT (a k-d tree: their integer distances grow with the Euclidean one, so the Euclidean
//!   nearest neighbour has the smallest integer distance); O(n^2) (parallel) for GEO and
//!   explicit matrices, which TSPLIB only has up to a few thousand cities.
//!
//! The layout thresholds come from the uniform-random value and have not yet been
//! calibrated across TSPLIB (`mats instance info --json FILE` prints `nn_cv` for that).

use std::fmt;

use rayon::prelude::*;

use super::distance::EdgeWeightType;
use super::instance::Instance;

pub const MEDIUM_MIN_CITIES: usize = 1000;
pub const LARGE_MIN_CITIES: usize = 5000;
pub const CV_UNIFORM: f64 = 0.35;
pub const CV_CLUSTERED: f64 = 0.9;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Features {
    pub n: usize,
    pub edge_weight_type: EdgeWeightType,
    /// Mean nearest-neighbour distance.
    pub nn_mean: f64,
    /// Coefficient of variation of the nearest-neighbour distances.
    pub nn_cv: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeBand {
    Small,
    Medium,
    Large,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Regular,
    Uniform,
    Clustered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Class {
    pub size: SizeBand,
    pub layout: Layout,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = match self.size {
            SizeBand::Small => "small",
            SizeBand::Medium => "medium",
            SizeBand::Large => "large",
        };
        let layout = match self.layout {
            Layout::Regular => "regular",
            Layout::Uniform => "uniform",
            Layout::Clustered => "clustered",
        };
        write!(f, "tsp:size={size},layout={layout}")
    }
}

impl Instance {
    /// The nearest-neighbour distance of every city.
    pub fn nearest_distances(&self) -> Vec<i64> {
        match self.edge_weight_type {
            EdgeWeightType::Euc2d | EdgeWeightType::Ceil2d | EdgeWeightType::Att => {
                self.nearest_distances_kd()
            }
            EdgeWeightType::Geo => self.nearest_distances_geo(),
            // A matrix is O(n^2) to read already (and bounded by the explicit-matrix limit).
            EdgeWeightType::Explicit => self.nearest_distances_all_pairs(),
        }
    }

    /// A GEO instance's cities as points on the unit sphere (latitude and longitude in
    /// radians), and a k-d tree over them: the chord grows with the central angle, as GEO's
    /// distance does.
    pub(crate) fn sphere_tree(&self) -> (Vec<[f64; 3]>, kiddo::ImmutableKdTree<f64, 3>) {
        let points: Vec<[f64; 3]> = self
            .coords()
            .iter()
            .map(|&(lat, lon)| [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()])
            .collect();
        let tree = kiddo::ImmutableKdTree::new_from_slice(&points);
        (points, tree)
    }

    /// By a k-d tree over the cities as points on the unit sphere: TSPLIB's GEO distance
    /// grows with the central angle, and so does the chord, so the chord-nearest cities hold
    /// the nearest by GEO distance (the all-pairs pass took 14 s at 20,000 cities, after the
    /// solve). The exact distance is taken over the 8 chord-nearest, against rounding ties.
    fn nearest_distances_geo(&self) -> Vec<i64> {
        let n = self.n();
        let (points, tree) = self.sphere_tree();
        let near = std::num::NonZero::new(9.min(n.max(1))).expect("at least 1");
        (0..n)
            .into_par_iter()
            .map(|city| {
                tree.nearest_n::<kiddo::SquaredEuclidean>(&points[city], near)
                    .iter()
                    .map(|nb| nb.item as usize)
                    .filter(|&q| q != city)
                    .map(|q| self.dist(city, q))
                    .min()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// By a k-d tree over the distinct points; cities sharing a point are at distance 0.
    fn nearest_distances_kd(&self) -> Vec<i64> {
        let n = self.n();
        let (points, members, point_of) = self.distinct_points();
        let tree: kiddo::ImmutableKdTree<f64, 2> = kiddo::ImmutableKdTree::new_from_slice(&points);
        let two = std::num::NonZero::new(2).expect("2 is not zero");
        (0..n)
            .into_par_iter()
            .map(|city| {
                let p = point_of[city];
                if members[p].len() > 1 {
                    return 0;
                }
                tree.nearest_n::<kiddo::SquaredEuclidean>(&points[p], two)
                    .iter()
                    .map(|nb| nb.item as usize)
                    .find(|&q| q != p)
                    .map_or(0, |q| self.dist(city, members[q][0]))
            })
            .collect()
    }

    /// By looking at every pair (parallel).
    pub fn nearest_distances_all_pairs(&self) -> Vec<i64> {
        let n = self.n();
        (0..n)
            .into_par_iter()
            .map(|i| {
                (0..n)
                    .filter(|&j| j != i)
                    .map(|j| self.dist(i, j))
                    .min()
                    .unwrap_or(0)
            })
            .collect()
    }

    pub fn features(&self) -> Features {
        let nn = self.nearest_distances();
        let count = nn.len() as f64;
        let mean = nn.iter().map(|&d| d as f64).sum::<f64>() / count;
        let variance = nn.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / count;
        Features {
            n: self.n(),
            edge_weight_type: self.edge_weight_type,
            nn_mean: mean,
            nn_cv: if mean > 0.0 {
                variance.sqrt() / mean
            } else {
                0.0
            },
        }
    }

    pub fn class(&self) -> Class {
        self.features().class()
    }
}

impl Features {
    pub fn class(&self) -> Class {
        let size = if self.n >= LARGE_MIN_CITIES {
            SizeBand::Large
        } else if self.n >= MEDIUM_MIN_CITIES {
            SizeBand::Medium
        } else {
            SizeBand::Small
        };
        let layout = if self.nn_cv >= CV_CLUSTERED {
            Layout::Clustered
        } else if self.nn_cv >= CV_UNIFORM {
            Layout::Uniform
        } else {
            Layout::Regular
        };
        Class { size, layout }
    }
}
