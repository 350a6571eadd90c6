//! The campaign engine: a campaign file resolved into instances, classes and a space
//! ([`campaign`]), the runners that turn a point into a trial on the CPU or through a GPU
//! worker ([`runner`]), and the tuning loop that drives a strategy over them and records every
//! trial in the store ([`tune`]).

pub mod bundle;
pub mod campaign;
pub mod pick;
pub mod runner;
pub mod tune;
