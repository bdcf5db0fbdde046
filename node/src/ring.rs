//! `Ring`: an immutable snapshot in a shared cell, so the in-place methods
//! (`addNode`, `removeNode`, `setWeight`) swap whole snapshots and a
//! `LoadTracker` over the ring follows them.

use std::sync::Arc;

use arc_swap::ArcSwap;
use napi::bindgen_prelude::{AsyncTask, BigInt, Object, Uint32Array};
use napi::{Env, Result, Unknown};
use napi_derive::napi;

use shardring::Node;

use crate::by_id::ById;
use crate::errors::{Id, number, text, throw, type_error, u64_value, whole};
use crate::keys::{Placing, packed, packed_arguments, place_batch, with_key};
use crate::options::{to_node, to_nodes, to_options, with_options};

/// A fingerprint as the text every binding and the CLI print: 16 lowercase
/// hex digits, zero-padded (`"53712479e1fdae70"`).
pub(crate) fn fingerprint_hex(fingerprint: u64) -> String {
    format!("{fingerprint:016x}")
}

/// The cell holding a ring's current snapshot, shared with trackers.
pub(crate) type RingCell = Arc<ArcSwap<shardring::Ring>>;

/// What a derivation of the core gives.
type Derived = std::result::Result<shardring::Ring, shardring::RingError>;

/// A node as the `nodes` getter gives it, and the shape the constructor,
/// `withNode` and `addNode` take.
#[napi(object)]
pub struct NodeInit {
    /// Non-empty id (a lone surrogate throws `RING_INVALID_UTF8`).
    #[napi(ts_type = "string")]
    pub id: Id,
    /// Relative capacity, finite and >= 0 (0 = drained); default 1.
    pub weight: Option<f64>,
    /// Failure-domain label (non-empty); preference lists take nodes of
    /// distinct zones first. Left out for a node without a zone.
    #[napi(ts_type = "string")]
    pub zone: Option<Id>,
}

