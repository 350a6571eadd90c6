//! Candidate lists: for each city its k nearest neighbours, nearest first (ties by the lower
//! city index), as ACOTSP's `compute_nn_lists` builds them; or, for the focused colony on
//! clustered instances, quadrant lists ([`ListRule::Quadrant`]).
//!
//! From a distance matrix in O(n^2); from coordinates (EUC_2D, CEIL_2D, ATT) in O(n log n + n k)
//! with a k-d tree, with the same lists: the tree finds the k nearest points, the integer
//! distance D of the k-th bounds a radius that holds every city at integer distance <= D,
//! and those are sorted exactly.

use rayon::prelude::*;

use super::distance::EdgeWeightType;
use super::instance::Instance;

/// Which cities a focused colony's lists hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListRule {
    /// The k nearest cities.
    Nearest,
    /// The k / 4 nearest cities in each quadrant around the city (as LKH's QUADRANT candidate
    /// set), the rest of the k the nearest not yet listed, all nearest first. On clustered
    /// instances the k nearest of a city inside a dense cluster are all in that cluster, so a
    /// tour built and searched on them cannot choose the edges between clusters it needs (fl3795
    /// at 10 s: 3-6% above the optimum on the GPU with nearest lists, docs/tsp-gpu.md).
    Quadrant,
    /// Quadrant lists where the instance's layout is clustered and its cities have
    /// coordinates (EUC_2D, CEIL_2D, ATT), nearest lists elsewhere.
    #[default]
    Auto,
}

impl ListRule {
    pub fn from_name(name: &str) -> Result<ListRule, String> {
        match name {
            "nearest" => Ok(ListRule::Nearest),
            "quadrant" => Ok(ListRule::Quadrant),
            "auto" => Ok(ListRule::Auto),
            other => Err(format!(
                "parameter `lists` must be nearest, quadrant or auto, found {other:?}"
            )),
        }
    }

    /// The rule bundles written before quadrant lists existed ran (serde default of their
    /// missing field), so that they keep running what they measured.
    pub fn nearest() -> ListRule {
        ListRule::Nearest
    }

    /// `Nearest` or `Quadrant` for `inst`: `Auto` by its layout; quadrants need coordinates
    /// whose distance grows with the Euclidean one, so GEO and explicit matrices keep nearest
    /// lists whatever the rule.
    pub fn resolve(self, inst: &Instance) -> ListRule {
        let planar = matches!(
            inst.edge_weight_type,
            EdgeWeightType::Euc2d | EdgeWeightType::Ceil2d | EdgeWeightType::Att
        );
        match self {
            _ if !planar => ListRule::Nearest,
            ListRule::Auto if inst.class().layout == super::features::Layout::Clustered => {
                ListRule::Quadrant
            }
            ListRule::Auto => ListRule::Nearest,
            rule => rule,
        }
    }
}

/// Candidate lists of `k` cities each (k = min(k, n - 1)), stored row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateLists {
    k: usize,
    lists: Vec<usize>,
}

