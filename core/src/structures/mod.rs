//! What several algorithms share: the sorted point array every point-based
//! algorithm places keys on (the continuum) and the modula lookup table.

pub(crate) mod continuum;
pub(crate) mod modula;
