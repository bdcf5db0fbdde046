//! Node.js bindings for shardring (napi-rs): converts arguments, maps errors,
//! and nothing else. Placement lives in the `shardring` crate. The public
//! entry point is `shardring.js`, which packs key batches into one string or
//! buffer so they cross the napi boundary once.

mod bounded;
mod id;
mod placer;

use std::sync::Arc;

use indexmap::IndexMap;
use napi::Task;
use napi::bindgen_prelude::{
    AsyncTask, BigInt, Buffer, FromNapiValue, JsObjectValue, Object, Uint8Array, Uint32Array, Utf16String,
};
use napi::{Either, Env, Error, JsValue, Result, Status, Unknown, ValueType};
use napi_derive::napi;

use std::borrow::Cow;

use shardring::{KeyBatch, Node, RingError};

use crate::id::Id;

/// Throws `error` as a JS `Error` whose `code` is the C result name
/// (for example `RING_INVALID_WEIGHT`) and whose message names the bad value.
fn throw(env: &Env, error: RingError) -> Error {
    pending(env.throw_error(&error.to_string(), Some(error.code())))
}

/// Throws a JS `TypeError` with Node's `ERR_INVALID_ARG_TYPE` code.
fn type_error(env: &Env, message: String) -> Error {
    pending(env.throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE")))
}

/// Throws a JS `RangeError` with Node's `ERR_OUT_OF_RANGE` code.
fn range_error(env: &Env, message: String) -> Error {
    pending(env.throw_range_error(&message, Some("ERR_OUT_OF_RANGE")))
}

/// `error` when it is an exception already thrown (a bad id), else `other()`.
fn thrown_or(error: Error, other: impl FnOnce() -> Error) -> Error {
    if error.status == Status::PendingException { error } else { other() }
}

pub(crate) fn pending(thrown: Result<()>) -> Error {
    match thrown {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(failed) => failed,
    }
}

/// A key's bytes: a string as UTF-8, a Buffer or Uint8Array as is; any other
/// type throws `TypeError` (the same reading as the `get` fast path,
/// `placer::with_key_bytes`).
fn with_key<T>(env: &Env, key: Unknown<'_>, place: impl FnOnce(&[u8]) -> T) -> Result<T> {
    // SAFETY: `key` is a live value of this env.
    unsafe { placer::with_key_bytes(env.raw(), key.raw(), place) }.map_err(|message| type_error(env, message))
}

pub(crate) fn js_type(value_type: ValueType) -> &'static str {
    match value_type {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Object => "object",
        ValueType::Function => "function",
        ValueType::BigInt => "bigint",
        _ => "another type",
    }
}

/// A packed batch over `bytes`; `RangeError` when the lengths overrun it.
fn packed<'a>(env: &Env, bytes: &'a [u8], lengths: &[u32]) -> Result<KeyBatch<'a>> {
    KeyBatch::from_lengths(Cow::Borrowed(bytes), lengths.iter().map(|&l| l as usize))
        .ok_or_else(|| range_error(env, format!("key lengths add up to more than the {} bytes packed", bytes.len())))
}

/// Owner indices of a batch, as `Uint32Array` elements.
fn place_batch(ring: &shardring::Ring, batch: &KeyBatch<'_>) -> std::result::Result<Vec<u32>, RingError> {
    let mut out = vec![0usize; batch.len()];
    ring.get_indices(batch.iter(), &mut out)?;
    Ok(out.into_iter().map(|i| i as u32).collect())
}

/// `getIndicesAsync`'s work: a copied batch and the snapshot to place it on.
pub struct Placing {
    ring: Arc<shardring::Ring>,
    bytes: Vec<u8>,
    lengths: Vec<u32>,
}

impl Task for Placing {
    type Output = Vec<u32>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> Result<Vec<u32>> {
        let batch = KeyBatch::from_lengths(Cow::Borrowed(&self.bytes[..]), self.lengths.iter().map(|&l| l as usize));
        // Both checked on the JS thread before the task was queued.
        let batch = batch.ok_or_else(|| Error::new(Status::InvalidArg, "key lengths overrun the batch"))?;
        place_batch(&self.ring, &batch).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    }

    fn resolve(&mut self, _env: Env, indices: Vec<u32>) -> Result<Uint32Array> {
        Ok(Uint32Array::new(indices))
    }
}

