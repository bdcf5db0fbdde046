//! Creating rings: `ring_new`, `ring_new_with_options(_sized)` with the
//! `ring_options_t` fields the input sets, `ring_new_from_json`, and
//! `ring_to_json` (whose output must build the same ring back).

use std::ffi::{CStr, c_char};
use std::ptr;

use ring::ring_result::*;
use ring::{
    RING_OPTION_AVALANCHE, RING_OPTION_BUCKETS, RING_OPTION_DEFAULT_PORT, RING_OPTION_DISTRIBUTION,
    RING_OPTION_ENDPOINT_ORDER, RING_OPTION_HAPROXY_IDS, RING_OPTION_HASH_FUNCTION, RING_OPTION_HASH_TAG,
    RING_OPTION_KEY_HASH, RING_OPTION_MAX_RING_SIZE, RING_OPTION_MIN_RING_SIZE, RING_OPTION_PARAMS,
    RING_OPTION_REMOVED_BUCKETS, RING_OPTION_SCORE, RING_OPTION_SEED, RING_OPTION_SERVER_IDS, RING_OPTION_SERVER_KEY,
    RING_OPTION_TABLE_SIZE, RING_OPTION_VNODES, ring_options_t, ring_t,
};
use shardring::{
    Algorithm, Distribution, EndpointOrder, HashFunction, KeyHash, Node, NodeConfig, RendezvousScore, Ring, RingConfig,
    RingError, RingParams, ServerIds, ServerKey,
};
use shardring_fuzz::budget;

use crate::codes::{Expect, check_code, last_error};
use crate::input::{ALGORITHMS, AlgorithmName, Bytes, NodeArg, Nulls, Pick};
use crate::strings::{pointer, text_of};
use crate::world::World;

/// The `ring_options_t.fields` bits `include/ring.h` defines.
pub(crate) const KNOWN_OPTION_BITS: u32 = RING_OPTION_VNODES
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
/// The load balancers' parameters every input passes when their bits are
/// set (the HAProxy ids are all 0: every id assigned).
const HASH_FUNCTION: &CStr = c"djb2";
const ENDPOINT_ORDER: &CStr = c"by_key";
const SERVER_KEY: &CStr = c"id32";
/// The libmemcached parameters every input passes when their bits are set.
const DISTRIBUTION: &CStr = c"consistent_ketama";
const KEY_HASH: &CStr = c"fnv1a_32";
/// The twemproxy parameters every input passes when their bits are set.
const IDS_OPTION: &CStr = c"label";
const HASH_TAG: &CStr = c"{}";

/// What `Call::NewWithOptions` passes besides the numbers.
pub(crate) struct NewOptions {
    pub(crate) algorithm: AlgorithmName,
    pub(crate) fields: u32,
    pub(crate) stray: bool,
    pub(crate) legacy: bool,
}

