//! `ring_transition_t`: the read and write sets of a ring whose members are
//! warming up or draining (`core/SPEC.md`, *Transitions*).

use std::ffi::c_char;
use std::sync::Arc;

use shardring::{NodeState, RingConfig, Transition};

use crate::boundary::{boundary, bytes, free_handle, handle_ref, into_handle, non_null, out_slice, text, write};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::ring::ring_t;
use crate::ring::{ring_shared, shared_handle};

/// `ring_transition_ring`: the ring of the active members (reads first).
pub const RING_TRANSITION_READ: u32 = 0;
/// `ring_transition_ring`: the ring of the active and draining members (where keys are now).
pub const RING_TRANSITION_OLD: u32 = 1;
/// `ring_transition_ring`: the ring of the active and warming members (where keys go).
pub const RING_TRANSITION_NEW: u32 = 2;

/// `ring_transition_state`: takes reads and writes.
pub const RING_STATE_ACTIVE: u32 = 0;
/// `ring_transition_state`: joining; takes the writes of the keys it will own, no reads.
pub const RING_STATE_WARMING: u32 = 1;
/// `ring_transition_state`: leaving; no writes, reads as a fallback.
pub const RING_STATE_DRAINING: u32 = 2;

/// A ring in transition. Create with `ring_transition_new_from_json`,
/// `ring_transition_between` or `ring_follower_transition`; release with
/// `ring_transition_free`. Immutable; safe to read from many threads.
pub struct ring_transition_t {
    transition: Arc<Transition>,
}

/// # Safety
/// `handle` must be NULL or a live transition handle.
pub(crate) unsafe fn transition_ref<'a>(handle: *const ring_transition_t) -> Result<&'a Transition, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "transition")?.transition })
}

/// A new handle over a shared transition.
pub(crate) fn transition_handle(transition: Arc<Transition>) -> *mut ring_transition_t {
    into_handle(ring_transition_t { transition })
}

/// Builds a transition from a JSON ring config (`json_len` bytes of UTF-8)
/// whose nodes may carry `"state"`: `"active"` (the default), `"warming"`
/// or `"draining"`. On success writes a new handle to `*out_transition`.
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_INVALID_CONFIG`,
/// `RING_UNSUPPORTED_FORMAT` and `ring_new_from_json`'s node errors.
///
/// # Safety
/// `json` valid for `json_len` bytes; `out_transition` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_new_from_json(
    json: *const c_char,
    json_len: usize,
    out_transition: *mut *mut ring_transition_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_transition);
        // SAFETY: readable for its length by contract.
        let json = unsafe { text(json, json_len, "json")? };
        let config = RingConfig::from_json(json).map_err(core_error)?;
        let transition = Transition::from_config(&config).map_err(core_error)?;
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_transition, transition_handle(Arc::new(transition))) };
        Ok(())
    })
}

/// The transition from ring `from` to ring `to`: members only in `from`
/// drain, members only in `to` warm up. Errors: `RING_NULL_ARGUMENT`,
/// `RING_ALGORITHM_MISMATCH`, `RING_SEED_MISMATCH`.
///
/// # Safety
/// `from` and `to` must be live handles; `out_transition` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_between(
    from: *const ring_t,
    to: *const ring_t,
    out_transition: *mut *mut ring_transition_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_transition);
        // SAFETY: live handles by contract.
        let (from, to) = unsafe { (ring_shared(from)?, ring_shared(to)?) };
        let transition = Transition::between(&from, &to).map_err(core_error)?;
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_transition, transition_handle(Arc::new(transition))) };
        Ok(())
    })
}

/// Writes one set of node ids (pointers into the transition, valid while
/// the handle lives) and its size.
///
/// # Safety
/// The output arrays writable for `capacity` elements, `out_count` writable.
unsafe fn write_set(
    nodes: Vec<&shardring::Node>,
    out_ids: *mut *const c_char,
    out_id_lens: *mut usize,
    capacity: usize,
    out_count: *mut usize,
) -> Result<(), ring_result> {
    if nodes.len() > capacity {
        return Err(fail(
            RING_BUFFER_TOO_SMALL,
            format_args!("{} nodes need a capacity of {}, got {capacity}", nodes.len(), nodes.len()),
        ));
    }
    // SAFETY: writable for `capacity >= nodes.len()` elements by contract.
    let (ids, lens) =
        unsafe { (out_slice(out_ids, nodes.len(), "out_ids")?, out_slice(out_id_lens, nodes.len(), "out_id_lens")?) };
    for ((id, len), node) in ids.iter_mut().zip(lens.iter_mut()).zip(&nodes) {
        *id = node.id().as_ptr().cast();
        *len = node.id().len();
    }
    // SAFETY: checked non-NULL by the caller; writable by contract.
    unsafe { write(out_count, nodes.len()) };
    Ok(())
}

/// Where to read `key`: the owner among the active members, then, when it
/// differs, the owner in the old ring (a draining fallback). Writes up to
/// `capacity` ids (2 always suffice; pointers into the transition, valid
/// while it lives) and their lengths, and the count to `*out_count`.
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`, `RING_BUFFER_TOO_SMALL`.
///
/// # Safety
/// `transition` live; `key` valid for `key_len` bytes; the arrays writable
/// for `capacity` elements; `out_count` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_read_nodes(
    transition: *const ring_transition_t,
    key: *const u8,
    key_len: usize,
    out_ids: *mut *const c_char,
    out_id_lens: *mut usize,
    capacity: usize,
    out_count: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_count);
        // SAFETY: live handle and readable key by contract.
        let (transition, key) = unsafe { (transition_ref(transition)?, bytes(key, key_len, "key")?) };
        let nodes = transition.read_nodes(key).map_err(core_error)?;
        // SAFETY: forwarded contract.
        unsafe { write_set(nodes, out_ids, out_id_lens, capacity, out_count) }
    })
}