/// Options of the `Ring` constructor (types only: the constructor reads the
/// object's own properties itself, so `null` and unknown fields throw).
#[napi(object)]
#[allow(dead_code, reason = "the TypeScript shape of the options; `with_options` reads them")]
pub struct RingOptions {
    /// Placement algorithm: `"ring"` (default), `"ketama"`, `"ketama-spy"`,
    /// `"libketama"` (memcached clients; ids `host:port`, whole-number
    /// weights), `"nginx"`, `"jump"` (weights 1), `"rendezvous"`, `"maglev"`
    /// `"slots"` (Redis Cluster), `"libmemcached"` (exactly as
    /// libmemcached places keys; weight 0 is read as 1), `"twemproxy"`
    /// (exactly as nutcracker places keys; weights >= 1), the migration and
    /// load balancers' modes, `"jumpback"` (JumpBackHash, bit-exact with
    /// hash4j; weights 1) or `"memento"` (MementoHash: any node can be
    /// removed, only its keys move; weights 1). See core/SPEC.md.
    #[napi(
        ts_type = "'ring' | 'ketama' | 'ketama-spy' | 'libketama' | 'nginx' | 'jump' | 'rendezvous' | 'maglev' | 'slots' | 'libmemcached' | 'twemproxy' | 'uhashring' | 'uhashring-ketama' | 'hashring-js' | 'envoy-ring-hash' | 'envoy-maglev' | 'grpc-ring-hash' | 'haproxy' | 'jumpback' | 'memento'"
    )]
    pub algorithm: Option<String>,
    /// Points per unit of weight (integer >= 1); default 160. `"ring"` only.
    pub vnodes: Option<f64>,
    /// Seed of the XXH3-64 key and point hashes: an integer in [0, 2^64),
    /// as a number (up to 2^53 - 1) or a bigint; default 0. `"ring"`, `"jump"`,
    /// `"rendezvous"`, `"maglev"`, `"jumpback"` and `"memento"` only.
    #[napi(ts_type = "number | bigint")]
    pub seed: Option<f64>,
    /// Maglev table size, a prime; default 65,537. `"maglev"` only.
    pub table_size: Option<f64>,
    /// The peer's distribution: `"libmemcached"` (default
    /// `"consistent_ketama"`) and `"twemproxy"` (`"ketama"`, the default, or
    /// `"modula"`) only.
    #[napi(
        ts_type = "'modula' | 'ketama' | 'hash_ring' | 'consistent_ketama' | 'consistent_weighted' | 'consistent_ketama_spy' | 'consistent_ketama_spy_weighted'"
    )]
    pub distribution: Option<String>,
    /// Key hash: `"libmemcached"` (default `"md5"` for the weighted
    /// distributions, else `"one_at_a_time"`; it lacks `"hsieh"`, `"crc16"`
    /// and `"crc32a"`) and `"twemproxy"` (default `"fnv1a_64"`; no
    /// `"murmur3"`) only.
    #[napi(
        ts_type = "'one_at_a_time' | 'md5' | 'crc16' | 'crc32' | 'crc32a' | 'fnv1_64' | 'fnv1a_64' | 'fnv1_32' | 'fnv1a_32' | 'hsieh' | 'murmur' | 'jenkins' | 'murmur3'"
    )]
    pub key_hash: Option<String>,
    /// What node ids are: `"address"` (default; `host:port`) or `"label"`
    /// (server names, used literally). `"twemproxy"` only.
    #[napi(ts_type = "'address' | 'label'")]
    pub server_ids: Option<String>,
    /// twemproxy's `hash_tag`: two characters such as `"{}"`. `"twemproxy"` only.
    pub hash_tag: Option<String>,
    /// npm hashring's `default port` (1-65535). `"hashring-js"` only.
    pub default_port: Option<f64>,
    /// Envoy's and gRPC's `minimum_ring_size` (1 to 8,388,608; default
    /// 1,024, gRPC capping it at 4,096). `"envoy-ring-hash"` and `"grpc-ring-hash"` only.
    pub min_ring_size: Option<f64>,
    /// Envoy's and gRPC's `maximum_ring_size` (default 8,388,608 for Envoy,
    /// 4,096 for gRPC, which caps it at 4,096). `"envoy-ring-hash"` and `"grpc-ring-hash"` only.
    pub max_ring_size: Option<f64>,
    /// The balancer's hash function: `"envoy-ring-hash"` `"xx_hash"` (the
    /// default) or `"murmur_hash_2"`, `"grpc-ring-hash"` `"xx_hash"`,
    /// `"haproxy"` `"sdbm"` (the default), `"djb2"`, `"wt6"` or `"crc32"`.
    #[napi(ts_type = "'xx_hash' | 'murmur_hash_2' | 'sdbm' | 'djb2' | 'wt6' | 'crc32'")]
    pub hash_function: Option<String>,
    /// gRPC's endpoint order: `"given"` (C-core's, the default) or `"by_key"`
    /// (grpc-go's). `"grpc-ring-hash"` only.
    #[napi(ts_type = "'given' | 'by_key'")]
    pub endpoint_order: Option<String>,
    /// Whether request hashes pass through HAProxy's `full_hash`; default
    /// `true` without `hashFunction`, else `false`. `"haproxy"` only.
    pub avalanche: Option<bool>,
    /// What HAProxy node keys derive from: `"id"` (the default),
    /// `"id_full_hash"` or `"id32"`. `"haproxy"` only.
    #[napi(ts_type = "'id' | 'id_full_hash' | 'id32'")]
    pub server_key: Option<String>,
    /// HAProxy server ids by node id (from 1); unlisted servers get the id
    /// HAProxy assigns. `"haproxy"` only.
    #[napi(ts_type = "Record<string, number>")]
    pub haproxy_ids: Option<Object<'static>>,
    /// Memento buckets by node id; unlisted nodes take the free buckets in
    /// ascending order. `"memento"` only.
    #[napi(ts_type = "Record<string, number>")]
    pub buckets: Option<Object<'static>>,
    /// Memento's removed buckets in removal order, oldest first (as
    /// `toJSON` writes `removed_buckets`). `"memento"` only.
    pub removed_buckets: Option<Vec<f64>>,
    /// How nodes are scored: `"integer"` (the default, identical on every
    /// platform) or `"float"` (placement format 1's, with the platform's
    /// `ln`). `"rendezvous"` only.
    #[napi(ts_type = "'integer' | 'float'")]
    pub score: Option<String>,
}

