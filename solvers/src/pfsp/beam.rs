//! Bidirectional beam search: the CPU reference of the GPU's `pfsp/beam.cu`, and the start of
//! ig-block's walks where `--beam` asks for it.
//!
//! After Libralesso, Focke, Secardin & Jost (iterative beam search for the permutation
//! flowshop, EJOR 2022): a node is a partial schedule with a prefix (jobs placed from the
//! front) and a suffix (jobs placed from the back). A level places one more job, in the
//! direction chosen for the whole level: the one whose children's bounds sum higher, since a
//! higher sum means the bound tells the children apart. Of all children the `width` of
//! smallest guide survive.
//!
//! Everything here is integer and ordered so that the GPU can reproduce it exactly:
//! - a child of beam node `p` placing job `j` has index `p * n + j`;
//! - its bound is `max_k (front_k + remaining_k + tail_k)` (exact at the last level);
//! - its guide is `10 * bound + idle_weight * idle`, where idle is the machines' idle time
//!   inside the prefix and the suffix (the weight is in tenths); at the last level the guide
//!   is the makespan alone, so the final beam is ordered by makespan;
//! - its key is `guide << b | index`, b the bits of the largest index (`index_bits`): unique,
//!   so the `width` smallest keys are one set, and the next beam keeps them in index order.
//!
//! On Taillard's 200 x 20 instances a beam of a few thousand nodes builds sequences that the
//! iterated greedy's walks do not reach (ta103: 11319 at width 16384, where every ig-block and
//! IG_BoB walk ends at 11390; docs/pfsp-gpu.md).

use super::instance::Instance;

/// The most children a level may have (the kernels count them in 32 bits).
pub const MAX_CHILDREN: u64 = 1 << 32;

/// Bits of a key that hold a child's index: enough for `width * n` children, at least one.
pub fn index_bits(jobs: usize, width: usize) -> u32 {
    let last = (width as u64 * jobs as u64).saturating_sub(1);
    (u64::BITS - last.leading_zeros()).max(1)
}
/// The guide's scale: the bound counts ten times, the idle time `idle_weight` times.
pub const BOUND_SCALE: i64 = 10;

/// Settings of one beam search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeamParams {
    /// Nodes kept per level.
    pub width: usize,
    /// Weight of the idle time in the guide, in tenths of the bound's.
    pub idle_weight: i64,
}

/// Why a beam cannot run on an instance.
pub fn check(inst: &Instance, params: &BeamParams) -> Result<(), String> {
    if params.width == 0 {
        return Err("beam width must be at least 1".into());
    }
    if !(0..=100).contains(&params.idle_weight) {
        return Err(format!(
            "beam idle weight must be in 0..=100 (tenths of the bound's), got {}",
            params.idle_weight
        ));
    }
    let children = params.width as u128 * inst.jobs as u128;
    if children > MAX_CHILDREN as u128 {
        return Err(format!(
            "beam width {} x {} jobs = {children} children per level; at most 2^32",
            params.width, inst.jobs
        ));
    }
    let bits = index_bits(inst.jobs, params.width);
    // Every bound and idle time is at most the sum of all times (times the machines for
    // the idle time), and the guide must leave the index its bits.
    let total: i64 = inst.times_machine_major().iter().sum();
    let guide = BOUND_SCALE as i128 * total as i128
        + params.idle_weight as i128 * total as i128 * inst.machines as i128;
    if guide >= 1i128 << (63 - bits) {
        return Err(format!(
            "the beam's guide (10 x bound + {} x idle time) may reach {guide}, past the 2^{} \
             its key holds beside {bits} bits of child index; lower the idle weight or the width",
            params.idle_weight,
            63 - bits
        ));
    }
    Ok(())
}

/// A partial schedule: front[k] is when the prefix leaves machine k, tail[k] how long the
/// suffix takes from its start on machine k to the end, remaining[k] the work on machine k
/// of the jobs not placed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    front: Vec<i64>,
    tail: Vec<i64>,
    remaining: Vec<i64>,
    idle: i64,
    placed: Vec<bool>,
    /// Index of the parent in the previous level's beam, and the job placed with its
    /// direction (forward: appended to the prefix).
    parent: usize,
    job: usize,
    forward: bool,
    /// The key it was selected by.
    key: u64,
}

