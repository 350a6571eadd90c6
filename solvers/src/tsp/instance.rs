//! The symmetric TSP instance: cities with coordinates and a TSPLIB distance function, or
//! an explicit distance matrix. Tour lengths are exact `i64` sums of TSPLIB's integer
//! distances.

use super::distance::{self, EdgeWeightType};

/// Largest number of cities accepted from a file (pla85900 is the largest TSPLIB instance).
pub const MAX_CITIES: usize = 1_000_000;

/// Largest number of cities with an explicit matrix (n^2 entries are stored).
pub const MAX_EXPLICIT: usize = 20_000;

/// A symmetric TSP instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub name: String,
    pub edge_weight_type: EdgeWeightType,
    n: usize,
    /// Coordinates for the coordinate types; for GEO, already in radians (latitude,
    /// longitude).
    coords: Vec<(f64, f64)>,
    /// Row-major n x n matrix for EXPLICIT instances (empty otherwise).
    matrix: Vec<i64>,
}

impl Instance {
    /// An instance from coordinates (GEO coordinates in TSPLIB's DDD.MM form).
    pub fn from_coords(
        name: impl Into<String>,
        edge_weight_type: EdgeWeightType,
        coords: Vec<(f64, f64)>,
    ) -> Result<Self, String> {
        let n = coords.len();
        if n < 2 {
            return Err(format!("a tour needs at least 2 cities, found {n}"));
        }
        if n > MAX_CITIES {
            return Err(format!(
                "{n} cities exceed the supported maximum {MAX_CITIES}"
            ));
        }
        if let Some(k) = coords
            .iter()
            .position(|&(x, y)| !(x.is_finite() && y.is_finite()))
        {
            return Err(format!(
                "coordinate of city {} is not a finite number",
                k + 1
            ));
        }
        if edge_weight_type == EdgeWeightType::Explicit {
            return Err("EXPLICIT instances take a matrix, not coordinates".into());
        }
        crate::exact::check_worst_case(
            worst_tour_from_coords(edge_weight_type, &coords),
            "n x (the longest possible edge)",
        )?;
        let coords = match edge_weight_type {
            EdgeWeightType::Explicit => unreachable!("refused above"),
            EdgeWeightType::Geo => coords
                .into_iter()
                .map(|(x, y)| (distance::geo_radians(x), distance::geo_radians(y)))
                .collect(),
            _ => coords,
        };
        Ok(Instance {
            name: name.into(),
            edge_weight_type,
            n,
            coords,
            matrix: Vec::new(),
        })
    }

    /// An instance from a full row-major n x n matrix; it must be symmetric with entries
    /// >= 0.
    pub fn from_matrix(
        name: impl Into<String>,
        n: usize,
        matrix: Vec<i64>,
    ) -> Result<Self, String> {
        if n < 2 {
            return Err(format!("a tour needs at least 2 cities, found {n}"));
        }
        if n > MAX_EXPLICIT {
            return Err(format!(
                "{n} cities exceed the supported maximum {MAX_EXPLICIT} for explicit matrices"
            ));
        }
        if matrix.len() != n * n {
            return Err(format!(
                "an explicit matrix of {n} cities needs {} entries, found {}",
                n * n,
                matrix.len()
            ));
        }
        crate::exact::check_worst_case(
            crate::exact::mul(n as i128, crate::exact::max_abs(matrix.iter().copied())),
            "n x (the largest weight)",
        )?;
        for i in 0..n {
            for j in 0..n {
                let d = matrix[i * n + j];
                if d < 0 {
                    return Err(format!(
                        "distance from city {} to city {} is negative ({d})",
                        i + 1,
                        j + 1
                    ));
                }
                if j > i && d != matrix[j * n + i] {
                    return Err(format!(
                        "the matrix is not symmetric: d({},{}) = {d} but d({},{}) = {} \
                         (asymmetric TSP is not supported)",
                        i + 1,
                        j + 1,
                        j + 1,
                        i + 1,
                        matrix[j * n + i]
                    ));
                }
            }
        }
        Ok(Instance {
            name: name.into(),
            edge_weight_type: EdgeWeightType::Explicit,
            n,
            coords: Vec::new(),
            matrix,
        })
    }