/// Unpacks a batch packed by `shardring.js`: one joined string with each
/// key's length in UTF-16 code units, or one buffer with each key's length
/// in bytes. A string key is encoded as V8 encodes strings (a lone surrogate
/// becomes U+FFFD), so a key places the same in a batch as alone. Throws
/// `RangeError` when the lengths add up to more than was packed.
fn unpack<'a>(env: &Env, joined: &'a Either<Utf16String, Buffer>, lengths: &[u32]) -> Result<KeyBatch<'a>> {
    let overflow =
        |available: usize| range_error(env, format!("key lengths add up to more than the {available} units packed"));
    match joined {
        Either::A(text) => {
            let mut batch = KeyBatch::with_capacity(lengths.len(), 24);
            let mut key = String::new();
            let mut start = 0usize;
            for &length in lengths {
                let end = start.saturating_add(length as usize);
                let units = text.get(start..end).ok_or_else(|| overflow(text.len()))?;
                key.clear();
                key.extend(char::decode_utf16(units.iter().copied()).map(|c| c.unwrap_or('\u{FFFD}')));
                batch.push(key.as_bytes());
                start = end;
            }
            Ok(batch)
        }
        Either::B(bytes) => packed(env, bytes, lengths),
    }
}

/// A node given to the `Ring` constructor or `withNode`/`addNode`.
#[napi(object)]
pub struct NodeInit {
    /// Non-empty id (a lone surrogate throws `RING_INVALID_UTF8`).
    #[napi(ts_type = "string")]
    pub id: Id,
    /// Relative capacity, finite and >= 0 (0 = drained); default 1.
    pub weight: Option<f64>,
    /// Failure-domain label (non-empty); preference lists take nodes of
    /// distinct zones first.
    #[napi(ts_type = "string")]
    pub zone: Option<Id>,
}

impl From<NodeInit> for Node {
    fn from(init: NodeInit) -> Node {
        let node = Node::new(init.id.0, init.weight.unwrap_or(1.0));
        match init.zone {
            Some(zone) => node.with_zone(zone.0),
            None => node,
        }
    }
}

/// A node argument (`"id"` or `{ id, weight, zone }`) as a core node. Throws
/// `TypeError` for another shape or an unknown field (a misspelt `wieght`
/// must not silently mean weight 1), `RING_INVALID_UTF8` for a lone surrogate.
fn to_node(env: &Env, node: Unknown<'_>) -> Result<Node> {
    if node.get_type()? == ValueType::Object {
        known_fields(env, node, "node", &["id", "weight", "zone"])?;
    }
    // SAFETY: `node` is a live value of this env; the conversion checks its shape.
    match unsafe { <Either<Id, NodeInit>>::from_napi_value(env.raw(), node.raw()) } {
        Ok(Either::A(id)) => Ok(Node::new(id.0, 1.0)),
        Ok(Either::B(init)) => Ok(init.into()),
        Err(error) => Err(thrown_or(error, || {
            type_error(env, "a node must be an id string or a { id, weight, zone } object".into())
        })),
    }
}

