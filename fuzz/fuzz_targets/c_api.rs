//! Fuzz target `c_api`: the C entry points of `include/ring.h`, called from
//! Rust through the `ring` crate (`ffi-c/`), in random sequences.
//!
//! Every `ring_t`, `ring_diff_t` and `ring_tracker_t` the run creates is
//! kept with a *shadow*: the same ring (or diff, or loads) computed with the
//! Rust API from the same inputs. Each call gets random arguments: ids as
//! arbitrary bytes (invalid UTF-8, empty), weights and epsilons as arbitrary
//! doubles (NaN, infinities, negatives, huge), random counts and buffer
//! lengths (0, shorter than needed, longer), out-of-range indices and
//! hashes, and NULL for one pointer argument now and then. Buffers are
//! always as long as the length passed says: a C caller lying about a length
//! is undefined behaviour no library can detect.
//!
//! Checks:
//! - every result code is in the set the header documents for that
//!   function (plus [`UNDOCUMENTED`], see there), never `RING_PANIC`;
//! - the code is exactly what the shadow predicts: `RING_NULL_ARGUMENT` for
//!   a NULL required pointer, `RING_INVALID_UTF8` for bad text,
//!   `RING_BUFFER_TOO_SMALL` for a short buffer, else the Rust API's error
//!   (when several apply, any of them);
//! - on success the out-values equal the shadow's (indices, ids, weights,
//!   hashes, fingerprints, shares, preference lists, diff arcs and flows,
//!   tracker loads); out-buffers are not written past the result, nor at all
//!   on failure; `ring_last_error()` is a non-empty string after a failure;
//! - bounded-load acquires respect the capacity formula of the header;
//! - everything created is freed (`ring_free`, `ring_diff_free`,
//!   `ring_string_free`, `ring_tracker_free`), so LeakSanitizer sees any leak.
#![no_main]

use std::collections::HashMap;
use std::ffi::{CStr, c_char};
use std::ptr;
use std::sync::Arc;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ring::ring_result::{self, *};
use ring::{
    RING_OPTION_AVALANCHE, RING_OPTION_BUCKETS, RING_OPTION_DEFAULT_PORT, RING_OPTION_DISTRIBUTION,
    RING_OPTION_ENDPOINT_ORDER, RING_OPTION_HAPROXY_IDS, RING_OPTION_HASH_FUNCTION, RING_OPTION_HASH_TAG,
    RING_OPTION_KEY_HASH, RING_OPTION_MAX_RING_SIZE, RING_OPTION_MIN_RING_SIZE, RING_OPTION_REMOVED_BUCKETS,
    RING_OPTION_SCORE, RING_OPTION_SEED, RING_OPTION_SERVER_IDS, RING_OPTION_SERVER_KEY, RING_OPTION_TABLE_SIZE,
    RING_OPTION_VNODES, ring_diff_t, ring_options_t, ring_t, ring_tracker_t,
};
use shardring::{
    Algorithm, Distribution, EndpointOrder, HashFunction, KeyHash, Node, NodeConfig, RendezvousScore, Ring, RingConfig,
    RingDiff, RingError, ServerIds, ServerKey,
};
use shardring_fuzz::budget;

/// Result codes functions return although `include/ring.h` does not list
/// them for that function: documentation bugs this target found. Remove an
/// entry once the header lists the code, so the check is strict again.
const UNDOCUMENTED: &[(&str, ring_result)] = &[];

/// The `ring_options_t.fields` bits `include/ring.h` defines.
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

/// Most calls per input.
const MAX_CALLS: usize = 48;

const IDS: [&str; 14] = [
    "a",
    "b",
    "c",
    "é",
    "",
    "10.0.0.1:11211",
    "10.0.0.2:11211",
    "10.0.0.2",
    "[::1]:11211",
    "unix:/s",
    "UNIX:/s",
    "h:0",
    "a\0",
    "e\u{301}",
];

const WEIGHTS: [f64; 20] = [
    1.0,
    1.0,
    1.0,
    2.0,
    0.0,
    -0.0,
    0.5,
    3.0,
    0.25,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    1e300,
    f64::MAX,
    4_294_967_295.0,
    4_294_967_296.0,
    1e-300,
    1e7,
    100.0,
];

const ALGORITHMS: [&str; 22] = [
    "ring",
    "ketama",
    "ketama-spy",
    "libketama",
    "nginx",
    "jump",
    "rendezvous",
    "maglev",
    "slots",
    "libmemcached",
    "twemproxy",
    "uhashring",
    "uhashring-ketama",
    "hashring-js",
    "envoy-ring-hash",
    "envoy-maglev",
    "grpc-ring-hash",
    "haproxy",
    "jumpback",
    "memento",
    "Ring",
    "",
];

/// Which pointer argument (numbered per call) to pass as NULL, if any: one
/// call in eight passes one NULL.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Nulls(u8);

impl Nulls {
    fn null(self, slot: u8) -> bool {
        self.0 >= 224 && self.0 & 7 == slot
    }
}

/// A handle from one of the run's lists; one pick in sixteen is NULL.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Pick(u8);

impl Pick {
    fn index(self, len: usize) -> Option<usize> {
        (len > 0 && self.0 % 16 != 15).then(|| usize::from(self.0) % len)
    }
}

/// Bytes for an id, zone or key: `kind` picks one of [`IDS`] (78%),
/// arbitrary bytes, often not UTF-8 (16%), or a NULL pointer with length
/// `listed % 3` (6%; NULL is allowed only with length 0).
#[derive(Arbitrary, Debug, Clone)]
struct Bytes {
    kind: u8,
    listed: u8,
    raw: Vec<u8>,
}

impl Bytes {
    /// The bytes, or `None` for a NULL pointer, and the length passed.
    fn get(&self) -> (Option<Vec<u8>>, usize) {
        match self.kind {
            0..200 => {
                let id = IDS[usize::from(self.listed) % IDS.len()].as_bytes().to_vec();
                let len = id.len();
                (Some(id), len)
            }
            200..240 => {
                let raw = self.raw[..self.raw.len().min(40)].to_vec();
                let len = raw.len();
                (Some(raw), len)
            }
            _ => (None, usize::from(self.listed % 3)),
        }
    }
}

/// A weight or epsilon: one of [`WEIGHTS`] (86%) or any double (14%).
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Weight {
    kind: u8,
    listed: u8,
    bits: u64,
}

impl Weight {
    fn get(self) -> f64 {
        if self.kind < 220 { WEIGHTS[usize::from(self.listed) % WEIGHTS.len()] } else { f64::from_bits(self.bits) }
    }
}

