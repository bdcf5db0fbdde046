//! Code shared by the fuzz targets in `fuzz_targets/`:
//!
//! - [`budget`]: how much work building a config would take, so targets can
//!   skip the (valid, but slow) configs that would make each run take
//!   seconds instead of microseconds.
//! - [`reference`]: deliberately naive re-implementations of the placement
//!   rules of `core/SPEC.md` (linear search instead of indexes, whole-table
//!   rebuilds instead of merges), for the targets to compare the library with.

pub mod budget;
pub mod reference;
