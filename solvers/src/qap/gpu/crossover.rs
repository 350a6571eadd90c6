//! Crossover between blocks for rots-block's restarts (`crossover`): a memetic step in the
//! spirit of the hybrid genetic algorithms that lead on Taillard's tai*a instances (Misevicius;
//! Drezner; Benlic and Hao's BMA). The population is the blocks' bests; a stalled block
//! restarts from the child of its own best and a partner's best, and its tabu search then
//! improves the child. The block's best (its member of the population) is replaced only
//! where the child's search beats it, so the population keeps its diversity, which the
//! measurements in [`super::rots_block`] showed matters more than copying the elite.

use rand::seq::SliceRandom;
use rand::Rng;

use crate::run::SolverRng;

/// Uniform-like crossover (ULX, Tate and Smith): every assignment the parents share is kept;
/// each other facility takes, in a random order, one of its parents' locations (chosen at
/// random, the other parent's where that one is already taken); the facilities left over take
/// the free locations in random order. Both parents must be permutations of 0..n.
pub fn uniform_like(a: &[usize], b: &[usize], rng: &mut SolverRng) -> Vec<usize> {
    let n = a.len();
    let free = usize::MAX;
    let mut child = vec![free; n];
    let mut taken = vec![false; n];
    let mut open: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        if a[i] == b[i] {
            child[i] = a[i];
            taken[a[i]] = true;
        } else {
            open.push(i);
        }
    }
    open.shuffle(rng);
    let mut unplaced = Vec::new();
    for &i in &open {
        let (first, second) = if rng.random_bool(0.5) {
            (a[i], b[i])
        } else {
            (b[i], a[i])
        };
        match [first, second].into_iter().find(|&l| !taken[l]) {
            Some(l) => {
                child[i] = l;
                taken[l] = true;
            }
            None => unplaced.push(i),
        }
    }
    let mut left: Vec<usize> = (0..n).filter(|&l| !taken[l]).collect();
    left.shuffle(rng);
    for (i, l) in unplaced.into_iter().zip(left) {
        child[i] = l;
    }
    child
}

/// A partner for block `me` among the `p` blocks, by binary tournament on their best costs
/// (the better of two random other blocks): a pressure toward good parents that still lets
/// every block's best be chosen. `None` with fewer than two blocks.
pub fn tournament(costs: &[i64], me: usize, rng: &mut SolverRng) -> Option<usize> {
    let p = costs.len();
    if p < 2 {
        return None;
    }
    let mut other = || {
        let k = rng.random_range(0..p - 1);
        if k >= me {
            k + 1
        } else {
            k
        }
    };
    let (x, y) = (other(), other());
    Some(if costs[y] < costs[x] { y } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qap::gpu::relink::path_length;
    use crate::qap::gpu::start_permutation;

    #[test]
    fn the_child_is_a_permutation_that_keeps_what_the_parents_share() {
        let mut rng = crate::run::stream_rng(7, 0);
        for (n, seed) in [(2usize, 1u64), (12, 2), (57, 3), (150, 4)] {
            for pair in 0..6u64 {
                let a = start_permutation(n, seed, 2 * pair);
                let mut b = start_permutation(n, seed, 2 * pair + 1);
                // Parents that share about half their assignments, as two good ones do.
                for i in (0..n).step_by(2) {
                    let j = b.iter().position(|&l| l == a[i]).unwrap();
                    b.swap(i, j);
                }
                let child = uniform_like(&a, &b, &mut rng);
                crate::permutation::check(&child, n).unwrap();
                let mut from_a_or_b = 0;
                for i in 0..n {
                    if a[i] == b[i] {
                        assert_eq!(child[i], a[i], "shared assignment {i} lost, n = {n}");
                    }
                    if child[i] == a[i] || child[i] == b[i] {
                        from_a_or_b += 1;
                    }
                }
                // Inheritance fails only for facilities whose both locations were taken.
                assert!(
                    from_a_or_b * 4 >= n * 3,
                    "n = {n}: only {from_a_or_b} assignments inherited"
                );
                if n > 2 && a != b {
                    // The child mixes: it is neither parent (with overwhelming probability
                    // for these sizes, and the seed is fixed).
                    assert!(path_length(&child, &a) > 0 || path_length(&child, &b) > 0);
                }
            }
        }
    }

    #[test]
    fn identical_parents_give_themselves_and_a_seed_gives_one_child() {
        let a = start_permutation(40, 9, 0);
        let b = start_permutation(40, 9, 1);
        let mut rng = crate::run::stream_rng(1, 0);
        assert_eq!(uniform_like(&a, &a, &mut rng), a);
        let one = uniform_like(&a, &b, &mut crate::run::stream_rng(3, 0));
        let two = uniform_like(&a, &b, &mut crate::run::stream_rng(3, 0));
        assert_eq!(one, two);
        let other = uniform_like(&a, &b, &mut crate::run::stream_rng(4, 0));
        assert_ne!(one, other, "another seed, another child");
    }

    #[test]
    fn tournament_never_picks_the_block_itself_and_prefers_better_bests() {
        let costs: Vec<i64> = (0..10).map(|k| 100 - k).collect();
        let mut rng = crate::run::stream_rng(5, 0);
        let mut picks = [0usize; 10];
        for _ in 0..4000 {
            let j = tournament(&costs, 3, &mut rng).unwrap();
            assert_ne!(j, 3);
            picks[j] += 1;
        }
        assert_eq!(picks[3], 0);
        // Block 9 holds the best cost: it wins every tournament it enters (about 2/9 of
        // them); block 0, the worst, wins only against itself (about 1/81).
        assert!(picks[9] > 700, "{picks:?}");
        assert!(picks[0] < 150, "{picks:?}");
        assert_eq!(tournament(&[5], 0, &mut rng), None);
        assert_eq!(tournament(&[5, 6], 0, &mut rng), Some(1));
    }
}