#[derive(Arbitrary, Debug, Clone)]
struct NodeArg {
    id: Bytes,
    weight: Weight,
    zone: Option<Bytes>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Index {
    /// An index below the count (when there is one).
    Valid(u8),
    /// Any index at all, mostly out of range.
    Any(usize),
}

impl Index {
    fn get(self, count: usize) -> usize {
        match self {
            Index::Valid(i) if count > 0 => usize::from(i) % count,
            Index::Valid(i) => usize::from(i),
            Index::Any(i) => i,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum AlgorithmName {
    Null,
    Listed(u8),
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug, Clone)]
enum ReleaseId {
    /// The id of node `i` of the tracker's current ring.
    Node(u8),
    Other(Bytes),
}

/// Up to six nodes: `count % 7` of `nodes`. (A `Vec` from `arbitrary`
/// would end after about one element.)
#[derive(Arbitrary, Debug, Clone)]
struct NodeArgs {
    count: u8,
    nodes: [NodeArg; 6],
}

impl NodeArgs {
    fn get(&self) -> &[NodeArg] {
        &self.nodes[..usize::from(self.count) % 7]
    }
}

/// A config for `ring_new_from_json`, written from parts, or raw bytes.
#[derive(Arbitrary, Debug, Clone)]
enum JsonText {
    Template {
        algorithm: u8,
        /// One of [`JSON_PARAMETERS`].
        parameters: u8,
        nodes: NodeArgs,
        /// Spliced in at a random place when not empty (breaking the JSON, or not).
        splice: Vec<u8>,
    },
    Raw(Vec<u8>),
}

impl JsonText {
    fn bytes(&self) -> Vec<u8> {
        match self {
            JsonText::Raw(raw) => raw.clone(),
            JsonText::Template { algorithm, parameters, nodes, splice } => {
                let name = ALGORITHMS[usize::from(*algorithm) % ALGORITHMS.len()];
                let nodes: Vec<String> = nodes
                    .get()
                    .iter()
                    .map(|node| {
                        let id = node.id.get().0.unwrap_or_default();
                        let weight = node.weight.get();
                        // JSON has no NaN or infinity; 1e999 overflows when read.
                        let weight = if weight.is_finite() { format!("{weight:?}") } else { "1e999".to_owned() };
                        let zone = match node.zone.as_ref().map(Bytes::get) {
                            Some((Some(zone), _)) => format!(",\"zone\":{}", json_string(&zone)),
                            _ => String::new(),
                        };
                        format!("{{\"id\":{},\"weight\":{weight}{zone}}}", json_string(&id))
                    })
                    .collect();
                let parameters = JSON_PARAMETERS[usize::from(*parameters) % JSON_PARAMETERS.len()];
                let mut text = format!(
                    "{{\"format_version\":1,\"algorithm\":\"{name}\"{parameters},\"nodes\":[{}]}}",
                    nodes.join(",")
                )
                .into_bytes();
                if let Some((&at, rest)) = splice.split_first() {
                    let at = usize::from(at) % (text.len() + 1);
                    text.splice(at..at, rest.iter().copied());
                }
                text
            }
        }
    }
}

/// Parameters for a templated config (most apply to one algorithm only).
const JSON_PARAMETERS: [&str; 10] = [
    "",
    "",
    "",
    r#","table_size":251"#,
    r#","table_size":3"#,
    r#","table_size":4"#,
    r#","vnodes":8"#,
    r#","vnodes":0"#,
    r#","seed":5"#,
    r#","table_size":16777259"#,
];

/// A JSON string literal of (lossily decoded) bytes.
fn json_string(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Up to six keys for a batch: `count % 7` of `keys`.
#[derive(Arbitrary, Debug, Clone)]
struct Keys {
    count: u8,
    keys: [Bytes; 6],
}

#[derive(Arbitrary, Debug, Clone)]
enum Call {
    New {
        nodes: NodeArgs,
        vnodes: u32,
        seed: u64,
        no_zones: bool,
        nulls: Nulls,
    },
    NewWithOptions {
        nodes: NodeArgs,
        algorithm: AlgorithmName,
        /// `ring_options_t.fields`: which of vnodes, seed and table_size are given.
        fields: u32,
        vnodes: u32,
        seed: u64,
        table_size: u32,
        small: bool,
        nulls: Nulls,
    },
    FromJson {
        json: JsonText,
        nulls: Nulls,
    },
    ToJson {
        ring: Pick,
        keep: bool,
        nulls: Nulls,
    },
    Clone {
        ring: Pick,
    },
    Free {
        ring: Pick,
    },
    NodeInfo {
        ring: Pick,
        index: Index,
        nulls: Nulls,
    },
    GetNode {
        ring: Pick,
        key: Bytes,
        nulls: Nulls,
    },
    GetNodeByHash {
        ring: Pick,
        hash: u64,
        narrow: bool,
        nulls: Nulls,
    },
    GetNodes {
        ring: Pick,
        key: Bytes,
        len: u8,
        nulls: Nulls,
    },
    Batch {
        ring: Pick,
        keys: Keys,
        extra: i8,
        nulls: Nulls,
    },
    HashKey {
        ring: Pick,
        key: Bytes,
    },
    WithNode {
        ring: Pick,
        node: NodeArg,
        nulls: Nulls,
    },
    WithoutNode {
        ring: Pick,
        id: Bytes,
        nulls: Nulls,
    },
    WithWeight {
        ring: Pick,
        id: Bytes,
        weight: Weight,
        nulls: Nulls,
    },
    Ownership {
        ring: Pick,
        len: u8,
        nulls: Nulls,
    },
    /// `sampled % 4 == 0` lets a jump or rendezvous diff run (65,536 lookups, twice).
    Diff {
        old: Pick,
        new: Pick,
        keep: bool,
        sampled: u8,
        nulls: Nulls,
    },
    DiffRead {
        diff: Pick,
        arc: Index,
        flow: Index,
        nulls: Nulls,
    },
    DiffFree {
        diff: Pick,
    },
    TrackerNew {
        ring: Pick,
        epsilon: Weight,
        nulls: Nulls,
    },
    TrackerAcquire {
        tracker: Pick,
        key: Bytes,
        times: u8,
        nulls: Nulls,
    },
    TrackerRelease {
        tracker: Pick,
        id: ReleaseId,
    },
    TrackerSwap {
        tracker: Pick,
        ring: Pick,
    },
    TrackerLoad {
        tracker: Pick,
        index: Index,
        nulls: Nulls,
    },
    TrackerFree {
        tracker: Pick,
    },
    ResultText {
        code: u32,
    },
}

/// A `ring_t` reference and the ring it must hold.
struct RingHandle {
    ptr: *mut ring_t,
    shadow: Arc<Ring>,
}

/// A `ring_tracker_t` and what its state must be.
struct TrackerHandle {
    ptr: *mut ring_tracker_t,
    ring: Arc<Ring>,
    loads: Vec<u64>,
    balance: f64,
}

/// Everything the run created, freed at its end.
#[derive(Default)]
struct World {
    rings: Vec<RingHandle>,
    diffs: Vec<(*mut ring_diff_t, RingDiff)>,
    trackers: Vec<TrackerHandle>,
    strings: Vec<*mut c_char>,
}

impl Drop for World {
    fn drop(&mut self) {
        // SAFETY: each pointer is a live handle owned by this world, freed once.
        unsafe {
            for handle in self.rings.drain(..) {
                ring::ring_free(handle.ptr);
            }
            for (diff, _) in self.diffs.drain(..) {
                ring::ring_diff_free(diff);
            }
            for tracker in self.trackers.drain(..) {
                ring::ring_tracker_free(tracker.ptr);
            }
            for string in self.strings.drain(..) {
                ring::ring_string_free(string);
            }
        }
    }
}

/// What a call must return: `problems` are argument errors the C layer
/// detects (NULL pointers, bad UTF-8, short buffers); `core` is the Rust
/// API's result on the same inputs, when it could be computed.
struct Expect {
    problems: Vec<ring_result>,
    core: Option<Result<(), RingError>>,
}

impl Expect {
    fn new() -> Expect {
        Expect { problems: Vec::new(), core: None }
    }

    fn problem_if(&mut self, condition: bool, code: ring_result) {
        if condition {
            self.problems.push(code);
        }
    }
}

/// The C code of a core error: the `ring_result` whose name is `error.code()`.
fn code_of(error: &RingError) -> ring_result {
    ALL_CODES.into_iter().find(|code| format!("{code:?}") == error.code()).unwrap_or(RING_PANIC)
}

const ALL_CODES: [ring_result; 23] = [
    RING_OK,
    RING_NULL_ARGUMENT,
    RING_PANIC,
    RING_EMPTY_ID,
    RING_DUPLICATE_ID,
    RING_INVALID_WEIGHT,
    RING_ZERO_VNODES,
    RING_TOO_MANY_POINTS,
    RING_EMPTY_RING,
    RING_INVALID_CONFIG,
    RING_UNSUPPORTED_FORMAT,
    RING_INVALID_UTF8,
    RING_INDEX_OUT_OF_RANGE,
    RING_EMPTY_ZONE,
    RING_UNKNOWN_NODE,
    RING_SEED_MISMATCH,
    RING_BUFFER_TOO_SMALL,
    RING_INVALID_TABLE_SIZE,
    RING_INVALID_ADDRESS,
    RING_HASH_OUT_OF_RANGE,
    RING_ALGORITHM_MISMATCH,
    RING_INVALID_EPSILON,
    RING_NO_LOAD,
];

/// The error codes `include/ring.h` lists for each function (besides `RING_OK`).
fn documented(function: &str) -> &'static [ring_result] {
    const NEW: &[ring_result] = &[
        RING_NULL_ARGUMENT,
        RING_INVALID_UTF8,
        RING_EMPTY_ID,
        RING_DUPLICATE_ID,
        RING_INVALID_WEIGHT,
        RING_EMPTY_ZONE,
        RING_ZERO_VNODES,
        RING_TOO_MANY_POINTS,
        RING_INVALID_CONFIG,
    ];
    match function {
        "ring_new" => NEW,
        "ring_new_with_options" => &[
            RING_NULL_ARGUMENT,
            RING_INVALID_UTF8,
            RING_EMPTY_ID,
            RING_DUPLICATE_ID,
            RING_INVALID_WEIGHT,
            RING_EMPTY_ZONE,
            RING_ZERO_VNODES,
            RING_TOO_MANY_POINTS,
            RING_INVALID_CONFIG,
            RING_INVALID_TABLE_SIZE,
            RING_INVALID_ADDRESS,
        ],
        "ring_new_from_json" => &[
            RING_NULL_ARGUMENT,
            RING_INVALID_UTF8,
            RING_INVALID_CONFIG,
            RING_UNSUPPORTED_FORMAT,
            RING_EMPTY_ID,
            RING_DUPLICATE_ID,
            RING_INVALID_WEIGHT,
            RING_EMPTY_ZONE,
            RING_ZERO_VNODES,
            RING_TOO_MANY_POINTS,
            RING_INVALID_TABLE_SIZE,
            RING_INVALID_ADDRESS,
        ],
        "ring_to_json" => &[RING_NULL_ARGUMENT],
        "ring_node_id" | "ring_node_weight" => &[RING_NULL_ARGUMENT, RING_INDEX_OUT_OF_RANGE],
        "ring_get_node" | "ring_get_nodes" => &[RING_NULL_ARGUMENT, RING_EMPTY_RING],
        "ring_get_node_by_hash" => &[RING_NULL_ARGUMENT, RING_EMPTY_RING, RING_HASH_OUT_OF_RANGE],
        "ring_get_node_batch" => &[RING_NULL_ARGUMENT, RING_BUFFER_TOO_SMALL, RING_EMPTY_RING],
        "ring_with_node" => &[
            RING_NULL_ARGUMENT,
            RING_INVALID_UTF8,
            RING_EMPTY_ID,
            RING_DUPLICATE_ID,
            RING_INVALID_WEIGHT,
            RING_EMPTY_ZONE,
            RING_TOO_MANY_POINTS,
            RING_INVALID_ADDRESS,
            RING_INVALID_TABLE_SIZE,
        ],
        "ring_without_node" => &[RING_NULL_ARGUMENT, RING_INVALID_UTF8, RING_UNKNOWN_NODE],
        "ring_with_weight" => {
            &[RING_NULL_ARGUMENT, RING_INVALID_UTF8, RING_UNKNOWN_NODE, RING_INVALID_WEIGHT, RING_TOO_MANY_POINTS]
        }
        "ring_ownership" => &[RING_NULL_ARGUMENT, RING_BUFFER_TOO_SMALL],
        "ring_diff" => &[RING_NULL_ARGUMENT, RING_SEED_MISMATCH, RING_ALGORITHM_MISMATCH, RING_EMPTY_RING],
        "ring_diff_arc" | "ring_diff_flow" => &[RING_NULL_ARGUMENT, RING_INDEX_OUT_OF_RANGE],
        "ring_tracker_new" => &[RING_NULL_ARGUMENT, RING_INVALID_EPSILON],
        "ring_tracker_acquire" => &[RING_NULL_ARGUMENT, RING_EMPTY_RING],
        "ring_tracker_release" => &[RING_NULL_ARGUMENT, RING_INVALID_UTF8, RING_UNKNOWN_NODE, RING_NO_LOAD],
        "ring_tracker_swap" => &[RING_NULL_ARGUMENT],
        "ring_tracker_load" => &[RING_NULL_ARGUMENT, RING_INDEX_OUT_OF_RANGE],
        other => panic!("no documented codes for {other}"),
    }
}

/// Checks a returned code against the header and the expectation.
fn check_code(function: &str, code: ring_result, expect: &Expect) {
    if code == RING_PANIC {
        panic!("{function} returned RING_PANIC: {}", last_error());
    }
    let listed = code == RING_OK || documented(function).contains(&code) || UNDOCUMENTED.contains(&(function, code));
    assert!(listed, "{function} returned {code:?}, which include/ring.h does not list for it ({})", last_error());
    let core_code = match &expect.core {
        Some(Err(e)) => Some(code_of(e)),
        Some(Ok(())) => Some(RING_OK),
        None => None,
    };
    if expect.problems.is_empty() {
        let want = core_code.expect("a call without argument problems has a core result");
        assert_eq!(code, want, "{function}: expected {want:?} ({:?})", expect.core);
    } else {
        let allowed = code != RING_OK && (expect.problems.contains(&code) || core_code == Some(code));
        assert!(
            allowed,
            "{function} returned {code:?}; argument problems {:?}, core {:?}",
            expect.problems, expect.core
        );
    }
    if code != RING_OK {
        assert!(!last_error().is_empty(), "{function} failed with {code:?} but ring_last_error() is empty");
    }
}

fn last_error() -> String {
    // SAFETY: ring_last_error returns a NUL-terminated string owned by the library.
    let text = unsafe { CStr::from_ptr(ring::ring_last_error()) };
    text.to_str().expect("ring_last_error() is UTF-8").to_owned()
}

/// Bytes behind a (pointer, length) pair that the library returned.
///
/// # Safety
/// `ptr` must be valid for `len` bytes.
unsafe fn returned_bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    assert!(!ptr.is_null() || len == 0, "NULL string of length {len}");
    if len == 0 {
        return &[];
    }
    // SAFETY: forwarded.
    unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
}

fn pointer(bytes: &Option<Vec<u8>>) -> *const c_char {
    bytes.as_ref().map_or(ptr::null(), |b| b.as_ptr().cast())
}

/// The text a (bytes, length) argument means, or the problem it is.
fn text_of(bytes: &Option<Vec<u8>>, len: usize) -> Result<String, ring_result> {
    match bytes {
        None if len > 0 => Err(RING_NULL_ARGUMENT),
        None => Ok(String::new()),
        Some(b) => String::from_utf8(b.clone()).map_err(|_| RING_INVALID_UTF8),
    }
}

/// The key bytes a (bytes, length) argument means, `None` for NULL with a length.
fn key_of(bytes: &Option<Vec<u8>>, len: usize) -> Option<Vec<u8>> {
    match bytes {
        None if len > 0 => None,
        None => Some(Vec::new()),
        Some(b) => Some(b.clone()),
    }
}

/// Configs for the ring every run starts with, one per algorithm, so that
/// calls have a live handle to work on from the first one.
const STARTING_RINGS: [&str; 9] = [
    r#"{"format_version":1,"vnodes":16,"seed":7,"nodes":[{"id":"a"},{"id":"b","weight":2,"zone":"z"},{"id":"c","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"ketama","nodes":[{"id":"10.0.0.1:11211"},{"id":"10.0.0.2:11211","weight":2}]}"#,
    r#"{"format_version":1,"algorithm":"ketama-spy","nodes":[{"id":"10.0.0.1:11211"},{"id":"10.0.0.3","zone":"z"}]}"#,
    r#"{"format_version":1,"algorithm":"libketama","nodes":[{"id":"10.0.0.1:11211","weight":3},{"id":"a","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"nginx","nodes":[{"id":"10.0.0.1:11211"},{"id":"unix:/s","weight":2}]}"#,
    r#"{"format_version":1,"algorithm":"jump","seed":1,"nodes":[{"id":"a"},{"id":"b"},{"id":"c","zone":"z"}]}"#,
    r#"{"format_version":1,"algorithm":"rendezvous","nodes":[{"id":"a","weight":0.5},{"id":"b"},{"id":"c","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"maglev","table_size":251,"nodes":[{"id":"a"},{"id":"b","weight":3}]}"#,
    r#"{"format_version":1,"algorithm":"slots","nodes":[{"id":"a"},{"id":"b","weight":2},{"id":"c","weight":0}]}"#,
];

fuzz_target!(|data: &[u8]| {
    let mut world = World::default();
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    world.from_json(STARTING_RINGS[usize::from(first) % STARTING_RINGS.len()].as_bytes(), Nulls(0));
    assert_eq!(world.rings.len(), 1, "the starting ring builds");
    // Calls decoded one after the other until the bytes run out.
    let mut bytes = Unstructured::new(data);
    for _ in 0..MAX_CALLS {
        if bytes.is_empty() {
            break;
        }
        match Call::arbitrary(&mut bytes) {
            Ok(call) => world.call(call),
            Err(_) => break,
        }
    }
    // Dropping the world frees every handle; LeakSanitizer reports leaks.
});

impl World {
    fn ring(&self, pick: Pick) -> (*mut ring_t, Option<Arc<Ring>>) {
        match pick.index(self.rings.len()) {
            Some(i) => (self.rings[i].ptr, Some(self.rings[i].shadow.clone())),
            None => (ptr::null_mut(), None),
        }
    }

