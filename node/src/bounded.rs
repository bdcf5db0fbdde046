//! `LoadTracker`: bounded loads (the core's `LoadTracker`) for Node.
//! `shardring.js` wraps `_acquire` into `acquire`, adding `release()`.

use std::sync::Arc;

use indexmap::IndexMap;
use napi::{Env, Result, Unknown};
use napi_derive::napi;

use crate::id::Id;
use crate::{Ring, throw, with_key};

/// Where `_acquire` sent a request.
#[napi(object)]
pub struct Acquired {
    /// Id of the node the request went to.
    pub node: String,
    /// Distinct nodes tried, including the one taken (1 = the key's owner).
    pub probes: u32,
}

/// Consistent hashing with bounded loads (Mirrokni, Thorup and
/// Zadimoghaddam, 2017): live load per node over a snapshot of a ring; each
/// request goes to the first node in its key's preference order under
/// capacity `max(1, ceil((1 + epsilon) * (total load + 1) * weight / total weight))`.
/// Shared by worker threads only through the ring's config: each thread
/// keeps its own tracker.
#[napi]
pub struct LoadTracker {
    tracker: Arc<shardring::LoadTracker>,
}

#[napi]
impl LoadTracker {
    /// A tracker over `ring`'s current snapshot with every load 0. Throws
    /// `RING_INVALID_EPSILON` unless `epsilon` is finite and > 0 (Envoy's
    /// `hash_balance_factor` 125 is epsilon 0.25).
    #[napi(constructor)]
    pub fn new(env: Env, ring: &Ring, epsilon: f64) -> Result<Self> {
        let tracker = shardring::LoadTracker::new(ring.ring.clone(), epsilon).map_err(|e| throw(&env, e))?;
        Ok(LoadTracker { tracker: Arc::new(tracker) })
    }

    /// Assigns a request for `key` and adds one to its node's load; use
    /// `acquire`, which adds `release()`. Throws `RING_EMPTY_RING`.
    #[napi(js_name = "_acquire", ts_args_type = "key: string | Uint8Array")]
    pub fn acquire(&self, env: Env, key: Unknown<'_>) -> Result<Acquired> {
        // The JS lease gives the load back with release().
        let lease = with_key(&env, key, |bytes| self.tracker.acquire(bytes).map(|l| l.detach()))?
            .map_err(|e| throw(&env, e))?;
        Ok(Acquired { node: lease.id.to_string(), probes: lease.probes })
    }

    /// Removes one unit of load from node `node`. Throws `RING_UNKNOWN_NODE`
    /// (not in the current ring: a swap removed it, with its load) or
    /// `RING_NO_LOAD` (its load is already 0).
    #[napi(ts_args_type = "node: string")]
    pub fn release(&self, env: Env, node: Id) -> Result<()> {
        self.tracker.release(&node).map_err(|e| throw(&env, e))
    }

    /// Moves onto `ring`'s current snapshot (typically derived from the
    /// tracker's): nodes in both keep their load, nodes that left drop
    /// theirs, new nodes start at 0.
    #[napi]
    pub fn swap(&self, ring: &Ring) {
        self.tracker.swap(ring.ring.clone());
    }

    /// Current load per node id, in node order.
    #[napi(getter)]
    pub fn loads(&self) -> IndexMap<String, f64> {
        let ring = self.tracker.ring();
        ring.nodes().iter().zip(self.tracker.loads()).map(|(n, load)| (n.id().to_owned(), load as f64)).collect()
    }

    /// Sum of all loads.
    #[napi(getter)]
    pub fn total_load(&self) -> f64 {
        self.tracker.total_load() as f64
    }

    /// The balance factor `1 + epsilon`.
    #[napi(getter)]
    pub fn balance_factor(&self) -> f64 {
        self.tracker.balance_factor()
    }
}
