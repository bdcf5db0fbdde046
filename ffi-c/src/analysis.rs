//! Ownership shares and ring diffs.

use std::ffi::c_char;

use shardring::RingDiff;

use crate::boundary::{boundary, free_handle, into_handle, non_null, out_slice, write, write_str};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::ring::ring_ref;
use crate::ring::ring_t;

/// Writes each node's exact share of the hash space (and so of uniformly
/// hashed keys), in [0, 1], to `out_shares[i]` for node index `i`; the shares
/// of nodes with weight > 0 sum to 1. `out_shares_len` must be at least
/// `ring_node_count(ring)`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_BUFFER_TOO_SMALL`.
///
/// # Safety
/// `ring` must be a live handle; `out_shares` writable for `out_shares_len` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_ownership(
    ring: *const ring_t,
    out_shares: *mut f64,
    out_shares_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: live handle by contract.
        let ring = unsafe { ring_ref(ring) }?;
        let nodes = ring.nodes().len();
        if out_shares_len < nodes {
            return Err(fail(
                RING_BUFFER_TOO_SMALL,
                format_args!("out_shares holds {out_shares_len} entries, the ring has {nodes} nodes"),
            ));
        }
        // SAFETY: writable for `out_shares_len >= nodes` elements by contract.
        let out = unsafe { out_slice(out_shares, nodes, "out_shares") }?;
        for (slot, (_, share)) in out.iter_mut().zip(ring.ownership()) {
            *slot = share;
        }
        Ok(())
    })
}

/// The exact difference between two rings: the moved share, the share moved
/// per (from, to) pair of nodes, and the arcs of hash positions that change
/// owner. Create with `ring_diff`, read with `ring_diff_*`, release with
/// `ring_diff_free`. Immutable; independent of the rings it was made from.
pub struct ring_diff_t {
    diff: RingDiff,
}

/// Compares `old_ring` and `new_ring` position by position (by node id) and writes a
/// new diff handle to `*out_diff`; release it with `ring_diff_free`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_SEED_MISMATCH` (the rings hash keys
/// differently), `RING_ALGORITHM_MISMATCH` (the rings use different
/// algorithms), `RING_EMPTY_RING` (either ring has no points).
///
/// # Safety
/// `old` and `new` must be live handles; `out_diff` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff(
    old_ring: *const ring_t,
    new_ring: *const ring_t,
    out_diff: *mut *mut ring_diff_t,
) -> ring_result {
    boundary(|| {
        non_null!(old_ring, new_ring, out_diff);
        // SAFETY: live handles by contract.
        let diff = unsafe { ring_ref(old_ring)?.diff(ring_ref(new_ring)?) }.map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_diff, into_handle(ring_diff_t { diff })) };
        Ok(())
    })
}

/// Frees a diff. NULL is a no-op.
///
/// # Safety
/// `diff` must be NULL or a diff from `ring_diff`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_free(diff: *mut ring_diff_t) {
    // SAFETY: NULL or a handle from `ring_diff`, freed once by contract.
    unsafe { free_handle(diff) }
}

/// Fraction of the hash space (of uniformly hashed keys) whose owner
/// differs, in [0, 1]; NaN for NULL.
///
/// # Safety
/// `diff` must be NULL or a live diff.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_moved_share(diff: *const ring_diff_t) -> f64 {
    // SAFETY: NULL or live, by contract.
    unsafe { diff.as_ref() }.map_or(f64::NAN, |d| d.diff.moved_share)
}

/// Number of moved arcs; 0 for NULL.
///
/// # Safety
/// `diff` must be NULL or a live diff.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_arc_count(diff: *const ring_diff_t) -> usize {
    // SAFETY: NULL or live, by contract.
    unsafe { diff.as_ref() }.map_or(0, |d| d.diff.arcs.len())
}

/// Moved arc `index`, in ring order: every key whose hash `h` has
/// `*out_start <= h <= *out_end` moves from node `from` to node `to` (ids as
/// pointer + length, NOT NUL-terminated, valid while the diff lives).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `diff` must be a live diff; every out-pointer writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_arc(
    diff: *const ring_diff_t,
    index: usize,
    out_start: *mut u64,
    out_end: *mut u64,
    out_from: *mut *const c_char,
    out_from_len: *mut usize,
    out_to: *mut *const c_char,
    out_to_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(diff, out_start, out_end, out_from, out_from_len, out_to, out_to_len);
        // SAFETY: live diff by contract.
        let arcs = unsafe { &(*diff).diff.arcs };
        let arc = arcs.get(index).ok_or_else(|| out_of_range("arc", index, arcs.len()))?;
        // SAFETY: every out-pointer is non-NULL and writable by contract.
        unsafe {
            write(out_start, arc.start);
            write(out_end, arc.end);
            write_str(out_from, out_from_len, &arc.from);
            write_str(out_to, out_to_len, &arc.to);
        }
        Ok(())
    })
}

/// Number of (from, to) flows; 0 for NULL.
///
/// # Safety
/// `diff` must be NULL or a live diff.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_flow_count(diff: *const ring_diff_t) -> usize {
    // SAFETY: NULL or live, by contract.
    unsafe { diff.as_ref() }.map_or(0, |d| d.diff.flows.len())
}

/// Flow `index` (largest first): `*out_share` of the hash space moves from
/// node `from` to node `to` (ids valid while the diff lives).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `diff` must be a live diff; every out-pointer writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_diff_flow(
    diff: *const ring_diff_t,
    index: usize,
    out_share: *mut f64,
    out_from: *mut *const c_char,
    out_from_len: *mut usize,
    out_to: *mut *const c_char,
    out_to_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(diff, out_share, out_from, out_from_len, out_to, out_to_len);
        // SAFETY: live diff by contract.
        let flows = unsafe { &(*diff).diff.flows };
        let flow = flows.get(index).ok_or_else(|| out_of_range("flow", index, flows.len()))?;
        // SAFETY: every out-pointer is non-NULL and writable by contract.
        unsafe {
            write(out_share, flow.share);
            write_str(out_from, out_from_len, &flow.from);
            write_str(out_to, out_to_len, &flow.to);
        }
        Ok(())
    })
}

fn out_of_range(what: &str, index: usize, count: usize) -> ring_result {
    fail(RING_INDEX_OUT_OF_RANGE, format_args!("{what} index {index} is out of range (the diff has {count})"))
}