    /// Takes ownership of a handle a successful call wrote, checking it holds `shadow`.
    fn adopt(&mut self, ptr: *mut ring_t, shadow: Ring) {
        assert!(!ptr.is_null(), "RING_OK with a NULL ring");
        // SAFETY: a live handle just returned by the library.
        unsafe {
            assert_eq!(ring::ring_fingerprint(ptr), shadow.fingerprint(), "fingerprint differs from the shadow ring");
            assert_eq!(ring::ring_node_count(ptr), shadow.nodes().len());
            let name = CStr::from_ptr(ring::ring_algorithm(ptr));
            assert_eq!(name.to_str().unwrap(), shadow.algorithm().name());
        }
        self.rings.push(RingHandle { ptr, shadow: Arc::new(shadow) });
    }

    fn call(&mut self, call: Call) {
        match call {
            Call::New { nodes, vnodes, seed, no_zones, nulls } => {
                self.new_ring(nodes.get(), None, vnodes % 64, seed, 0, no_zones, nulls)
            }
            Call::NewWithOptions { nodes, algorithm, fields, vnodes, seed, table_size, small, nulls } => {
                // Small parameters and only the defined bits most of the time, so that rings build.
                let (vnodes, table_size) =
                    if small { (vnodes % 41, [0, 251, 11, 4][table_size as usize % 4]) } else { (vnodes, table_size) };
                let seed = if small { seed % 2 } else { seed };
                let fields = if small { fields & KNOWN_OPTION_BITS } else { fields };
                self.new_ring(nodes.get(), Some((algorithm, fields)), vnodes, seed, table_size, false, nulls)
            }
            Call::FromJson { json, nulls } => self.from_json(&json.bytes(), nulls),
            Call::ToJson { ring, keep, nulls } => self.to_json(ring, keep, nulls),
            Call::Clone { ring } => {
                let (ptr, shadow) = self.ring(ring);
                // SAFETY: NULL or a live handle.
                let clone = unsafe { ring::ring_clone(ptr) };
                assert_eq!(clone, ptr, "ring_clone returns the same handle");
                if let Some(shadow) = shadow {
                    self.rings.push(RingHandle { ptr: clone, shadow });
                }
            }
            Call::Free { ring } => match ring.index(self.rings.len()) {
                // SAFETY: one reference of a live handle, dropped once.
                Some(i) => unsafe { ring::ring_free(self.rings.swap_remove(i).ptr) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_free(ptr::null_mut()) },
            },
            Call::NodeInfo { ring, index, nulls } => self.node_info(ring, index, nulls),
            Call::GetNode { ring, key, nulls } => self.get_node(ring, &key, nulls),
            Call::GetNodeByHash { ring, hash, narrow, nulls } => self.get_node_by_hash(ring, hash, narrow, nulls),
            Call::GetNodes { ring, key, len, nulls } => self.get_nodes(ring, &key, usize::from(len % 16), nulls),
            Call::Batch { ring, keys, extra, nulls } => {
                self.batch(ring, &keys.keys[..usize::from(keys.count) % 7], extra, nulls)
            }
            Call::HashKey { ring, key } => {
                let (ptr, shadow) = self.ring(ring);
                let (bytes, len) = key.get();
                // SAFETY: NULL or live; the key is valid for `len` bytes or NULL.
                let hash = unsafe { ring::ring_hash_key(ptr, pointer(&bytes).cast(), len) };
                let expected = match (shadow, key_of(&bytes, len)) {
                    (Some(shadow), Some(key)) => shadow.hash_key(key),
                    _ => 0,
                };
                assert_eq!(hash, expected, "ring_hash_key");
                // SAFETY: NULL is allowed for these.
                unsafe {
                    assert_eq!(ring::ring_fingerprint(ptr::null()), 0);
                    assert_eq!(ring::ring_node_count(ptr::null()), 0);
                    assert!(ring::ring_algorithm(ptr::null()).is_null());
                }
            }
            Call::WithNode { ring, node, nulls } => self.with_node(ring, &node, nulls),
            Call::WithoutNode { ring, id, nulls } => self.without_node(ring, &id, nulls),
            Call::WithWeight { ring, id, weight, nulls } => self.with_weight(ring, &id, weight.get(), nulls),
            Call::Ownership { ring, len, nulls } => self.ownership(ring, usize::from(len % 16), nulls),
            Call::Diff { old, new, keep, sampled, nulls } => self.diff(old, new, keep, sampled % 4 == 0, nulls),
            Call::DiffRead { diff, arc, flow, nulls } => self.diff_read(diff, arc, flow, nulls),
            Call::DiffFree { diff } => match diff.index(self.diffs.len()) {
                // SAFETY: a live diff, freed once.
                Some(i) => unsafe { ring::ring_diff_free(self.diffs.swap_remove(i).0) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_diff_free(ptr::null_mut()) },
            },
            Call::TrackerNew { ring, epsilon, nulls } => self.tracker_new(ring, epsilon.get(), nulls),
            Call::TrackerAcquire { tracker, key, times, nulls } => {
                // Many acquires in a row reach the capacity limits.
                let times = if self.tracker(tracker).is_some() { usize::from(times % 128) + 1 } else { 1 };
                for _ in 0..times {
                    self.tracker_acquire(tracker, &key, nulls);
                }
            }
            Call::TrackerRelease { tracker, id } => self.tracker_release(tracker, &id),
            Call::TrackerSwap { tracker, ring } => self.tracker_swap(tracker, ring),
            Call::TrackerLoad { tracker, index, nulls } => self.tracker_load(tracker, index, nulls),
            Call::TrackerFree { tracker } => match tracker.index(self.trackers.len()) {
                // SAFETY: a live tracker, freed once.
                Some(i) => unsafe { ring::ring_tracker_free(self.trackers.swap_remove(i).ptr) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_tracker_free(ptr::null_mut()) },
            },
            Call::ResultText { code } => {
                // SAFETY: static NUL-terminated strings, never NULL.
                let text = unsafe { CStr::from_ptr(ring::ring_result_str(code)) };
                assert!(!text.to_str().expect("UTF-8").is_empty());
            }
        }
    }

