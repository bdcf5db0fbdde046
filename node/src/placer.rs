//! The fast path of `Ring.get`: a plain Node-API function bound to one ring
//! snapshot, called without napi-rs's per-call dispatch (which costs about
//! 10x a raw Node-API call on this machine: ~380 ns against ~35 ns).
//! `shardring.js` caches one per ring and drops it when the ring mutates.

use std::ffi::{CString, c_void};
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::sys;
use napi::{Env, Error, Result, Status};

use crate::keys::{KeyError, with_key_bytes};

/// Name of the function as JavaScript sees it.
const NAME: &std::ffi::CStr = c"place";

/// A native `(key) => index` function over a ring snapshot.
pub(crate) fn placer(env: &Env, ring: Arc<shardring::Ring>) -> Result<Unknown<'_>> {
    {
        let data = Arc::into_raw(ring).cast_mut().cast::<c_void>();
        let mut function = ptr::null_mut();
        // SAFETY: a live env; `NAME` is NUL-terminated; `data` is a leaked Arc
        // that the finaliser below releases exactly once.
        let status = unsafe {
            sys::napi_create_function(
                env.raw(),
                NAME.as_ptr(),
                NAME.count_bytes() as isize,
                Some(place),
                data,
                &mut function,
            )
        };
        // SAFETY: as above; on success the function now owns `data`.
        let finalised = status == sys::Status::napi_ok
            && unsafe {
                sys::napi_add_finalizer(env.raw(), function, data, Some(release), ptr::null_mut(), ptr::null_mut())
            } == sys::Status::napi_ok;
        if !finalised {
            // SAFETY: `data` came from `Arc::into_raw` above and nothing else took it.
            drop(unsafe { Arc::from_raw(data.cast::<shardring::Ring>()) });
            return Err(Error::new(Status::GenericFailure, "could not create the placement function"));
        }
        // SAFETY: `function` is a live value of this env.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), function) })
    }
}

/// Drops the snapshot a placement function held.
unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the Arc leaked in `Ring::placer`; Node calls this once.
    drop(unsafe { Arc::from_raw(data.cast::<shardring::Ring>()) });
}

/// `place(key)`: the index of the node owning `key` (a string as UTF-8, a
/// Buffer or Uint8Array as is). Throws `TypeError` for other keys and an
/// `Error` with the core's code (`RING_EMPTY_RING`) when it cannot place.
unsafe extern "C" fn place(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 1usize;
    let mut argv = [ptr::null_mut(); 1];
    let mut data = ptr::null_mut();
    // SAFETY: called by Node with a live env and callback info; `argv` holds
    // `argc` slots (missing arguments come back as `undefined`).
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok {
        return ptr::null_mut();
    }
    // SAFETY: `data` is the snapshot this function was created with, alive
    // until its finaliser runs, which cannot happen during a call.
    let ring = unsafe { &*data.cast::<shardring::Ring>() };
    // SAFETY: a live env and value.
    let placed = std::panic::catch_unwind(|| unsafe { with_key_bytes(env, argv[0], |key| ring.get_index(key)) });
    let mut result = ptr::null_mut();
    match placed {
        Ok(Ok(Ok(index))) => {
            // SAFETY: a live env; `result` is writable.
            unsafe { sys::napi_create_uint32(env, index as u32, &mut result) };
            result
        }
        Ok(Ok(Err(error))) => throw(env, false, error.code(), &error.to_string()),
        Ok(Err(KeyError::Type(message))) => throw(env, true, "ERR_INVALID_ARG_TYPE", &message),
        Ok(Err(KeyError::Utf8(message))) => throw(env, false, "RING_INVALID_UTF8", &message),
        Err(_) => throw(env, false, "RING_PANIC", "internal panic caught at the Node boundary"),
    }
}

/// Throws an `Error` (or `TypeError`) with `code`; returns NULL for napi.
fn throw(env: sys::napi_env, type_error: bool, code: &str, message: &str) -> sys::napi_value {
    let code = CString::new(code).unwrap_or_default();
    let message = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // SAFETY: a live env and NUL-terminated strings.
    unsafe {
        if type_error {
            sys::napi_throw_type_error(env, code.as_ptr(), message.as_ptr());
        } else {
            sys::napi_throw_error(env, code.as_ptr(), message.as_ptr());
        }
    }
    ptr::null_mut()
}