    /// The distinct points (k-d tree input), each point's cities in index order, and each
    /// city's point: cities on one point (drilling instances repeat holes) are one point of
    /// the candidate lists' and the features' trees.
    pub(crate) fn distinct_points(&self) -> (Vec<[f64; 2]>, Vec<Vec<usize>>, Vec<usize>) {
        let n = self.n();
        let coords = self.coords();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| {
            coords[a]
                .0
                .total_cmp(&coords[b].0)
                .then(coords[a].1.total_cmp(&coords[b].1))
                .then(a.cmp(&b))
        });
        let mut points: Vec<[f64; 2]> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut point_of = vec![0usize; n];
        for &city in &order {
            let (x, y) = coords[city];
            if points.last() != Some(&[x, y]) {
                points.push([x, y]);
                members.push(Vec::new());
            }
            members.last_mut().expect("a point was pushed").push(city);
            point_of[city] = points.len() - 1;
        }
        (points, members, point_of)
    }

    /// The coordinates (GEO ones in radians); empty for EXPLICIT instances.
    pub fn coords(&self) -> &[(f64, f64)] {
        &self.coords
    }

    /// Number of cities.
    pub fn n(&self) -> usize {
        self.n
    }

    /// TSPLIB's integer distance between cities i and j (0-based).
    #[inline]
    pub fn dist(&self, i: usize, j: usize) -> i64 {
        match self.edge_weight_type {
            EdgeWeightType::Explicit => self.matrix[i * self.n + j],
            EdgeWeightType::Euc2d => distance::euc_2d(self.coords[i], self.coords[j]),
            EdgeWeightType::Ceil2d => distance::ceil_2d(self.coords[i], self.coords[j]),
            EdgeWeightType::Att => distance::att(self.coords[i], self.coords[j]),
            EdgeWeightType::Geo => distance::geo(self.coords[i], self.coords[j]),
        }
    }

    /// The full distance matrix, row-major (computed for coordinate instances; O(n^2)
    /// memory).
    pub fn distance_matrix(&self) -> Vec<i64> {
        self.distance_matrix_until(&|| false)
            .expect("nothing stops it")
    }

    /// [`Self::distance_matrix`], reading `stop` before each row (None when it said stop).
    pub fn distance_matrix_until(&self, stop: &(dyn Fn() -> bool + Sync)) -> Option<Vec<i64>> {
        if self.edge_weight_type == EdgeWeightType::Explicit {
            return Some(self.matrix.clone());
        }
        let n = self.n;
        let mut m = vec![0i64; n * n];
        fill_rows_until(&mut m, n, stop, |i, row| {
            for (j, d) in row.iter_mut().enumerate() {
                *d = self.dist(i, j);
            }
        })
        .then_some(m)
    }

    /// The exact length of a closed tour (0-based cities, each once; not checked here).
    ///
    /// # Panics
    /// If a city is not below n.
    pub fn tour_length(&self, tour: &[usize]) -> i64 {
        let Some(&last) = tour.last() else {
            return 0;
        };
        let mut total = 0i64;
        let mut previous = last;
        for &city in tour {
            total += self.dist(previous, city);
            previous = city;
        }
        total
    }
}

/// Fills the rows of an n x n matrix in parallel, each by `fill(row index, row)`, reading
/// `stop` before each row: at 10,000 cities one pass takes seconds (distances; the colonies'
/// `powf` weights). False when `stop` said stop (the rows not reached are left as they were).
pub(crate) fn fill_rows_until<T: Send>(
    matrix: &mut [T],
    n: usize,
    stop: &(dyn Fn() -> bool + Sync),
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> bool {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let stopped = AtomicBool::new(false);
    matrix.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        if stopped.load(Relaxed) || stop() {
            stopped.store(true, Relaxed);
            return;
        }
        fill(i, row);
    });
    !stopped.into_inner()
}

/// The smallest and largest x and y of `coords`: (lo_x, hi_x, lo_y, hi_y).
pub(crate) fn bounding_box(coords: &[(f64, f64)]) -> (f64, f64, f64, f64) {
    coords.iter().fold(
        (f64::MAX, f64::MIN, f64::MAX, f64::MIN),
        |(lo_x, hi_x, lo_y, hi_y), &(x, y)| (lo_x.min(x), hi_x.max(x), lo_y.min(y), hi_y.max(y)),
    )
}

/// A bound on the length of any tour: n times the longest distance any two cities of the
/// bounding box can have (plus one for TSPLIB's rounding up), saturated in `i128`.
fn worst_tour_from_coords(edge_weight_type: EdgeWeightType, coords: &[(f64, f64)]) -> i128 {
    let longest = match edge_weight_type {
        // Great-circle distances never exceed half the circumference of TSPLIB's sphere.
        EdgeWeightType::Geo => distance::GEO_PI * distance::GEO_RRR,
        _ => {
            let (lo_x, hi_x, lo_y, hi_y) = bounding_box(coords);
            let diagonal = (hi_x - lo_x).hypot(hi_y - lo_y);
            if edge_weight_type == EdgeWeightType::Att {
                diagonal / 10f64.sqrt()
            } else {
                diagonal
            }
        }
    };
    // `as` saturates, and an infinite diagonal (coordinates near f64::MAX) becomes i128::MAX.
    let edge = (longest + 2.0).ceil() as i128;
    crate::exact::mul(coords.len() as i128, edge)
}
