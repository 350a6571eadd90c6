//! Quadratic assignment problem. (Being written.)
