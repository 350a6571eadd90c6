//! Incremental evaluation of 2-flip moves.
//!
//! Flipping node i changes H by `h_i (2 x_i - 1)`, S by `s_i (1 - 2 x_i)`, and C by
//! `dc_i = sum_{(i,k) in E} c_ik (1 - 2 |x_i - x_k|)` (each incident edge switches between
//! cut and uncut). Flipping i and j together adds both, except that an edge (i, j) stays as
//! it was, so its contribution is taken out twice: `dC = dc_i + dc_j - 2 c_ij (1 - 2 |x_i -
//! x_j|)`. [`flip2_costs`] evaluates one candidate from the two nodes' adjacency, as the
//! GPU kernel does; the search caches `dc` per iteration, which gives the same numbers in
//! O(1) per candidate.

use super::instance::{Costs, Instance};

/// Change of C when node i alone flips.
pub fn single_flip_comm(inst: &Instance, x: &[u8], i: usize) -> i64 {
    inst.neighbours(i)
        .iter()
        .map(|&(k, c)| if x[i] == x[k] { c } else { -c })
        .sum()
}

/// `dc_i` for every node.
pub fn single_flip_comms(inst: &Instance, x: &[u8]) -> Vec<i64> {
    (0..inst.n())
        .map(|i| single_flip_comm(inst, x, i))
        .collect()
}

/// The costs after flipping i and j (i != j), from the current costs and the two nodes'
/// adjacency.
pub fn flip2_costs(inst: &Instance, x: &[u8], current: Costs, i: usize, j: usize) -> Costs {
    let mut comm = single_flip_comm(inst, x, i) + single_flip_comm(inst, x, j);
    // The edge (i, j), if any, is counted by both single flips but does not change.
    for &(k, c) in inst.neighbours(i) {
        if k == j {
            comm -= 2 * if x[i] == x[j] { c } else { -c };
        }
    }
    flip2_from_parts(inst, x, current, i, j, comm)
}

/// The costs after flipping i and j given the communication change.
#[inline]
pub fn flip2_from_parts(
    inst: &Instance,
    x: &[u8],
    current: Costs,
    i: usize,
    j: usize,
    comm_delta: i64,
) -> Costs {
    let (h, s) = (inst.hardware(), inst.software());
    let dh = |k: usize| if x[k] == 0 { -h[k] } else { h[k] };
    let ds = |k: usize| if x[k] == 0 { s[k] } else { -s[k] };
    Costs {
        hardware: current.hardware + dh(i) + dh(j),
        software: current.software + ds(i) + ds(j),
        communication: current.communication + comm_delta,
    }
}
