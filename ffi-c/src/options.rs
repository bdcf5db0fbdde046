//! `ring_options_t`: the algorithm and parameters of
//! `ring_new_with_options_sized`, its `RING_OPTION_*` bits, the reading of
//! the caller's struct by its size (and by the earlier headers' rule for the
//! legacy entry point, which has none), and its one conversion into the
//! core's parameter list (`RingParams`). New fields are only appended; see
//! `ring_options_t`.

use std::ffi::c_char;

use shardring::{Algorithm, Node, ParamValue, Ring, RingParams};

use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};

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
/// `ring_options_t.fields` bit: `params` is given.
pub const RING_OPTION_PARAMS: u32 = 262144;
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
    | RING_OPTION_SCORE
    | RING_OPTION_PARAMS;

/// Algorithm and parameters for `ring_new_with_options_sized`, which takes
/// the struct with its size (`sizeof options`), so the library knows which
/// fields the caller's struct has.
///
/// A parameter counts only when its bit is set in `fields`; a parameter left
/// out gets its default, and one passed must be valid (0 is never a
/// default: `vnodes` 0 is `RING_ZERO_VNODES`, `table_size` 0
/// `RING_INVALID_TABLE_SIZE`). Every other field must be 0 (NULL) unless its
/// bit is set: a value without its bit is `RING_INVALID_CONFIG`, naming the
/// field, never silently ignored. So zero the struct (`= {0}` or a
/// designated initializer), then set each parameter with its bit:
///
/// ```c
/// ring_options_t options = {.algorithm = "maglev", .fields = RING_OPTION_TABLE_SIZE, .table_size = 251};
/// ring_new_with_options_sized(ids, id_lens, NULL, NULL, NULL, count, &options, sizeof options, &ring);
/// ```
///
/// New fields are only ever appended, and a zero field means what its
/// absence meant, so a program built against an older header (a shorter
/// struct) keeps working with a newer library, and one built against a
/// newer header works with an older library as long as the fields that
/// library does not know are zero.
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
    /// `RING_OPTION_REMOVED_BUCKETS`, `RING_OPTION_SCORE` and
    /// `RING_OPTION_PARAMS` (0: none, all defaults). Any other bit is
    /// `RING_INVALID_CONFIG`.
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
    /// NUL-terminated JSON object of parameters by name, as a ring config
    /// writes them beside `nodes` (`docs/config.md`), such as
    /// `"{\"vnodes\": 40, \"seed\": 7}"`: every parameter, including those
    /// a later library adds, which get no field of their own here. Each
    /// parameter is given once, in its field or here (both is
    /// `RING_INVALID_CONFIG` naming it), `algorithm` included; a duplicate
    /// key, a `null`, an unknown name or a mistyped value is
    /// `RING_INVALID_CONFIG` naming it. Read when `RING_OPTION_PARAMS` is
    /// set, by `ring_new_with_options_sized` only (borrowed for the call).
    pub params: *const c_char,
}

/// The caller's options under the earlier headers' rule, for the entry
/// point without a size (`ring_new_with_options`): the bytes up to the last
/// field whose bit is set ([`legacy_options_size`]) over a zeroed struct,
/// then every field whose bit is not set cleared. `None` for NULL.
///
/// # Safety
/// `options` is NULL or readable for `fields` and `algorithm`, and for the
/// bytes up to each field whose bit is set.
pub(crate) unsafe fn read_legacy_options(options: *const ring_options_t) -> Option<ring_options_t> {
    // SAFETY: readable for `fields` and `algorithm`, by contract.
    let size = unsafe { legacy_options_size(options) };
    // SAFETY: readable for `size` bytes, by contract.
    let mut options = unsafe { read_options_prefix(options, size) };
    if let Some(options) = &mut options {
        clear_values_without_bits(options);
    }
    options
}

