//! `ring_t`: construction, lookups, derivation and export.

use std::ffi::{CString, c_char};
use std::sync::Arc;

use shardring::{
    Algorithm, Distribution, EndpointOrder, HashFunction, KeyHash, Node, RendezvousScore, Ring, ServerIds, ServerKey,
};

use crate::ring_result::{self, *};
use crate::{boundary, bytes, core_error, fail, non_null, out_slice, text, write, write_str};

/// An immutable ring snapshot. Create with `ring_new` or
/// `ring_new_from_json`, or derive with `ring_with_node`, `ring_without_node`
/// and `ring_with_weight`; add a reference with `ring_clone`; drop one with
/// `ring_free`. Safe to read from many threads at once.
pub struct ring_t {
    /// Shared, so a tracker over this ring holds the same snapshot instead of a copy.
    pub(crate) ring: Arc<Ring>,
}

/// The ring behind a handle.
///
/// # Safety
/// `handle` must be NULL or a live handle from this library.
pub(crate) unsafe fn ring_ref<'a>(handle: *const ring_t) -> Result<&'a Ring, ring_result> {
    if handle.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("argument `ring` is NULL")));
    }
    // SAFETY: the caller holds a reference on a live handle.
    Ok(unsafe { &(*handle).ring })
}

/// The snapshot behind a handle, shared.
///
/// # Safety
/// As [`ring_ref`].
pub(crate) unsafe fn ring_shared(handle: *const ring_t) -> Result<Arc<Ring>, ring_result> {
    if handle.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("argument `ring` is NULL")));
    }
    // SAFETY: the caller holds a reference on a live handle.
    Ok(unsafe { Arc::clone(&(*handle).ring) })
}

fn into_handle(ring: Ring) -> *mut ring_t {
    shared_handle(Arc::new(ring))
}

/// A new handle (one reference) to a shared snapshot (a follower's).
pub(crate) fn shared_handle(ring: Arc<Ring>) -> *mut ring_t {
    Arc::into_raw(Arc::new(ring_t { ring })) as *mut ring_t
}

/// Stores a new handle in `*out_ring` (checked non-NULL by the caller).
fn hand_out(ring: Ring, out_ring: *mut *mut ring_t) {
    // SAFETY: every caller checks `out_ring` non-NULL first; it is writable by contract.
    unsafe { write(out_ring, into_handle(ring)) }
}

/// Builds a ring from `node_count` nodes given as parallel arrays, on the
/// default algorithm (`"ring"`). Same as `ring_new_with_options` with
/// options `{ .fields = RING_OPTION_VNODES | RING_OPTION_SEED, .vnodes =
/// vnodes, .seed = seed }`: both are passed as given (there is no "0 means
/// the default"; `ring_new_with_options` leaves a parameter out).
///
/// - `ids[i]` points to `id_lens[i]` bytes of UTF-8 (not NUL-terminated; copied).
/// - `weights[i]` is the node's relative capacity (finite, >= 0; 0 = drained);
///   `weights` may be NULL, meaning weight 1.0 for every node.
/// - `zones[i]` points to `zone_lens[i]` bytes of UTF-8 naming the node's
///   failure domain, or is NULL for a node without a zone; `zones` and
///   `zone_lens` may both be NULL, meaning no node has a zone.
/// - `vnodes`: points per unit of weight, >= 1 (0 is `RING_ZERO_VNODES`;
///   160 is the default where it can be left out).
/// - `seed`: seed of the XXH3-64 key and point hashes (0 is the default
///   where it can be left out).
///
/// On success writes a new handle (one reference) to `*out_ring`; release it
/// with `ring_free`. Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`,
/// `RING_EMPTY_ID`, `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`,
/// `RING_EMPTY_ZONE`, `RING_ZERO_VNODES`, `RING_TOO_MANY_POINTS`,
/// `RING_INVALID_CONFIG` (`node_count` above 2^24).
///
/// # Safety
/// Each non-NULL array must hold `node_count` elements; `ids[i]` must be valid
/// for `id_lens[i]` bytes and a non-NULL `zones[i]` for `zone_lens[i]` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
    vnodes: u32,
    seed: u64,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: forwarded from this function's own contract.
        let nodes = unsafe { read_nodes(ids, id_lens, weights, zones, zone_lens, node_count) }?;
        let ring = Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes).build().map_err(core_error)?;
        hand_out(ring, out_ring);
        Ok(())
    })
}

