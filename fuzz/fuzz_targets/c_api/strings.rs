//! Byte strings across the C boundary: the pointer passed for an argument's
//! bytes, the text or key a (bytes, length) argument means, and the bytes
//! behind a (pointer, length) pair the library returned.

use std::ffi::c_char;
use std::ptr;

use ring::ring_result::{self, *};

/// Bytes behind a (pointer, length) pair that the library returned.
///
/// # Safety
/// `ptr` must be valid for `len` bytes.
pub(crate) unsafe fn returned_bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    assert!(!ptr.is_null() || len == 0, "NULL string of length {len}");
    if len == 0 {
        return &[];
    }
    // SAFETY: forwarded.
    unsafe { std::slice::from_raw_parts(ptr.cast(), len) }
}

pub(crate) fn pointer(bytes: &Option<Vec<u8>>) -> *const c_char {
    bytes.as_ref().map_or(ptr::null(), |b| b.as_ptr().cast())
}

/// The text a (bytes, length) argument means, or the problem it is.
pub(crate) fn text_of(bytes: &Option<Vec<u8>>, len: usize) -> Result<String, ring_result> {
    match bytes {
        None if len > 0 => Err(RING_NULL_ARGUMENT),
        None => Ok(String::new()),
        Some(b) => String::from_utf8(b.clone()).map_err(|_| RING_INVALID_UTF8),
    }
}

/// The key bytes a (bytes, length) argument means, `None` for NULL with a length.
pub(crate) fn key_of(bytes: &Option<Vec<u8>>, len: usize) -> Option<Vec<u8>> {
    match bytes {
        None if len > 0 => None,
        None => Some(Vec::new()),
        Some(b) => Some(b.clone()),
    }
}