/// One direction's child of `node` placing `job`: its bound and the idle time it adds, and
/// (when `apply`) the node's new front or tail.
fn child(inst: &Instance, node: &Node, job: usize, forward: bool) -> (i64, i64, Vec<i64>) {
    let m = inst.machines;
    let mut out = if forward {
        node.front.clone()
    } else {
        node.tail.clone()
    };
    let mut bound = 0i64;
    let mut idle = 0i64;
    let mut previous = 0i64;
    for step in 0..m {
        let k = if forward { step } else { m - 1 - step };
        let before = out[k];
        let start = previous.max(before);
        if step > 0 {
            idle += start - before;
        }
        previous = start + inst.time(k, job);
        out[k] = previous;
        let other = if forward { node.tail[k] } else { node.front[k] };
        bound = bound.max(previous + node.remaining[k] - inst.time(k, job) + other);
    }
    (bound, idle, out)
}

/// The guide of a child (see the module documentation).
pub fn guide(bound: i64, idle: i64, idle_weight: i64, last_level: bool) -> i64 {
    if last_level {
        bound
    } else {
        BOUND_SCALE * bound + idle_weight * idle
    }
}

/// The key of a child: guide first, then index (`bits` from [`index_bits`]).
pub fn key(guide: i64, index: usize, bits: u32) -> u64 {
    ((guide as u64) << bits) | index as u64
}

/// The result of a beam search: the final beam's sequences in order of makespan (then of
/// index), with their makespans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beam {
    pub sequences: Vec<(Vec<usize>, i64)>,
    /// Children whose bound was evaluated, over all levels and both directions.
    pub children: u64,
    /// Each level's direction (true: forward).
    pub directions: Vec<bool>,
}

/// A bidirectional beam search of `params.width` nodes (see the module documentation).
pub fn beam_search(inst: &Instance, params: &BeamParams) -> Beam {
    let (n, m) = (inst.jobs, inst.machines);
    let remaining = (0..m)
        .map(|k| (0..n).map(|j| inst.time(k, j)).sum())
        .collect();
    let root = Node {
        front: vec![0; m],
        tail: vec![0; m],
        remaining,
        idle: 0,
        placed: vec![false; n],
        parent: 0,
        job: 0,
        forward: true,
        key: 0,
    };
    let mut levels: Vec<Vec<Node>> = Vec::with_capacity(n);
    let mut beam = vec![root];
    let mut children = 0u64;
    let mut directions = Vec::with_capacity(n);
    let bits = index_bits(n, params.width);
    for depth in 0..n {
        let last = depth + 1 == n;
        // Both directions' bound sums decide the level's direction.
        let (mut forward_sum, mut backward_sum) = (0i64, 0i64);
        for node in &beam {
            for job in (0..n).filter(|&j| !node.placed[j]) {
                forward_sum += child(inst, node, job, true).0;
                backward_sum += child(inst, node, job, false).0;
                children += 2;
            }
        }
        let forward = backward_sum <= forward_sum;
        directions.push(forward);
        let mut keys: Vec<(u64, usize, usize)> = Vec::new();
        for (p, node) in beam.iter().enumerate() {
            for job in (0..n).filter(|&j| !node.placed[j]) {
                let (bound, idle, _) = child(inst, node, job, forward);
                let g = guide(bound, node.idle + idle, params.idle_weight, last);
                keys.push((key(g, p * n + job, bits), p, job));
            }
        }
        let keep = params.width.min(keys.len());
        if keep < keys.len() {
            keys.select_nth_unstable(keep - 1);
            keys.truncate(keep);
        }
        // The next beam in index order (which the key's low bits are).
        keys.sort_unstable_by_key(|&(k, _, _)| k & ((1 << bits) - 1));
        let next: Vec<Node> = keys
            .iter()
            .map(|&(k, p, job)| {
                let parent = &beam[p];
                let (_, idle, row) = child(inst, parent, job, forward);
                let mut node = parent.clone();
                if forward {
                    node.front = row;
                } else {
                    node.tail = row;
                }
                for k in 0..m {
                    node.remaining[k] -= inst.time(k, job);
                }
                node.idle += idle;
                node.placed[job] = true;
                node.parent = p;
                node.job = job;
                node.forward = forward;
                node.key = k;
                node
            })
            .collect();
        levels.push(std::mem::replace(&mut beam, next));
    }
    levels.push(beam);
    let last = levels.last().map_or(&[][..], |l| &l[..]);
    // The last level's guide is its bound, exact for a complete schedule: the makespan.
    let mut order: Vec<usize> = (0..last.len()).collect();
    order.sort_by_key(|&i| last[i].key);
    Beam {
        sequences: order
            .into_iter()
            .map(|i| (sequence_of(&levels, i), (last[i].key >> bits) as i64))
            .collect(),
        children,
        directions,
    }
}

