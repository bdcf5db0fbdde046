//! The handoff protocol from C: a key's route during a transition and the
//! Redis guard a client runs on a moving key's old owner (`core/SPEC.md`,
//! *Handoff*).

use std::ffi::c_char;

use shardring::handoff::{MOVED_REPLY, REDIS_GUARD, REDIS_GUARD_SHA1};

use crate::boundary::{boundary, bytes, non_null, write};
use crate::error::core_error;
use crate::error::ring_result;
use crate::transition::{ring_transition_t, transition_ref};

/// Where `key` is and where it goes: writes its owner under the old ring
/// (active and draining members) to `*out_old_id`/`*out_old_len`, its owner
/// under the new ring (active and warming members) to
/// `*out_new_id`/`*out_new_len` (pointers into the transition, valid while
/// it lives, not NUL-terminated), and to `*out_moving` whether they differ.
/// Send a moving key's commands through `ring_redis_guard()` on the old
/// owner, then to the new owner when the guard answers
/// `ring_redis_moved_reply()`; a key that does not move to its owner.
/// When one ring has no node that can own keys, both are the other's owner.
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING` (neither ring can own keys).
///
/// # Safety
/// `transition` live; `key` valid for `key_len` bytes; the outputs writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_route(
    transition: *const ring_transition_t,
    key: *const u8,
    key_len: usize,
    out_old_id: *mut *const c_char,
    out_old_len: *mut usize,
    out_new_id: *mut *const c_char,
    out_new_len: *mut usize,
    out_moving: *mut bool,
) -> ring_result {
    boundary(|| {
        non_null!(out_old_id, out_old_len, out_new_id, out_new_len, out_moving);
        // SAFETY: live handle and readable key by contract.
        let (transition, key) = unsafe { (transition_ref(transition)?, bytes(key, key_len, "key")?) };
        let route = transition.route(key).map_err(core_error)?;
        // SAFETY: checked non-NULL above; writable by contract.
        unsafe {
            write(out_old_id, route.old.id().as_ptr().cast());
            write(out_old_len, route.old.id().len());
            write(out_new_id, route.new.id().as_ptr().cast());
            write(out_new_len, route.new.id().len());
            write(out_moving, route.is_moving());
        }
        Ok(())
    })
}

/// `text` and a NUL, at compile time (no allocation a memory checker would
/// report as never freed); a NUL inside `text` fails the build.
const fn with_nul<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    assert!(bytes.len() + 1 == N, "N is the text's length and its NUL");
    let mut out = [0u8; N];
    let mut i = 0;
    while i < bytes.len() {
        assert!(bytes[i] != 0, "the text holds no NUL");
        out[i] = bytes[i];
        i += 1;
    }
    out
}

static GUARD: [u8; REDIS_GUARD.len() + 1] = with_nul(REDIS_GUARD);
static GUARD_SHA1: [u8; REDIS_GUARD_SHA1.len() + 1] = with_nul(REDIS_GUARD_SHA1);
static MOVED: [u8; MOVED_REPLY.len() + 1] = with_nul(MOVED_REPLY);

/// The Lua source of the Redis handoff guard: static, NUL-terminated, never
/// NULL. Call it on a moving key's old owner as
/// `EVALSHA <ring_redis_guard_sha1()> 1 <key> <command> [arguments after the key]`
/// (or `EVAL` with this source): the command runs there when the key is
/// there, else the reply is the error `ring_redis_moved_reply()` and nothing
/// ran. Only commands naming one key, first, may go through it.
#[unsafe(no_mangle)]
pub extern "C" fn ring_redis_guard() -> *const c_char {
    GUARD.as_ptr().cast()
}

/// SHA-1 of `ring_redis_guard()`, 40 lowercase hex digits: static,
/// NUL-terminated, never NULL; the name `EVALSHA` takes.
#[unsafe(no_mangle)]
pub extern "C" fn ring_redis_guard_sha1() -> *const c_char {
    GUARD_SHA1.as_ptr().cast()
}

/// The error message the guard answers when the key is not on the server,
/// `"SHARDRING_MOVED"`: static, NUL-terminated, never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn ring_redis_moved_reply() -> *const c_char {
    MOVED.as_ptr().cast()
}
