//! `diff`, `RingDiff`, `Balance` and `Spread`: the core's analysis results
//! as JS objects.

use napi::bindgen_prelude::{BigInt, Buffer, Utf16String};
use napi::{Either, Env, Result};
use napi_derive::napi;

use crate::by_id::ById;
use crate::errors::throw;
use crate::keys::unpack;
use crate::ring::Ring;

/// Share of the hash space moving from one node to another.
#[napi(object)]
pub struct Flow {
    /// Owner in the old ring.
    pub from: String,
    /// Owner in the new ring.
    pub to: String,
    /// Fraction of all keys moving, in (0, 1].
    pub share: f64,
}

/// Keys whose hash h has start <= h <= end move from `from` to `to`.
#[napi(object)]
pub struct MovedArc {
    /// First hash of the arc (inclusive).
    pub start: BigInt,
    /// Last hash of the arc (inclusive).
    pub end: BigInt,
    /// Owner in the old ring.
    pub from: String,
    /// Owner in the new ring.
    pub to: String,
}

/// The exact difference between two rings (see `diff`).
#[napi(object)]
pub struct RingDiff {
    /// Fraction of all keys whose owner differs, in [0, 1].
    pub moved_share: f64,
    /// Moved share per (from, to) pair, largest first.
    pub flows: Vec<Flow>,
    /// The arcs that change owner, in ring order (the migration plan).
    pub arcs: Vec<MovedArc>,
}

/// Spread of per-node loads against a reference (1.0 is perfect).
#[napi(object)]
pub struct Spread {
    /// Coefficient of variation (population standard deviation over mean).
    pub cv: f64,
    /// Largest load over the reference.
    pub max_over_mean: f64,
    /// Smallest load over the reference.
    pub min_over_mean: f64,
}

impl From<shardring::Spread> for Spread {
    fn from(s: shardring::Spread) -> Spread {
        Spread { cv: s.cv, max_over_mean: s.max_over_mean, min_over_mean: s.min_over_mean }
    }
}

/// Per-node key counts of a sample and how evenly they spread.
#[napi(object, object_from_js = false)]
pub struct Balance {
    /// Keys in the sample.
    pub keys: f64,
    /// Keys per node id (drained nodes included).
    #[napi(ts_type = "Record<string, number>")]
    pub counts: ById<f64>,
    /// Spread of the counts over the nodes with weight > 0, against their mean.
    pub by_node: Spread,
    /// Spread of each count over its fair count (keys x weight share).
    pub by_weight: Spread,
}

impl Balance {
    /// The core's balance of a sample placed on `ring`, by node id.
    fn new(ring: &shardring::Ring, balance: shardring::Balance) -> Balance {
        let ids = ring.nodes().iter().map(|n| n.id().to_owned());
        Balance {
            keys: balance.keys as f64,
            counts: ids.zip(balance.counts.iter().map(|&c| c as f64)).collect(),
            by_node: balance.by_node.into(),
            by_weight: balance.by_weight.into(),
        }
    }
}

/// `ring.balance(keys)` (see `shardring.js`): the balance of a batch packed
/// by `shardring.js` (see `unpack`), placed on the ring's current snapshot.
/// Throws `RING_EMPTY_RING`, `RangeError` or `RING_INVALID_UTF8` as `unpack`.
#[napi(js_name = "_balance", skip_typescript)]
pub fn balance(env: Env, ring: &Ring, joined: Either<Utf16String, Buffer>, lengths: &[u32]) -> Result<Balance> {
    let packed = unpack(&env, &joined, lengths)?;
    let ring = ring.current();
    let balance = ring.balance(packed.iter()).map_err(|e| throw(&env, e))?;
    Ok(Balance::new(&ring, balance))
}

/// The exact difference between two rings of one algorithm and seed,
/// position by position (by node id): the moved share, the share per (from,
/// to) pair and the arcs that change owner. Throws `RING_SEED_MISMATCH`,
/// `RING_ALGORITHM_MISMATCH`, `RING_EMPTY_RING`, or (from `shardring.js`)
/// `TypeError` unless both are rings.
#[napi]
pub fn diff(env: Env, old_ring: &Ring, new_ring: &Ring) -> Result<RingDiff> {
    Ok(ring_diff(old_ring.current().diff(&new_ring.current()).map_err(|e| throw(&env, e))?))
}

/// The core's diff as the JS object.
pub(crate) fn ring_diff(diff: shardring::RingDiff) -> RingDiff {
    RingDiff {
        moved_share: diff.moved_share,
        flows: diff.flows.into_iter().map(|f| Flow { from: f.from, to: f.to, share: f.share }).collect(),
        arcs: diff
            .arcs
            .into_iter()
            .map(|a| MovedArc { start: BigInt::from(a.start), end: BigInt::from(a.end), from: a.from, to: a.to })
            .collect(),
    }
}
