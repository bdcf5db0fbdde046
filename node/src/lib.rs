//! Node.js bindings for shardring (napi-rs): converts arguments, maps errors,
//! and nothing else. Placement lives in the `shardring` crate.

use std::sync::Arc;

use napi::bindgen_prelude::FromNapiValue;
use napi::{Either, Env, Error, JsValue, Result, Status, Unknown, ValueType, bindgen_prelude::BigInt};
use napi_derive::napi;

use shardring::{Node, RingError};

/// Throws `error` as a JS `Error` whose `code` is the C result name
/// (for example `RING_INVALID_WEIGHT`) and whose message names the bad value.
fn throw(env: &Env, error: RingError) -> Error {
    match env.throw_error(&error.to_string(), Some(error.code())) {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(failed) => failed,
    }
}

/// Throws a JS `TypeError` with Node's `ERR_INVALID_ARG_TYPE` code.
fn type_error(env: &Env, message: String) -> Error {
    match env.throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE")) {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(failed) => failed,
    }
}

/// Throws a JS `RangeError` with Node's `ERR_OUT_OF_RANGE` code.
fn range_error(env: &Env, message: String) -> Error {
    match env.throw_range_error(&message, Some("ERR_OUT_OF_RANGE")) {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(failed) => failed,
    }
}

/// A key's bytes: a string as UTF-8, a Buffer or Uint8Array as is; any other
/// type throws `TypeError`.
fn with_key<T>(env: &Env, key: Unknown<'_>, place: impl FnOnce(&[u8]) -> T) -> Result<T> {
    match key.get_type()? {
        ValueType::String => {
            // SAFETY: the value is a JS string in this env (checked above).
            let text = unsafe { String::from_napi_value(env.raw(), key.raw()) }?;
            Ok(place(text.as_bytes()))
        }
        ValueType::Object if key.is_typedarray()? => {
            // SAFETY: the value is a typed array in this env; the conversion checks it is a
            // Uint8Array (Buffer included) and the slice is used before returning to JS.
            match unsafe { <&[u8]>::from_napi_value(env.raw(), key.raw()) } {
                Ok(bytes) => Ok(place(bytes)),
                Err(_) => {
                    Err(type_error(env, "key must be a string, Buffer or Uint8Array, not another typed array".into()))
                }
            }
        }
        other => Err(type_error(env, format!("key must be a string, Buffer or Uint8Array, not {other}"))),
    }
}

/// A node given to the `Ring` constructor as an object.
#[napi(object)]
pub struct NodeInit {
    /// Non-empty UTF-8 id.
    pub id: String,
    /// Relative capacity, finite and >= 0 (0 = drained); default 1.
    pub weight: Option<f64>,
    /// Failure-domain label (non-empty); preference lists take nodes of
    /// distinct zones first.
    pub zone: Option<String>,
}

/// Options of the `Ring` constructor.
#[napi(object)]
pub struct RingOptions {
    /// Points per unit of weight (integer >= 1); default 160.
    pub vnodes: Option<u32>,
    /// Seed of the XXH3-64 key and point hashes: an integer in [0, 2^64),
    /// as a number (up to 2^53) or a bigint; default 0.
    pub seed: Option<Either<f64, BigInt>>,
}

fn seed_value(env: &Env, seed: Option<Either<f64, BigInt>>) -> Result<u64> {
    match seed {
        None => Ok(shardring::DEFAULT_SEED),
        Some(Either::A(number)) => {
            if number.fract() == 0.0 && (0.0..=9_007_199_254_740_991.0).contains(&number) {
                Ok(number as u64)
            } else {
                Err(range_error(env, format!("seed must be an integer in [0, 2^53] or a bigint, got {number}")))
            }
        }
        Some(Either::B(big)) => match big.get_u64() {
            (false, value, true) => Ok(value),
            _ => Err(range_error(env, "seed bigint must be in [0, 2^64)".into())),
        },
    }
}

/// An immutable consistent-hash ring (placement format 1). Keys are
/// strings (hashed as UTF-8), Buffers or Uint8Arrays; a string and its
/// UTF-8 Buffer land on the same node.
#[napi]
pub struct Ring {
    ring: Arc<shardring::Ring>,
}

