//! The native algorithms, one file each, every one a [`Scheme`](crate::scheme::Scheme)
//! the registry ([`Algorithm`](crate::Algorithm)) names: weighted vnodes on a
//! 64-bit ring (`vnodes`, the `ring` algorithm), jump hash, JumpBackHash,
//! MementoHash, rendezvous (HRW), Maglev and Redis Cluster's key slots.
//! A file too long for one may keep a part in a folder of its name
//! (`rendezvous/score.rs`, its fixed-point logarithm).

pub mod jump;
pub mod jumpback;
pub mod maglev;
pub(crate) mod memento;
pub(crate) mod rendezvous;
pub mod slots;
pub(crate) mod vnodes;