impl World {
    /// `ring_new` (when `options` is `None`), `ring_new_with_options_sized`
    /// or, for `legacy`, `ring_new_with_options` (with the algorithm name and
    /// `fields` bits).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_ring(
        &mut self,
        args: &[NodeArg],
        options: Option<NewOptions>,
        vnodes: u32,
        seed: u64,
        table_size: u32,
        no_zones: bool,
        nulls: Nulls,
    ) {
        let ids: Vec<(Option<Vec<u8>>, usize)> = args.iter().map(|a| a.id.get()).collect();
        let zones: Vec<Option<(Option<Vec<u8>>, usize)>> =
            args.iter().map(|a| a.zone.as_ref().map(Bytes::get)).collect();
        let weights: Vec<f64> = args.iter().map(|a| a.weight.get()).collect();
        let id_ptrs: Vec<*const c_char> = ids.iter().map(|(b, _)| pointer(b)).collect();
        let id_lens: Vec<usize> = ids.iter().map(|&(_, len)| len).collect();
        // A node without a zone has a NULL zone pointer; a NULL zone "with a length" is just absent.
        let zone_ptrs: Vec<*const c_char> =
            zones.iter().map(|z| z.as_ref().map_or(ptr::null(), |(b, _)| pointer(b))).collect();
        let zone_lens: Vec<usize> = zones.iter().map(|z| z.as_ref().map_or(0, |&(_, len)| len)).collect();
        let count = args.len();

        let (ids_null, lens_null, weights_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let (zones_null, zone_lens_null) = (no_zones || nulls.null(3), no_zones || nulls.null(4));
        let out_null = nulls.null(5);

        let mut expect = Expect::new();
        expect.problem_if(out_null, RING_NULL_ARGUMENT);
        expect.problem_if(count > 0 && (ids_null || lens_null), RING_NULL_ARGUMENT);
        expect.problem_if(zones_null != zone_lens_null, RING_NULL_ARGUMENT);
        let mut nodes = Vec::new();
        let mut readable = true;
        for i in 0..count {
            let weight = if weights_null { 1.0 } else { weights[i] };
            let id = match text_of(&ids[i].0, ids[i].1) {
                Ok(id) => id,
                Err(problem) => {
                    expect.problems.push(problem);
                    readable = false;
                    continue;
                }
            };
            let mut node = Node::new(id, weight);
            if !zones_null && !zone_ptrs[i].is_null() {
                let (bytes, len) = zones[i].as_ref().unwrap();
                match text_of(bytes, *len) {
                    Ok(zone) => node = node.with_zone(zone),
                    Err(problem) => {
                        expect.problems.push(problem);
                        readable = false;
                    }
                }
            }
            nodes.push(node);
        }

        // The options as the C layer reads them: a parameter only when its bit
        // is set, and a value without its bit refused (ignored by the legacy
        // entry point, as it always was for the programs that call it).
        let (algorithm, fields, stray, legacy) = match options {
            Some(NewOptions { algorithm, fields, stray, legacy }) => (Some(algorithm), fields, stray, legacy),
            None => (None, 0, false, false),
        };
        let given = |bit: u32| fields & bit != 0;
        let name_bytes: Option<Vec<u8>> = match &algorithm {
            None | Some(AlgorithmName::Null) => None,
            Some(AlgorithmName::Listed(i)) => Some(ALGORITHMS[usize::from(*i) % ALGORITHMS.len()].as_bytes().to_vec()),
            Some(AlgorithmName::Raw(raw)) => Some(raw.iter().copied().take_while(|&b| b != 0).take(20).collect()),
        };
        let options_null = algorithm.is_some() && nulls.null(6);
        let mut builder = Ring::builder().nodes(nodes.clone());
        let mut parsed: Result<Algorithm, RingError> = Ok(Algorithm::Ring);
        if algorithm.is_none() {
            builder = builder.vnodes(vnodes).seed(seed);
        } else if !options_null && fields & !KNOWN_OPTION_BITS != 0 {
            // Bits no RING_OPTION_* defines: refused before the algorithm is read.
            expect.problems.push(RING_INVALID_CONFIG);
            readable = false;
        } else if !options_null
            && stray
            && !legacy
            && ((vnodes != 0 && !given(RING_OPTION_VNODES))
                || (seed != 0 && !given(RING_OPTION_SEED))
                || (table_size != 0 && !given(RING_OPTION_TABLE_SIZE)))
        {
            // A value without its bit: refused, naming the field, never ignored.
            expect.problems.push(RING_INVALID_CONFIG);
            readable = false;
        } else if !options_null {
            // The legacy entry point reads no field past `score`: `params`
            // is NULL to it.
            expect.problem_if(legacy && given(RING_OPTION_PARAMS), RING_NULL_ARGUMENT);
            if let Some(name) = &name_bytes {
                match std::str::from_utf8(name) {
                    Ok(name) => parsed = name.parse::<Algorithm>(),
                    Err(_) => {
                        expect.problems.push(RING_INVALID_UTF8);
                        readable = false;
                    }
                }
            }
            if let Ok(algorithm) = parsed {
                builder = builder.algorithm(algorithm);
            }
            if given(RING_OPTION_VNODES) {
                builder = builder.vnodes(vnodes);
            }
            if given(RING_OPTION_SEED) {
                builder = builder.seed(seed);
            }
            if given(RING_OPTION_TABLE_SIZE) {
                builder = builder.table_size(table_size);
            }
            if given(RING_OPTION_DISTRIBUTION) {
                builder = builder.distribution(Distribution::ConsistentKetama);
            }
            if given(RING_OPTION_KEY_HASH) {
                builder = builder.key_hash(KeyHash::Fnv1a_32);
            }
            if given(RING_OPTION_SERVER_IDS) {
                builder = builder.server_ids(ServerIds::Label);
            }
            if given(RING_OPTION_HASH_TAG) {
                builder = builder.hash_tag("{}");
            }
            if given(RING_OPTION_DEFAULT_PORT) {
                builder = builder.default_port(11211);
            }
            if given(RING_OPTION_MIN_RING_SIZE) {
                builder = builder.min_ring_size(12);
            }
            if given(RING_OPTION_MAX_RING_SIZE) {
                builder = builder.max_ring_size(4096);
            }
            if given(RING_OPTION_HASH_FUNCTION) {
                builder = builder.hash_function(HashFunction::Djb2);
            }
            if given(RING_OPTION_ENDPOINT_ORDER) {
                builder = builder.endpoint_order(EndpointOrder::ByKey);
            }
            if given(RING_OPTION_AVALANCHE) {
                builder = builder.avalanche(true);
            }
            if given(RING_OPTION_SERVER_KEY) {
                builder = builder.server_key(ServerKey::Id32);
            }
            // Memento buckets: node i holds bucket i, and one more bucket
            // past the nodes was removed (a shrink, as Memento replays it).
            if given(RING_OPTION_BUCKETS) {
                for (i, node) in nodes.iter().enumerate() {
                    builder = builder.bucket(node.id(), i as u32);
                }
            }
            if given(RING_OPTION_REMOVED_BUCKETS) {
                builder = builder.removed_buckets([count as u32]);
            }
            if given(RING_OPTION_SCORE) {
                builder = builder.score(RendezvousScore::Float);
            }
        }
        // Skip valid but slow rings (before calling C, which would build them too).
        let params = RingParams {
            vnodes: if algorithm.is_none() || given(RING_OPTION_VNODES) { Some(vnodes) } else { None },
            table_size: given(RING_OPTION_TABLE_SIZE).then_some(table_size),
            distribution: given(RING_OPTION_DISTRIBUTION).then_some(Distribution::ConsistentKetama),
            key_hash: given(RING_OPTION_KEY_HASH).then_some(KeyHash::Fnv1a_32),
            server_ids: given(RING_OPTION_SERVER_IDS).then_some(ServerIds::Label),
            hash_tag: given(RING_OPTION_HASH_TAG).then(|| "{}".to_owned()),
            default_port: given(RING_OPTION_DEFAULT_PORT).then_some(11211),
            min_ring_size: given(RING_OPTION_MIN_RING_SIZE).then_some(12),
            max_ring_size: given(RING_OPTION_MAX_RING_SIZE).then_some(4096),
            ..RingParams::new(*parsed.as_ref().unwrap_or(&Algorithm::Ring))
        };
        let config = RingConfig {
            params,
            ..RingConfig::new(Algorithm::Ring, nodes.iter().map(|n| NodeConfig::new(n.id(), n.weight())).collect())
        };
        if budget::too_costly(&config) {
            return;
        }
        let core = if readable { Some(parsed.and_then(|_| builder.build())) } else { None };
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));

        let name_c: Option<Vec<u8>> = name_bytes.map(|mut b| {
            b.push(0);
            b
        });
        let assigned_ids = vec![0u32; count.max(1)];
        let buckets: Vec<u32> = (0..count.max(1) as u32).collect();
        let removed_buckets = [count as u32];
        // Each field holds its value only with its bit set (0 or NULL otherwise,
        // as C callers zero the struct); with `stray`, vnodes, seed and
        // table_size hold theirs regardless.
        let number = |bit: u32, value| if given(bit) || stray { value } else { Default::default() };
        let text = |bit: u32, value: &CStr| if given(bit) { value.as_ptr() } else { ptr::null() };
        let array = |bit: u32, value: *const u32| if given(bit) { value } else { ptr::null() };
        let options = ring_options_t {
            fields,
            algorithm: name_c.as_ref().map_or(ptr::null(), |b| b.as_ptr().cast()),
            vnodes: number(RING_OPTION_VNODES, vnodes),
            seed: if given(RING_OPTION_SEED) || stray { seed } else { 0 },
            table_size: number(RING_OPTION_TABLE_SIZE, table_size),
            distribution: text(RING_OPTION_DISTRIBUTION, DISTRIBUTION),
            key_hash: text(RING_OPTION_KEY_HASH, KEY_HASH),
            server_ids: text(RING_OPTION_SERVER_IDS, IDS_OPTION),
            hash_tag: text(RING_OPTION_HASH_TAG, HASH_TAG),
            default_port: if given(RING_OPTION_DEFAULT_PORT) { 11211 } else { 0 },
            min_ring_size: if given(RING_OPTION_MIN_RING_SIZE) { 12 } else { 0 },
            max_ring_size: if given(RING_OPTION_MAX_RING_SIZE) { 4096 } else { 0 },
            hash_function: text(RING_OPTION_HASH_FUNCTION, HASH_FUNCTION),
            endpoint_order: text(RING_OPTION_ENDPOINT_ORDER, ENDPOINT_ORDER),
            avalanche: u32::from(given(RING_OPTION_AVALANCHE)),
            server_key: text(RING_OPTION_SERVER_KEY, SERVER_KEY),
            haproxy_ids: array(RING_OPTION_HAPROXY_IDS, assigned_ids.as_ptr()),
            buckets: array(RING_OPTION_BUCKETS, buckets.as_ptr()),
            removed_buckets: array(RING_OPTION_REMOVED_BUCKETS, removed_buckets.as_ptr()),
            removed_bucket_count: usize::from(given(RING_OPTION_REMOVED_BUCKETS)),
            score: text(RING_OPTION_SCORE, c"float"),
            // An empty object: every parameter the fields give, none twice.
            params: text(RING_OPTION_PARAMS, c"{}"),
        };
        let mut out: *mut ring_t = ptr::null_mut();
        let out_ptr: *mut *mut ring_t = if out_null { ptr::null_mut() } else { &mut out };
        // SAFETY: every non-NULL array holds `count` elements, each id and zone
        // pointer is NULL or valid for its length, and `out_ptr` is NULL or writable.
        let (function, code) = unsafe {
            let ids = if ids_null { ptr::null() } else { id_ptrs.as_ptr() };
            let id_lens = if lens_null { ptr::null() } else { id_lens.as_ptr() };
            let weights = if weights_null { ptr::null() } else { weights.as_ptr() };
            let zones = if zones_null { ptr::null() } else { zone_ptrs.as_ptr() };
            let zone_lens = if zone_lens_null { ptr::null() } else { zone_lens.as_ptr() };
            match algorithm {
                None => {
                    ("ring_new", ring::ring_new(ids, id_lens, weights, zones, zone_lens, count, vnodes, seed, out_ptr))
                }
                Some(_) if legacy => {
                    let options = if options_null { ptr::null() } else { &options as *const ring_options_t };
                    (
                        "ring_new_with_options",
                        ring::ring_new_with_options(ids, id_lens, weights, zones, zone_lens, count, options, out_ptr),
                    )
                }
                Some(_) => {
                    let options = if options_null { ptr::null() } else { &options as *const ring_options_t };
                    let size = std::mem::size_of::<ring_options_t>();
                    (
                        "ring_new_with_options_sized",
                        ring::ring_new_with_options_sized(
                            ids, id_lens, weights, zones, zone_lens, count, options, size, out_ptr,
                        ),
                    )
                }
            }
        };
        check_code(function, code, &expect);
        if code == RING_OK {
            self.adopt(out, core.unwrap().unwrap());
        } else {
            assert!(out.is_null(), "{function} wrote a ring on failure");
        }
    }

    pub(crate) fn from_json(&mut self, json: &[u8], nulls: Nulls) {
        let (json_null, out_null) = (nulls.null(0), nulls.null(1));
        let text = std::str::from_utf8(json).ok();
        if let Some(Ok(config)) = text.map(RingConfig::from_json) {
            if budget::too_costly(&config) {
                return;
            }
        }
        let mut expect = Expect::new();
        expect.problem_if(out_null, RING_NULL_ARGUMENT);
        expect.problem_if(json_null && !json.is_empty(), RING_NULL_ARGUMENT);
        let core = if json_null && json.is_empty() { Some(Ring::from_json("")) } else { text.map(Ring::from_json) };
        if text.is_none() && !json_null {
            expect.problems.push(RING_INVALID_UTF8);
        }
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: `json` is valid for its length (or NULL); `out` writable or NULL.
        let code = unsafe {
            ring::ring_new_from_json(
                if json_null { ptr::null() } else { json.as_ptr().cast() },
                json.len(),
                if out_null { ptr::null_mut() } else { &mut out },
            )
        };
        check_code("ring_new_from_json", code, &expect);
        if code == RING_OK {
            self.adopt(out, core.unwrap().unwrap());
        } else {
            assert!(out.is_null());
        }
    }

    pub(crate) fn to_json(&mut self, pick: Pick, keep: bool, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (json_null, len_null) = (nulls.null(0), nulls.null(1));
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || json_null || len_null, RING_NULL_ARGUMENT);
        expect.core = Some(Ok(()));
        let (mut json, mut len): (*mut c_char, usize) = (ptr::null_mut(), usize::MAX);
        // SAFETY: NULL or live handle; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_to_json(
                ptr,
                if json_null { ptr::null_mut() } else { &mut json },
                if len_null { ptr::null_mut() } else { &mut len },
            )
        };
        check_code("ring_to_json", code, &expect);
        if code != RING_OK {
            assert!(json.is_null() && len == usize::MAX, "ring_to_json wrote on failure");
            return;
        }
        let shadow = shadow.unwrap();
        // SAFETY: a NUL-terminated string from the library.
        let text = unsafe { CStr::from_ptr(json) }.to_str().expect("JSON is UTF-8").to_owned();
        assert_eq!(text.len(), len, "ring_to_json length");
        assert_eq!(text, shadow.to_config().to_json());
        // The JSON builds the same ring back through the C API.
        let mut back: *mut ring_t = ptr::null_mut();
        // SAFETY: `json` is valid for `len` bytes.
        let code = unsafe { ring::ring_new_from_json(json, len, &mut back) };
        assert_eq!(code, RING_OK, "ring_to_json output does not rebuild: {}", last_error());
        // SAFETY: live handles.
        unsafe {
            assert_eq!(ring::ring_fingerprint(back), ring::ring_fingerprint(ptr));
            ring::ring_free(back);
        }
        if keep {
            self.strings.push(json);
        } else {
            // SAFETY: from ring_to_json, freed once; NULL is a no-op.
            unsafe {
                ring::ring_string_free(json);
                ring::ring_string_free(ptr::null_mut());
            }
        }
    }
}