/// A consistent-hash ring (placement format 1, core/SPEC.md). Keys are
/// strings (hashed as UTF-8), Buffers or Uint8Arrays; a string and its UTF-8
/// Buffer land on the same node. Derivation (`withNode`, `withoutNode`,
/// `withWeight`) returns a new ring; `addNode`, `removeNode` and `setWeight`
/// replace this one's snapshot, and a `LoadTracker` over it follows.
#[napi]
pub struct Ring {
    pub(crate) cell: RingCell,
    /// Set for a Follower's ring, which only its source changes.
    followed: bool,
    /// Counts lookups once `countLookups` was called: every snapshot
    /// stored from then on counts into it.
    counter: std::sync::Mutex<Option<shardring::LookupCounter>>,
    /// Observes the keys of lookups once `watchHotKeys` was called.
    hot: std::sync::Mutex<Option<Arc<shardring::HotKeys>>>,
}

impl Ring {
    pub(crate) fn wrap(ring: shardring::Ring) -> Ring {
        Ring::over(Arc::new(ArcSwap::from_pointee(ring)), false)
    }

    fn over(cell: RingCell, followed: bool) -> Ring {
        Ring { cell, followed, counter: std::sync::Mutex::new(None), hot: std::sync::Mutex::new(None) }
    }

    /// A ring over a shared snapshot (a transition's).
    pub(crate) fn shared(ring: Arc<shardring::Ring>) -> Ring {
        Ring::over(Arc::new(ArcSwap::new(ring)), false)
    }

    /// A Follower's ring over its cell: the in-place methods throw, as the
    /// follower would overwrite their change.
    pub(crate) fn followed(cell: RingCell) -> Ring {
        Ring::over(cell, true)
    }

    fn refuse_followed(&self, env: &Env) -> Result<()> {
        if self.followed {
            let message = "this Ring belongs to a Follower, which counts its lookups: follower.lookupCounts()";
            return Err(type_error(env, message.into()));
        }
        Ok(())
    }

    /// The current snapshot.
    pub(crate) fn current(&self) -> Arc<shardring::Ring> {
        self.cell.load_full()
    }

    /// Replaces the snapshot with one derived from it.
    fn update(&self, env: &Env, change: impl FnOnce(&shardring::Ring) -> Derived) -> Result<()> {
        if self.followed {
            let message = "this Ring belongs to a Follower, which replaces it on every membership change: change the membership (etcd, or the config file) instead";
            return Err(type_error(env, message.into()));
        }
        let next = change(&self.cell.load()).map_err(|e| throw(env, e))?;
        let next = match self.counter.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(counter) => counter.count(next),
            None => next,
        };
        let next = match self.hot.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(sketch) => sketch.watch(next),
            None => next,
        };
        self.cell.store(Arc::new(next));
        Ok(())
    }

    /// A new ring derived from the current snapshot.
    fn derive(&self, env: &Env, change: impl FnOnce(&shardring::Ring) -> Derived) -> Result<Ring> {
        Ok(Ring::wrap(change(&self.cell.load()).map_err(|e| throw(env, e))?))
    }
}

#[napi]
impl Ring {
    /// From now on, shows `sketch` the key of every lookup by key on this
    /// ring (`get` and its variants, each key of a batch, `getN`), across
    /// `addNode` / `removeNode` / `setWeight`; lookups by hash are not
    /// shown. A `TypeError` on a Follower's ring.
    #[napi]
    pub fn watch_hot_keys(&self, env: Env, sketch: &crate::sketch::HotKeys) -> Result<()> {
        self.refuse_followed(&env)?;
        let mut hot = self.hot.lock().unwrap_or_else(|p| p.into_inner());
        self.cell.store(Arc::new(sketch.sketch.watch((**self.cell.load()).clone())));
        *hot = Some(Arc::clone(&sketch.sketch));
        Ok(())
    }