/// How many bytes of a legacy caller's `ring_options_t` may be read: its
/// `fields` and `algorithm`, and every field up to the last one whose bit is
/// set. Earlier headers appended fields, so an older program's struct may
/// end before this library's: reading past the fields it set could run off
/// its memory.
///
/// # Safety
/// `options` is NULL or readable for `fields` and `algorithm`.
unsafe fn legacy_options_size(options: *const ring_options_t) -> usize {
    use std::mem::{offset_of, size_of};
    if options.is_null() {
        return 0;
    }
    // SAFETY: readable by contract.
    let fields = unsafe { (*options).fields };
    let end = |offset: usize, size: usize| offset + size;
    let pointer = size_of::<*const c_char>();
    let by_bit: [(u32, usize); 18] = [
        (RING_OPTION_VNODES, end(offset_of!(ring_options_t, vnodes), 4)),
        (RING_OPTION_SEED, end(offset_of!(ring_options_t, seed), 8)),
        (RING_OPTION_TABLE_SIZE, end(offset_of!(ring_options_t, table_size), 4)),
        (RING_OPTION_DISTRIBUTION, end(offset_of!(ring_options_t, distribution), pointer)),
        (RING_OPTION_KEY_HASH, end(offset_of!(ring_options_t, key_hash), pointer)),
        (RING_OPTION_SERVER_IDS, end(offset_of!(ring_options_t, server_ids), pointer)),
        (RING_OPTION_HASH_TAG, end(offset_of!(ring_options_t, hash_tag), pointer)),
        (RING_OPTION_DEFAULT_PORT, end(offset_of!(ring_options_t, default_port), 4)),
        (RING_OPTION_MIN_RING_SIZE, end(offset_of!(ring_options_t, min_ring_size), 8)),
        (RING_OPTION_MAX_RING_SIZE, end(offset_of!(ring_options_t, max_ring_size), 8)),
        (RING_OPTION_HASH_FUNCTION, end(offset_of!(ring_options_t, hash_function), pointer)),
        (RING_OPTION_ENDPOINT_ORDER, end(offset_of!(ring_options_t, endpoint_order), pointer)),
        (RING_OPTION_AVALANCHE, end(offset_of!(ring_options_t, avalanche), 4)),
        (RING_OPTION_SERVER_KEY, end(offset_of!(ring_options_t, server_key), pointer)),
        (RING_OPTION_HAPROXY_IDS, end(offset_of!(ring_options_t, haproxy_ids), pointer)),
        (RING_OPTION_BUCKETS, end(offset_of!(ring_options_t, buckets), pointer)),
        (RING_OPTION_REMOVED_BUCKETS, end(offset_of!(ring_options_t, removed_bucket_count), size_of::<usize>())),
        (RING_OPTION_SCORE, end(offset_of!(ring_options_t, score), pointer)),
    ];
    let base = end(offset_of!(ring_options_t, algorithm), pointer);
    by_bit.iter().filter(|(bit, _)| fields & bit != 0).map(|&(_, end)| end).fold(base, usize::max).min(OPTIONS_SIZE_V1)
}

/// The first `size` bytes of the caller's options over a zeroed struct
/// (`None` for NULL), for the legacy entry point, which knows no size.
///
/// # Safety
/// `options` is NULL or readable for `size` bytes, `size` at most this
/// library's `ring_options_t`.
unsafe fn read_options_prefix(options: *const ring_options_t, size: usize) -> Option<ring_options_t> {
    if options.is_null() {
        return None;
    }
    let mut copy = ring_options_t::default();
    // SAFETY: both valid for `size` bytes, not overlapping; any bit pattern
    // of integers and raw pointers is a valid ring_options_t.
    unsafe {
        std::ptr::copy_nonoverlapping(options.cast::<u8>(), (&raw mut copy).cast::<u8>(), size);
    }
    Some(copy)
}

