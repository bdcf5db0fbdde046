//! Node.js bindings for shardring (napi-rs): converts arguments, maps errors,
//! and nothing else. Placement lives in the `shardring` crate. The public
//! entry point is `shardring.js`, which adds what must not cross the napi
//! boundary once per key (batches packed into one string or buffer).
//!
//! The same rooms as the Python and C bindings: `ring` (the `Ring` class),
//! `options` (the constructor's nodes and options into `RingParams`),
//! `analysis` (`diff`, balance), `bounded` (`LoadTracker`), `keys` (keys,
//! batches, `hashKey`), `errors` (error codes and argument checks), plus
//! `placer`, the raw Node-API fast path of `get`, and `by_id`, the objects
//! keyed by node id.

// Public modules: napi-rs registers the exports from each, and in test
// builds (which skip the registration) that keeps them from counting as dead.
pub mod analysis;
pub mod bounded;
mod by_id;
mod errors;
pub mod follower;
pub mod hot;
pub mod keys;
mod options;
mod placer;
pub mod ring;
pub mod sketch;
pub mod transition;

use napi_derive::napi;

/// The names of every placement algorithm, as the `algorithm` option takes them.
#[napi]
pub fn algorithms() -> Vec<&'static str> {
    shardring::Algorithm::ALL.map(shardring::Algorithm::name).to_vec()
}

/// The placement format this build implements (see core/SPEC.md).
#[napi]
pub const PLACEMENT_FORMAT: u32 = shardring::PLACEMENT_FORMAT;

/// The Lua source of the Redis handoff guard (core/SPEC.md, Handoff):
/// `EVALSHA REDIS_GUARD_SHA1 2 key transition.handoffMark command
/// ...argumentsAfterTheKey` on a moving key's old owner runs the command
/// there unless the key is missing and the mover set the mark; then it
/// answers the error `MOVED_REPLY` (or `TRYAGAIN_REPLY`, while the mover
/// holds the key in doubt) and runs nothing.
#[napi]
pub const REDIS_GUARD: &str = shardring::handoff::REDIS_GUARD;

/// SHA-1 of `REDIS_GUARD`, 40 lowercase hex digits: the name `EVALSHA` takes.
#[napi]
pub const REDIS_GUARD_SHA1: &str = shardring::handoff::REDIS_GUARD_SHA1;

/// The guard's error message when the key is not there: `"SHARDRING_MOVED"`.
#[napi]
pub const MOVED_REPLY: &str = shardring::handoff::MOVED_REPLY;

/// The guard's error message when the key is not there and the mover holds
/// it in doubt (a `MIGRATE` of it got no answer): `"SHARDRING_TRYAGAIN"`.
/// Nothing ran; send the guarded command again after a short wait.
#[napi]
pub const TRYAGAIN_REPLY: &str = shardring::handoff::TRYAGAIN_REPLY;

/// The package version, `"X.Y.Z"`, the same in every binding.
#[napi]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
