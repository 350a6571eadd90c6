//! Permutation flowshop scheduling, makespan objective. (Being written.)