/// The earlier headers' rule: a field whose bit is not set in `fields` is
/// left out, whatever it holds (0 or NULL here).
fn clear_values_without_bits(options: &mut ring_options_t) {
    let fields = options.fields;
    let kept = |bit: u32| fields & bit != 0;
    let o = options;
    if !kept(RING_OPTION_VNODES) {
        o.vnodes = 0;
    }
    if !kept(RING_OPTION_SEED) {
        o.seed = 0;
    }
    if !kept(RING_OPTION_TABLE_SIZE) {
        o.table_size = 0;
    }
    if !kept(RING_OPTION_DISTRIBUTION) {
        o.distribution = std::ptr::null();
    }
    if !kept(RING_OPTION_KEY_HASH) {
        o.key_hash = std::ptr::null();
    }
    if !kept(RING_OPTION_SERVER_IDS) {
        o.server_ids = std::ptr::null();
    }
    if !kept(RING_OPTION_HASH_TAG) {
        o.hash_tag = std::ptr::null();
    }
    if !kept(RING_OPTION_DEFAULT_PORT) {
        o.default_port = 0;
    }
    if !kept(RING_OPTION_MIN_RING_SIZE) {
        o.min_ring_size = 0;
    }
    if !kept(RING_OPTION_MAX_RING_SIZE) {
        o.max_ring_size = 0;
    }
    if !kept(RING_OPTION_HASH_FUNCTION) {
        o.hash_function = std::ptr::null();
    }
    if !kept(RING_OPTION_ENDPOINT_ORDER) {
        o.endpoint_order = std::ptr::null();
    }
    if !kept(RING_OPTION_AVALANCHE) {
        o.avalanche = 0;
    }
    if !kept(RING_OPTION_SERVER_KEY) {
        o.server_key = std::ptr::null();
    }
    if !kept(RING_OPTION_HAPROXY_IDS) {
        o.haproxy_ids = std::ptr::null();
    }
    if !kept(RING_OPTION_BUCKETS) {
        o.buckets = std::ptr::null();
    }
    if !kept(RING_OPTION_REMOVED_BUCKETS) {
        o.removed_buckets = std::ptr::null();
        o.removed_bucket_count = 0;
    }
    if !kept(RING_OPTION_SCORE) {
        o.score = std::ptr::null();
    }
}

/// The size of `ring_options_t` as the headers before
/// `ring_new_with_options_sized` declared it (the struct ends with `score`):
/// the smallest `options_size` accepted. Fields are only ever appended.
const OPTIONS_SIZE_V1: usize = std::mem::offset_of!(ring_options_t, score) + std::mem::size_of::<*const c_char>();

/// The sizes of every `ring_options_t` a header declared, oldest first: the
/// first (ending with `score`), then with `params`. A size between two of
/// them would cut a field in half, and is refused.
const OPTIONS_SIZES: [usize; 2] = [OPTIONS_SIZE_V1, std::mem::size_of::<ring_options_t>()];

/// The largest `options_size` accepted (Linux refuses structs past a page
/// the same way): a size beyond it is not a `sizeof`, and is refused
/// before anything is read.
const OPTIONS_SIZE_MAX: usize = 4096;