/// Whether `value` is a plain object (`{...}` or `Object.create(null)`), not a
/// Map, Set, typed array, Date or other object whose own properties are not
/// its content.
fn plain_object(env: &Env, value: Unknown<'_>) -> Result<bool> {
    use napi::sys;
    let (mut prototype, mut empty, mut object_prototype, mut null) =
        (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let (mut is_object, mut is_null) = (false, false);
    // SAFETY: a live env and value; every out-pointer is writable; statuses are checked.
    let ok = unsafe {
        sys::napi_get_prototype(env.raw(), value.raw(), &mut prototype) == sys::Status::napi_ok
            && sys::napi_create_object(env.raw(), &mut empty) == sys::Status::napi_ok
            && sys::napi_get_prototype(env.raw(), empty, &mut object_prototype) == sys::Status::napi_ok
            && sys::napi_strict_equals(env.raw(), prototype, object_prototype, &mut is_object) == sys::Status::napi_ok
            && sys::napi_get_null(env.raw(), &mut null) == sys::Status::napi_ok
            && sys::napi_strict_equals(env.raw(), prototype, null, &mut is_null) == sys::Status::napi_ok
    };
    if !ok {
        return Err(Error::new(Status::GenericFailure, "could not read an object's prototype"));
    }
    Ok(is_object || is_null)
}

/// Throws `TypeError` (code `ERR_INVALID_ARG_VALUE`) naming the first own
/// property of `object` that is not one of `known`.
fn known_fields(env: &Env, object: Unknown<'_>, what: &str, known: &[&str]) -> Result<()> {
    // SAFETY: `object` is a live object of this env.
    let names = unsafe { Object::from_napi_value(env.raw(), object.raw()) }?.get_property_names()?;
    for i in 0..names.get_array_length()? {
        let name: String = names.get_element(i)?;
        if !known.contains(&name.as_str()) {
            let message = format!("unknown {what} field {name:?}; expected {}", known.join(", "));
            return Err(pending(env.throw_type_error(&message, Some("ERR_INVALID_ARG_VALUE"))));
        }
    }
    Ok(())
}

/// Options of the `Ring` constructor.
#[napi(object)]
pub struct RingOptions {
    /// Placement algorithm: `"ring"` (default), `"ketama"`, `"ketama-spy"`,
    /// `"libketama"` (memcached clients; ids `host:port`, whole-number
    /// weights), `"nginx"`, `"jump"` (weights 1), `"rendezvous"`, `"maglev"`
    /// or `"slots"` (Redis Cluster). See core/SPEC.md.
    #[napi(
        ts_type = "'ring' | 'ketama' | 'ketama-spy' | 'libketama' | 'nginx' | 'jump' | 'rendezvous' | 'maglev' | 'slots'"
    )]
    pub algorithm: Option<String>,
    /// Points per unit of weight (integer >= 1); default 160. `"ring"` only.
    pub vnodes: Option<f64>,
    /// Seed of the XXH3-64 key and point hashes: an integer in [0, 2^64),
    /// as a number (up to 2^53) or a bigint; default 0. `"ring"`, `"jump"`,
    /// `"rendezvous"` and `"maglev"` only.
    pub seed: Option<Either<f64, BigInt>>,
    /// Maglev table size, a prime; default 65,537. `"maglev"` only.
    pub table_size: Option<f64>,
}

/// A JS number that must be a whole number in [0, max]; a `RangeError` names it otherwise.
fn whole_number(env: &Env, what: &str, value: f64, max: f64) -> Result<f64> {
    if value.fract() == 0.0 && (0.0..=max).contains(&value) {
        Ok(value)
    } else {
        Err(range_error(env, format!("{what} must be a whole number in [0, {max}], got {}", js_number(value))))
    }
}

/// A number as JavaScript prints it (`Infinity`, not Rust's `inf`).
fn js_number(value: f64) -> String {
    match value {
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ => value.to_string(),
    }
}

fn u64_value(env: &Env, what: &str, value: Either<f64, BigInt>) -> Result<u64> {
    match value {
        Either::A(number) => {
            if number.fract() == 0.0 && (0.0..=9_007_199_254_740_991.0).contains(&number) {
                Ok(number as u64)
            } else {
                Err(range_error(env, format!("{what} must be an integer in [0, 2^53] or a bigint, got {number}")))
            }
        }
        Either::B(big) => match big.get_u64() {
            (false, value, true) => Ok(value),
            _ => Err(range_error(env, format!("{what} bigint must be in [0, 2^64)"))),
        },
    }
}

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
#[napi(object)]
pub struct Balance {
    /// Keys in the sample.
    pub keys: f64,
    /// Keys per node id (drained nodes included).
    pub counts: IndexMap<String, f64>,
    /// Spread of the counts over the nodes with weight > 0, against their mean.
    pub by_node: Spread,
    /// Spread of each count over its fair count (keys x weight share).
    pub by_weight: Spread,
}

/// A consistent-hash ring (placement format 1, core/SPEC.md). Keys are
/// strings (hashed as UTF-8), Buffers or Uint8Arrays; a string and its UTF-8
/// Buffer land on the same node. Derivation (`withNode`, `withoutNode`,
/// `withWeight`) returns a new ring; `addNode`, `removeNode` and `setWeight`
/// replace this one's snapshot.
#[napi]
pub struct Ring {
    ring: Arc<shardring::Ring>,
}

impl Ring {
    fn wrap(ring: shardring::Ring) -> Ring {
        Ring { ring: Arc::new(ring) }
    }
}