/// `ring_options_t.fields` bit: `vnodes` is given.
pub const RING_OPTION_VNODES: u32 = 1;
/// `ring_options_t.fields` bit: `seed` is given.
pub const RING_OPTION_SEED: u32 = 2;
/// `ring_options_t.fields` bit: `table_size` is given.
pub const RING_OPTION_TABLE_SIZE: u32 = 4;
/// `ring_options_t.fields` bit: `distribution` is given.
pub const RING_OPTION_DISTRIBUTION: u32 = 8;
/// `ring_options_t.fields` bit: `key_hash` is given.
pub const RING_OPTION_KEY_HASH: u32 = 16;
/// `ring_options_t.fields` bit: `server_ids` is given.
pub const RING_OPTION_SERVER_IDS: u32 = 32;
/// `ring_options_t.fields` bit: `hash_tag` is given.
pub const RING_OPTION_HASH_TAG: u32 = 64;
/// `ring_options_t.fields` bit: `default_port` is given.
pub const RING_OPTION_DEFAULT_PORT: u32 = 128;
/// `ring_options_t.fields` bit: `min_ring_size` is given.
pub const RING_OPTION_MIN_RING_SIZE: u32 = 256;
/// `ring_options_t.fields` bit: `max_ring_size` is given.
pub const RING_OPTION_MAX_RING_SIZE: u32 = 512;
/// `ring_options_t.fields` bit: `hash_function` is given.
pub const RING_OPTION_HASH_FUNCTION: u32 = 1024;
/// `ring_options_t.fields` bit: `endpoint_order` is given.
pub const RING_OPTION_ENDPOINT_ORDER: u32 = 2048;
/// `ring_options_t.fields` bit: `avalanche` is given.
pub const RING_OPTION_AVALANCHE: u32 = 4096;
/// `ring_options_t.fields` bit: `server_key` is given.
pub const RING_OPTION_SERVER_KEY: u32 = 8192;
/// `ring_options_t.fields` bit: `haproxy_ids` is given.
pub const RING_OPTION_HAPROXY_IDS: u32 = 16384;
/// `ring_options_t.fields` bit: `buckets` is given.
pub const RING_OPTION_BUCKETS: u32 = 32768;
/// `ring_options_t.fields` bit: `removed_buckets` and `removed_bucket_count` are given.
pub const RING_OPTION_REMOVED_BUCKETS: u32 = 65536;
/// `ring_options_t.fields` bit: `score` is given.
pub const RING_OPTION_SCORE: u32 = 131072;
/// Every bit `ring_options_t.fields` defines.
const KNOWN_OPTION_BITS: u32 = RING_OPTION_VNODES
    | RING_OPTION_SEED
    | RING_OPTION_TABLE_SIZE
    | RING_OPTION_DISTRIBUTION
    | RING_OPTION_KEY_HASH
    | RING_OPTION_SERVER_IDS
    | RING_OPTION_HASH_TAG
    | RING_OPTION_DEFAULT_PORT
    | RING_OPTION_MIN_RING_SIZE
    | RING_OPTION_MAX_RING_SIZE
    | RING_OPTION_HASH_FUNCTION
    | RING_OPTION_ENDPOINT_ORDER
    | RING_OPTION_AVALANCHE
    | RING_OPTION_SERVER_KEY
    | RING_OPTION_HAPROXY_IDS
    | RING_OPTION_BUCKETS
    | RING_OPTION_REMOVED_BUCKETS
    | RING_OPTION_SCORE;

