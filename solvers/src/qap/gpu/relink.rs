//! Path relinking for rots-block's restarts (`relink`): instead of perturbing a stalled
//! block's own best at random, walk from it toward the elite (the best block's best) one swap
//! at a time and restart from the best permutation on the way that is at least `min_distance`
//! swaps from both ends. The walk runs on the host between launches (O(n) per step through
//! `qap::delta::swap_delta`, at most n - 1 steps); `tests` compare it with a walk that
//! re-scores every step from scratch.

use crate::qap::delta::swap_delta;
use crate::qap::Instance;

/// The best permutation strictly inside the path from `from` to `to` (facility -> location)
/// with at least `min_distance` swaps to each end, and its cost; `None` where the path is too
/// short for one (including `from == to`). Steps fix facilities in index order: facility i
/// takes `to[i]` by swapping with the facility that holds it. Ties go to the earlier step.
pub fn relink(
    inst: &Instance,
    from: &[usize],
    to: &[usize],
    min_distance: usize,
) -> Option<(Vec<usize>, i64)> {
    let n = inst.n();
    let min_distance = min_distance.max(1);
    let mut cur = from.to_vec();
    // location -> facility, kept with `cur`.
    let mut at = vec![0usize; n];
    for (facility, &loc) in cur.iter().enumerate() {
        at[loc] = facility;
    }
    let distance = path_length(from, to);
    if distance < 2 * min_distance {
        return None;
    }
    let mut cost = inst.cost(&cur);
    let mut best: Option<(Vec<usize>, i64)> = None;
    let mut step = 0;
    for i in 0..n {
        if cur[i] == to[i] {
            continue;
        }
        let j = at[to[i]];
        cost += swap_delta(inst, &cur, i, j);
        cur.swap(i, j);
        at[cur[i]] = i;
        at[cur[j]] = j;
        step += 1;
        if step >= min_distance
            && distance - step >= min_distance
            && best.as_ref().is_none_or(|b| cost < b.1)
        {
            best = Some((cur.clone(), cost));
        }
    }
    best
}

/// Swaps the walk from `from` to `to` takes: n minus the cycles of the permutation that maps
/// one onto the other.
pub fn path_length(from: &[usize], to: &[usize]) -> usize {
    let n = from.len();
    let mut inv_to = vec![0usize; n];
    for (facility, &loc) in to.iter().enumerate() {
        inv_to[loc] = facility;
    }
    let mut seen = vec![false; n];
    let mut cycles = 0;
    for start in 0..n {
        if seen[start] {
            continue;
        }
        cycles += 1;
        let mut f = start;
        while !seen[f] {
            seen[f] = true;
            // The facility that holds, in `to`, the location f holds in `from`.
            f = inv_to[from[f]];
        }
    }
    n - cycles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qap::gpu::start_permutation;

    /// The same walk, every step re-scored from scratch.
    fn reference(
        inst: &Instance,
        from: &[usize],
        to: &[usize],
        min_distance: usize,
    ) -> Option<(Vec<usize>, i64)> {
        let mut path = vec![from.to_vec()];
        let mut cur = from.to_vec();
        for i in 0..from.len() {
            if cur[i] != to[i] {
                let j = cur.iter().position(|&l| l == to[i]).unwrap();
                cur.swap(i, j);
                path.push(cur.clone());
            }
        }
        assert_eq!(&cur, to, "the walk ends at the guide");
        let d = path.len() - 1;
        let m = min_distance.max(1);
        let mut best: Option<(Vec<usize>, i64)> = None;
        for (k, p) in path.iter().enumerate() {
            if k >= m && d - k >= m {
                let c = inst.cost(p);
                if best.as_ref().is_none_or(|b| c < b.1) {
                    best = Some((p.clone(), c));
                }
            }
        }
        best
    }

    #[test]
    fn matches_the_from_scratch_walk() {
        for (n, seed) in [(12usize, 1u64), (30, 2), (57, 3)] {
            let inst = crate::qap::generate(n, seed).unwrap();
            // An asymmetric one with a diagonal too.
            let a: Vec<i64> = (0..n * n).map(|k| ((k * 7919) % 23) as i64).collect();
            let b: Vec<i64> = (0..n * n)
                .map(|k| ((k * 104_729) % 17) as i64 - 3)
                .collect();
            let asym = Instance::new("asym", n, a, b).unwrap();
            for inst in [&inst, &asym] {
                for pair in 0..4u64 {
                    let from = start_permutation(n, seed, 2 * pair);
                    let to = start_permutation(n, seed, 2 * pair + 1);
                    for m in [0, 1, 3, n / 4, n] {
                        let got = relink(inst, &from, &to, m);
                        assert_eq!(got, reference(inst, &from, &to, m), "n = {n}, m = {m}");
                        if let Some((p, c)) = got {
                            crate::permutation::check(&p, n).unwrap();
                            assert_eq!(inst.cost(&p), c);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn short_paths_give_nothing() {
        let inst = crate::qap::generate(10, 1).unwrap();
        let p = start_permutation(10, 1, 0);
        assert_eq!(relink(&inst, &p, &p, 1), None);
        let mut q = p.clone();
        q.swap(2, 7);
        assert_eq!(path_length(&p, &q), 1);
        assert_eq!(relink(&inst, &p, &q, 1), None);
        q.swap(3, 4);
        assert_eq!(path_length(&p, &q), 2);
        let (mid, _) = relink(&inst, &p, &q, 1).unwrap();
        assert_eq!(path_length(&p, &mid), 1);
        assert_eq!(path_length(&mid, &q), 1);
    }
}