    /// From now on, counts the lookups on this ring per node (`get` and its
    /// variants, each key of a batch, `getN`'s first node), across
    /// `addNode` / `removeNode` / `setWeight`; about 1.7 ns a lookup.
    /// Calling it again changes nothing. A `TypeError` on a Follower's ring
    /// (the follower counts: `follower.lookupCounts()`).
    #[napi]
    pub fn count_lookups(&self, env: Env) -> Result<()> {
        self.refuse_followed(&env)?;
        let mut counter = self.counter.lock().unwrap_or_else(|p| p.into_inner());
        if counter.is_none() {
            let fresh = shardring::LookupCounter::new();
            self.cell.store(Arc::new(fresh.count((**self.cell.load()).clone())));
            *counter = Some(fresh);
        }
        Ok(())
    }

    /// The lookups counted since `countLookups()`: `{ nodeId: count }`
    /// (empty before). A `TypeError` on a Follower's ring.
    #[napi]
    pub fn lookup_counts(&self, env: Env) -> Result<std::collections::HashMap<String, f64>> {
        self.refuse_followed(&env)?;
        let counter = self.counter.lock().unwrap_or_else(|p| p.into_inner());
        let counts = counter.as_ref().map(|c| c.snapshot()).unwrap_or_default();
        Ok(counts.counts.into_iter().map(|(id, c)| (id, c as f64)).collect())
    }

