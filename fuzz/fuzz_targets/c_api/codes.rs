//! Result codes: those `include/ring.h` lists for each function, what a
//! call must return ([`Expect`]), and the checks of a returned code against
//! both.

use std::ffi::CStr;

use ring::ring_result::{self, *};
use shardring::RingError;

/// Result codes functions return although `include/ring.h` does not list
/// them for that function: documentation bugs this target found. Remove an
/// entry once the header lists the code, so the check is strict again.
const UNDOCUMENTED: &[(&str, ring_result)] = &[];

/// What a call must return: `problems` are argument errors the C layer
/// detects (NULL pointers, bad UTF-8, short buffers); `core` is the Rust
/// API's result on the same inputs, when it could be computed.
pub(crate) struct Expect {
    pub(crate) problems: Vec<ring_result>,
    pub(crate) core: Option<Result<(), RingError>>,
}

impl Expect {
    pub(crate) fn new() -> Expect {
        Expect { problems: Vec::new(), core: None }
    }

    pub(crate) fn problem_if(&mut self, condition: bool, code: ring_result) {
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
        "ring_new_with_options" | "ring_new_with_options_sized" => &[
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
pub(crate) fn check_code(function: &str, code: ring_result, expect: &Expect) {
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

pub(crate) fn last_error() -> String {
    // SAFETY: ring_last_error returns a NUL-terminated string owned by the library.
    let text = unsafe { CStr::from_ptr(ring::ring_last_error()) };
    text.to_str().expect("ring_last_error() is UTF-8").to_owned()
}

/// [`check_code`] for the index accessors: `RING_NULL_ARGUMENT` when
/// `null` (a NULL handle or out-pointer), `RING_INDEX_OUT_OF_RANGE` unless
/// `in_range` (it has no `RingError`), else `RING_OK`.
pub(crate) fn check_index_code(function: &str, code: ring_result, null: bool, in_range: bool) {
    let mut expect = Expect::new();
    expect.problem_if(null, RING_NULL_ARGUMENT);
    expect.problem_if(!in_range, RING_INDEX_OUT_OF_RANGE);
    if expect.problems.is_empty() {
        expect.core = Some(Ok(()));
    }
    check_code(function, code, &expect);
}
