//! What every export runs inside: the boundary that turns a panic into
//! `RING_PANIC`, the NULL checks, and the conversions of C pointers and
//! lengths into slices and strings, and of results into out-parameters.

use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::fail;
use crate::error::ring_result::{self, *};

/// The bytes `ring_fingerprint_hex` and `ring_follower_fingerprint_hex` write:
/// 16 hexadecimal digits and a NUL.
pub const RING_FINGERPRINT_HEX_LEN: usize = 17;

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
            return Err($crate::error::fail(
                $crate::error::ring_result::RING_NULL_ARGUMENT,
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

/// Writes `fingerprint` as 16 lowercase hexadecimal digits, zero-padded, and
/// a NUL into a caller's buffer of `len` bytes (the text the CLI, Python's
/// `repr` and the other bindings print); nothing is written when `len` is
/// below [`RING_FINGERPRINT_HEX_LEN`].
///
/// # Safety
/// `ptr` must be NULL or valid for writes of `len` bytes.
pub(crate) unsafe fn write_fingerprint_hex(fingerprint: u64, ptr: *mut c_char, len: usize) -> Result<(), ring_result> {
    if len < RING_FINGERPRINT_HEX_LEN {
        return Err(fail(
            RING_BUFFER_TOO_SMALL,
            format_args!(
                "out_hex holds {len} bytes; a fingerprint takes {RING_FINGERPRINT_HEX_LEN} (16 hex digits and a NUL)"
            ),
        ));
    }
    // SAFETY: writable for `len` bytes by contract.
    let out = unsafe { out_slice(ptr.cast::<u8>(), RING_FINGERPRINT_HEX_LEN, "out_hex") }?;
    out[..16].copy_from_slice(format!("{fingerprint:016x}").as_bytes());
    out[16] = 0;
    Ok(())
}

/// Moves `value` to the heap and hands its pointer to C: how every boxed
/// handle (`ring_tracker_t`, `ring_diff_t`, the follower, transition, hot
/// keys, hot set, top and near cache handles) is made. `ring_t` is
/// reference-counted instead (`ring_clone`).
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Releases a handle made by [`into_handle`]; NULL is a no-op, and a panic
/// in the value's destructor stays on this side of the boundary.
///
/// # Safety
/// `handle` must be NULL or from [`into_handle`], released once and not
/// used afterwards.
pub(crate) unsafe fn free_handle<T>(handle: *mut T) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if !handle.is_null() {
            // SAFETY: from `into_handle` (`Box::into_raw`), released once by contract.
            drop(unsafe { Box::from_raw(handle) });
        }
    }));
}

/// The value behind a live handle, or `RING_NULL_ARGUMENT` naming the
/// argument `name` when it is NULL.
///
/// # Safety
/// `handle` must be NULL or a live handle for the returned lifetime.
pub(crate) unsafe fn handle_ref<'a, T>(handle: *const T, name: &str) -> Result<&'a T, ring_result> {
    if handle.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("argument `{name}` is NULL")));
    }
    // SAFETY: non-NULL, and the caller holds a live handle.
    Ok(unsafe { &*handle })
}