    /// `ring_new` (when `options` is `None`) or `ring_new_with_options`
    /// (with the algorithm name and `fields` bits).
    #[allow(clippy::too_many_arguments)]
    fn new_ring(
        &mut self,
        args: &[NodeArg],
        options: Option<(AlgorithmName, u32)>,
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

        // The options as the C layer reads them: a parameter only when its bit is set.
        let (algorithm, fields) = match options {
            Some((name, fields)) => (Some(name), fields),
            None => (None, 0),
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
        } else if !options_null {
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
        let config = RingConfig {
            vnodes: if algorithm.is_none() || given(RING_OPTION_VNODES) { Some(vnodes) } else { None },
            table_size: given(RING_OPTION_TABLE_SIZE).then_some(table_size),
            distribution: given(RING_OPTION_DISTRIBUTION).then_some(Distribution::ConsistentKetama),
            key_hash: given(RING_OPTION_KEY_HASH).then_some(KeyHash::Fnv1a_32),
            server_ids: given(RING_OPTION_SERVER_IDS).then_some(ServerIds::Label),
            hash_tag: given(RING_OPTION_HASH_TAG).then(|| "{}".to_owned()),
            default_port: given(RING_OPTION_DEFAULT_PORT).then_some(11211),
            min_ring_size: given(RING_OPTION_MIN_RING_SIZE).then_some(12),
            max_ring_size: given(RING_OPTION_MAX_RING_SIZE).then_some(4096),
            ..RingConfig::new(
                *parsed.as_ref().unwrap_or(&Algorithm::Ring),
                nodes.iter().map(|n| NodeConfig::new(n.id(), n.weight())).collect(),
            )
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
        let options = ring_options_t {
            fields,
            algorithm: name_c.as_ref().map_or(ptr::null(), |b| b.as_ptr().cast()),
            vnodes,
            seed,
            table_size,
            distribution: DISTRIBUTION.as_ptr(),
            key_hash: KEY_HASH.as_ptr(),
            server_ids: IDS_OPTION.as_ptr(),
            hash_tag: HASH_TAG.as_ptr(),
            default_port: 11211,
            min_ring_size: 12,
            max_ring_size: 4096,
            hash_function: HASH_FUNCTION.as_ptr(),
            endpoint_order: ENDPOINT_ORDER.as_ptr(),
            avalanche: 1,
            server_key: SERVER_KEY.as_ptr(),
            haproxy_ids: assigned_ids.as_ptr(),
            buckets: buckets.as_ptr(),
            removed_buckets: removed_buckets.as_ptr(),
            removed_bucket_count: 1,
            score: c"float".as_ptr(),
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
                Some(_) => {
                    let options = if options_null { ptr::null() } else { &options as *const ring_options_t };
                    (
                        "ring_new_with_options",
                        ring::ring_new_with_options(ids, id_lens, weights, zones, zone_lens, count, options, out_ptr),
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

    fn from_json(&mut self, json: &[u8], nulls: Nulls) {
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

    fn to_json(&mut self, pick: Pick, keep: bool, nulls: Nulls) {
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

    fn node_info(&mut self, pick: Pick, index: Index, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let count = shadow.as_ref().map_or(0, |s| s.nodes().len());
        let index = index.get(count);
        let (id_null, len_null, weight_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let in_range = index < count;
        let (mut id, mut id_len, mut weight) = (ptr::null(), usize::MAX, f64::NAN);
        // SAFETY: NULL or live handle; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_node_id(
                ptr,
                index,
                if id_null { ptr::null_mut() } else { &mut id },
                if len_null { ptr::null_mut() } else { &mut id_len },
            )
        };
        check_index_code("ring_node_id", code, ptr.is_null() || id_null || len_null, in_range);
        if code == RING_OK {
            // SAFETY: the id is valid while the ring lives.
            let bytes = unsafe { returned_bytes(id, id_len) };
            assert_eq!(bytes, shadow.as_ref().unwrap().nodes()[index].id().as_bytes());
        } else {
            assert!(id.is_null() && id_len == usize::MAX, "ring_node_id wrote on failure");
        }
        // SAFETY: as above.
        let code =
            unsafe { ring::ring_node_weight(ptr, index, if weight_null { ptr::null_mut() } else { &mut weight }) };
        check_index_code("ring_node_weight", code, ptr.is_null() || weight_null, in_range);
        if code == RING_OK {
            assert_eq!(weight.to_bits(), shadow.unwrap().nodes()[index].weight().to_bits());
        } else {
            assert!(weight.is_nan(), "ring_node_weight wrote on failure");
        }
    }

    fn get_node(&mut self, pick: Pick, key: &Bytes, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = key.get();
        let (index_null, id_null, len_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || index_null, RING_NULL_ARGUMENT);
        let key = key_of(&bytes, len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        let core = match (&shadow, &key) {
            (Some(shadow), Some(key)) => Some(shadow.get_index(key)),
            _ => None,
        };
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let (mut index, mut id, mut id_len) = (usize::MAX, ptr::null(), usize::MAX);
        // SAFETY: key valid for `len` bytes or NULL; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_get_node(
                ptr,
                pointer(&bytes).cast(),
                len,
                if index_null { ptr::null_mut() } else { &mut index },
                if id_null { ptr::null_mut() } else { &mut id },
                if len_null { ptr::null_mut() } else { &mut id_len },
            )
        };
        check_code("ring_get_node", code, &expect);
        if code != RING_OK {
            assert!(index == usize::MAX && id.is_null() && id_len == usize::MAX, "ring_get_node wrote on failure");
            return;
        }
        let (shadow, want) = (shadow.unwrap(), core.unwrap().unwrap());
        assert_eq!(index, want, "ring_get_node index");
        if !id_null && !len_null {
            // SAFETY: valid while the ring lives.
            assert_eq!(unsafe { returned_bytes(id, id_len) }, shadow.nodes()[want].id().as_bytes());
        } else {
            assert!(id.is_null() && id_len == usize::MAX, "ring_get_node wrote half an id");
        }
    }

    fn get_node_by_hash(&mut self, pick: Pick, hash: u64, narrow: bool, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let hash = match (&shadow, narrow) {
            (Some(shadow), true) if shadow.algorithm().hash_bits() < 64 => {
                hash & ((1 << shadow.algorithm().hash_bits()) - 1)
            }
            _ => hash,
        };
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let core = shadow.as_ref().map(|s| s.index_by_hash(hash));
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let mut index = usize::MAX;
        // SAFETY: NULL or live; out NULL or writable.
        let code =
            unsafe { ring::ring_get_node_by_hash(ptr, hash, if out_null { ptr::null_mut() } else { &mut index }) };
        check_code("ring_get_node_by_hash", code, &expect);
        if code == RING_OK {
            assert_eq!(index, core.unwrap().unwrap());
        } else {
            assert_eq!(index, usize::MAX, "ring_get_node_by_hash wrote on failure");
        }
    }

    fn get_nodes(&mut self, pick: Pick, key: &Bytes, len: usize, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, key_len) = key.get();
        let (out_null, count_null) = (nulls.null(0), nulls.null(1));
        let mut out = vec![usize::MAX; len];
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || count_null || (out_null && len > 0), RING_NULL_ARGUMENT);
        let key = key_of(&bytes, key_len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        let core = match (&shadow, &key) {
            (Some(shadow), Some(key)) => {
                let mut want = vec![usize::MAX; len];
                Some(shadow.get_n_indices(key, &mut want).map(|found| want[..found].to_vec()))
            }
            _ => None,
        };
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let mut count = usize::MAX;
        // SAFETY: `out` holds `len` elements (or is NULL); key valid or NULL.
        let code = unsafe {
            ring::ring_get_nodes(
                ptr,
                pointer(&bytes).cast(),
                key_len,
                if out_null { ptr::null_mut() } else { out.as_mut_ptr() },
                len,
                if count_null { ptr::null_mut() } else { &mut count },
            )
        };
        check_code("ring_get_nodes", code, &expect);
        if code != RING_OK {
            assert!(count == usize::MAX && out.iter().all(|&i| i == usize::MAX), "ring_get_nodes wrote on failure");
            return;
        }
        let want = core.unwrap().unwrap();
        let shadow = shadow.unwrap();
        assert_eq!(count, want.len().min(len));
        assert_eq!(count, len.min(shadow.live_node_count()));
        assert_eq!(&out[..count], &want[..], "ring_get_nodes list");
        assert!(out[count..].iter().all(|&i| i == usize::MAX), "ring_get_nodes wrote past the list");
        assert!(out[..count].iter().all(|&i| i < shadow.nodes().len()));
    }

    fn batch(&mut self, pick: Pick, keys: &[Bytes], extra: i8, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let keys: Vec<(Option<Vec<u8>>, usize)> = keys.iter().map(Bytes::get).collect();
        let key_count = keys.len();
        let out_len = (key_count as isize + isize::from(extra % 4)).max(0) as usize;
        let (keys_null, lens_null, out_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let key_ptrs: Vec<*const u8> = keys.iter().map(|(b, _)| pointer(b).cast()).collect();
        let key_lens: Vec<usize> = keys.iter().map(|&(_, len)| len).collect();
        let mut out = vec![usize::MAX; out_len];

        let mut expect = Expect::new();
        expect.problem_if(key_count > 0 && (keys_null || lens_null || out_null), RING_NULL_ARGUMENT);
        expect.problem_if(out_len < key_count, RING_BUFFER_TOO_SMALL);
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        let readable: Option<Vec<Vec<u8>>> = keys.iter().map(|(b, len)| key_of(b, *len)).collect();
        expect.problem_if(readable.is_none(), RING_NULL_ARGUMENT);
        let core: Option<Result<Vec<usize>, RingError>> = shadow.as_ref().map(|shadow| {
            if shadow.live_node_count() == 0 {
                return Err(RingError::EmptyRing);
            }
            Ok(readable.iter().flatten().map(|key| shadow.get_index(key).unwrap()).collect())
        });
        expect.core = core.clone().map(|r| r.map(|_| ()));
        // SAFETY: the arrays hold `key_count` elements, keys valid for their
        // lengths (or NULL), `out` holds `out_len` elements (or is NULL).
        let code = unsafe {
            ring::ring_get_node_batch(
                ptr,
                if keys_null { ptr::null() } else { key_ptrs.as_ptr() },
                if lens_null { ptr::null() } else { key_lens.as_ptr() },
                key_count,
                if out_null { ptr::null_mut() } else { out.as_mut_ptr() },
                out_len,
            )
        };
        check_code("ring_get_node_batch", code, &expect);
        if code != RING_OK {
            assert!(out.iter().all(|&i| i == usize::MAX), "ring_get_node_batch wrote on failure");
            return;
        }
        let want = core.unwrap().unwrap();
        assert_eq!(&out[..key_count], &want[..], "ring_get_node_batch indices");
        assert!(out[key_count..].iter().all(|&i| i == usize::MAX), "ring_get_node_batch wrote past key_count");
    }

    /// The budget check for a derived ring: skip it when too slow to build.
    fn derived_too_costly(shadow: &Ring, change: impl FnOnce(&mut RingConfig)) -> bool {
        let mut config = shadow.to_config();
        change(&mut config);
        budget::too_costly(&config)
    }

    fn with_node(&mut self, pick: Pick, node: &NodeArg, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (id_bytes, id_len) = node.id.get();
        let zone = node.zone.as_ref().map(Bytes::get);
        let weight = node.weight.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&id_bytes, id_len).map_err(|p| expect.problems.push(p)).ok();
        // A NULL zone pointer means no zone, whatever the length.
        let zone_text = match &zone {
            Some((Some(bytes), len)) => {
                text_of(&Some(bytes.clone()), *len).map(Some).map_err(|p| expect.problems.push(p)).ok()
            }
            _ => Some(None),
        };
        let mut core = None;
        if let (Some(shadow), Some(id), Some(zone_text)) = (&shadow, &id, &zone_text) {
            if Self::derived_too_costly(shadow, |c| {
                c.nodes.push(NodeConfig::new(id.clone(), weight));
            }) {
                return;
            }
            let mut new = Node::new(id.clone(), weight);
            if let Some(zone) = zone_text {
                new = new.with_zone(zone.clone());
            }
            core = Some(shadow.with_node(new));
        }
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let (zone_ptr, zone_len) = match &zone {
            Some((bytes, len)) => (pointer(bytes), *len),
            None => (ptr::null(), 0),
        };
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id and zone valid for their lengths or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_with_node(
                ptr,
                pointer(&id_bytes),
                id_len,
                weight,
                zone_ptr,
                zone_len,
                if out_null { ptr::null_mut() } else { &mut out },
            )
        };
        check_code("ring_with_node", code, &expect);
        self.finish_derivation("ring_with_node", code, out, core);
    }

    fn without_node(&mut self, pick: Pick, id: &Bytes, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = id.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let core = match (&shadow, &id) {
            (Some(shadow), Some(id)) => Some(shadow.without_node(id)),
            _ => None,
        };
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id valid for `len` bytes or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_without_node(ptr, pointer(&bytes), len, if out_null { ptr::null_mut() } else { &mut out })
        };
        check_code("ring_without_node", code, &expect);
        self.finish_derivation("ring_without_node", code, out, core);
    }

    fn with_weight(&mut self, pick: Pick, id: &Bytes, weight: f64, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = id.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let mut core = None;
        if let (Some(shadow), Some(id)) = (&shadow, &id) {
            if Self::derived_too_costly(shadow, |c| {
                c.nodes.iter_mut().filter(|n| &n.id == id).for_each(|n| n.weight = weight)
            }) {
                return;
            }
            core = Some(shadow.with_weight(id, weight));
        }
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id valid for `len` bytes or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_with_weight(ptr, pointer(&bytes), len, weight, if out_null { ptr::null_mut() } else { &mut out })
        };
        check_code("ring_with_weight", code, &expect);
        self.finish_derivation("ring_with_weight", code, out, core);
    }

    fn finish_derivation(
        &mut self,
        function: &str,
        code: ring_result,
        out: *mut ring_t,
        core: Option<Result<Ring, RingError>>,
    ) {
        if code == RING_OK {
            self.adopt(out, core.unwrap().unwrap());
        } else {
            assert!(out.is_null(), "{function} wrote a ring on failure");
        }
    }

    fn ownership(&mut self, pick: Pick, len: usize, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let out_null = nulls.null(0);
        let mut out = vec![-7.0f64; len];
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        if let Some(shadow) = &shadow {
            let nodes = shadow.nodes().len();
            expect.problem_if(len < nodes, RING_BUFFER_TOO_SMALL);
            expect.problem_if(out_null && nodes > 0, RING_NULL_ARGUMENT);
        }
        expect.core = Some(Ok(()));
        // SAFETY: `out` holds `len` elements or is NULL.
        let code = unsafe { ring::ring_ownership(ptr, if out_null { ptr::null_mut() } else { out.as_mut_ptr() }, len) };
        check_code("ring_ownership", code, &expect);
        if code != RING_OK {
            assert!(out.iter().all(|&s| s == -7.0), "ring_ownership wrote on failure");
            return;
        }
        let shadow = shadow.unwrap();
        let shares = shadow.ownership();
        for (i, (_, share)) in shares.iter().enumerate() {
            assert_eq!(out[i].to_bits(), share.to_bits(), "share of node {i}");
            assert!((0.0..=1.0).contains(&out[i]));
        }
        assert!(out[shares.len()..].iter().all(|&s| s == -7.0), "ring_ownership wrote past the node count");
    }

    fn diff(&mut self, old: Pick, new: Pick, keep: bool, sampled: bool, nulls: Nulls) {
        let (old_ptr, old_shadow) = self.ring(old);
        let (new_ptr, new_shadow) = self.ring(new);
        let slow = |ring: &Option<Arc<Ring>>| {
            ring.as_ref().is_some_and(|r| {
                matches!(r.algorithm(), Algorithm::Jump | Algorithm::Rendezvous) && r.live_node_count() > 0
            })
        };
        if slow(&old_shadow)
            && slow(&new_shadow)
            && old_shadow.as_ref().map(|r| r.algorithm()) == new_shadow.as_ref().map(|r| r.algorithm())
            && !sampled
        {
            return;
        }
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(old_ptr.is_null() || new_ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let core = match (&old_shadow, &new_shadow) {
            (Some(a), Some(b)) => Some(a.diff(b)),
            _ => None,
        };
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_diff_t = ptr::null_mut();
        // SAFETY: NULL or live handles; out NULL or writable.
        let code = unsafe { ring::ring_diff(old_ptr, new_ptr, if out_null { ptr::null_mut() } else { &mut out }) };
        check_code("ring_diff", code, &expect);
        if code != RING_OK {
            assert!(out.is_null(), "ring_diff wrote on failure");
            return;
        }
        let shadow = core.unwrap().unwrap();
        // SAFETY: a live diff.
        unsafe {
            assert_eq!(ring::ring_diff_moved_share(out).to_bits(), shadow.moved_share.to_bits());
            assert_eq!(ring::ring_diff_arc_count(out), shadow.arcs.len());
            assert_eq!(ring::ring_diff_flow_count(out), shadow.flows.len());
            assert!(ring::ring_diff_moved_share(ptr::null()).is_nan());
            assert_eq!(ring::ring_diff_arc_count(ptr::null()), 0);
            assert_eq!(ring::ring_diff_flow_count(ptr::null()), 0);
        }
        self.diffs.push((out, shadow));
        self.diff_read_at(Some(self.diffs.len() - 1), Index::Valid(0), Index::Valid(0), Nulls(0));
        if !keep {
            let (diff, _) = self.diffs.pop().unwrap();
            // SAFETY: a live diff, freed once.
            unsafe { ring::ring_diff_free(diff) };
        }
    }

    fn diff_read(&mut self, pick: Pick, arc: Index, flow: Index, nulls: Nulls) {
        self.diff_read_at(pick.index(self.diffs.len()), arc, flow, nulls);
    }

    /// `ring_diff_arc` and `ring_diff_flow` on diff `chosen` (NULL for `None`).
    fn diff_read_at(&mut self, chosen: Option<usize>, arc: Index, flow: Index, nulls: Nulls) {
        let (diff, shadow) = match chosen {
            Some(i) => (self.diffs[i].0, Some(&self.diffs[i].1)),
            None => (ptr::null_mut(), None),
        };
        let arc = arc.get(shadow.map_or(0, |s| s.arcs.len()));
        let in_range = shadow.is_some_and(|s| arc < s.arcs.len());
        let (mut start, mut end, mut from, mut from_len, mut to, mut to_len) =
            (7u64, 7u64, ptr::null(), 7usize, ptr::null(), 7usize);
        let out = |slot: u8, p: *mut u64| if nulls.null(slot) { ptr::null_mut() } else { p };
        // SAFETY: NULL or a live diff; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_diff_arc(
                diff,
                arc,
                out(0, &mut start),
                out(1, &mut end),
                if nulls.null(2) { ptr::null_mut() } else { &mut from },
                if nulls.null(3) { ptr::null_mut() } else { &mut from_len },
                if nulls.null(4) { ptr::null_mut() } else { &mut to },
                if nulls.null(5) { ptr::null_mut() } else { &mut to_len },
            )
        };
        check_index_code("ring_diff_arc", code, diff.is_null() || (0..6).any(|slot| nulls.null(slot)), in_range);
        if code == RING_OK {
            let want = &shadow.unwrap().arcs[arc];
            assert_eq!((start, end), (want.start, want.end));
            // SAFETY: ids valid while the diff lives.
            unsafe {
                assert_eq!(returned_bytes(from, from_len), want.from.as_bytes());
                assert_eq!(returned_bytes(to, to_len), want.to.as_bytes());
            }
        } else {
            assert!(
                start == 7 && end == 7 && from.is_null() && to.is_null() && from_len == 7 && to_len == 7,
                "ring_diff_arc wrote on failure"
            );
        }

        let flow = flow.get(shadow.map_or(0, |s| s.flows.len()));
        let in_range = shadow.is_some_and(|s| flow < s.flows.len());
        let (mut share, mut from, mut from_len, mut to, mut to_len) =
            (-7.0f64, ptr::null(), 7usize, ptr::null(), 7usize);
        // SAFETY: as above.
        let code = unsafe {
            ring::ring_diff_flow(
                diff,
                flow,
                if nulls.null(0) { ptr::null_mut() } else { &mut share },
                if nulls.null(2) { ptr::null_mut() } else { &mut from },
                if nulls.null(3) { ptr::null_mut() } else { &mut from_len },
                if nulls.null(4) { ptr::null_mut() } else { &mut to },
                if nulls.null(5) { ptr::null_mut() } else { &mut to_len },
            )
        };
        let null = diff.is_null() || [0, 2, 3, 4, 5].iter().any(|&slot| nulls.null(slot));
        check_index_code("ring_diff_flow", code, null, in_range);
        if code == RING_OK {
            let want = &shadow.unwrap().flows[flow];
            assert_eq!(share.to_bits(), want.share.to_bits());
            // SAFETY: ids valid while the diff lives.
            unsafe {
                assert_eq!(returned_bytes(from, from_len), want.from.as_bytes());
                assert_eq!(returned_bytes(to, to_len), want.to.as_bytes());
            }
        } else {
            assert!(share == -7.0 && from.is_null() && to.is_null(), "ring_diff_flow wrote on failure");
        }
    }

    fn tracker(&self, pick: Pick) -> Option<usize> {
        pick.index(self.trackers.len())
    }

    fn tracker_new(&mut self, pick: Pick, epsilon: f64, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let valid = epsilon.is_finite() && epsilon > 0.0;
        expect.core = Some(if valid { Ok(()) } else { Err(RingError::InvalidEpsilon { epsilon }) });
        let mut out: *mut ring_tracker_t = ptr::null_mut();
        // SAFETY: NULL or live handle; out NULL or writable.
        let code = unsafe { ring::ring_tracker_new(ptr, epsilon, if out_null { ptr::null_mut() } else { &mut out }) };
        check_code("ring_tracker_new", code, &expect);
        if code == RING_OK {
            assert!(!out.is_null());
            let ring = shadow.unwrap();
            let loads = vec![0; ring.nodes().len()];
            self.trackers.push(TrackerHandle { ptr: out, ring, loads, balance: 1.0 + epsilon });
        } else {
            assert!(out.is_null(), "ring_tracker_new wrote on failure");
        }
    }

    fn tracker_acquire(&mut self, pick: Pick, key: &Bytes, nulls: Nulls) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (bytes, len) = key.get();
        let (index_null, id_null, id_len_null, probes_null) =
            (nulls.null(0), nulls.null(1), nulls.null(2), nulls.null(3));
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || index_null || id_null != id_len_null, RING_NULL_ARGUMENT);
        let key = key_of(&bytes, len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        if let Some(i) = chosen {
            let empty = self.trackers[i].ring.live_node_count() == 0;
            expect.core = Some(if empty { Err(RingError::EmptyRing) } else { Ok(()) });
        }
        let (mut index, mut id, mut id_len, mut probes) = (usize::MAX, ptr::null(), usize::MAX, u32::MAX);
        // SAFETY: NULL or a live tracker; key valid or NULL; outs NULL or writable.
        let code = unsafe {
            ring::ring_tracker_acquire(
                ptr,
                pointer(&bytes).cast(),
                len,
                if index_null { ptr::null_mut() } else { &mut index },
                if id_null { ptr::null_mut() } else { &mut id },
                if id_len_null { ptr::null_mut() } else { &mut id_len },
                if probes_null { ptr::null_mut() } else { &mut probes },
            )
        };
        check_code("ring_tracker_acquire", code, &expect);
        if code != RING_OK {
            assert!(index == usize::MAX && id.is_null() && probes == u32::MAX, "ring_tracker_acquire wrote on failure");
            return;
        }
        let tracker = &mut self.trackers[chosen.unwrap()];
        let ring = &tracker.ring;
        assert!(index < ring.nodes().len(), "acquire index {index} of {} nodes", ring.nodes().len());
        let key = key.unwrap();
        let live: Vec<usize> = {
            let mut all = vec![0; ring.live_node_count()];
            let found = ring.get_n_indices(&key, &mut all).unwrap();
            all[..found].to_vec()
        };
        assert!(live.contains(&index), "acquire chose node {index}, which cannot own keys");
        if !id_null {
            // SAFETY: valid until the next swap or free.
            assert_eq!(unsafe { returned_bytes(id, id_len) }, ring.nodes()[index].id().as_bytes());
        }
        if !probes_null {
            assert!(probes >= 1 && probes as usize <= live.len(), "{probes} probes over {} live nodes", live.len());
            if probes == 1 {
                assert_eq!(index, ring.get_index(&key).unwrap(), "one probe but not the key's owner");
            }
        }
        tracker.loads[index] += 1;
        // The header's capacity: max(1, ceil((1 + epsilon) * (total load + 1) * weight / total weight)),
        // where "total load + 1" is the total including this request and the total weight
        // counts only nodes that can own keys (those some preference list reaches).
        // Either evaluation order.
        let total: u64 = tracker.loads.iter().sum();
        let weight = ring.nodes()[index].weight();
        let mut reachable = vec![0; ring.live_node_count()];
        let found = ring.get_n_indices(&key, &mut reachable).unwrap();
        let total_weight: f64 = reachable[..found].iter().map(|&i| ring.nodes()[i].weight()).sum();
        let share = weight / total_weight;
        let cap_a = ((tracker.balance * total as f64 * share).ceil() as u64).max(1);
        let cap_b = ((tracker.balance * total as f64 * weight / total_weight).ceil() as u64).max(1);
        assert!(
            tracker.loads[index] <= cap_a.max(cap_b),
            "node {index} has load {} over its capacity {cap_a}",
            tracker.loads[index]
        );
        // SAFETY: a live tracker.
        assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, total);
    }