/// Where to write `key`: the owner among the active members, then, when it
/// differs, the owner in the new ring (a warming member that will own it).
/// Outputs and errors as `ring_transition_read_nodes`.
///
/// # Safety
/// As `ring_transition_read_nodes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_write_nodes(
    transition: *const ring_transition_t,
    key: *const u8,
    key_len: usize,
    out_ids: *mut *const c_char,
    out_id_lens: *mut usize,
    capacity: usize,
    out_count: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_count);
        // SAFETY: live handle and readable key by contract.
        let (transition, key) = unsafe { (transition_ref(transition)?, bytes(key, key_len, "key")?) };
        let nodes = transition.write_nodes(key).map_err(core_error)?;
        // SAFETY: forwarded contract.
        unsafe { write_set(nodes, out_ids, out_id_lens, capacity, out_count) }
    })
}

/// Writes a new handle (release with `ring_free`) to one of the
/// transition's rings: `RING_TRANSITION_READ`, `RING_TRANSITION_OLD` or
/// `RING_TRANSITION_NEW`. Errors: `RING_NULL_ARGUMENT`,
/// `RING_INDEX_OUT_OF_RANGE` for another `which`.
///
/// # Safety
/// `transition` live; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_ring(
    transition: *const ring_transition_t,
    which: u32,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle by contract.
        let transition = unsafe { transition_ref(transition)? };
        let ring = match which {
            RING_TRANSITION_READ => transition.read_ring(),
            RING_TRANSITION_OLD => transition.old_ring(),
            RING_TRANSITION_NEW => transition.new_ring(),
            _ => {
                return Err(fail(
                    RING_INDEX_OUT_OF_RANGE,
                    format_args!("`which` {which} is not a RING_TRANSITION_* constant"),
                ));
            }
        };
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_ring, shared_handle(Arc::clone(ring))) };
        Ok(())
    })
}

/// Writes member `id`'s state (`RING_STATE_ACTIVE`, `RING_STATE_WARMING`,
/// `RING_STATE_DRAINING`) to `*out_state`. Errors: `RING_NULL_ARGUMENT`,
/// `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`.
///
/// # Safety
/// `transition` live; `id` valid for `id_len` bytes; `out_state` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_state(
    transition: *const ring_transition_t,
    id: *const c_char,
    id_len: usize,
    out_state: *mut u32,
) -> ring_result {
    boundary(|| {
        non_null!(out_state);
        // SAFETY: live handle and readable id by contract.
        let (transition, id) = unsafe { (transition_ref(transition)?, text(id, id_len, "id")?) };
        let state =
            transition.state(id).ok_or_else(|| core_error(shardring::RingError::UnknownNode { id: id.to_owned() }))?;
        let code = match state {
            NodeState::Active => RING_STATE_ACTIVE,
            NodeState::Warming => RING_STATE_WARMING,
            NodeState::Draining => RING_STATE_DRAINING,
        };
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_state, code) };
        Ok(())
    })
}

/// The fingerprint of the transition's config, states included (with every
/// member active, the ring's). 0 for NULL.
///
/// # Safety
/// `transition` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_fingerprint(transition: *const ring_transition_t) -> u64 {
    // SAFETY: NULL or live, by contract.
    unsafe { transition_ref(transition) }.map_or(0, Transition::fingerprint)
}

/// Releases a transition handle (rings taken from it stay valid). NULL is a no-op.
///
/// # Safety
/// `transition` must be NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_free(transition: *mut ring_transition_t) {
    // SAFETY: NULL or a live handle from transition_handle, released once by contract.
    unsafe { free_handle(transition) }
}
