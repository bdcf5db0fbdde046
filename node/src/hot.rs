//! Spreading hot keys for Node: `HotSet` (the agreed hot keys and their
//! spread plans) and `NearCache`. The sketch that finds them is in
//! `sketch.rs`.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Buffer;
use napi::{Env, Result, Unknown};
use napi_derive::napi;

use crate::errors::{range_error, throw};
use crate::keys::with_key;
use crate::ring::Ring;

/// Where one client reads and writes a key (`HotSet.plan`).
#[napi(object)]
pub struct SpreadPlan {
    /// Id of the node to read from.
    pub read: String,
    /// Whether it holds a copy: read `copyKey` there; on a miss read the
    /// owner, then add the value under `copyKey` there.
    pub read_copy: bool,
    /// Id of the key's owner.
    pub owner: String,
    /// Ids to write the copy to after the owner.
    pub copies: Vec<String>,
    /// The copy key (empty when not spread).
    pub copy_key: Buffer,
}

impl SpreadPlan {
    /// The core's plan, its indices as the node ids of `ring`.
    pub(crate) fn of(ring: &shardring::Ring, plan: shardring::SpreadPlan) -> SpreadPlan {
        let id = |i: usize| ring.nodes()[i].id().to_owned();
        SpreadPlan {
            read: id(plan.read),
            read_copy: plan.read_copy,
            owner: id(plan.owner),
            copies: plan.copies.iter().map(|&i| id(i)).collect(),
            copy_key: plan.copy_key.into(),
        }
    }
}

/// One key of `HotSet.keys()`.
#[napi(object)]
pub struct HotEntry {
    pub key: Buffer,
    pub replicas: u32,
    /// `"writing"`, `"spread"` or `"leaving"`.
    pub phase: String,
    pub generation: f64,
    pub rate: f64,
}

/// A key and its rate (requests per second), for `HotSet.advance`.
#[napi(object)]
pub struct ObservedKey {
    pub key: Buffer,
    pub rate: f64,
}

/// The hot keys a fleet agreed to spread (`P/hot`); `new HotSet()` is empty.
#[napi]
pub struct HotSet {
    pub(crate) set: Arc<shardring::HotSet>,
}

#[napi]
impl HotSet {
    /// The empty set, epoch 0.
    #[napi(constructor)]
    pub fn new() -> Self {
        HotSet { set: Arc::new(shardring::HotSet::default()) }
    }

    /// Reads the JSON form; throws `RING_INVALID_CONFIG` naming the field.
    #[napi(factory, js_name = "fromJSON")]
    pub fn from_json(env: Env, text: String) -> Result<Self> {
        Ok(HotSet { set: Arc::new(shardring::HotSet::from_json(&text).map_err(|e| throw(&env, e))?) })
    }

    /// The JSON form.
    #[napi(js_name = "toJSON")]
    pub fn to_json(&self) -> String {
        self.set.to_json()
    }

    /// The publication number.
    #[napi(getter)]
    pub fn epoch(&self) -> f64 {
        self.set.epoch as f64
    }

    /// The keys, sorted by their bytes.
    #[napi]
    pub fn keys(&self) -> Vec<HotEntry> {
        self.set
            .keys()
            .iter()
            .map(|e| HotEntry {
                key: e.key.clone().into(),
                replicas: e.replicas,
                phase: e.phase.name().to_owned(),
                generation: e.generation as f64,
                rate: e.rate,
            })
            .collect()
    }

    /// Where to read and write `key` on `ring`; throws `RING_EMPTY_RING`.
    #[napi(ts_args_type = "ring: Ring, key: string | Buffer")]
    pub fn plan(&self, env: Env, ring: &Ring, key: Unknown<'_>) -> Result<SpreadPlan> {
        let snapshot = ring.current();
        let plan = with_key(&env, key, |bytes| self.set.plan(&snapshot, bytes))?.map_err(|e| throw(&env, e))?;
        Ok(SpreadPlan::of(&snapshot, plan))
    }

    /// The next publication for `ring` from the fleet's hot keys and its
    /// requests per node `{ id: rate }` (per second, counted by owner; an
    /// id left out is 0), `bound` 1.25 when left out. Throws
    /// `RING_INVALID_CONFIG` for an id not in the ring, a negative or
    /// non-finite rate, or a bound under 1.
    #[napi]
    pub fn advance(
        &self,
        env: Env,
        ring: &Ring,
        observed: Vec<ObservedKey>,
        loads: std::collections::HashMap<String, f64>,
        bound: Option<f64>,
    ) -> Result<HotSet> {
        let snapshot = ring.current();
        let named = loads.iter().map(|(id, rate)| (id.as_str(), *rate));
        let rates = shardring::HotSet::loads_by_id(&snapshot, named).map_err(|e| throw(&env, e))?;
        let observed: Vec<(Vec<u8>, f64)> = observed.into_iter().map(|o| (o.key.to_vec(), o.rate)).collect();
        let next = self.set.advance(&snapshot, &observed, &rates, bound.unwrap_or(1.25)).map_err(|e| throw(&env, e))?;
        Ok(HotSet { set: Arc::new(next) })
    }

    /// How many keys it holds.
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.set.keys().len() as u32
    }
}

impl Default for HotSet {
    fn default() -> Self {
        HotSet::new()
    }
}

/// A small TTL cache of hot values in this process.
#[napi]
pub struct NearCache {
    /// Shared with a follower that reports it in its metrics.
    pub(crate) cache: Arc<shardring::NearCache>,
}

#[napi]
impl NearCache {
    /// A cache of at most `capacity` entries served for `ttl` seconds; a
    /// `RangeError` naming the value when one is out of range.
    #[napi(constructor)]
    pub fn new(env: Env, capacity: u32, ttl: f64) -> Result<Self> {
        let ttl = Duration::try_from_secs_f64(ttl)
            .map_err(|_| range_error(&env, format!("ttl {ttl} must be a number of seconds")))?;
        let cache = shardring::NearCache::new(capacity as usize, ttl).map_err(|message| range_error(&env, message))?;
        Ok(NearCache { cache: Arc::new(cache) })
    }

    /// ceil(n log2 n), at least 16 (Fan et al., SoCC 2011).
    #[napi]
    pub fn default_capacity(nodes: u32) -> u32 {
        shardring::NearCache::default_capacity(nodes as usize) as u32
    }

    /// The value of `key`, or `null` when missing or expired.
    #[napi(ts_args_type = "key: string | Buffer")]
    pub fn get(&self, env: Env, key: Unknown<'_>) -> Result<Option<Buffer>> {
        with_key(&env, key, |bytes| self.cache.get(bytes).map(Buffer::from))
    }

    /// Keeps `value` for `key` for the TTL.
    #[napi(ts_args_type = "key: string | Buffer, value: Buffer")]
    pub fn put(&self, env: Env, key: Unknown<'_>, value: Buffer) -> Result<()> {
        with_key(&env, key, |bytes| self.cache.put(bytes, &value))
    }

    /// Forgets `key`.
    #[napi(ts_args_type = "key: string | Buffer")]
    pub fn remove(&self, env: Env, key: Unknown<'_>) -> Result<()> {
        with_key(&env, key, |bytes| self.cache.remove(bytes))
    }

    /// `[hits, misses]` since it was made.
    #[napi(getter)]
    pub fn hits_and_misses(&self) -> Vec<f64> {
        let (hits, misses) = self.cache.hits_and_misses();
        vec![hits as f64, misses as f64]
    }
}