/// Algorithm and parameters for `ring_new_with_options`. A parameter counts
/// only when its bit is set in `fields`; a parameter left out gets its
/// default, and one passed must be valid (0 is never a default: `vnodes` 0
/// is `RING_ZERO_VNODES`, `table_size` 0 `RING_INVALID_TABLE_SIZE`). So a
/// zeroed struct means every default:
///
/// ```c
/// ring_options_t options = {0};   // all defaults: ring, 160 vnodes, seed 0
/// options.algorithm = "maglev";
/// options.fields = RING_OPTION_TABLE_SIZE;
/// options.table_size = 251;
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ring_options_t {
    /// Which parameters are given: a bitwise OR of `RING_OPTION_VNODES`,
    /// `RING_OPTION_SEED`, `RING_OPTION_TABLE_SIZE`,
    /// `RING_OPTION_DISTRIBUTION`, `RING_OPTION_KEY_HASH`, `RING_OPTION_SERVER_IDS`
    /// `RING_OPTION_HASH_TAG`, `RING_OPTION_DEFAULT_PORT`,
    /// `RING_OPTION_MIN_RING_SIZE`, `RING_OPTION_MAX_RING_SIZE`,
    /// `RING_OPTION_HASH_FUNCTION`, `RING_OPTION_ENDPOINT_ORDER`,
    /// `RING_OPTION_AVALANCHE`, `RING_OPTION_SERVER_KEY`,
    /// `RING_OPTION_HAPROXY_IDS`, `RING_OPTION_BUCKETS`,
    /// `RING_OPTION_REMOVED_BUCKETS` and `RING_OPTION_SCORE` (0: none, all defaults). Any other bit is `RING_INVALID_CONFIG`. A field is read
    /// only when its bit is set, so a program built against an older header
    /// (a shorter struct, without the last fields) stays valid.
    pub fields: u32,
    /// NUL-terminated algorithm name: `"ring"` (when NULL), `"ketama"`,
    /// `"ketama-spy"`, `"libketama"`, `"nginx"`, `"jump"`, `"rendezvous"`,
    /// `"maglev"`, `"slots"`, `"libmemcached"`, `"twemproxy"`, `"uhashring"`,
    /// `"uhashring-ketama"`, `"hashring-js"`, `"envoy-ring-hash"`,
    /// `"envoy-maglev"`, `"grpc-ring-hash"`, `"haproxy"`, `"jumpback"` or
    /// `"memento"` (`core/SPEC.md`).
    pub algorithm: *const c_char,
    /// Points per unit of weight, >= 1, `ring` only; read when
    /// `RING_OPTION_VNODES` is set (default 160).
    pub vnodes: u32,
    /// Seed of the XXH3 hashes (`ring`, `jump`, `rendezvous`, `maglev`,
    /// `jumpback`, `memento`; only 0 for the others); read when `RING_OPTION_SEED` is set (default 0).
    pub seed: u64,
    /// Maglev table size, a prime from the node count to 2^24, `maglev`
    /// only; read when `RING_OPTION_TABLE_SIZE` is set (default 65,537).
    pub table_size: u32,
    /// NUL-terminated distribution: for `libmemcached` `"modula"`,
    /// `"consistent_ketama"` (the default), `"consistent_weighted"`,
    /// `"consistent_ketama_spy"` or `"consistent_ketama_spy_weighted"`; for
    /// `twemproxy` `"ketama"` (the default) or `"modula"`. Read when
    /// `RING_OPTION_DISTRIBUTION` is set.
    pub distribution: *const c_char,
    /// NUL-terminated key hash name (`"one_at_a_time"`, `"md5"`, `"crc16"`,
    /// `"crc32"`, `"crc32a"`, `"fnv1_64"`, `"fnv1a_64"`, `"fnv1_32"`,
    /// `"fnv1a_32"`, `"hsieh"`, `"murmur"`, `"jenkins"`, `"murmur3"`),
    /// `libmemcached` (default MD5 for the weighted distributions, else
    /// one-at-a-time; not hsieh, crc16, crc32a) and `twemproxy` (default
    /// `"fnv1a_64"`; not murmur3) only; read when `RING_OPTION_KEY_HASH` is set.
    pub key_hash: *const c_char,
    /// NUL-terminated `"address"` (ids are `host:port`, the default) or
    /// `"label"` (ids are server names, used literally), `twemproxy` only;
    /// read when `RING_OPTION_SERVER_IDS` is set.
    pub server_ids: *const c_char,
    /// NUL-terminated two-byte hash tag such as `"{}"`, `twemproxy` only;
    /// read when `RING_OPTION_HASH_TAG` is set.
    pub hash_tag: *const c_char,
    /// npm hashring's `default port`, 1-65535, `hashring-js` only; read when
    /// `RING_OPTION_DEFAULT_PORT` is set.
    pub default_port: u32,
    /// Envoy's and gRPC's `minimum_ring_size`, 1 to 8,388,608 (default 1,024;
    /// gRPC caps it at 4,096), `envoy-ring-hash` and `grpc-ring-hash` only;
    /// read when `RING_OPTION_MIN_RING_SIZE` is set.
    pub min_ring_size: u64,
    /// Envoy's and gRPC's `maximum_ring_size` (default 8,388,608 for Envoy,
    /// 4,096 for gRPC, which caps it at 4,096); read when
    /// `RING_OPTION_MAX_RING_SIZE` is set.
    pub max_ring_size: u64,
    /// NUL-terminated hash function: `envoy-ring-hash` `"xx_hash"` (the
    /// default) or `"murmur_hash_2"`, `grpc-ring-hash` `"xx_hash"`, `haproxy`
    /// `"sdbm"` (the default), `"djb2"`, `"wt6"` or `"crc32"`; read when
    /// `RING_OPTION_HASH_FUNCTION` is set.
    pub hash_function: *const c_char,
    /// NUL-terminated `"given"` (gRPC C-core's order, the default) or
    /// `"by_key"` (grpc-go's), `grpc-ring-hash` only; read when
    /// `RING_OPTION_ENDPOINT_ORDER` is set.
    pub endpoint_order: *const c_char,
    /// 1 to pass HAProxy request hashes through `full_hash`, 0 not to
    /// (default 1 without a hash function, else 0), `haproxy` only; read when
    /// `RING_OPTION_AVALANCHE` is set. Any other value is `RING_INVALID_CONFIG`.
    pub avalanche: u32,
    /// NUL-terminated `"id"` (the default), `"id_full_hash"` or `"id32"`,
    /// `haproxy` only; read when `RING_OPTION_SERVER_KEY` is set.
    pub server_key: *const c_char,
    /// HAProxy server ids, one per node (`node_count` of them), 0 for the id
    /// HAProxy assigns, `haproxy` only; read when `RING_OPTION_HAPROXY_IDS`
    /// is set (the array is borrowed for the call).
    pub haproxy_ids: *const u32,
    /// Memento buckets, one per node (`node_count` of them), `memento` only;
    /// read when `RING_OPTION_BUCKETS` is set (borrowed for the call).
    /// Without it, nodes take the buckets not removed in ascending order.
    pub buckets: *const u32,
    /// Memento's removed buckets in removal order, oldest first (as
    /// `ring_to_json` writes `removed_buckets`), `memento` only; read with
    /// `removed_bucket_count` when `RING_OPTION_REMOVED_BUCKETS` is set
    /// (borrowed for the call; NULL only with a count of 0).
    pub removed_buckets: *const u32,
    /// The number of entries of `removed_buckets`.
    pub removed_bucket_count: usize,
    /// NUL-terminated rendezvous score: `"integer"` (the default, the same
    /// on every platform) or `"float"` (placement format 1's, with the
    /// platform's `ln`), `rendezvous` only; read when `RING_OPTION_SCORE` is set.
    pub score: *const c_char,
}

