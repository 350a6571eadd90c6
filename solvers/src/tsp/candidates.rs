//! Candidate lists: for each city its k nearest neighbours, nearest first (ties by the lower
//! city index), as ACOTSP's `compute_nn_lists` builds them.

use rayon::prelude::*;

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