#[napi]
impl Ring {
    /// Builds a ring from node ids (weight 1 each), `{ id, weight, zone }`
    /// objects, or an object mapping id to weight (in its key order); a
    /// `TypeError` for anything else. Throws an `Error` with `code` `RING_EMPTY_ID`,
    /// `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`, `RING_EMPTY_ZONE`,
    /// `RING_ZERO_VNODES`, `RING_TOO_MANY_POINTS`, `RING_INVALID_CONFIG` (an
    /// unknown algorithm or a parameter it does not take),
    /// `RING_INVALID_TABLE_SIZE` or `RING_INVALID_ADDRESS`; a `RangeError`
    /// for a bad seed, vnodes or table size.
    #[napi(
        constructor,
        ts_args_type = "nodes: Array<string | NodeInit> | Record<string, number>, options?: RingOptions"
    )]
    pub fn new(env: Env, nodes: Unknown<'_>, options: Option<Unknown<'_>>) -> Result<Self> {
        let shape_error = |env: &Env| {
            type_error(
                env,
                "nodes must be an array of ids or { id, weight, zone } objects, or an object mapping id to weight"
                    .into(),
            )
        };
        let nodes: Vec<Node> = if nodes.is_array()? {
            // SAFETY: `nodes` is a live array of this env; the conversion checks every element.
            let list = unsafe { Object::from_napi_value(env.raw(), nodes.raw()) }?;
            (0..list.get_array_length()?)
                .map(|i| to_node(&env, list.get_element::<Unknown>(i)?))
                .collect::<Result<_>>()?
        } else if nodes.get_type()? == ValueType::Object && plain_object(&env, nodes)? {
            // SAFETY: `nodes` is a live object of this env; the conversion checks every value.
            // SAFETY: `nodes` is a live object of this env.
            let object = unsafe { Object::from_napi_value(env.raw(), nodes.raw()) }?;
            let names = object.get_property_names()?;
            let weight_of = |id: Id| match object.get_named_property::<f64>(&id.0) {
                Ok(weight) => Ok(Node::new(id.0, weight)),
                Err(_) => Err(shape_error(&env)),
            };
            (0..names.get_array_length()?).map(|i| weight_of(names.get_element::<Id>(i)?)).collect::<Result<_>>()?
        } else {
            return Err(shape_error(&env));
        };
        let mut builder = shardring::Ring::builder().nodes(nodes);
        let options = match options {
            Some(options) if options.get_type()? == ValueType::Object && plain_object(&env, options)? => {
                known_fields(&env, options, "option", &["algorithm", "vnodes", "seed", "tableSize"])?;
                // SAFETY: `options` is a live object of this env; the conversion checks its fields.
                let options = unsafe { RingOptions::from_napi_value(env.raw(), options.raw()) };
                Some(options.map_err(|e| {
                    let reason = e.reason.clone();
                    thrown_or(e, || type_error(&env, format!("bad options: {reason}")))
                })?)
            }
            Some(options) if options.get_type()? != ValueType::Undefined => {
                return Err(type_error(&env, "options must be a plain object".into()));
            }
            _ => None,
        };
        if let Some(RingOptions { algorithm, vnodes, seed, table_size }) = options {
            if let Some(name) = algorithm {
                builder = builder.algorithm(name.parse().map_err(|e| throw(&env, e))?);
            }
            if let Some(v) = vnodes {
                builder = builder.vnodes(whole_number(&env, "vnodes", v, f64::from(u32::MAX))? as u32);
            }
            if let Some(s) = seed {
                builder = builder.seed(u64_value(&env, "seed", s)?);
            }
            if let Some(t) = table_size {
                builder = builder.table_size(whole_number(&env, "tableSize", t, f64::from(u32::MAX))? as u32);
            }
        }
        Ok(Ring::wrap(builder.build().map_err(|e| throw(&env, e))?))
    }

    /// Builds a ring from a JSON ring config string (the format every binding
    /// and the CLI share). Throws `RING_INVALID_CONFIG` for malformed JSON or
    /// unknown fields, `RING_UNSUPPORTED_FORMAT`, and the constructor's errors.
    #[napi(factory, js_name = "fromJSON")]
    pub fn from_json(env: Env, config: String) -> Result<Self> {
        Ok(Ring::wrap(shardring::Ring::from_json(&config).map_err(|e| throw(&env, e))?))
    }

    /// The ring's JSON config as text, exact for any seed (`toJSON()` gives
    /// it as an object for `JSON.stringify`).
    #[napi(js_name = "toJSONString")]
    pub fn to_json_string(&self) -> String {
        self.ring.to_config().to_json()
    }

    /// The nodes, in order (drained ones included).
    #[napi(getter)]
    pub fn nodes(&self) -> Vec<NodeInit> {
        let node = |n: &Node| NodeInit {
            id: Id(n.id().to_owned()),
            weight: Some(n.weight()),
            zone: n.zone().map(|z| Id(z.to_owned())),
        };
        self.ring.nodes().iter().map(node).collect()
    }

    /// The node ids, in order.
    #[napi(getter)]
    pub fn ids(&self) -> Vec<String> {
        self.ring.nodes().iter().map(|n| n.id().to_owned()).collect()
    }

    /// Number of nodes (drained nodes included).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.ring.nodes().len() as u32
    }

    /// Whether a node with this id is a member.
    #[napi(ts_args_type = "id: string")]
    pub fn has(&self, id: Id) -> bool {
        self.ring.position(&id).is_some()
    }

    /// The placement algorithm's name (`"ring"`, `"ketama"`, ...).
    #[napi(getter)]
    pub fn algorithm(&self) -> &'static str {
        self.ring.algorithm().name()
    }

    /// Points per unit of weight (`"ring"` only; `null` otherwise).
    #[napi(getter)]
    pub fn vnodes(&self) -> Option<u32> {
        self.ring.vnodes()
    }

    /// Maglev table size (`"maglev"` only; `null` otherwise).
    #[napi(getter)]
    pub fn table_size(&self) -> Option<u32> {
        self.ring.table_size()
    }

    /// Seed of the key and point hashes.
    #[napi(getter)]
    pub fn seed(&self) -> BigInt {
        BigInt::from(self.ring.seed())
    }

    /// Total number of points on the ring (0 for jump, rendezvous, maglev and slots).
    #[napi(getter)]
    pub fn point_count(&self) -> u32 {
        self.ring.point_count() as u32
    }

    /// A stable 64-bit digest (bigint) of the ring's vnodes, seed and set of
    /// nodes, independent of node order (core/SPEC.md), so two processes can
    /// check they hold the same ring.
    #[napi(getter)]
    pub fn fingerprint(&self) -> BigInt {
        BigInt::from(self.ring.fingerprint())
    }

    /// The key's hash under the ring's algorithm, as a bigint: XXH3-64 of its
    /// bytes under the seed (`"ring"`, `"jump"`, `"rendezvous"`, `"maglev"`),
    /// the first 4 bytes of MD5 little-endian (ketama modes), CRC-32
    /// (`"nginx"`), or the Redis Cluster slot (`"slots"`).
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn hash_key(&self, env: Env, key: Unknown<'_>) -> Result<BigInt> {
        with_key(&env, key, |bytes| BigInt::from(self.ring.hash_key(bytes)))
    }

    /// A native `(key) => node index` function over the current snapshot:
    /// `shardring.js` builds `get` on it, skipping napi-rs's per-call dispatch.
    #[napi(js_name = "_placer", ts_return_type = "(key: string | Uint8Array) => number")]
    pub fn placer_function<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.placer(env)
    }

    /// The id of the node owning `key`. Throws `RING_EMPTY_RING` when no node
    /// has weight > 0, `TypeError` for other key types.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn get(&self, env: Env, key: Unknown<'_>) -> Result<String> {
        let index = with_key(&env, key, |bytes| self.ring.get_index(bytes))?.map_err(|e| throw(&env, e))?;
        Ok(self.ring.nodes()[index].id().to_owned())
    }

    /// The id of the node owning key hash `hash` (a bigint, e.g. from
    /// `hashKey`). Throws `RING_EMPTY_RING`, `RING_HASH_OUT_OF_RANGE` for a
    /// hash wider than the algorithm's (32 bits for ketama and nginx, 14 for
    /// slots), or a `RangeError` for a hash outside [0, 2^64).
    #[napi]
    pub fn get_by_hash(&self, env: Env, hash: BigInt) -> Result<String> {
        let hash = u64_value(&env, "hash", Either::B(hash))?;
        let index = self.ring.index_by_hash(hash).map_err(|e| throw(&env, e))?;
        Ok(self.ring.nodes()[index].id().to_owned())
    }

    /// The key's preference list: up to `n` distinct node ids clockwise from
    /// the key, the first being `get(key)`; nodes of distinct zones first when
    /// nodes have zones; each node with weight > 0 once when `n` exceeds their
    /// number (Dynamo's preference list). Throws as `get`.
    #[napi(ts_args_type = "key: string | Uint8Array, n: number")]
    pub fn get_n(&self, env: Env, key: Unknown<'_>, n: f64) -> Result<Vec<String>> {
        let n = whole_number(&env, "n", n, f64::MAX)?;
        let mut indices = vec![0usize; (n as usize).min(self.ring.nodes().len())];
        let found =
            with_key(&env, key, |bytes| self.ring.get_n_indices(bytes, &mut indices))?.map_err(|e| throw(&env, e))?;
        Ok(indices[..found].iter().map(|&i| self.ring.nodes()[i].id().to_owned()).collect())
    }

    /// The owners' indices into `ids` of a packed batch: the keys laid back
    /// to back in `bytes`, key `i` being `lengths[i]` bytes long. The fastest
    /// batch, as no JS string is read per key; it runs on the JS thread (see
    /// `getIndicesAsync`). Throws `RangeError` when the lengths add up to more
    /// than `bytes` holds, `RING_EMPTY_RING` when no node can own keys.
    #[napi(js_name = "getIndices")]
    pub fn get_indices(&self, env: Env, bytes: Uint8Array, lengths: Uint32Array) -> Result<Uint32Array> {
        let batch = packed(&env, &bytes, &lengths)?;
        Ok(Uint32Array::new(place_batch(&self.ring, &batch).map_err(|e| throw(&env, e))?))
    }

    /// The current snapshot as its own object (see `Snapshot`).
    #[napi(js_name = "_snapshot", skip_typescript)]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot { ring: self.ring.clone() }
    }

    /// Balance statistics of a packed batch of keys (see `shardring.js` `balance`).
    #[napi(js_name = "_balancePacked", skip_typescript)]
    pub fn balance_packed(&self, env: Env, joined: Either<Utf16String, Buffer>, lengths: &[u32]) -> Result<Balance> {
        let packed = unpack(&env, &joined, lengths)?;
        let balance = self.ring.balance(packed.iter()).map_err(|e| throw(&env, e))?;
        let ids = self.ring.nodes().iter().map(|n| n.id().to_owned());
        Ok(Balance {
            keys: balance.keys as f64,
            counts: ids.zip(balance.counts.iter().map(|&c| c as f64)).collect(),
            by_node: balance.by_node.into(),
            by_weight: balance.by_weight.into(),
        })
    }

    /// A new ring with `node` (an id of weight 1, or `{ id, weight, zone }`)
    /// added; only keys the new node now owns move. Throws
    /// `RING_DUPLICATE_ID` and the constructor's node errors.
    #[napi(ts_args_type = "node: string | NodeInit")]
    pub fn with_node(&self, env: Env, node: Unknown<'_>) -> Result<Ring> {
        Ok(Ring::wrap(self.ring.with_node(to_node(&env, node)?).map_err(|e| throw(&env, e))?))
    }

    /// A new ring without node `id`; only its keys move. Throws `RING_UNKNOWN_NODE`.
    #[napi(ts_args_type = "id: string")]
    pub fn without_node(&self, env: Env, id: Id) -> Result<Ring> {
        Ok(Ring::wrap(self.ring.without_node(&id).map_err(|e| throw(&env, e))?))
    }

    /// A new ring with node `id` at `weight`: raising it moves keys only to
    /// that node, lowering it only away. Throws `RING_UNKNOWN_NODE`,
    /// `RING_INVALID_WEIGHT` or `RING_TOO_MANY_POINTS`.
    #[napi(ts_args_type = "id: string, weight: number")]
    pub fn with_weight(&self, env: Env, id: Id, weight: f64) -> Result<Ring> {
        Ok(Ring::wrap(self.ring.with_weight(&id, weight).map_err(|e| throw(&env, e))?))
    }

    /// Adds a node to this ring in place (see `withNode`).
    #[napi(ts_args_type = "node: string | NodeInit")]
    pub fn add_node(&mut self, env: Env, node: Unknown<'_>) -> Result<()> {
        self.ring = Arc::new(self.ring.with_node(to_node(&env, node)?).map_err(|e| throw(&env, e))?);
        Ok(())
    }

    /// Removes a node from this ring in place (see `withoutNode`).
    #[napi(ts_args_type = "id: string")]
    pub fn remove_node(&mut self, env: Env, id: Id) -> Result<()> {
        self.ring = Arc::new(self.ring.without_node(&id).map_err(|e| throw(&env, e))?);
        Ok(())
    }

    /// Re-weights a node of this ring in place (see `withWeight`).
    #[napi(ts_args_type = "id: string, weight: number")]
    pub fn set_weight(&mut self, env: Env, id: Id, weight: f64) -> Result<()> {
        self.ring = Arc::new(self.ring.with_weight(&id, weight).map_err(|e| throw(&env, e))?);
        Ok(())
    }

    /// Each node's exact share of the hash space (of uniformly hashed keys),
    /// from arc lengths: `{ [id]: share }`, shares in [0, 1] summing to 1.
    #[napi]
    pub fn ownership(&self) -> IndexMap<String, f64> {
        self.ring.ownership().into_iter().map(|(node, share)| (node.id().to_owned(), share)).collect()
    }
}