/// Builds a ring on any algorithm: nodes as in `ring_new`, algorithm and
/// parameters from `options` (NULL, or a zeroed `ring_options_t`, = all
/// defaults: the `ring` algorithm, 160 vnodes, seed 0, for Maglev a table
/// of 65,537). Only the parameters whose bits are set in `options->fields`
/// are read, and each is passed as given. Ketama ids are servers
/// (`host:port`); ketama and nginx weights are whole numbers; jump,
/// jumpback and memento weights are 1.
///
/// On success writes a new handle to `*out_ring`; release it with
/// `ring_free`. Errors: those of `ring_new` (`RING_ZERO_VNODES`: vnodes 0
/// with its bit set), plus `RING_INVALID_CONFIG` (an unknown algorithm, a
/// parameter it does not take, or a bit of `fields` no `RING_OPTION_*`
/// defines), `RING_INVALID_TABLE_SIZE` (including 0 with its bit set),
/// `RING_INVALID_ADDRESS`.
///
/// # Safety
/// As `ring_new`; `options` is NULL or points to a `ring_options_t` whose
/// `algorithm` is NULL or a NUL-terminated string, and whose arrays with
/// their bits set hold `node_count` (`haproxy_ids`, `buckets`) or
/// `removed_bucket_count` (`removed_buckets`) entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_with_options(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
    options: *const ring_options_t,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: forwarded from this function's own contract.
        let nodes = unsafe { read_nodes(ids, id_lens, weights, zones, zone_lens, node_count) }?;
        let mut builder = Ring::builder();
        if !options.is_null() {
            // SAFETY: non-NULL options point to a ring_options_t by contract;
            // each field is read alone, and the last ones only when their
            // bits say the caller's struct has them.
            let fields = unsafe { (*options).fields };
            let unknown = fields & !KNOWN_OPTION_BITS;
            if unknown != 0 {
                return Err(fail(
                    RING_INVALID_CONFIG,
                    format_args!(
                        "`options.fields` has unknown bits {unknown:#x} (defined: RING_OPTION_VNODES 0x1, \
                         RING_OPTION_SEED 0x2, RING_OPTION_TABLE_SIZE 0x4, RING_OPTION_DISTRIBUTION 0x8, \
                         RING_OPTION_KEY_HASH 0x10, RING_OPTION_SERVER_IDS 0x20, RING_OPTION_HASH_TAG 0x40, \
                         RING_OPTION_DEFAULT_PORT 0x80, RING_OPTION_MIN_RING_SIZE 0x100, \
                         RING_OPTION_MAX_RING_SIZE 0x200, RING_OPTION_HASH_FUNCTION 0x400, \
                         RING_OPTION_ENDPOINT_ORDER 0x800, RING_OPTION_AVALANCHE 0x1000, \
                         RING_OPTION_SERVER_KEY 0x2000, RING_OPTION_HAPROXY_IDS 0x4000, \
                         RING_OPTION_BUCKETS 0x8000, RING_OPTION_REMOVED_BUCKETS 0x10000, \
                         RING_OPTION_SCORE 0x20000)"
                    ),
                ));
            }
            // SAFETY: `options` points to a ring_options_t by contract.
            let algorithm = unsafe { (*options).algorithm };
            // SAFETY: a non-NULL algorithm is NUL-terminated by contract.
            if let Some(name) = unsafe { option_name(algorithm, "algorithm") }? {
                builder = builder.algorithm(name.parse::<Algorithm>().map_err(core_error)?);
            }
            if fields & RING_OPTION_VNODES != 0 {
                // SAFETY: `options` points to a ring_options_t by contract.
                builder = builder.vnodes(unsafe { (*options).vnodes });
            }
            if fields & RING_OPTION_SEED != 0 {
                // SAFETY: `options` points to a ring_options_t by contract.
                builder = builder.seed(unsafe { (*options).seed });
            }
            if fields & RING_OPTION_TABLE_SIZE != 0 {
                // SAFETY: `options` points to a ring_options_t by contract.
                builder = builder.table_size(unsafe { (*options).table_size });
            }
            // A string option whose bit is set must not be NULL.
            let given = |text: *const c_char, field: &str| {
                // SAFETY: with its bit set, the field is a NUL-terminated string by contract.
                unsafe { option_name(text, field) }?.ok_or_else(|| {
                    fail(RING_NULL_ARGUMENT, format_args!("`options.{field}` is NULL but its RING_OPTION_* bit is set"))
                })
            };
            if fields & RING_OPTION_DISTRIBUTION != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has this field.
                let name = given(unsafe { (*options).distribution }, "distribution")?;
                builder = builder.distribution(name.parse::<Distribution>().map_err(core_error)?);
            }
            if fields & RING_OPTION_KEY_HASH != 0 {
                // SAFETY: as above.
                let name = given(unsafe { (*options).key_hash }, "key_hash")?;
                builder = builder.key_hash(name.parse::<KeyHash>().map_err(core_error)?);
            }
            if fields & RING_OPTION_SERVER_IDS != 0 {
                // SAFETY: as above.
                let name = given(unsafe { (*options).server_ids }, "server_ids")?;
                builder = builder.server_ids(name.parse::<ServerIds>().map_err(core_error)?);
            }
            if fields & RING_OPTION_HASH_TAG != 0 {
                // SAFETY: as above.
                builder = builder.hash_tag(given(unsafe { (*options).hash_tag }, "hash_tag")?);
            }
            if fields & RING_OPTION_DEFAULT_PORT != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has this field.
                let port = unsafe { (*options).default_port };
                let port = u16::try_from(port).map_err(|_| {
                    fail(RING_INVALID_CONFIG, format_args!("`options.default_port` {port} is not a port (1-65535)"))
                })?;
                builder = builder.default_port(port);
            }
            if fields & RING_OPTION_MIN_RING_SIZE != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has this field.
                builder = builder.min_ring_size(unsafe { (*options).min_ring_size });
            }
            if fields & RING_OPTION_MAX_RING_SIZE != 0 {
                // SAFETY: as above.
                builder = builder.max_ring_size(unsafe { (*options).max_ring_size });
            }
            if fields & RING_OPTION_HASH_FUNCTION != 0 {
                // SAFETY: as above.
                let name = given(unsafe { (*options).hash_function }, "hash_function")?;
                builder = builder.hash_function(name.parse::<HashFunction>().map_err(core_error)?);
            }
            if fields & RING_OPTION_ENDPOINT_ORDER != 0 {
                // SAFETY: as above.
                let name = given(unsafe { (*options).endpoint_order }, "endpoint_order")?;
                builder = builder.endpoint_order(name.parse::<EndpointOrder>().map_err(core_error)?);
            }
            if fields & RING_OPTION_AVALANCHE != 0 {
                // SAFETY: as above.
                let avalanche = unsafe { (*options).avalanche };
                if avalanche > 1 {
                    return Err(fail(
                        RING_INVALID_CONFIG,
                        format_args!("`options.avalanche` {avalanche} is neither 0 nor 1"),
                    ));
                }
                builder = builder.avalanche(avalanche == 1);
            }
            if fields & RING_OPTION_SERVER_KEY != 0 {
                // SAFETY: as above.
                let name = given(unsafe { (*options).server_key }, "server_key")?;
                builder = builder.server_key(name.parse::<ServerKey>().map_err(core_error)?);
            }
            if fields & RING_OPTION_HAPROXY_IDS != 0 {
                // SAFETY: as above.
                let ids = unsafe { (*options).haproxy_ids };
                if ids.is_null() && node_count > 0 {
                    return Err(fail(
                        RING_NULL_ARGUMENT,
                        format_args!("`options.haproxy_ids` is NULL but its RING_OPTION_* bit is set"),
                    ));
                }
                if node_count > 0 {
                    // SAFETY: non-NULL, and `node_count` u32 long by contract.
                    let puids = unsafe { std::slice::from_raw_parts(ids, node_count) };
                    for (node, &puid) in nodes.iter().zip(puids) {
                        if puid != 0 {
                            builder = builder.haproxy_id(node.id(), puid);
                        }
                    }
                }
            }
            if fields & RING_OPTION_BUCKETS != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has this field.
                let buckets = unsafe { (*options).buckets };
                if buckets.is_null() && node_count > 0 {
                    return Err(fail(
                        RING_NULL_ARGUMENT,
                        format_args!("`options.buckets` is NULL but its RING_OPTION_* bit is set"),
                    ));
                }
                if node_count > 0 {
                    // SAFETY: non-NULL, and `node_count` u32 long by contract.
                    let buckets = unsafe { std::slice::from_raw_parts(buckets, node_count) };
                    for (node, &bucket) in nodes.iter().zip(buckets) {
                        builder = builder.bucket(node.id(), bucket);
                    }
                }
            }
            if fields & RING_OPTION_REMOVED_BUCKETS != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has these fields.
                let (removed, count) = unsafe { ((*options).removed_buckets, (*options).removed_bucket_count) };
                if removed.is_null() && count > 0 {
                    return Err(fail(
                        RING_NULL_ARGUMENT,
                        format_args!("`options.removed_buckets` is NULL with removed_bucket_count {count}"),
                    ));
                }
                // A count past memento's bucket limit is refused before the
                // array is read: a wrong count would otherwise read gigabytes.
                if count > shardring::MAX_MEMENTO_BUCKETS as usize {
                    return Err(fail(
                        RING_INVALID_CONFIG,
                        format_args!(
                            "removed_bucket_count {count} is over memento's {} buckets",
                            shardring::MAX_MEMENTO_BUCKETS
                        ),
                    ));
                }
                let removed = if count == 0 {
                    &[][..]
                } else {
                    // SAFETY: non-NULL, and `count` u32 long by contract.
                    unsafe { std::slice::from_raw_parts(removed, count) }
                };
                builder = builder.removed_buckets(removed.iter().copied());
            }
            if fields & RING_OPTION_SCORE != 0 {
                // SAFETY: `options` points to a ring_options_t whose bit says it has this field.
                let name = given(unsafe { (*options).score }, "score")?;
                builder = builder.score(name.parse::<RendezvousScore>().map_err(core_error)?);
            }
        }
        hand_out(builder.nodes(nodes).build().map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// A NUL-terminated option string as UTF-8 (`None` for NULL).
///
/// # Safety
/// `name` is NULL or NUL-terminated.
unsafe fn option_name<'a>(name: *const c_char, field: &str) -> Result<Option<&'a str>, ring_result> {
    if name.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated by contract.
    let text = unsafe { std::ffi::CStr::from_ptr(name) };
    text.to_str()
        .map(Some)
        .map_err(|e| fail(RING_INVALID_UTF8, format_args!("`options.{field}` is not valid UTF-8: {e}")))
}

/// Reads the parallel node arrays of `ring_new`.
///
/// # Safety
/// As `ring_new`.
unsafe fn read_nodes(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
) -> Result<Vec<Node>, ring_result> {
    if node_count > 0 {
        non_null!(ids, id_lens);
    }
    if zones.is_null() != zone_lens.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("`zones` and `zone_lens` must both be NULL or both be set")));
    }
    // More nodes than a ring has points (2^24) is a count no caller's arrays
    // hold; refuse it before allocating for it.
    if node_count as u64 > shardring::MAX_POINTS {
        return Err(fail(
            RING_INVALID_CONFIG,
            format_args!("node_count {node_count} is above the {} nodes a ring can hold", shardring::MAX_POINTS),
        ));
    }
    let mut nodes = Vec::with_capacity(node_count);
    for i in 0..node_count {
        // SAFETY: the caller guarantees `node_count` elements in each non-NULL array,
        // and `ids[i]` valid for `id_lens[i]` bytes.
        let id = unsafe { text(*ids.add(i), *id_lens.add(i), format_args!("ids[{i}]")) }?;
        // SAFETY: `weights` is NULL or holds `node_count` elements.
        let weight = if weights.is_null() { 1.0 } else { unsafe { *weights.add(i) } };
        let mut node = Node::new(id, weight);
        // SAFETY: both zone arrays are NULL, or non-NULL with `node_count` elements.
        let zone = if zones.is_null() { std::ptr::null() } else { unsafe { *zones.add(i) } };
        if !zone.is_null() {
            // SAFETY: the caller guarantees `zones[i]` valid for `zone_lens[i]` bytes.
            node = node.with_zone(unsafe { text(zone, *zone_lens.add(i), format_args!("zones[{i}]")) }?);
        }
        nodes.push(node);
    }
    Ok(nodes)
}