    /// Builds a ring from node ids (weight 1 each), `{ id, weight, zone }`
    /// objects, or an object mapping id to weight (in its key order); a
    /// `TypeError` for anything else, for `null` fields and for unknown ones.
    /// Throws an `Error` with `code` `RING_EMPTY_ID`, `RING_DUPLICATE_ID`,
    /// `RING_INVALID_WEIGHT`, `RING_EMPTY_ZONE`, `RING_ZERO_VNODES`,
    /// `RING_TOO_MANY_POINTS`, `RING_INVALID_CONFIG` (an unknown algorithm or
    /// a parameter it does not take), `RING_INVALID_TABLE_SIZE`,
    /// `RING_INVALID_ADDRESS` or `RING_INVALID_UTF8`; a `RangeError` for a bad
    /// seed, vnodes or table size.
    #[napi(
        constructor,
        ts_args_type = "nodes: Array<string | NodeInit> | Record<string, number>, options?: RingOptions"
    )]
    pub fn new(env: Env, nodes: Unknown<'_>, options: Unknown<'_>) -> Result<Self> {
        let builder = with_options(&env, options)?;
        let nodes = to_nodes(&env, nodes)?;
        Ok(Ring::wrap(builder.nodes(nodes).build().map_err(|e| throw(&env, e))?))
    }

    /// Builds a ring from a JSON ring config string (docs/config.schema.json,
    /// the format every binding and the CLI share). Throws `RING_INVALID_CONFIG`
    /// for malformed JSON, a duplicate key, a `null`, an unknown or mistyped
    /// field (naming its path), `RING_UNSUPPORTED_FORMAT`, and the
    /// constructor's errors; a `TypeError` when `config` is not a string.
    #[napi(factory, js_name = "fromJSON", ts_args_type = "config: string")]
    pub fn from_json(env: Env, config: Unknown<'_>) -> Result<Self> {
        let config = text(&env, config, "config")?;
        Ok(Ring::wrap(shardring::Ring::from_json(&config).map_err(|e| throw(&env, e))?))
    }

    /// The ring's JSON config as text, exact for any seed (`toJSON()` gives
    /// it as an object for `JSON.stringify`).
    #[napi(js_name = "toJSONString")]
    pub fn to_json_string(&self) -> String {
        self.current().to_config().to_json()
    }

    /// The nodes, in order (drained ones included).
    #[napi(getter)]
    pub fn nodes(&self) -> Vec<NodeInit> {
        let node = |n: &Node| NodeInit {
            id: Id(n.id().to_owned()),
            weight: Some(n.weight()),
            zone: n.zone().map(|z| Id(z.to_owned())),
        };
        self.current().nodes().iter().map(node).collect()
    }

    /// The node ids, in order.
    #[napi(getter)]
    pub fn ids(&self) -> Vec<String> {
        self.current().nodes().iter().map(|n| n.id().to_owned()).collect()
    }

    /// Number of nodes (drained nodes included).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.current().nodes().len() as u32
    }

    /// Whether a node with this id is a member.
    #[napi(ts_args_type = "id: string")]
    pub fn has(&self, id: Id) -> bool {
        self.current().position(&id).is_some()
    }

    /// The algorithm and its parameters as the ring resolved them, under
    /// the constructor's option names: the options that rebuild it
    /// (`new Ring(ring.nodes, ring.params)`, with the same `haproxyIds` and
    /// `buckets`). The 64-bit parameters (`seed`, the ring sizes) are bigints, as `seed` is.
    #[napi(getter, ts_return_type = "RingOptions")]
    pub fn params(&self, env: &Env) -> Result<Object<'_>> {
        to_options(env, &self.current().params())
    }

    /// The placement algorithm's name (`"ring"`, `"ketama"`, ...).
    #[napi(getter)]
    pub fn algorithm(&self) -> &'static str {
        self.current().algorithm().name()
    }

    /// Points per unit of weight (`"ring"` only; `null` otherwise).
    #[napi(getter)]
    pub fn vnodes(&self) -> Option<u32> {
        self.current().vnodes()
    }

    /// Maglev table size (`"maglev"` only; `null` otherwise).
    #[napi(getter)]
    pub fn table_size(&self) -> Option<u32> {
        self.current().table_size()
    }

    /// The peer's distribution (`"libmemcached"` and `"twemproxy"` only; `null` otherwise).
    #[napi(getter)]
    pub fn distribution(&self) -> Option<&'static str> {
        self.current().distribution().map(shardring::Distribution::name)
    }

    /// The named 32-bit key hash of a peer-compatible mode (`"md5"` for the
    /// ketama modes, `"crc32a"` for nginx, the configured one for
    /// `"libmemcached"`); `null` for the XXH3 algorithms and `"slots"`.
    #[napi(getter)]
    pub fn key_hash(&self) -> Option<&'static str> {
        self.current().named_key_hash().map(shardring::KeyHash::name)
    }

    /// What node ids are, `"address"` or `"label"` (`"twemproxy"` only; `null` otherwise).
    #[napi(getter)]
    pub fn server_ids(&self) -> Option<&'static str> {
        self.current().server_ids().map(shardring::ServerIds::name)
    }

    /// npm hashring's default port (`"hashring-js"` only, when set; `null` otherwise).
    #[napi(getter)]
    pub fn default_port(&self) -> Option<u32> {
        self.current().default_port().map(u32::from)
    }

    /// twemproxy's hash tag (`"twemproxy"` only, when set; `null` otherwise).
    #[napi(getter)]
    pub fn hash_tag(&self) -> Option<String> {
        self.current().hash_tag()
    }

    /// `[minimum, maximum]` ring size as resolved (`"envoy-ring-hash"`,
    /// `"grpc-ring-hash"`; `null` otherwise).
    #[napi(getter, ts_return_type = "[number, number] | null")]
    pub fn ring_sizes(&self) -> Option<Vec<f64>> {
        self.current().ring_sizes().map(|(min, max)| vec![min as f64, max as f64])
    }

    /// The balancer's hash function (`"envoy-ring-hash"`, `"grpc-ring-hash"`, `"haproxy"`; `null` otherwise).
    #[napi(getter)]
    pub fn hash_function(&self) -> Option<&'static str> {
        self.current().hash_function().map(shardring::HashFunction::name)
    }

    /// gRPC's endpoint order, `"given"` or `"by_key"` (`"grpc-ring-hash"` only; `null` otherwise).
    #[napi(getter)]
    pub fn endpoint_order(&self) -> Option<&'static str> {
        self.current().endpoint_order().map(shardring::EndpointOrder::name)
    }

    /// Whether request hashes pass through `full_hash` (`"haproxy"` only; `null` otherwise).
    #[napi(getter)]
    pub fn avalanche(&self) -> Option<bool> {
        self.current().avalanche()
    }

    /// What HAProxy node keys derive from (`"haproxy"` only; `null` otherwise).
    #[napi(getter)]
    pub fn server_key(&self) -> Option<&'static str> {
        self.current().server_key().map(shardring::ServerKey::name)
    }

    /// The HAProxy server ids given, by node id (`"haproxy"` only; `null` otherwise).
    #[napi(getter, ts_return_type = "Record<string, number> | null")]
    pub fn haproxy_ids(&self) -> Option<ById<u32>> {
        let ring = self.current();
        Some(ring.haproxy_ids()?.into_iter().map(|(id, puid)| (id.to_owned(), puid)).collect())
    }

    /// How nodes are scored, `"integer"` or `"float"` (`"rendezvous"` only; `null` otherwise).
    #[napi(getter)]
    pub fn score(&self) -> Option<&'static str> {
        self.current().score().map(shardring::RendezvousScore::name)
    }

    /// Each node's bucket, by node id (`"memento"` only; `null` otherwise).
    #[napi(getter, ts_return_type = "Record<string, number> | null")]
    pub fn buckets(&self) -> Option<ById<u32>> {
        let ring = self.current();
        Some(ring.nodes().iter().map(|n| n.id().to_owned()).zip(ring.buckets()?.iter().copied()).collect())
    }

    /// The removed buckets in removal order, oldest first (`"memento"` only; `null` otherwise).
    #[napi(getter)]
    pub fn removed_buckets(&self) -> Option<Vec<u32>> {
        self.current().removed_buckets().map(<[u32]>::to_vec)
    }

    /// Seed of the key and point hashes.
    #[napi(getter)]
    pub fn seed(&self) -> BigInt {
        BigInt::from(self.current().seed())
    }

    /// Total number of points on the ring (0 for jump, jumpback, memento, rendezvous, maglev, slots, modula, haproxy).
    #[napi(getter)]
    pub fn point_count(&self) -> u32 {
        self.current().point_count() as u32
    }

    /// A 64-bit digest (bigint) of the canonical config (core/SPEC.md): equal
    /// fingerprints mean the same owner for every key, in every binding.
    #[napi(getter)]
    pub fn fingerprint(&self) -> BigInt {
        BigInt::from(self.current().fingerprint())
    }

    /// The fingerprint as text, 16 lowercase hex digits, zero-padded
    /// (`"53712479e1fdae70"`): what the CLI prints, and Python's
    /// `fingerprint_hex` for the same ring.
    #[napi(getter)]
    pub fn fingerprint_hex(&self) -> String {
        fingerprint_hex(self.current().fingerprint())
    }

    /// Whether `other` places every key as this ring does: equal
    /// fingerprints. (`shardring.js` throws `TypeError` for a non-Ring.)
    #[napi]
    pub fn equals(&self, other: &Ring) -> bool {
        self.current().fingerprint() == other.current().fingerprint()
    }

    /// The key's hash under the ring's algorithm, as a bigint: XXH3-64 of its
    /// bytes under the seed (`"ring"`, `"jump"`, `"rendezvous"`, `"maglev"`),
    /// the first 4 bytes of MD5 little-endian (ketama modes), CRC-32
    /// (`"nginx"`), or the Redis Cluster slot (`"slots"`).
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn hash_key(&self, env: Env, key: Unknown<'_>) -> Result<BigInt> {
        let ring = self.current();
        with_key(&env, key, |bytes| BigInt::from(ring.hash_key(bytes)))
    }

    /// A native `(key) => node index` function over the current snapshot:
    /// `shardring.js` builds `get` on it, skipping napi-rs's per-call dispatch.
    #[napi(js_name = "_placer", skip_typescript)]
    pub fn placer_function<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        crate::placer::placer(env, self.current())
    }

    /// The id of the node owning `key`. Throws `RING_EMPTY_RING` when no node
    /// has weight > 0, `RING_INVALID_UTF8` for a string with a lone
    /// surrogate, `TypeError` for other key types.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn get(&self, env: Env, key: Unknown<'_>) -> Result<String> {
        let ring = self.current();
        let index = with_key(&env, key, |bytes| ring.get_index(bytes))?.map_err(|e| throw(&env, e))?;
        Ok(ring.nodes()[index].id().to_owned())
    }

    /// The id of the node owning key hash `hash` (a bigint, e.g. from
    /// `hashKey`). Throws `RING_EMPTY_RING`, `RING_HASH_OUT_OF_RANGE` for a
    /// hash wider than the algorithm's (32 bits for ketama and nginx, 14 for
    /// slots), a `RangeError` outside [0, 2^64), a `TypeError` for a non-bigint.
    #[napi(ts_args_type = "hash: bigint")]
    pub fn get_by_hash(&self, env: Env, hash: Unknown<'_>) -> Result<String> {
        let hash = u64_value(&env, hash, "hash", true)?;
        let ring = self.current();
        let index = ring.index_by_hash(hash).map_err(|e| throw(&env, e))?;
        Ok(ring.nodes()[index].id().to_owned())
    }

    /// The key's preference list: up to `n` distinct node ids clockwise from
    /// the key, the first being `get(key)`; nodes of distinct zones first when
    /// nodes have zones; each node with weight > 0 once when `n` exceeds their
    /// number (Dynamo's preference list). Throws as `get`; `TypeError` for a
    /// non-number `n`, `RangeError` for a negative or fractional one.
    #[napi(ts_args_type = "key: string | Uint8Array, n: number")]
    pub fn get_n(&self, env: Env, key: Unknown<'_>, n: Unknown<'_>) -> Result<Vec<String>> {
        let n = whole(&env, n, "n", f64::MAX)?;
        let ring = self.current();
        let mut indices = vec![0usize; (n as usize).min(ring.nodes().len())];
        let found =
            with_key(&env, key, |bytes| ring.get_n_indices(bytes, &mut indices))?.map_err(|e| throw(&env, e))?;
        Ok(indices[..found].iter().map(|&i| ring.nodes()[i].id().to_owned()).collect())
    }

    /// The owners' indices into `ids` of a packed batch: the keys laid back
    /// to back in `bytes`, key `i` being `lengths[i]` bytes long. The fastest
    /// batch, as no JS string is read per key; it runs on the JS thread (see
    /// `getIndicesAsync`). Throws `RangeError` when the lengths add up to more
    /// than `bytes` holds, `RING_EMPTY_RING` when no node can own keys,
    /// `TypeError` unless given a Uint8Array (or Buffer) and a Uint32Array.
    #[napi(js_name = "getIndices", ts_args_type = "bytes: Uint8Array, lengths: Uint32Array")]
    pub fn get_indices(&self, env: Env, bytes: Unknown<'_>, lengths: Unknown<'_>) -> Result<Uint32Array> {
        let (bytes, lengths) = packed_arguments(&env, bytes, lengths)?;
        let batch = packed(&env, &bytes, &lengths)?;
        Ok(Uint32Array::new(place_batch(&self.current(), &batch).map_err(|e| throw(&env, e))?))
    }

    /// The current snapshot as its own object (see `Snapshot`).
    #[napi(js_name = "_snapshot", skip_typescript)]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot { ring: self.current() }
    }

    /// A new ring with `node` (an id of weight 1, or `{ id, weight, zone }`)
    /// added; only keys the new node now owns move. Throws
    /// `RING_DUPLICATE_ID` and the constructor's node errors.
    #[napi(ts_args_type = "node: string | NodeInit")]
    pub fn with_node(&self, env: Env, node: Unknown<'_>) -> Result<Ring> {
        let node = to_node(&env, node)?;
        self.derive(&env, |ring| ring.with_node(node))
    }

    /// A new ring without node `id`; only its keys move. Throws `RING_UNKNOWN_NODE`.
    #[napi(ts_args_type = "id: string")]
    pub fn without_node(&self, env: Env, id: Id) -> Result<Ring> {
        self.derive(&env, |ring| ring.without_node(&id))
    }

    /// A new ring with node `id` at `weight`: raising it moves keys only to
    /// that node, lowering it only away. Throws `RING_UNKNOWN_NODE`,
    /// `RING_INVALID_WEIGHT`, `RING_TOO_MANY_POINTS`, or `TypeError` for a
    /// non-number weight.
    #[napi(ts_args_type = "id: string, weight: number")]
    pub fn with_weight(&self, env: Env, id: Id, weight: Unknown<'_>) -> Result<Ring> {
        let weight = number(&env, weight, "weight")?;
        self.derive(&env, |ring| ring.with_weight(&id, weight))
    }

    /// Adds a node to this ring in place (see `withNode`).
    #[napi(ts_args_type = "node: string | NodeInit")]
    pub fn add_node(&self, env: Env, node: Unknown<'_>) -> Result<()> {
        let node = to_node(&env, node)?;
        self.update(&env, |ring| ring.with_node(node))
    }

    /// Removes a node from this ring in place (see `withoutNode`).
    #[napi(ts_args_type = "id: string")]
    pub fn remove_node(&self, env: Env, id: Id) -> Result<()> {
        self.update(&env, |ring| ring.without_node(&id))
    }

    /// Re-weights a node of this ring in place (see `withWeight`).
    #[napi(ts_args_type = "id: string, weight: number")]
    pub fn set_weight(&self, env: Env, id: Id, weight: Unknown<'_>) -> Result<()> {
        let weight = number(&env, weight, "weight")?;
        self.update(&env, |ring| ring.with_weight(&id, weight))
    }

    /// Each node's exact share of the hash space (of uniformly hashed keys),
    /// from arc lengths: `{ [id]: share }`, shares in [0, 1] summing to 1.
    #[napi(ts_return_type = "Record<string, number>")]
    pub fn ownership(&self) -> ById<f64> {
        self.current().ownership().into_iter().map(|(node, share)| (node.id().to_owned(), share)).collect()
    }
}

