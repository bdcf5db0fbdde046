//! `ring_result`, the codes every fallible export returns, their names and
//! messages, the calling thread's last error, and the one conversion from a
//! core error. Imports nothing from this crate: every other module sits on it.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};

use shardring::RingError;

/// Result code of every fallible `ring_*` function. Values are explicit and
/// never reused.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ring_result {
    /// Success.
    RING_OK = 0,
    /// A required pointer argument was NULL.
    RING_NULL_ARGUMENT = 1,
    /// A Rust panic was caught at the boundary (a bug in shardring; please report it).
    RING_PANIC = 2,
    /// A node id was empty.
    RING_EMPTY_ID = 3,
    /// Two nodes share an id (ids are compared as bytes).
    RING_DUPLICATE_ID = 4,
    /// A weight was NaN, infinite or negative, or one the algorithm cannot
    /// express (fractional ketama/nginx weights, jump weights other than 1).
    RING_INVALID_WEIGHT = 5,
    /// `vnodes` was 0.
    RING_ZERO_VNODES = 6,
    /// The ring would exceed its point limit (2^24 points).
    RING_TOO_MANY_POINTS = 7,
    /// Lookup on a ring with no points (no node with weight > 0).
    RING_EMPTY_RING = 8,
    /// A JSON config could not be read, or a parameter is invalid for the
    /// algorithm (an unknown algorithm, one it does not take, bad slot ranges).
    RING_INVALID_CONFIG = 9,
    /// A JSON config names a placement format this build does not implement.
    RING_UNSUPPORTED_FORMAT = 10,
    /// A node id, zone or JSON text was not valid UTF-8.
    RING_INVALID_UTF8 = 11,
    /// An index was not below the number of items (nodes, arcs, flows).
    RING_INDEX_OUT_OF_RANGE = 12,
    /// A node's zone was the empty string.
    RING_EMPTY_ZONE = 13,
    /// A node named for removal or re-weighting is not in the ring.
    RING_UNKNOWN_NODE = 14,
    /// Two rings compared by a diff have different seeds.
    RING_SEED_MISMATCH = 15,
    /// An output buffer was shorter than the result needs.
    RING_BUFFER_TOO_SMALL = 16,
    /// A Maglev table size was not prime, below the node count or above 2^24.
    RING_INVALID_TABLE_SIZE = 17,
    /// A ketama server id was not `host`, `host:port` or `[ipv6]:port`.
    RING_INVALID_ADDRESS = 18,
    /// A hash given to a `*_by_hash` call is wider than the algorithm's key hash.
    RING_HASH_OUT_OF_RANGE = 19,
    /// Two rings compared by a diff use different algorithms.
    RING_ALGORITHM_MISMATCH = 20,
    /// A bounded-loads epsilon was not finite and > 0.
    RING_INVALID_EPSILON = 21,
    /// A load release for a node whose load is already 0.
    RING_NO_LOAD = 22,
    /// A follower did not read its first ring, or reach a revision, in time.
    RING_TIMEOUT = 23,
    /// A follower's config file could not be read (missing, a directory,
    /// unreadable) or holds a config that is refused; `ring_last_error`
    /// names the path and why. The same name as Python's and Node's code.
    RING_FILE = 24,
    /// etcd refused a follower: a TLS failure (etcd's certificate not from
    /// the CA given, a client certificate refused or missing, TLS against a
    /// plain server or the reverse), a wrong user or password, or a role
    /// without the permission asked for; `ring_last_error` names the
    /// endpoint and the reason. Waiting does not help: the credentials, TLS
    /// settings or roles must change. The same name as Python's and Node's code.
    RING_REFUSED = 25,
}

use ring_result::*;

/// A static, NUL-terminated description of a result code (never NULL).
#[unsafe(no_mangle)]
pub extern "C" fn ring_result_str(result: u32) -> *const c_char {
    let text: &'static str = match result {
        0 => "ok\0",
        1 => "a required pointer argument is NULL\0",
        2 => "internal panic caught at the C boundary\0",
        3 => "node id is empty\0",
        4 => "duplicate node id\0",
        5 => "invalid weight for this algorithm\0",
        6 => "vnodes must be at least 1\0",
        7 => "too many points\0",
        8 => "ring has no points (no node with weight > 0)\0",
        9 => "invalid ring config or parameter\0",
        10 => "unsupported placement format version\0",
        11 => "invalid UTF-8\0",
        12 => "index out of range\0",
        13 => "zone is empty\0",
        14 => "unknown node\0",
        15 => "rings have different seeds\0",
        16 => "output buffer too small\0",
        17 => "invalid Maglev table size\0",
        18 => "invalid server address\0",
        19 => "hash out of range for this algorithm\0",
        20 => "rings use different algorithms\0",
        21 => "epsilon must be finite and > 0\0",
        22 => "node has no load to release\0",
        23 => "timed out waiting for the ring's source\0",
        24 => "the follower's config file cannot be read or is refused\0",
        25 => "etcd refused the client (TLS, authentication or permission)\0",
        _ => "unknown result code\0",
    };
    text.as_ptr().cast()
}

