//! The handoff protocol from C: a key's route during a transition and the
//! Redis guard a client runs on a moving key's old owner (`core/SPEC.md`,
//! *Handoff*).

use std::ffi::c_char;

use shardring::handoff::{MOVED_REPLY, REDIS_GUARD, REDIS_GUARD_SHA1, TRYAGAIN_REPLY};

use crate::boundary::{boundary, bytes, non_null, out_slice, write};
use crate::error::ring_result::{self, RING_BUFFER_TOO_SMALL};
use crate::error::{core_error, fail};
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

/// The bytes `ring_transition_handoff_mark` writes: `shardring:handoff:`,
/// 16 hex digits and a NUL.
pub const RING_HANDOFF_MARK_LEN: usize = 35;

/// Writes the transition's handoff mark, the key the mover sets on each old
/// owner before it moves keys (`shardring:handoff:` and the transition's
/// fingerprint in 16 lowercase hex digits), and a NUL into `out_mark`, a
/// buffer of `len` bytes. Pass it as the guard's second key. Errors:
/// `RING_NULL_ARGUMENT`, `RING_BUFFER_TOO_SMALL` when `len` is below
/// `RING_HANDOFF_MARK_LEN` (nothing written).
///
/// # Safety
/// `transition` live; `out_mark` writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_transition_handoff_mark(
    transition: *const ring_transition_t,
    out_mark: *mut c_char,
    len: usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_mark);
        // SAFETY: live handle by contract.
        let mark = unsafe { transition_ref(transition)? }.handoff_mark();
        if len < RING_HANDOFF_MARK_LEN {
            return Err(fail(
                RING_BUFFER_TOO_SMALL,
                format_args!("out_mark holds {len} bytes; the mark takes {RING_HANDOFF_MARK_LEN} (34 and a NUL)"),
            ));
        }
        // SAFETY: writable for `len >= RING_HANDOFF_MARK_LEN` bytes by contract.
        let out = unsafe { out_slice(out_mark.cast::<u8>(), RING_HANDOFF_MARK_LEN, "out_mark")? };
        out[..mark.len()].copy_from_slice(mark.as_bytes());
        out[mark.len()] = 0;
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
static TRYAGAIN: [u8; TRYAGAIN_REPLY.len() + 1] = with_nul(TRYAGAIN_REPLY);

/// The Lua source of the Redis handoff guard: static, NUL-terminated, never
/// NULL. Call it on a moving key's old owner as
/// `EVALSHA <ring_redis_guard_sha1()> 2 <key> <mark> <command> [arguments after the key]`
/// (or `EVAL` with this source), `mark` from `ring_transition_handoff_mark`:
/// the command runs there unless the key is missing and the mover has set
/// the mark; then the reply is the error `ring_redis_moved_reply()` (or
/// `ring_redis_tryagain_reply()`, while the mover holds the key in doubt)
/// and nothing ran. Only commands naming one key, first, may go through it.
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

/// The error message the guard answers when the key is not on the server
/// and the mover holds it in doubt (a `MIGRATE` of it got no answer),
/// `"SHARDRING_TRYAGAIN"`: static, NUL-terminated, never NULL. Nothing ran;
/// send the guarded command again after a short wait.
#[unsafe(no_mangle)]
pub extern "C" fn ring_redis_tryagain_reply() -> *const c_char {
    TRYAGAIN.as_ptr().cast()
}