/// `Ring.getIndicesAsync` (see `shardring.js`): `getIndices` on the libuv
/// thread pool, on a `Snapshot`: napi-rs keeps the objects a call borrows
/// borrowed until its task settles, and a borrowed ring could not change;
/// the batch is copied and placed on the snapshot current at the call. Throws (synchronously) as `getIndices`.
#[napi(js_name = "_getIndicesAsync", skip_typescript)]
pub fn get_indices_async(
    env: Env,
    snapshot: &Snapshot,
    bytes: Uint8Array,
    lengths: Uint32Array,
) -> Result<AsyncTask<Placing>> {
    packed(&env, &bytes, &lengths)?;
    if snapshot.ring.live_node_count() == 0 {
        return Err(throw(&env, RingError::EmptyRing));
    }
    Ok(AsyncTask::new(Placing { ring: snapshot.ring.clone(), bytes: bytes.to_vec(), lengths: lengths.to_vec() }))
}

/// A ring's snapshot as a JS object of its own (from `Ring._snapshot()`),
/// so an async task borrows it and not the ring, which stays free to change.
#[napi]
pub struct Snapshot {
    ring: Arc<shardring::Ring>,
}

/// The exact difference between two rings with the same seed, position by
/// position (by node id): the moved share, the share per (from, to) pair and
/// the arcs that change owner. Throws `RING_SEED_MISMATCH` or `RING_EMPTY_RING`.
#[napi]
pub fn diff(env: Env, old_ring: &Ring, new_ring: &Ring) -> Result<RingDiff> {
    let diff = old_ring.ring.diff(&new_ring.ring).map_err(|e| throw(&env, e))?;
    Ok(RingDiff {
        moved_share: diff.moved_share,
        flows: diff.flows.into_iter().map(|f| Flow { from: f.from, to: f.to, share: f.share }).collect(),
        arcs: diff
            .arcs
            .into_iter()
            .map(|a| MovedArc { start: BigInt::from(a.start), end: BigInt::from(a.end), from: a.from, to: a.to })
            .collect(),
    })
}

/// XXH3-64 of a key (string as UTF-8, Buffer or Uint8Array) under `seed`
/// (default 0), as a bigint: the position every binding gives the key.
#[napi(ts_args_type = "key: string | Uint8Array, seed?: number | bigint")]
pub fn hash_key(env: Env, key: Unknown<'_>, seed: Option<Either<f64, BigInt>>) -> Result<BigInt> {
    let seed = seed.map(|s| u64_value(&env, "seed", s)).transpose()?.unwrap_or(shardring::DEFAULT_SEED);
    with_key(&env, key, |bytes| BigInt::from(shardring::hash_key(bytes, seed)))
}

/// The names of every placement algorithm, as the `algorithm` option takes them.
#[napi]
pub fn algorithms() -> Vec<&'static str> {
    shardring::Algorithm::ALL.map(shardring::Algorithm::name).to_vec()
}

/// The placement format this build implements (see core/SPEC.md).
#[napi]
pub const PLACEMENT_FORMAT: u32 = shardring::PLACEMENT_FORMAT;