/// The sequence of node `index` of the last level: the forward jobs in level order, then the
/// backward jobs in reverse level order.
fn sequence_of(levels: &[Vec<Node>], mut index: usize) -> Vec<usize> {
    let mut prefix = Vec::new();
    let mut suffix = Vec::new();
    for level in levels.iter().skip(1).rev() {
        let node = &level[index];
        if node.forward {
            prefix.push(node.job);
        } else {
            suffix.push(node.job);
        }
        index = node.parent;
    }
    prefix.reverse();
    prefix.extend(suffix);
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permutation;
    use crate::pfsp::generate;

    fn small() -> Instance {
        generate(9, 5, 873654221)
    }

    #[test]
    fn a_beam_wide_enough_to_keep_every_node_is_exhaustive() {
        // Width n! keeps every partial schedule, so the beam sees every sequence.
        let inst = generate(6, 4, 1234);
        let beam = beam_search(
            &inst,
            &BeamParams {
                width: 720,
                idle_weight: 0,
            },
        );
        let mut best = i64::MAX;
        let mut seq: Vec<usize> = (0..6).collect();
        permutohedron_min(&inst, &mut seq, 0, &mut best);
        assert_eq!(beam.sequences[0].1, best);
    }

    fn permutohedron_min(inst: &Instance, seq: &mut Vec<usize>, k: usize, best: &mut i64) {
        if k == seq.len() {
            *best = (*best).min(inst.makespan(seq));
            return;
        }
        for i in k..seq.len() {
            seq.swap(k, i);
            permutohedron_min(inst, seq, k + 1, best);
            seq.swap(k, i);
        }
    }

    #[test]
    fn every_final_sequence_is_a_permutation_whose_bound_is_its_makespan() {
        let inst = small();
        for idle_weight in [0, 5] {
            let beam = beam_search(
                &inst,
                &BeamParams {
                    width: 16,
                    idle_weight,
                },
            );
            assert_eq!(beam.sequences.len(), 16);
            assert_eq!(beam.directions.len(), inst.jobs);
            for pair in beam.sequences.windows(2) {
                assert!(pair[0].1 <= pair[1].1);
            }
            for (seq, makespan) in &beam.sequences {
                permutation::check(seq, inst.jobs).expect("a permutation");
                assert_eq!(inst.makespan(seq), *makespan);
            }
        }
    }

    #[test]
    fn a_wider_beam_is_not_worse_here_and_both_directions_are_taken() {
        let inst = generate(20, 10, 587595453);
        let narrow = beam_search(
            &inst,
            &BeamParams {
                width: 1,
                idle_weight: 0,
            },
        );
        let wide = beam_search(
            &inst,
            &BeamParams {
                width: 64,
                idle_weight: 0,
            },
        );
        assert!(wide.sequences[0].1 <= narrow.sequences[0].1);
        assert!(wide.directions.iter().any(|&f| f) && wide.directions.iter().any(|&f| !f));
    }

    #[test]
    fn check_names_the_width_and_the_weight() {
        let inst = small();
        let err = check(
            &inst,
            &BeamParams {
                width: 0,
                idle_weight: 0,
            },
        )
        .unwrap_err();
        assert!(err.contains("width"), "{err}");
        let err = check(
            &inst,
            &BeamParams {
                width: 4,
                idle_weight: 101,
            },
        )
        .unwrap_err();
        assert!(err.contains("idle weight"), "{err}");
        let err = check(
            &inst,
            &BeamParams {
                width: 1 << 30,
                idle_weight: 0,
            },
        )
        .unwrap_err();
        assert!(err.contains("children per level"), "{err}");
        assert!(check(
            &inst,
            &BeamParams {
                width: 1024,
                idle_weight: 10
            }
        )
        .is_ok());
        // Large times leave the guide the bits the index does not need.
        assert_eq!(
            (
                index_bits(9, 1),
                index_bits(9, 16),
                index_bits(200, 1 << 20)
            ),
            (4, 8, 28)
        );
        let times = inst
            .times_machine_major()
            .iter()
            .map(|&t| t << 25)
            .collect();
        let large = Instance::new("large", inst.jobs, inst.machines, times).unwrap();
        assert!(check(
            &large,
            &BeamParams {
                width: 64,
                idle_weight: 0
            }
        )
        .is_ok());
        let err = check(
            &large,
            &BeamParams {
                width: 1 << 24,
                idle_weight: 0,
            },
        )
        .unwrap_err();
        assert!(err.contains("guide"), "{err}");
    }
}
