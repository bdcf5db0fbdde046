//! C ABI for shardring: `libring.so` / `libring.a`, declared in
//! `include/ring.h` (generated from these sources by cbindgen).
//!
//! Conventions (also in the README's "C API" section, after rustls-ffi):
//! - Every C type is opaque. A `ring_t` is an immutable, reference-counted
//!   ring snapshot, safe to read from many threads at once.
//! - Fallible functions return a `ring_result` (`RING_OK` = 0); outputs go
//!   through out-parameters, written only on success.
//! - Inputs come before outputs; every buffer is followed by its `size_t`
//!   length; `const` pointers are never written through.
//! - No Rust panic unwinds into C: every export catches it and returns
//!   `RING_PANIC`. NULL pointers return `RING_NULL_ARGUMENT`.
//! - After a failure, `ring_last_error()` gives a message naming the bad
//!   value, for the calling thread.
//!
//! No placement logic lives here: every call converts arguments, calls the
//! `shardring` crate and maps its errors.
#![allow(non_camel_case_types)]

mod ring;
mod analysis;
mod bounded;
mod follower;
mod transition;

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use shardring::RingError;

pub use analysis::*;
pub use bounded::*;
pub use follower::*;
pub use ring::*;
pub use transition::*;

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
        _ => "unknown result code\0",
    };
    text.as_ptr().cast()
}

/// The code's name as the header spells it (`"RING_EMPTY_RING"`), the same
/// string as the Node binding's `error.code`: static, NUL-terminated, never
/// NULL (`"RING_UNKNOWN_RESULT"` for a value no code has).
#[unsafe(no_mangle)]
pub extern "C" fn ring_result_name(result: u32) -> *const c_char {
    const NAMES: [&CStr; 24] = [
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
    ];
    NAMES.get(result as usize).copied().unwrap_or(c"RING_UNKNOWN_RESULT").as_ptr()
}

/// The library's version, `"MAJOR.MINOR.PATCH"` (the crate version it was
/// built from): static, NUL-terminated, never NULL. Compare it with the
/// header's `RING_VERSION_MAJOR`, `RING_VERSION_MINOR` and
/// `RING_VERSION_PATCH` to check that a program runs against the library it
/// was compiled for; the SONAME (`libring.so.0.MINOR` before 1.0,
/// `libring.so.MAJOR` after) changes whenever the ABI does.
#[unsafe(no_mangle)]
pub extern "C" fn ring_version() -> *const c_char {
    VERSION.as_ptr()
}

const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(version) => version,
    Err(_) => panic!("the crate version holds no NUL"),
};

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

/// Runs an export's body, turning a panic into `RING_PANIC`.
pub(crate) fn boundary(body: impl FnOnce() -> Result<(), ring_result>) -> ring_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => RING_OK,
        Ok(Err(code)) => code,
        Err(_) => fail(RING_PANIC, format_args!("internal panic caught at the C boundary")),
    }
}

/// Fails with `RING_NULL_ARGUMENT`, naming the argument, when a pointer is NULL.
macro_rules! non_null {
    ($($name:ident),+) => {
        $(if $name.is_null() {
            return Err($crate::fail(
                $crate::ring_result::RING_NULL_ARGUMENT,
                format_args!("argument `{}` is NULL", stringify!($name)),
            ));
        })+
    };
}
pub(crate) use non_null;

/// A byte slice from a C pointer and length; a NULL pointer is allowed only
/// with length 0. `name` is formatted only for an error message (pass
/// `format_args!` for computed names: batch loops must not format per key).
///
/// # Safety
/// `ptr` must be NULL or valid for reads of `len` bytes for the returned lifetime.
pub(crate) unsafe fn bytes<'a>(
    ptr: *const u8,
    len: usize,
    name: impl std::fmt::Display,
) -> Result<&'a [u8], ring_result> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(fail(RING_NULL_ARGUMENT, format_args!("argument `{name}` is NULL with length {len}")));
    }
    // SAFETY: non-NULL, and the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A UTF-8 string from a C pointer and length (see [`bytes`]).
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn text<'a>(
    ptr: *const c_char,
    len: usize,
    name: impl std::fmt::Display,
) -> Result<&'a str, ring_result> {
    // SAFETY: forwarded contract.
    let raw = unsafe { bytes(ptr.cast(), len, &name) }?;
    std::str::from_utf8(raw).map_err(|e| fail(RING_INVALID_UTF8, format_args!("`{name}` is not valid UTF-8: {e}")))
}

/// A mutable slice from a C output buffer; NULL is allowed only with length 0.
///
/// # Safety
/// `ptr` must be NULL or valid for writes of `len` elements for the returned lifetime.
pub(crate) unsafe fn out_slice<'a, T>(ptr: *mut T, len: usize, name: &str) -> Result<&'a mut [T], ring_result> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("argument `{name}` is NULL with length {len}")));
    }
    // SAFETY: non-NULL, and the caller guarantees `len` writable elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Writes a string owned by a live handle as pointer + length (not
/// NUL-terminated) through two out-pointers checked non-NULL by the caller.
///
/// # Safety
/// Both pointers must be non-NULL and writable.
pub(crate) unsafe fn write_str(out_ptr: *mut *const c_char, out_len: *mut usize, text: &str) {
    // SAFETY: forwarded contract.
    unsafe {
        write(out_ptr, text.as_ptr().cast());
        write(out_len, text.len());
    }
}

/// Writes `value` through an out-pointer checked non-NULL by the caller.
///
/// # Safety
/// `ptr` must be non-NULL and writable.
pub(crate) unsafe fn write<T>(ptr: *mut T, value: T) {
    // SAFETY: forwarded contract.
    unsafe { ptr.write(value) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_name_is_its_header_spelling() {
        for code in 0..=23u32 {
            // SAFETY: `ring_result` is `repr(u32)` with every value in 0..=23 a variant.
            let result: ring_result = unsafe { std::mem::transmute(code) };
            // SAFETY: `ring_result_name` returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(ring_result_name(code)) };
            assert_eq!(name.to_str().unwrap(), format!("{result:?}"));
        }
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(ring_result_name(24)) }, c"RING_UNKNOWN_RESULT");
    }

    #[test]
    fn version_is_the_crate_version() {
        // SAFETY: `ring_version` returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(ring_version()) }.to_str().unwrap();
        assert_eq!(version, env!("CARGO_PKG_VERSION"));
        let header = include_str!("../../include/ring.h");
        for (name, value) in [
            ("MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
            ("MINOR", env!("CARGO_PKG_VERSION_MINOR")),
            ("PATCH", env!("CARGO_PKG_VERSION_PATCH")),
        ] {
            let line = format!("#define RING_VERSION_{name} {value}\n");
            assert!(header.contains(&line), "include/ring.h lacks {line:?}: regenerate it");
        }
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
