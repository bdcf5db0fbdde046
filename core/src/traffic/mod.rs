//! What clients' requests do to a ring, beside where they go: lookups
//! counted per node (`counts`), the most requested keys found in bounded
//! memory (`hot_keys`), the fleet's agreed hot keys kept on more nodes
//! (`hot_set`), and a small cache of their values (`near_cache`).

pub(crate) mod counts;
pub(crate) mod hot_keys;
pub(crate) mod hot_set;
pub(crate) mod near_cache;