/// The ring's algorithm name (`"ring"`, `"ketama"`, ...): a static
/// NUL-terminated string, or NULL when `ring` is NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_algorithm(ring: *const ring_t) -> *const c_char {
    // SAFETY: NULL or a live handle by contract.
    let Ok(ring) = (unsafe { ring_ref(ring) }) else {
        return std::ptr::null();
    };
    ring.algorithm().c_name().as_ptr()
}

/// Builds a ring from a JSON ring config (`json_len` bytes of UTF-8, not
/// NUL-terminated), e.g.
/// `{"format_version":1,"vnodes":160,"seed":0,"nodes":[{"id":"a","weight":1,"zone":"east"}]}`.
///
/// On success writes a new handle to `*out_ring`; release it with `ring_free`.
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_INVALID_CONFIG`,
/// `RING_UNSUPPORTED_FORMAT`, the errors of `ring_new`, and those of
/// `ring_new_with_options` (`RING_INVALID_TABLE_SIZE`, `RING_INVALID_ADDRESS`).
///
/// # Safety
/// `json` must be valid for `json_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_from_json(
    json: *const c_char,
    json_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: the caller guarantees `json_len` readable bytes.
        let json = unsafe { text(json, json_len, "json") }?;
        hand_out(Ring::from_json(json).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Writes the ring's JSON config (pretty-printed, NUL-terminated UTF-8) to
/// `*out_json` and its length without the NUL to `*out_json_len`. The string
/// is allocated by the library: release it with `ring_string_free`.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `ring` must be a live handle; the out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_to_json(
    ring: *const ring_t,
    out_json: *mut *mut c_char,
    out_json_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_json, out_json_len);
        // SAFETY: live handle by contract.
        let json = unsafe { ring_ref(ring) }?.to_config().to_json();
        let len = json.len();
        // JSON escapes NUL as \u0000, so the text has no interior NUL.
        let json = CString::new(json).map_err(|_| fail(RING_PANIC, format_args!("JSON contained a NUL byte")))?;
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            write(out_json, json.into_raw());
            write(out_json_len, len);
        }
        Ok(())
    })
}

