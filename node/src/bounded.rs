//! `LoadTracker`: bounded loads (the core's `LoadTracker`) for Node.
//! `shardring.js` wraps `_acquire` into `acquire`, adding `release()`.

use std::sync::Arc;

use arc_swap::ArcSwap;
use napi::{Env, Result, Unknown};
use napi_derive::napi;

use crate::by_id::ById;
use crate::errors::{Id, number, throw};
use crate::keys::with_key;
use crate::ring::{Ring, RingCell};

/// Where `_acquire` sent a request.
#[napi(object)]
pub struct Acquired {
    /// Id of the node the request went to.
    pub node: String,
    /// Distinct nodes tried, including the one taken (1 = the key's owner).
    pub probes: u32,
}

/// Consistent hashing with bounded loads (Mirrokni, Thorup and
/// Zadimoghaddam, 2017): live load per node of a ring; each request goes to
/// the first node in its key's preference order under capacity
/// `max(1, ceil((1 + epsilon) * (total load + 1) * weight / total weight))`.
/// Follows the ring as it changes in place: after `ring.removeNode('a')` no
/// request goes to `a` (its load leaves with it). Shared by worker threads
/// only through the ring's config: each thread keeps its own tracker.
#[napi]
pub struct LoadTracker {
    tracker: shardring::LoadTracker,
    /// The ring followed (replaced by `swap`).
    ring: ArcSwap<RingCell>,
}

impl LoadTracker {
    /// The tracker, moved onto its ring's current snapshot.
    fn current(&self) -> &shardring::LoadTracker {
        self.tracker.follow(&self.ring.load().load_full());
        &self.tracker
    }
}

#[napi]
impl LoadTracker {
    /// A tracker over `ring` with every load 0. Throws `RING_INVALID_EPSILON`
    /// unless `epsilon` is finite and > 0 (Envoy's `hash_balance_factor` 125
    /// is epsilon 0.25), `TypeError` unless given a Ring (checked by
    /// `shardring.js`) and a number.
    #[napi(constructor, ts_args_type = "ring: Ring, epsilon: number")]
    pub fn new(env: Env, ring: &Ring, epsilon: Unknown<'_>) -> Result<Self> {
        let epsilon = number(&env, epsilon, "epsilon")?;
        let tracker = shardring::LoadTracker::new(ring.current(), epsilon).map_err(|e| throw(&env, e))?;
        Ok(LoadTracker { tracker, ring: ArcSwap::from_pointee(Arc::clone(&ring.cell)) })
    }

    /// A tracker bounding loads as HAProxy's `hash-balance-factor` does (a
    /// whole number above 100, a percentage of the average load) over an
    /// `"haproxy"` ring: the servers HAProxy picks while that many requests
    /// are in flight on each. Throws `RING_INVALID_CONFIG` for a factor of
    /// 100 or less or a ring of another algorithm.
    #[napi(factory, ts_args_type = "ring: Ring, hashBalanceFactor: number")]
    pub fn haproxy(env: Env, ring: &Ring, hash_balance_factor: Unknown<'_>) -> Result<Self> {
        let factor = crate::errors::whole(&env, hash_balance_factor, "hashBalanceFactor", f64::from(u32::MAX))? as u32;
        let tracker = shardring::LoadTracker::haproxy(ring.current(), factor).map_err(|e| throw(&env, e))?;
        Ok(LoadTracker { tracker, ring: ArcSwap::from_pointee(Arc::clone(&ring.cell)) })
    }

    /// Assigns a request for `key` and adds one to its node's load; use
    /// `acquire`, which adds `release()`. Throws `RING_EMPTY_RING`.
    #[napi(js_name = "_acquire", skip_typescript)]
    pub fn acquire(&self, env: Env, key: Unknown<'_>) -> Result<Acquired> {
        let tracker = self.current();
        // The JS lease gives the load back with release().
        let lease =
            with_key(&env, key, |bytes| tracker.acquire(bytes).map(|l| l.detach()))?.map_err(|e| throw(&env, e))?;
        Ok(Acquired { node: lease.id.to_string(), probes: lease.probes })
    }

    /// Removes one unit of load from node `node`. Throws `RING_UNKNOWN_NODE`
    /// (not in the current ring: a swap or an in-place change removed it,
    /// with its load) or `RING_NO_LOAD` (its load is already 0).
    #[napi(ts_args_type = "node: string")]
    pub fn release(&self, env: Env, node: Id) -> Result<()> {
        self.current().release(&node).map_err(|e| throw(&env, e))
    }

    /// Follows `ring` from now on (typically one derived from the tracker's):
    /// nodes in both keep their load, nodes that left drop theirs, new nodes
    /// start at 0. (`shardring.js` throws `TypeError` for a non-Ring.)
    #[napi]
    pub fn swap(&self, ring: &Ring) {
        self.ring.store(Arc::new(Arc::clone(&ring.cell)));
        self.tracker.follow(&ring.current());
    }

    /// Current load per node id of the ring followed, in node order.
    #[napi(getter, ts_return_type = "Record<string, number>")]
    pub fn loads(&self) -> ById<f64> {
        let tracker = self.current();
        let (ring, loads) = (tracker.ring(), tracker.loads());
        ring.nodes().iter().zip(loads).map(|(n, load)| (n.id().to_owned(), load as f64)).collect()
    }

    /// Sum of all loads.
    #[napi(getter)]
    pub fn total_load(&self) -> f64 {
        self.current().total_load() as f64
    }

    /// The balance factor `1 + epsilon`.
    #[napi(getter)]
    pub fn balance_factor(&self) -> f64 {
        self.tracker.balance_factor()
    }
}