/// The code's name as the header spells it (`"RING_EMPTY_RING"`), the same
/// string as the Node binding's `error.code`: static, NUL-terminated, never
/// NULL (`"RING_UNKNOWN_RESULT"` for a value no code has).
#[unsafe(no_mangle)]
pub extern "C" fn ring_result_name(result: u32) -> *const c_char {
    const NAMES: [&CStr; 26] = [
        c"RING_OK",
        c"RING_NULL_ARGUMENT",
        c"RING_PANIC",
        c"RING_EMPTY_ID",
        c"RING_DUPLICATE_ID",
        c"RING_INVALID_WEIGHT",
        c"RING_ZERO_VNODES",
        c"RING_TOO_MANY_POINTS",
        c"RING_EMPTY_RING",
        c"RING_INVALID_CONFIG",
        c"RING_UNSUPPORTED_FORMAT",
        c"RING_INVALID_UTF8",
        c"RING_INDEX_OUT_OF_RANGE",
        c"RING_EMPTY_ZONE",
        c"RING_UNKNOWN_NODE",
        c"RING_SEED_MISMATCH",
        c"RING_BUFFER_TOO_SMALL",
        c"RING_INVALID_TABLE_SIZE",
        c"RING_INVALID_ADDRESS",
        c"RING_HASH_OUT_OF_RANGE",
        c"RING_ALGORITHM_MISMATCH",
        c"RING_INVALID_EPSILON",
        c"RING_NO_LOAD",
        c"RING_TIMEOUT",
        c"RING_FILE",
        c"RING_REFUSED",
    ];
    NAMES.get(result as usize).copied().unwrap_or(c"RING_UNKNOWN_RESULT").as_ptr()
}

/// The detailed message of the last failure on the calling thread, naming
/// the bad value (empty string when nothing failed yet). NUL-terminated,
/// owned by the library, valid until the next failing call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn ring_last_error() -> *const c_char {
    LAST_ERROR.with(|slot| slot.borrow().as_ptr())
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as the thread's last error and returns `code`. Cold
/// and out of line, with the message formatted here, so the success path of
/// every export stays small.
#[cold]
#[inline(never)]
pub(crate) fn fail(code: ring_result, message: std::fmt::Arguments<'_>) -> ring_result {
    let message = CString::new(message.to_string().replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = message);
    code
}

/// The one conversion from a core error to a result code (cold: errors only).
#[cold]
pub(crate) fn core_error(error: RingError) -> ring_result {
    let code = match &error {
        RingError::EmptyId { .. } => RING_EMPTY_ID,
        RingError::DuplicateId { .. } => RING_DUPLICATE_ID,
        RingError::InvalidWeight { .. } => RING_INVALID_WEIGHT,
        RingError::EmptyZone { .. } => RING_EMPTY_ZONE,
        RingError::UnknownNode { .. } => RING_UNKNOWN_NODE,
        RingError::SeedMismatch { .. } => RING_SEED_MISMATCH,
        RingError::ZeroVnodes => RING_ZERO_VNODES,
        RingError::TooManyPoints { .. } => RING_TOO_MANY_POINTS,
        RingError::EmptyRing => RING_EMPTY_RING,
        RingError::InvalidConfig { .. } => RING_INVALID_CONFIG,
        RingError::UnsupportedFormat { .. } => RING_UNSUPPORTED_FORMAT,
        RingError::InvalidTableSize { .. } => RING_INVALID_TABLE_SIZE,
        RingError::InvalidAddress { .. } => RING_INVALID_ADDRESS,
        RingError::HashOutOfRange { .. } => RING_HASH_OUT_OF_RANGE,
        RingError::AlgorithmMismatch { .. } => RING_ALGORITHM_MISMATCH,
        RingError::InvalidEpsilon { .. } => RING_INVALID_EPSILON,
        RingError::NoLoad { .. } => RING_NO_LOAD,
        // A variant added to the core without a code here: still an error, never a crash.
        _ => RING_PANIC,
    };
    fail(code, format_args!("{error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_name_is_its_header_spelling() {
        // The last code: a code added after it must move this line, and the
        // names table with it (its length is checked against this below).
        let last = ring_result::RING_REFUSED as u32;
        for code in 0..=last {
            // SAFETY: `ring_result` is `repr(u32)` with every value in 0..=last a variant.
            let result: ring_result = unsafe { std::mem::transmute(code) };
            // SAFETY: `ring_result_name` returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(ring_result_name(code)) };
            assert_eq!(name.to_str().unwrap(), format!("{result:?}"));
        }
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(ring_result_name(last + 1)) }, c"RING_UNKNOWN_RESULT");
    }

    #[test]
    fn core_codes_match_the_c_names() {
        let errors = [RingError::EmptyRing, RingError::ZeroVnodes, RingError::InvalidEpsilon { epsilon: 0.0 }];
        for error in errors {
            let name = error.code();
            let code = core_error(error) as u32;
            // SAFETY: a static NUL-terminated string.
            assert_eq!(unsafe { CStr::from_ptr(ring_result_name(code)) }.to_str().unwrap(), name);
        }
    }
}