/// The caller's options, copied into this library's `ring_options_t`: the
/// first `min(options_size, size_of::<ring_options_t>())` bytes, the rest
/// zero (so a shorter struct's missing fields are left out), after checking
/// that the bytes past this library's fields, if any, are zero. `None` for
/// NULL.
///
/// # Safety
/// `options` is NULL or valid for reads of `options_size` bytes.
pub(crate) unsafe fn read_options(
    options: *const ring_options_t,
    options_size: usize,
) -> Result<Option<ring_options_t>, ring_result> {
    if options.is_null() {
        return Ok(None);
    }
    let known = std::mem::size_of::<ring_options_t>();
    if !(OPTIONS_SIZES.contains(&options_size) || (known + 1..=OPTIONS_SIZE_MAX).contains(&options_size)) {
        return Err(fail(
            RING_INVALID_CONFIG,
            format_args!(
                "options_size {options_size} is not the size of a ring_options_t (this library's is {known} \
                 bytes; pass `sizeof options`)"
            ),
        ));
    }
    let bytes = options.cast::<u8>();
    if options_size > known {
        // SAFETY: readable for `options_size` bytes by contract.
        let tail = unsafe { std::slice::from_raw_parts(bytes.add(known), options_size - known) };
        if let Some(at) = tail.iter().position(|&b| b != 0) {
            return Err(fail(
                RING_INVALID_CONFIG,
                format_args!(
                    "`options` sets a field this libring {} does not know (byte {} of {options_size}; it knows \
                     {known}): the program was built against a newer ring.h; use a libring at least as new, or \
                     leave that option out",
                    env!("CARGO_PKG_VERSION"),
                    known + at,
                ),
            ));
        }
    }
    let mut copy = ring_options_t::default();
    // SAFETY: both are valid for `min(options_size, known)` bytes and do not
    // overlap; every bit pattern of those bytes is a valid ring_options_t
    // (integers and raw pointers).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes, (&raw mut copy).cast::<u8>(), options_size.min(known));
    }
    Ok(Some(copy))
}

impl Default for ring_options_t {
    /// Every field 0 or NULL: every parameter left out.
    fn default() -> Self {
        ring_options_t {
            fields: 0,
            algorithm: std::ptr::null(),
            vnodes: 0,
            seed: 0,
            table_size: 0,
            distribution: std::ptr::null(),
            key_hash: std::ptr::null(),
            server_ids: std::ptr::null(),
            hash_tag: std::ptr::null(),
            default_port: 0,
            min_ring_size: 0,
            max_ring_size: 0,
            hash_function: std::ptr::null(),
            endpoint_order: std::ptr::null(),
            avalanche: 0,
            server_key: std::ptr::null(),
            haproxy_ids: std::ptr::null(),
            buckets: std::ptr::null(),
            removed_buckets: std::ptr::null(),
            removed_bucket_count: 0,
            score: std::ptr::null(),
            params: std::ptr::null(),
        }
    }
}

