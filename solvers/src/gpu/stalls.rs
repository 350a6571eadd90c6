//! Stall counting for the restarts of the GPU solvers that run independent searches per block
//! (QAP rots-block's blocks, PFSP's iterated-greedy walks, HW/SW gpts-multi's searches): per
//! search, its best so far and the launches since that best improved. Each family decides what
//! a due search restarts from; this only says which are due.

/// Per search: the best value seen after a launch and the launches since it improved.
#[derive(Debug, Clone)]
pub struct Stalls {
    best: Vec<i64>,
    since: Vec<u32>,
}

impl Stalls {
    /// Searches that start with these bests (`i64::MAX` where none is known yet).
    pub fn new(start: Vec<i64>) -> Stalls {
        Stalls {
            since: vec![0; start.len()],
            best: start,
        }
    }

    /// Counts a launch from each search's best (minimised); returns the searches whose best
    /// improved.
    pub fn count(&mut self, bests: &[i64]) -> Vec<usize> {
        let mut improved = Vec::new();
        for (i, (&now, (best, since))) in bests
            .iter()
            .zip(self.best.iter_mut().zip(self.since.iter_mut()))
            .enumerate()
        {
            if now < *best {
                *best = now;
                *since = 0;
                improved.push(i);
            } else {
                *since += 1;
            }
        }
        improved
    }

    /// Launches since `search`'s best last improved.
    pub fn since(&self, search: usize) -> u32 {
        self.since.get(search).copied().unwrap_or(0)
    }

    /// Whether `search` has gone `stall` launches without improving (never with a stall of 0:
    /// that search does not restart).
    pub fn due(&self, search: usize, stall: u32) -> bool {
        stall > 0 && self.since(search) >= stall
    }

    /// Starts `search`'s count again: it restarted.
    pub fn restarted(&mut self, search: usize) {
        if let Some(s) = self.since.get_mut(search) {
            *s = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_without_improvement_make_a_search_due() {
        let mut s = Stalls::new(vec![100, i64::MAX]);
        assert_eq!(
            s.count(&[100, 50]),
            [1],
            "the first best known counts as an improvement"
        );
        assert_eq!(s.count(&[100, 50]), Vec::<usize>::new());
        assert_eq!((s.since(0), s.since(1)), (2, 1));
        assert!(s.due(0, 2) && !s.due(1, 2) && !s.due(0, 0));
        s.restarted(0);
        assert_eq!(s.since(0), 0);
        assert_eq!(s.count(&[99, 50]), [0]);
        assert_eq!(s.since(1), 2);
    }
}