/// `Ring.getIndicesAsync` (see `shardring.js`): `getIndices` on the libuv
/// thread pool, on a `Snapshot`: napi-rs keeps the objects a call borrows
/// borrowed until its task settles, and a borrowed ring could not change;
/// the batch is copied and placed on the snapshot current at the call.
/// Throws (synchronously) as `getIndices`.
#[napi(js_name = "_getIndicesAsync", skip_typescript)]
pub fn get_indices_async(
    env: Env,
    snapshot: &Snapshot,
    bytes: Unknown<'_>,
    lengths: Unknown<'_>,
) -> Result<AsyncTask<Placing>> {
    let (bytes, lengths) = packed_arguments(&env, bytes, lengths)?;
    packed(&env, &bytes, &lengths)?;
    let ring = snapshot.ring();
    if ring.live_node_count() == 0 {
        return Err(throw(&env, shardring::RingError::EmptyRing));
    }
    Ok(AsyncTask::new(Placing::new(ring, &bytes, &lengths)))
}

/// A ring's snapshot as a JS object of its own (from `Ring._snapshot()`),
/// so an async task borrows it and not the ring, which stays free to change.
/// Internal: `shardring.d.ts`, the package's types, leaves it out.
#[napi]
pub struct Snapshot {
    ring: Arc<shardring::Ring>,
}

impl Snapshot {
    pub(crate) fn ring(&self) -> Arc<shardring::Ring> {
        Arc::clone(&self.ring)
    }
}