/// Refuses a field that holds a value (not 0, not NULL) while its bit is
/// not set in `fields`, naming the field, its value and the bit: such a
/// value was silently ignored before (`{.algorithm = "maglev", .table_size =
/// 251}` built a table of 65,537). Pointers are named, never read.
fn refuse_values_without_bits(options: &ring_options_t) -> Result<(), ring_result> {
    let number = |value: u64| (value != 0).then(|| value.to_string());
    let pointer = |value: bool| value.then(|| "set (not NULL)".to_owned());
    let o = options;
    let fields: [(&str, &str, u32, Option<String>); 20] = [
        ("vnodes", "VNODES", RING_OPTION_VNODES, number(o.vnodes.into())),
        ("seed", "SEED", RING_OPTION_SEED, number(o.seed)),
        ("table_size", "TABLE_SIZE", RING_OPTION_TABLE_SIZE, number(o.table_size.into())),
        ("distribution", "DISTRIBUTION", RING_OPTION_DISTRIBUTION, pointer(!o.distribution.is_null())),
        ("key_hash", "KEY_HASH", RING_OPTION_KEY_HASH, pointer(!o.key_hash.is_null())),
        ("server_ids", "SERVER_IDS", RING_OPTION_SERVER_IDS, pointer(!o.server_ids.is_null())),
        ("hash_tag", "HASH_TAG", RING_OPTION_HASH_TAG, pointer(!o.hash_tag.is_null())),
        ("default_port", "DEFAULT_PORT", RING_OPTION_DEFAULT_PORT, number(o.default_port.into())),
        ("min_ring_size", "MIN_RING_SIZE", RING_OPTION_MIN_RING_SIZE, number(o.min_ring_size)),
        ("max_ring_size", "MAX_RING_SIZE", RING_OPTION_MAX_RING_SIZE, number(o.max_ring_size)),
        ("hash_function", "HASH_FUNCTION", RING_OPTION_HASH_FUNCTION, pointer(!o.hash_function.is_null())),
        ("endpoint_order", "ENDPOINT_ORDER", RING_OPTION_ENDPOINT_ORDER, pointer(!o.endpoint_order.is_null())),
        ("avalanche", "AVALANCHE", RING_OPTION_AVALANCHE, number(o.avalanche.into())),
        ("server_key", "SERVER_KEY", RING_OPTION_SERVER_KEY, pointer(!o.server_key.is_null())),
        ("haproxy_ids", "HAPROXY_IDS", RING_OPTION_HAPROXY_IDS, pointer(!o.haproxy_ids.is_null())),
        ("buckets", "BUCKETS", RING_OPTION_BUCKETS, pointer(!o.buckets.is_null())),
        ("removed_buckets", "REMOVED_BUCKETS", RING_OPTION_REMOVED_BUCKETS, pointer(!o.removed_buckets.is_null())),
        ("removed_bucket_count", "REMOVED_BUCKETS", RING_OPTION_REMOVED_BUCKETS, number(o.removed_bucket_count as u64)),
        ("score", "SCORE", RING_OPTION_SCORE, pointer(!o.score.is_null())),
        ("params", "PARAMS", RING_OPTION_PARAMS, pointer(!o.params.is_null())),
    ];
    for (field, constant, bit, value) in fields {
        if let (Some(value), 0) = (value, o.fields & bit) {
            return Err(fail(
                RING_INVALID_CONFIG,
                format_args!(
                    "`options.{field}` is {value}, but `options.fields` lacks RING_OPTION_{constant} ({bit:#x}): \
                     set the bit to pass it, or leave the field 0 for the default"
                ),
            ));
        }
    }
    Ok(())
}