#[napi]
impl Ring {
    /// Builds a ring from node ids (weight 1 each) or `{ id, weight }`
    /// objects. Throws an `Error` with `code` `RING_EMPTY_ID`,
    /// `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`, `RING_ZERO_VNODES` or
    /// `RING_TOO_MANY_POINTS`; a `RangeError` for a bad seed.
    #[napi(constructor)]
    pub fn new(env: Env, nodes: Either<Vec<String>, Vec<NodeInit>>, options: Option<RingOptions>) -> Result<Self> {
        let nodes: Vec<Node> = match nodes {
            Either::A(ids) => ids.into_iter().map(|id| Node::new(id, 1.0)).collect(),
            Either::B(inits) => inits
                .into_iter()
                .map(|n| {
                    let node = Node::new(n.id, n.weight.unwrap_or(1.0));
                    match n.zone {
                        Some(zone) => node.with_zone(zone),
                        None => node,
                    }
                })
                .collect(),
        };
        let (vnodes, seed) = match options {
            Some(options) => (options.vnodes.unwrap_or(shardring::DEFAULT_VNODES), seed_value(&env, options.seed)?),
            None => (shardring::DEFAULT_VNODES, shardring::DEFAULT_SEED),
        };
        let ring = shardring::Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes).build();
        Ok(Ring { ring: Arc::new(ring.map_err(|e| throw(&env, e))?) })
    }

    /// Builds a ring from a JSON ring config string (the config format shared
    /// by every binding). Throws `RING_INVALID_CONFIG` for malformed JSON or
    /// unknown fields, and the constructor's errors.
    #[napi(factory, js_name = "fromJSON")]
    pub fn from_json(env: Env, config: String) -> Result<Self> {
        let ring = shardring::Ring::from_json(&config).map_err(|e| throw(&env, e))?;
        Ok(Ring { ring: Arc::new(ring) })
    }

    /// Node ids in the order given (drained nodes included).
    #[napi(getter)]
    pub fn nodes(&self) -> Vec<String> {
        self.ring.nodes().iter().map(|n| n.id().to_owned()).collect()
    }

    /// Number of nodes (drained nodes included).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.ring.nodes().len() as u32
    }

    /// The key's position on the ring: XXH3-64 of its bytes under the ring's
    /// seed, as a bigint in [0, 2^64).
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn hash_key(&self, env: Env, key: Unknown<'_>) -> Result<BigInt> {
        with_key(&env, key, |bytes| BigInt::from(self.ring.hash_key(bytes)))
    }

    /// The id of the node owning `key`. Throws `RING_EMPTY_RING` when no node
    /// has weight > 0, `TypeError` for other key types.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn get(&self, env: Env, key: Unknown<'_>) -> Result<String> {
        let index = with_key(&env, key, |bytes| self.ring.get_index(bytes))?.map_err(|e| throw(&env, e))?;
        Ok(self.ring.nodes()[index].id().to_owned())
    }

    /// The id of the node owning ring position `hash` (a bigint in
    /// [0, 2^64), e.g. from `hashKey`). Throws `RING_EMPTY_RING` when no node
    /// has weight > 0, `RangeError` for a hash outside [0, 2^64).
    #[napi]
    pub fn get_by_hash(&self, env: Env, hash: BigInt) -> Result<String> {
        let hash = match hash.get_u64() {
            (false, value, true) => value,
            _ => return Err(range_error(&env, "hash must be a bigint in [0, 2^64)".into())),
        };
        let index = self.ring.index_by_hash(hash).map_err(|e| throw(&env, e))?;
        Ok(self.ring.nodes()[index].id().to_owned())
    }

    /// A stable 64-bit digest (bigint) of the ring's algorithm, vnodes, seed
    /// and set of nodes, independent of node order (see core/SPEC.md), so two
    /// processes can check they hold the same ring.
    #[napi(getter)]
    pub fn fingerprint(&self) -> BigInt {
        BigInt::from(self.ring.fingerprint())
    }

    /// The key's preference list: up to `n` distinct node ids clockwise from
    /// the key, the first being `get(key)`; each node with weight > 0 once
    /// when `n` exceeds their number (Dynamo's preference list). Throws as `get`.
    #[napi(ts_args_type = "key: string | Uint8Array, n: number")]
    pub fn get_n(&self, env: Env, key: Unknown<'_>, n: u32) -> Result<Vec<String>> {
        let mut indices = vec![0usize; (n as usize).min(self.ring.nodes().len())];
        let found =
            with_key(&env, key, |bytes| self.ring.get_n_indices(bytes, &mut indices))?.map_err(|e| throw(&env, e))?;
        Ok(indices[..found].iter().map(|&i| self.ring.nodes()[i].id().to_owned()).collect())
    }
}

/// XXH3-64 of a key (string as UTF-8, Buffer or Uint8Array) under `seed`
/// (default 0), as a bigint: the position every binding gives the key.
#[napi(ts_args_type = "key: string | Uint8Array, seed?: number | bigint")]
pub fn hash_key(env: Env, key: Unknown<'_>, seed: Option<Either<f64, BigInt>>) -> Result<BigInt> {
    let seed = seed_value(&env, seed)?;
    with_key(&env, key, |bytes| BigInt::from(shardring::hash_key(bytes, seed)))
}

/// The placement format this build implements (see core/SPEC.md).
#[napi]
pub const PLACEMENT_FORMAT: u32 = shardring::PLACEMENT_FORMAT;
