//! The TSP on the GPU: the host side of the kernels in `kernels/tsp/`.

pub mod local_search;