impl CandidateLists {
    /// Lists of k = min(k, n - 1) cities, city i's the first k of `row(i, k)`: at least k
    /// (distance, city) pairs of other cities, nearest first (ties by index). Reads `stop`
    /// before each row: `None` once it says stop (the lists of 200,000 cities take about a
    /// second, longer than a short time limit).
    fn from_rows_until(
        n: usize,
        k: usize,
        row: impl Fn(usize, usize) -> Vec<(i64, usize)> + Sync,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<Self> {
        let k = k.min(n.saturating_sub(1));
        let mut lists = vec![0usize; n * k];
        let stopped = std::sync::atomic::AtomicBool::new(false);
        if k > 0 {
            lists.par_chunks_mut(k).enumerate().for_each(|(i, out)| {
                use std::sync::atomic::Ordering::Relaxed;
                if stopped.load(Relaxed) || stop() {
                    stopped.store(true, Relaxed);
                    return;
                }
                let near = row(i, k);
                debug_assert!(near.len() >= k && near.iter().all(|&(_, j)| j != i));
                for (slot, &(_, j)) in out.iter_mut().zip(&near) {
                    *slot = j;
                }
            });
        }
        (!stopped.into_inner()).then_some(CandidateLists { k, lists })
    }

    /// Builds the lists from a full row-major distance matrix of n cities.
    pub fn from_matrix(dist: &[i64], n: usize, k: usize) -> Self {
        Self::from_distances(n, k, |i, j| dist[i * n + j], &|| false).expect("nothing stops it")
    }

    /// Builds the lists from a distance function, one row at a time (O(n) memory per row
    /// rather than the n x n matrix: a GEO instance of 200,000 cities asked for 320 GB),
    /// reading `stop` before each row.
    fn from_distances(
        n: usize,
        k: usize,
        dist: impl Fn(usize, usize) -> i64 + Sync,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<Self> {
        Self::from_rows_until(
            n,
            k,
            |i, k| {
                let mut others: Vec<(i64, usize)> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| (dist(i, j), j))
                    .collect();
                if k < others.len() {
                    others.select_nth_unstable(k - 1);
                    others.truncate(k);
                }
                others.sort_unstable();
                others
            },
            stop,
        )
    }

    /// Builds the lists of an instance: by k-d tree for EUC_2D, CEIL_2D and ATT, else from
    /// the distance matrix.
    pub fn from_instance(inst: &Instance, k: usize) -> Self {
        Self::nearest_until(inst, k, &|| false).expect("nothing stops it")
    }

    /// [`Self::from_instance`], reading `stop` between rows.
    fn nearest_until(inst: &Instance, k: usize, stop: &(dyn Fn() -> bool + Sync)) -> Option<Self> {
        match inst.edge_weight_type {
            EdgeWeightType::Euc2d | EdgeWeightType::Ceil2d | EdgeWeightType::Att => {
                Self::from_coords(inst, k, stop)
            }
            EdgeWeightType::Geo => Self::from_sphere(inst, k, stop),
            // A matrix is read whole anyway: every row is a pass over it, row by row against
            // the deadline.
            EdgeWeightType::Explicit => {
                Self::from_distances(inst.n(), k, |i, j| inst.dist(i, j), stop)
            }
        }
    }

    /// The lists `rule` gives for `inst` ([`ListRule::resolve`]).
    pub fn by_rule(inst: &Instance, k: usize, rule: ListRule) -> Self {
        Self::by_rule_until(inst, k, rule, &|| false).expect("nothing stops it")
    }

    /// [`Self::by_rule`], or `None` where `stop` said stop before the lists were whole.
    pub fn by_rule_until(
        inst: &Instance,
        k: usize,
        rule: ListRule,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<Self> {
        match rule.resolve(inst) {
            ListRule::Quadrant => Self::from_quadrants(inst, k, stop),
            _ => Self::nearest_until(inst, k, stop),
        }
    }

    /// Quadrant lists ([`ListRule::Quadrant`]) of a planar instance. Quadrant q of city i holds
    /// the cities j != i with (x_j >= x_i, y_j >= y_i) for q = 0, (<, >=) for 1, (<, <) for 2
    /// and (>=, <) for 3, so cities at i's own point fall in quadrant 0. Each city's nearest
    /// points are searched in growing sets (k-d tree) until every quadrant has its k / 4 or
    /// the set reaches [`QUADRANT_SEARCH`] points: a quadrant with no city within those
    /// (a city at the edge of the map) is filled by the nearest cities elsewhere. Order and
    /// ties as in the nearest lists: by exact distance, then city index.
    fn from_quadrants(inst: &Instance, k: usize, stop: &(dyn Fn() -> bool + Sync)) -> Option<Self> {
        let tree = PointTree::new(inst);
        let coords = inst.coords();
        let row = |i: usize, k: usize| {
            let per_quadrant = (k / 4).max(1);
            let (xi, yi) = coords[i];
            let quadrant = |j: usize| {
                let (x, y) = coords[j];
                match (x >= xi, y >= yi) {
                    (true, true) => 0,
                    (false, true) => 1,
                    (false, false) => 2,
                    (true, false) => 3,
                }
            };
            let mut m = 4 * k + 1;
            let near = loop {
                let mut near = tree.nearest(i, m);
                near.sort_unstable();
                let mut filled = [0usize; 4];
                for &(_, j) in &near {
                    filled[quadrant(j)] += 1;
                }
                let done = filled.iter().all(|&f| f >= per_quadrant);
                if done || m >= tree.len() || m >= QUADRANT_SEARCH {
                    break near;
                }
                m = (2 * m).min(QUADRANT_SEARCH);
            };
            let mut taken = [0usize; 4];
            let mut chosen: Vec<(i64, usize)> = Vec::with_capacity(k);
            for &(d, j) in &near {
                let q = quadrant(j);
                if taken[q] < per_quadrant && chosen.len() < k {
                    taken[q] += 1;
                    chosen.push((d, j));
                }
            }
            for &(d, j) in &near {
                if chosen.len() == k {
                    break;
                }
                if !chosen.contains(&(d, j)) {
                    chosen.push((d, j));
                }
            }
            chosen.sort_unstable();
            chosen
        };
        Self::from_rows_until(inst.n(), k, row, stop)
    }

    /// GEO lists from a k-d tree over the cities as points on the unit sphere: GEO's
    /// distance grows with the central angle and so does the chord, so the chord-nearest m
    /// cities hold the nearest by distance. A city outside them is at least as far as the
    /// farthest of them, so once that one is 2 beyond the k-th (a margin for the rounding of
    /// `acos`), no outsider ties into the list; else m doubles. Equal to the matrix's lists
    /// (the order and the ties by index included); a row pass of 20,000 cities took the whole
    /// of a 1 s limit.
    fn from_sphere(inst: &Instance, k: usize, stop: &(dyn Fn() -> bool + Sync)) -> Option<Self> {
        let n = inst.n();
        let (points, tree) = inst.sphere_tree();
        let row = |i: usize, k: usize| {
            let mut m = (2 * k + 8).min(n);
            loop {
                let found = tree.nearest_n::<kiddo::SquaredEuclidean>(
                    &points[i],
                    std::num::NonZero::new(m).expect("m >= 1"),
                );
                let farthest = found
                    .iter()
                    .max_by(|a, b| a.distance.total_cmp(&b.distance))
                    .map(|nb| nb.item as usize);
                let mut near: Vec<(i64, usize)> = found
                    .iter()
                    .map(|nb| nb.item as usize)
                    .filter(|&j| j != i)
                    .map(|j| (inst.dist(i, j), j))
                    .collect();
                near.sort_unstable();
                if m >= n {
                    return near;
                }
                let kth = near.get(k - 1).map_or(i64::MAX, |d| d.0);
                let far = farthest.map_or(i64::MIN, |j| inst.dist(i, j));
                if near.len() >= k && far >= kth.saturating_add(2) {
                    return near;
                }
                m = (2 * m).min(n);
            }
        };
        Self::from_rows_until(n, k, row, stop)
    }

    fn from_coords(inst: &Instance, k: usize, stop: &(dyn Fn() -> bool + Sync)) -> Option<Self> {
        let tree = PointTree::new(inst);
        let scale = if inst.edge_weight_type == EdgeWeightType::Att {
            10f64.sqrt()
        } else {
            1.0
        };
        let row = |i: usize, k: usize| {
            // Enough nearest points to hold k other cities.
            let mut m = k + 1;
            let mut near = loop {
                let near = tree.nearest(i, m);
                if near.len() >= k || m >= tree.len() {
                    break near;
                }
                m *= 2;
            };
            near.sort_unstable();
            let bound = near[k - 1].0;
            // Every city at integer distance <= bound lies within this Euclidean radius.
            let radius = (bound as f64 + 1.0) * scale;
            let mut all = tree.within(i, radius);
            // Far from the origin (coordinates near 3e16) the radius loses its +1 to rounding
            // and the query can miss cities at exactly the bound: the k nearest found above
            // are always kept, so a list never runs short (a short list left city 0 in its
            // own list, and 2-opt looped forever on the move from a city to itself).
            all.extend_from_slice(&near);
            all.sort_unstable();
            all.dedup();
            all
        };
        Self::from_rows_until(inst.n(), k, row, stop)
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

/// Points searched at most per city for its quadrant lists: enough to leave a dense cluster
/// of a TSPLIB drilling instance, bounded so that 200,000 cities take seconds, not minutes.
const QUADRANT_SEARCH: usize = 2048;

/// A planar instance's distinct points in a k-d tree, queried per city.
struct PointTree<'a> {
    inst: &'a Instance,
    points: Vec<[f64; 2]>,
    members: Vec<Vec<usize>>,
    point_of: Vec<usize>,
    tree: kiddo::ImmutableKdTree<f64, 2>,
}

impl<'a> PointTree<'a> {
    fn new(inst: &'a Instance) -> Self {
        let (points, members, point_of) = inst.distinct_points();
        let tree = kiddo::ImmutableKdTree::new_from_slice(&points);
        PointTree {
            inst,
            points,
            members,
            point_of,
            tree,
        }
    }

    /// Distinct points.
    fn len(&self) -> usize {
        self.points.len()
    }

    /// The cities other than `i` at the `m` points nearest `i`'s (at most all of them), with
    /// their distance to `i`, unordered.
    fn nearest(&self, i: usize, m: usize) -> Vec<(i64, usize)> {
        let count = std::num::NonZero::new(m.clamp(1, self.len())).expect("at least 1");
        let here = &self.points[self.point_of[i]];
        self.cities(
            i,
            &self.tree.nearest_n::<kiddo::SquaredEuclidean>(here, count),
        )
    }

    /// The cities other than `i` within Euclidean `radius` of it, with their distance to `i`.
    fn within(&self, i: usize, radius: f64) -> Vec<(i64, usize)> {
        let here = &self.points[self.point_of[i]];
        self.cities(
            i,
            &self
                .tree
                .within::<kiddo::SquaredEuclidean>(here, radius * radius),
        )
    }

    fn cities(&self, i: usize, found: &[kiddo::NearestNeighbour<f64, u64>]) -> Vec<(i64, usize)> {
        found
            .iter()
            .flat_map(|nb| &self.members[nb.item as usize])
            .filter(|&&j| j != i)
            .map(|&j| (self.inst.dist(i, j), j))
            .collect()
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

    /// The quadrant rule by brute force over every city: the reference of `from_quadrants`.
    fn quadrant_reference(inst: &Instance, k: usize) -> Vec<Vec<usize>> {
        let (n, coords) = (inst.n(), inst.coords());
        let q = (k / 4).max(1);
        (0..n)
            .map(|i| {
                let mut all: Vec<(i64, usize)> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| (inst.dist(i, j), j))
                    .collect();
                all.sort_unstable();
                let quadrant = |j: usize| {
                    let east = coords[j].0 >= coords[i].0;
                    let north = coords[j].1 >= coords[i].1;
                    [[2, 3], [1, 0]][usize::from(north)][usize::from(east)]
                };
                let mut taken = [0; 4];
                let mut chosen: Vec<(i64, usize)> = Vec::new();
                for &(d, j) in &all {
                    if taken[quadrant(j)] < q && chosen.len() < k {
                        taken[quadrant(j)] += 1;
                        chosen.push((d, j));
                    }
                }
                for &(d, j) in &all {
                    if chosen.len() < k && !chosen.contains(&(d, j)) {
                        chosen.push((d, j));
                    }
                }
                chosen.sort_unstable();
                chosen.into_iter().map(|(_, j)| j).collect()
            })
            .collect()
    }

    /// Two dense clusters far apart plus a few cities between, some on one point.
    fn two_clusters() -> Instance {
        let mut coords = Vec::new();
        for c in 0..60 {
            let (dx, dy) = ((c % 8) as f64, (c / 8) as f64);
            coords.push((dx * 3.0, dy * 3.0));
            coords.push((5000.0 + dx * 2.0, 700.0 + dy * 2.0));
        }
        coords.extend([(2500.0, 300.0), (2500.0, 300.0), (1200.0, -800.0)]);
        Instance::from_coords("clusters", EdgeWeightType::Euc2d, coords).unwrap()
    }

    #[test]
    fn quadrant_lists_are_the_brute_force_rules_and_reach_across_clusters() {
        let inst = two_clusters();
        for k in [1, 4, 8, 16] {
            let lists = CandidateLists::by_rule(&inst, k, ListRule::Quadrant);
            let reference = quadrant_reference(&inst, k);
            for (c, want) in reference.iter().enumerate() {
                assert_eq!(lists.of(c), &want[..], "k = {k}, city {c}");
            }
        }
        // City 14 is (21, 0), the first cluster's south-east corner: its 8 nearest are all in
        // the cluster; its quadrant list reaches the city south-east of it, outside.
        let (k, city) = (8, 14);
        assert_eq!(inst.coords()[city], (21.0, 0.0));
        let in_cluster = |j: &usize| inst.coords()[*j].0 < 100.0;
        let nearest = CandidateLists::by_rule(&inst, k, ListRule::Nearest);
        assert!(nearest.of(city).iter().all(in_cluster));
        let quadrant = CandidateLists::by_rule(&inst, k, ListRule::Quadrant);
        assert!(quadrant.of(city).contains(&122), "{:?}", quadrant.of(city));
    }

    #[test]
    fn auto_lists_are_quadrants_on_clustered_planar_instances_only() {
        let clustered = two_clusters();
        assert_eq!(
            clustered.class().layout,
            crate::tsp::features::Layout::Clustered
        );
        assert_eq!(ListRule::Auto.resolve(&clustered), ListRule::Quadrant);
        assert_eq!(ListRule::Nearest.resolve(&clustered), ListRule::Nearest);
        let uniform = crate::tsp::generate::uniform(400, 3).unwrap();
        assert_ne!(
            uniform.class().layout,
            crate::tsp::features::Layout::Clustered
        );
        assert_eq!(ListRule::Auto.resolve(&uniform), ListRule::Nearest);
        assert_eq!(ListRule::Quadrant.resolve(&uniform), ListRule::Quadrant);
        assert_eq!(
            CandidateLists::by_rule(&uniform, 8, ListRule::Auto),
            CandidateLists::from_instance(&uniform, 8)
        );
        for (name, rule) in [
            ("nearest", ListRule::Nearest),
            ("quadrant", ListRule::Quadrant),
            ("auto", ListRule::Auto),
        ] {
            assert_eq!(ListRule::from_name(name), Ok(rule));
        }
        assert!(ListRule::from_name("near")
            .unwrap_err()
            .contains("nearest, quadrant or auto"));
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