    fn tracker_release(&mut self, pick: Pick, id: &ReleaseId) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (bytes, len) = match (id, chosen) {
            (ReleaseId::Node(i), Some(t)) if !self.trackers[t].ring.nodes().is_empty() => {
                let nodes = self.trackers[t].ring.nodes();
                let id = nodes[usize::from(*i) % nodes.len()].id().as_bytes().to_vec();
                let len = id.len();
                (Some(id), len)
            }
            (ReleaseId::Other(bytes), _) => bytes.get(),
            _ => (Some(b"a".to_vec()), 1),
        };
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        let text = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let mut position = None;
        if let (Some(t), Some(text)) = (chosen, &text) {
            let tracker = &self.trackers[t];
            position = tracker.ring.position(text);
            expect.core = Some(match position {
                None => Err(RingError::UnknownNode { id: text.clone() }),
                Some(p) if tracker.loads[p] == 0 => Err(RingError::NoLoad { id: text.clone() }),
                Some(_) => Ok(()),
            });
        }
        // SAFETY: NULL or a live tracker; id valid for `len` bytes or NULL.
        let code = unsafe { ring::ring_tracker_release(ptr, pointer(&bytes), len) };
        check_code("ring_tracker_release", code, &expect);
        if code == RING_OK {
            let tracker = &mut self.trackers[chosen.unwrap()];
            tracker.loads[position.unwrap()] -= 1;
            // SAFETY: a live tracker.
            assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, tracker.loads.iter().sum::<u64>());
        }
    }

    fn tracker_swap(&mut self, pick: Pick, ring_pick: Pick) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (ring_ptr, shadow) = self.ring(ring_pick);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || ring_ptr.is_null(), RING_NULL_ARGUMENT);
        expect.core = Some(Ok(()));
        // SAFETY: NULL or live handles.
        let code = unsafe { ring::ring_tracker_swap(ptr, ring_ptr) };
        check_code("ring_tracker_swap", code, &expect);
        if code == RING_OK {
            let tracker = &mut self.trackers[chosen.unwrap()];
            let shadow = shadow.unwrap();
            let by_id: HashMap<&str, u64> =
                tracker.ring.nodes().iter().map(Node::id).zip(tracker.loads.iter().copied()).collect();
            let loads = shadow.nodes().iter().map(|n| by_id.get(n.id()).copied().unwrap_or(0)).collect();
            tracker.loads = loads;
            tracker.ring = shadow;
            // SAFETY: a live tracker.
            assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, tracker.loads.iter().sum::<u64>());
        }
    }

    fn tracker_load(&mut self, pick: Pick, index: Index, nulls: Nulls) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let count = chosen.map_or(0, |i| self.trackers[i].loads.len());
        let index = index.get(count);
        let out_null = nulls.null(0);
        let in_range = index < count;
        let mut load = u64::MAX;
        // SAFETY: NULL or a live tracker; out NULL or writable.
        let code = unsafe { ring::ring_tracker_load(ptr, index, if out_null { ptr::null_mut() } else { &mut load }) };
        check_index_code("ring_tracker_load", code, ptr.is_null() || out_null, in_range);
        if code == RING_OK {
            assert_eq!(load, self.trackers[chosen.unwrap()].loads[index]);
        } else {
            assert_eq!(load, u64::MAX, "ring_tracker_load wrote on failure");
        }
        // SAFETY: NULL is allowed.
        assert_eq!(unsafe { ring::ring_tracker_total_load(ptr::null()) }, 0);
    }
}

/// [`check_code`] for the index accessors: `RING_NULL_ARGUMENT` when
/// `null` (a NULL handle or out-pointer), `RING_INDEX_OUT_OF_RANGE` unless
/// `in_range` (it has no `RingError`), else `RING_OK`.
fn check_index_code(function: &str, code: ring_result, null: bool, in_range: bool) {
    let mut expect = Expect::new();
    expect.problem_if(null, RING_NULL_ARGUMENT);
    expect.problem_if(!in_range, RING_INDEX_OUT_OF_RANGE);
    if expect.problems.is_empty() {
        expect.core = Some(Ok(()));
    }
    check_code(function, code, &expect);
}