/// Frees a string returned by `ring_to_json`. NULL is a no-op.
///
/// # Safety
/// `string` must be NULL or a string from `ring_to_json`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_string_free(string: *mut c_char) {
    if !string.is_null() {
        // SAFETY: the string came from `CString::into_raw` in `ring_to_json`.
        drop(unsafe { CString::from_raw(string) });
    }
}

/// Adds a reference to `ring` and returns it (the same handle). Each
/// reference is dropped by one `ring_free`. Returns NULL for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_clone(ring: *const ring_t) -> *mut ring_t {
    if !ring.is_null() {
        // SAFETY: a live handle came from `Arc::into_raw` and holds a reference.
        unsafe { Arc::increment_strong_count(ring) };
    }
    ring as *mut ring_t
}

/// Drops one reference to `ring`; the ring is freed with its last reference.
/// NULL is a no-op. Node id pointers from this ring stay valid until its last
/// reference is dropped.
///
/// # Safety
/// `ring` must be NULL or a live handle; each reference is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_free(ring: *mut ring_t) {
    if !ring.is_null() {
        // SAFETY: the handle came from `Arc::into_raw`; this call gives up one reference.
        drop(unsafe { Arc::from_raw(ring as *const ring_t) });
    }
}

/// Number of nodes in the ring (drained nodes included); 0 for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_count(ring: *const ring_t) -> usize {
    // SAFETY: NULL or live, by contract.
    unsafe { ring_ref(ring) }.map_or(0, |r| r.nodes().len())
}