/// The one conversion of a caller's options into the core's `RingParams`
/// and builder, which then builds the ring over `nodes` (the node arrays as
/// `ring_new` reads them): the checks of `fields` (no unknown bit, no value without its bit),
/// then each parameter whose bit is set, the per-node arrays (`haproxy_ids`,
/// `buckets`) matched to `nodes` in order. `None` is every default.
///
/// # Safety
/// As `ring_new_with_options_sized`: a string field whose bit is set is
/// NULL or NUL-terminated, and an array whose bit is set holds
/// `nodes.len()` (`haproxy_ids`, `buckets`) or `removed_bucket_count`
/// (`removed_buckets`) entries.
pub(crate) unsafe fn build_ring(options: Option<&ring_options_t>, nodes: Vec<Node>) -> Result<Ring, ring_result> {
    let node_count = nodes.len();
    let builder = Ring::builder();
    let Some(options) = options else {
        return builder.nodes(nodes).build().map_err(core_error);
    };
    let fields = options.fields;
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
                 RING_OPTION_SCORE 0x20000, RING_OPTION_PARAMS 0x40000)"
            ),
        ));
    }
    refuse_values_without_bits(options)?;
    // The parameters go into the core's one list, RingParams, each under
    // its config name: a number or a name is converted as every binding
    // converts it (RingParams::set), so its checks and messages are the core's.
    let mut params = RingParams::default();
    // SAFETY: a non-NULL algorithm is NUL-terminated by contract.
    if let Some(name) = unsafe { option_name(options.algorithm, "algorithm") }? {
        params.algorithm = name.parse::<Algorithm>().map_err(core_error)?;
    }
    let given = |bit: u32| fields & bit != 0;
    let wholes: [(&str, u32, u64); 5] = [
        ("vnodes", RING_OPTION_VNODES, options.vnodes.into()),
        ("seed", RING_OPTION_SEED, options.seed),
        ("table_size", RING_OPTION_TABLE_SIZE, options.table_size.into()),
        ("min_ring_size", RING_OPTION_MIN_RING_SIZE, options.min_ring_size),
        ("max_ring_size", RING_OPTION_MAX_RING_SIZE, options.max_ring_size),
    ];
    for (name, bit, value) in wholes {
        if given(bit) {
            params.set(name, ParamValue::Whole(value)).map_err(core_error)?;
        }
    }
    let texts: [(&str, u32, *const c_char); 8] = [
        ("distribution", RING_OPTION_DISTRIBUTION, options.distribution),
        ("key_hash", RING_OPTION_KEY_HASH, options.key_hash),
        ("server_ids", RING_OPTION_SERVER_IDS, options.server_ids),
        ("hash_tag", RING_OPTION_HASH_TAG, options.hash_tag),
        ("hash_function", RING_OPTION_HASH_FUNCTION, options.hash_function),
        ("endpoint_order", RING_OPTION_ENDPOINT_ORDER, options.endpoint_order),
        ("server_key", RING_OPTION_SERVER_KEY, options.server_key),
        ("score", RING_OPTION_SCORE, options.score),
    ];
    for (name, bit, text) in texts {
        if !given(bit) {
            continue;
        }
        // SAFETY: with its bit set, the field is NULL or a NUL-terminated
        // string by contract; NULL is refused.
        let text = unsafe { option_name(text, name) }?.ok_or_else(|| {
            fail(RING_NULL_ARGUMENT, format_args!("`options.{name}` is NULL but its RING_OPTION_* bit is set"))
        })?;
        params.set(name, ParamValue::Text(text.to_owned())).map_err(core_error)?;
    }
    if given(RING_OPTION_DEFAULT_PORT) {
        let port = options.default_port;
        let port = u16::try_from(port).map_err(|_| {
            fail(RING_INVALID_CONFIG, format_args!("`options.default_port` {port} is not a port (1-65535)"))
        })?;
        params.default_port = Some(port);
    }
    if given(RING_OPTION_AVALANCHE) {
        let avalanche = options.avalanche;
        if avalanche > 1 {
            return Err(fail(RING_INVALID_CONFIG, format_args!("`options.avalanche` {avalanche} is neither 0 nor 1")));
        }
        params.avalanche = Some(avalanche == 1);
    }
    if given(RING_OPTION_PARAMS) {
        // SAFETY: with its bit set, the field is NULL or NUL-terminated by
        // contract; NULL is refused.
        let text = unsafe { option_name(options.params, "params") }?.ok_or_else(|| {
            fail(
                RING_NULL_ARGUMENT,
                format_args!(
                    "`options.params` is NULL but RING_OPTION_PARAMS is set (ring_new_with_options, without a \
                     size, reads no field past `score`: call ring_new_with_options_sized)"
                ),
            )
        })?;
        // Each parameter once: a field's, or one of `params`.
        let mut in_fields: Vec<&str> = params.values().into_iter().map(|(name, _)| name).collect();
        if options.algorithm.is_null() {
            in_fields.retain(|&name| name != "algorithm");
        }
        if given(RING_OPTION_REMOVED_BUCKETS) {
            in_fields.push("removed_buckets");
        }
        for (name, value) in RingParams::given_in_json(text).map_err(core_error)? {
            if in_fields.contains(&name) {
                return Err(fail(
                    RING_INVALID_CONFIG,
                    format_args!("`options.params` gives {name:?}, which `options.{name}` gives too: give it once"),
                ));
            }
            params.set(name, value).map_err(core_error)?;
        }
    }
    let mut builder = builder.params(params);
    if given(RING_OPTION_HAPROXY_IDS) {
        let ids = options.haproxy_ids;
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
    if given(RING_OPTION_BUCKETS) {
        let buckets = options.buckets;
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
    if given(RING_OPTION_REMOVED_BUCKETS) {
        let (removed, count) = (options.removed_buckets, options.removed_bucket_count);
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
    builder.nodes(nodes).build().map_err(core_error)
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
