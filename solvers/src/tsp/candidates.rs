//! Candidate lists: for each city its k nearest neighbours, nearest first (ties by the lower
//! city index), as ACOTSP's `compute_nn_lists` builds them.
//!
//! From a distance matrix in O(n^2); from coordinates (EUC_2D, CEIL_2D, ATT) in O(n log n + n k)
//! with a k-d tree, with the same lists: the tree finds the k nearest points, the integer
//! distance D of the k-th bounds a radius that holds every city at integer distance <= D,
//! and those are sorted exactly.

use rayon::prelude::*;

use super::distance::EdgeWeightType;
use super::instance::Instance;

/// Candidate lists of `k` cities each (k = min(k, n - 1)), stored row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateLists {
    k: usize,
    lists: Vec<usize>,
}

impl CandidateLists {
    /// Builds the lists from a full row-major distance matrix of n cities.
    pub fn from_matrix(dist: &[i64], n: usize, k: usize) -> Self {
        let k = k.min(n.saturating_sub(1));
        let mut lists = vec![0usize; n * k];
        if k > 0 {
            lists.par_chunks_mut(k).enumerate().for_each(|(i, out)| {
                let row = &dist[i * n..(i + 1) * n];
                let mut others: Vec<(i64, usize)> =
                    (0..n).filter(|&j| j != i).map(|j| (row[j], j)).collect();
                if k < others.len() {
                    others.select_nth_unstable(k - 1);
                    others.truncate(k);
                }
                others.sort_unstable();
                for (slot, &(_, j)) in out.iter_mut().zip(&others) {
                    *slot = j;
                }
            });
        }
        CandidateLists { k, lists }
    }

    /// Builds the lists of an instance: by k-d tree for EUC_2D, CEIL_2D and ATT, else from
    /// the distance matrix.
    pub fn from_instance(inst: &Instance, k: usize) -> Self {
        match inst.edge_weight_type {
            EdgeWeightType::Euc2d | EdgeWeightType::Ceil2d | EdgeWeightType::Att => {
                Self::from_coords(inst, k)
            }
            EdgeWeightType::Geo | EdgeWeightType::Explicit => {
                Self::from_matrix(&inst.distance_matrix(), inst.n(), k)
            }
        }
    }

    fn from_coords(inst: &Instance, k: usize) -> Self {
        let n = inst.n();
        let k = k.min(n.saturating_sub(1));
        let mut lists = vec![0usize; n * k];
        if k == 0 {
            return CandidateLists { k, lists };
        }
        // Distinct points, each with its cities in index order.
        let coords = inst.coords();
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
        let tree: kiddo::ImmutableKdTree<f64, 2> = kiddo::ImmutableKdTree::new_from_slice(&points);
        let scale = if inst.edge_weight_type == EdgeWeightType::Att {
            10f64.sqrt()
        } else {
            1.0
        };
        lists.par_chunks_mut(k).enumerate().for_each(|(i, out)| {
            let here = &points[point_of[i]];
            let others = |found: &[kiddo::NearestNeighbour<f64, u64>]| -> Vec<(i64, usize)> {
                found
                    .iter()
                    .flat_map(|nb| &members[nb.item as usize])
                    .filter(|&&j| j != i)
                    .map(|&j| (inst.dist(i, j), j))
                    .collect()
            };
            // Enough nearest points to hold k other cities.
            let mut m = (k + 1).min(points.len());
            let mut near = loop {
                let count = std::num::NonZero::new(m).expect("m >= 1");
                let found = tree.nearest_n::<kiddo::SquaredEuclidean>(here, count);
                let near = others(&found);
                if near.len() >= k || m == points.len() {
                    break near;
                }
                m = (2 * m).min(points.len());
            };
            near.sort_unstable();
            let bound = near[k - 1].0;
            // Every city at integer distance <= bound lies within this Euclidean radius.
            let radius = (bound as f64 + 1.0) * scale;
            let mut all = others(&tree.within::<kiddo::SquaredEuclidean>(here, radius * radius));
            // Far from the origin (coordinates near 3e16) the radius loses its +1 to rounding
            // and the query can miss cities at exactly the bound: the k nearest found above
            // are always kept, so a list never runs short (a short list left city 0 in its
            // own list, and 2-opt looped forever on the move from a city to itself).
            all.extend_from_slice(&near);
            all.sort_unstable();
            all.dedup();
            debug_assert!(all.len() >= k && all.iter().all(|&(_, j)| j != i));
            for (slot, &(_, j)) in out.iter_mut().zip(&all) {
                *slot = j;
            }
        });
        CandidateLists { k, lists }
    }

    /// Entries per list.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The candidate list of `city`, nearest first.
    #[inline]
    pub fn of(&self, city: usize) -> &[usize] {
        &self.lists[city * self.k..(city + 1) * self.k]
    }

    /// All lists, row-major (n x k), the layout a GPU kernel uploads.
    pub fn as_slice(&self) -> &[usize] {
        &self.lists
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_far_from_the_origin_hold_k_other_cities() {
        // Coordinates near 3e16: the within-radius query missed cities at the bound, and
        // the list kept a 0 from its initialisation (city 0 as its own candidate).
        let coords = vec![
            (1.0000000000000006e16, -14.0),
            (2.999999999999995e16, 21.0),
            (31.0, 1.9999999999999984e16),
            (-3.0000000000000004e16, 1.999999999999995e16),
            (3.0000000000000044e16, 1.9999999999999948e16),
        ];
        let inst = Instance::from_coords("far", EdgeWeightType::Ceil2d, coords).unwrap();
        let lists = CandidateLists::from_instance(&inst, 20);
        assert_eq!(lists.k(), 4);
        let matrix = CandidateLists::from_matrix(&inst.distance_matrix(), 5, 20);
        for c in 0..5 {
            let mut l = lists.of(c).to_vec();
            assert!(!l.contains(&c), "city {c} in its own list {l:?}");
            assert_eq!(lists.of(c), matrix.of(c), "city {c}");
            l.sort_unstable();
            l.dedup();
            assert_eq!(l.len(), 4);
        }
    }

    #[test]
    fn nearest_first_ties_by_index() {
        // Four cities on a line at 0, 1, 2, 4: distances |a - b|.
        let pos = [0i64, 1, 2, 4];
        let dist: Vec<i64> = (0..16).map(|c| (pos[c / 4] - pos[c % 4]).abs()).collect();
        let c = CandidateLists::from_matrix(&dist, 4, 2);
        assert_eq!(c.of(0), &[1, 2]);
        assert_eq!(c.of(1), &[0, 2], "tie at distance 1: lower index first");
        assert_eq!(c.of(3), &[2, 1]);
        let all = CandidateLists::from_matrix(&dist, 4, 32);
        assert_eq!(all.k(), 3);
        assert_eq!(all.of(2), &[1, 0, 3]);
    }
}
