//! Keys from C: the key arrays of batch calls (`keys[i]` pointing to
//! `key_lens[i]` bytes, a NULL key allowed with length 0, as the empty key),
//! each checked before any is placed and read where it lies, never copied;
//! and the batch lookup over them. A single key is a pointer and a length,
//! read by `boundary::bytes`.

use crate::boundary::{boundary, bytes, non_null, out_slice};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::ring::{ring_ref, ring_t};

/// The `key_count` keys of a batch, every one checked first (a NULL key
/// with a non-zero length is `RING_NULL_ARGUMENT`, naming `keys[i]`), then
/// yielded in order, each read where it lies when the iterator reaches it.
///
/// # Safety
/// `keys` and `key_lens` hold `key_count` elements (they are not read when
/// it is 0), and each non-NULL `keys[i]` is valid for reads of
/// `key_lens[i]` bytes for `'a`.
pub(crate) unsafe fn key_array<'a>(
    keys: *const *const u8,
    key_lens: *const usize,
    key_count: usize,
) -> Result<impl Iterator<Item = &'a [u8]>, ring_result> {
    // Only a NULL key needs its length read: one is allowed with length 0.
    for i in 0..key_count {
        // SAFETY: the caller guarantees `key_count` keys and lengths.
        if unsafe { (*keys.add(i)).is_null() } {
            // SAFETY: as above.
            unsafe { bytes(std::ptr::null(), *key_lens.add(i), format_args!("keys[{i}]")) }?;
        }
    }
    // SAFETY: checked above: each key is valid for its length (or empty and NULL).
    Ok((0..key_count).map(move |i| unsafe {
        let (key, len) = (*keys.add(i), *key_lens.add(i));
        if key.is_null() { &[][..] } else { std::slice::from_raw_parts(key, len) }
    }))
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
        // SAFETY: `key_count` keys and lengths, each key valid for its length, by contract.
        let slices = unsafe { key_array(keys, key_lens, key_count) }?;
        // SAFETY: writable for `out_indices_len >= key_count` elements by contract.
        let out = unsafe { out_slice(out_indices, key_count, "out_indices") }?;
        ring.get_indices(slices, out).map_err(core_error)?;
        Ok(())
    })
}