/// The id of node `index` (0-based, in construction order) as a pointer to
/// `*out_id_len` UTF-8 bytes, NOT NUL-terminated, owned by the ring and
/// valid until its last reference is freed.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `ring` must be a live handle; out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_id(
    ring: *const ring_t,
    index: usize,
    out_id: *mut *const c_char,
    out_id_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_id, out_id_len);
        // SAFETY: live handle by contract.
        let id = node(unsafe { ring_ref(ring) }?, index)?.id();
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            write_str(out_id, out_id_len, id);
        }
        Ok(())
    })
}

/// The weight of node `index` (relative capacity, >= 0; 0 = drained).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `ring` must be a live handle; `out_weight` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_weight(ring: *const ring_t, index: usize, out_weight: *mut f64) -> ring_result {
    boundary(|| {
        non_null!(out_weight);
        // SAFETY: live handle by contract.
        let weight = node(unsafe { ring_ref(ring) }?, index)?.weight();
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_weight, weight) };
        Ok(())
    })
}

fn node(ring: &Ring, index: usize) -> Result<&Node, ring_result> {
    ring.nodes().get(index).ok_or_else(|| {
        fail(
            RING_INDEX_OUT_OF_RANGE,
            format_args!("node index {index} is out of range (ring has {} nodes)", ring.nodes().len()),
        )
    })
}

/// Places a key: writes to `*out_index` the index of the node owning the
/// `key_len` bytes at `key` (a NULL key is allowed with length 0), and, when
/// `out_id` and `out_id_len` are not NULL, that node's id as in
/// `ring_node_id`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `key` valid for `key_len` bytes; non-NULL
/// out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node(
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_index: *mut usize,
    out_id: *mut *const c_char,
    out_id_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        // SAFETY: live handle and readable key, by contract.
        let (ring, key) = unsafe { (ring_ref(ring)?, bytes(key, key_len, "key")?) };
        let index = ring.get_index(key).map_err(core_error)?;
        // SAFETY: `out_index` is non-NULL; the id pointers are written only when both are set.
        unsafe {
            write(out_index, index);
            if !out_id.is_null() && !out_id_len.is_null() {
                let id = ring.nodes()[index].id();
                write_str(out_id, out_id_len, id);
            }
        }
        Ok(())
    })
}

/// Places a precomputed key hash (from `ring_hash_key`; on the default
/// algorithm, XXH3-64 of the key under the ring's seed): writes to
/// `*out_index` the index of the node owning it (on a continuum, the first
/// point >= `hash`, wrapping past the end).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`, `RING_HASH_OUT_OF_RANGE` (a hash wider
/// than the algorithm's: 32 bits for ketama and nginx, 14 for slots).
///
/// # Safety
/// `ring` must be a live handle; `out_index` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node_by_hash(ring: *const ring_t, hash: u64, out_index: *mut usize) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        // SAFETY: live handle by contract.
        let index = unsafe { ring_ref(ring) }?.index_by_hash(hash).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_index, index) };
        Ok(())
    })
}

/// Places `key_count` keys in one call: `keys[i]` points to `key_lens[i]`
/// bytes; the owner's index of key `i` goes to `out_indices[i]`.
/// `out_indices_len` must be at least `key_count`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_BUFFER_TOO_SMALL`, `RING_EMPTY_RING`.
/// On error nothing is written.
///
/// # Safety
/// `keys` and `key_lens` must hold `key_count` elements, `keys[i]` valid for
/// `key_lens[i]` bytes; `out_indices` writable for `out_indices_len` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node_batch(
    ring: *const ring_t,
    keys: *const *const u8,
    key_lens: *const usize,
    key_count: usize,
    out_indices: *mut usize,
    out_indices_len: usize,
) -> ring_result {
    boundary(|| {
        if key_count > 0 {
            non_null!(keys, key_lens, out_indices);
        }
        if out_indices_len < key_count {
            return Err(fail(
                RING_BUFFER_TOO_SMALL,
                format_args!("out_indices holds {out_indices_len} entries, {key_count} keys need as many"),
            ));
        }
        // SAFETY: live handle by contract.
        let ring = unsafe { ring_ref(ring) }?;
        if ring.live_node_count() == 0 {
            return Err(core_error(shardring::RingError::EmptyRing));
        }
        // Check every key before writing, so a bad key leaves the output
        // untouched; then place them, each read where it lies.
        // (Only a NULL key needs its length read: one is allowed with length 0.)
        for i in 0..key_count {
            // SAFETY: the caller guarantees `key_count` keys and lengths.
            if unsafe { (*keys.add(i)).is_null() } {
                // SAFETY: as above.
                unsafe { bytes(std::ptr::null(), *key_lens.add(i), format_args!("keys[{i}]")) }?;
            }
        }
        // SAFETY: checked above: each key is valid for its length (or empty and NULL).
        let slices = (0..key_count).map(|i| unsafe {
            let (key, len) = (*keys.add(i), *key_lens.add(i));
            if key.is_null() { &[][..] } else { std::slice::from_raw_parts(key, len) }
        });
        // SAFETY: writable for `out_indices_len >= key_count` elements by contract.
        let out = unsafe { out_slice(out_indices, key_count, "out_indices") }?;
        ring.get_indices(slices, out).map_err(core_error)?;
        Ok(())
    })
}

/// Writes the key's preference list: up to `out_indices_len` distinct node
/// indices, in clockwise order from the key (distinct zones first when nodes
/// have zones), the first being `ring_get_node`'s answer; `*out_count`
/// receives how many were written (fewer when the ring has fewer nodes with
/// weight > 0).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `key` valid for `key_len` bytes;
/// `out_indices` writable for `out_indices_len` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_nodes(
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_indices: *mut usize,
    out_indices_len: usize,
    out_count: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_count);
        // SAFETY: live handle, readable key and writable buffer, by contract.
        let (ring, key, out) = unsafe {
            (ring_ref(ring)?, bytes(key, key_len, "key")?, out_slice(out_indices, out_indices_len, "out_indices")?)
        };
        // `get_n_indices` fails before writing anything, so `out` is untouched on error.
        let count = ring.get_n_indices(key, out).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_count, count) };
        Ok(())
    })
}

/// The key's hash under the ring's algorithm: XXH3-64 of the key bytes under
/// the seed (`ring`, `jump`, `rendezvous`, `maglev`, `jumpback`,
/// `memento`), the first 4 bytes of MD5 little-endian (ketama
/// modes), CRC-32 (`nginx`), the Redis Cluster slot (`slots`), or the key
/// hash of the peer a compatibility mode follows (`core/SPEC.md`). Returns 0
/// for a NULL ring or a NULL key with non-zero length.
///
/// # Safety
/// `ring` must be NULL or a live handle; `key` valid for `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hash_key(ring: *const ring_t, key: *const u8, key_len: usize) -> u64 {
    // SAFETY: by contract.
    match unsafe { (ring_ref(ring), bytes(key, key_len, "key")) } {
        (Ok(ring), Ok(key)) => ring.hash_key(key),
        _ => 0,
    }
}

/// The ring's config fingerprint: a stable 64-bit digest of its algorithm,
/// parameters and set of nodes (`core/SPEC.md`; node order counts only where
/// it places keys: `jump` and `jumpback` (buckets are list positions),
/// libmemcached's modes and the migration modes (ties go to the earlier
/// node), and fresh slot ranges; `memento` lists nodes by bucket and adds
/// its removed buckets), so two processes can check they hold the same
/// ring. 0 for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_fingerprint(ring: *const ring_t) -> u64 {
    // SAFETY: NULL or live, by contract.
    unsafe { ring_ref(ring) }.map_or(0, Ring::fingerprint)
}

/// Derives a new ring with one node added (appended to the node order): only
/// keys the new node now owns move. `zone` may be NULL (no zone). The new
/// handle goes to `*out_ring`; `ring` is unchanged and keeps its references.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_EMPTY_ID`,
/// `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`, `RING_EMPTY_ZONE`,
/// `RING_TOO_MANY_POINTS`, `RING_INVALID_ADDRESS` (ketama and nginx: the id
/// is not a server address, or names a server already present),
/// `RING_INVALID_TABLE_SIZE` (Maglev: the table has no slot left for it).
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes, a non-NULL
/// `zone` for `zone_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_with_node(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    weight: f64,
    zone: *const c_char,
    zone_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        let mut node = Node::new(id, weight);
        if !zone.is_null() {
            // SAFETY: readable for `zone_len` bytes by contract.
            node = node.with_zone(unsafe { text(zone, zone_len, "zone") }?);
        }
        hand_out(ring.with_node(node).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Derives a new ring without node `id` (later nodes shift down one index):
/// only that node's keys move. `ring` is unchanged.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`.
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_without_node(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        hand_out(ring.without_node(id).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Derives a new ring with node `id` at `weight`: raising a weight only moves
/// keys to that node, lowering it only moves keys away. `ring` is unchanged.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`,
/// `RING_INVALID_WEIGHT`, `RING_TOO_MANY_POINTS`.
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_with_weight(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    weight: f64,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        hand_out(ring.with_weight(id, weight).map_err(core_error)?, out_ring);
        Ok(())
    })
}
