//! C ABI for shardring: `libring.so` / `libring.a`, declared in
//! `include/ring.h` (generated from these sources by cbindgen).
//!
//! Conventions (also in docs/c-api.md, *Conventions*, after rustls-ffi):
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

// Modules, each after the ones it imports: `error` (codes and messages),
// `boundary` (panics, NULLs, argument conversion), `options`
// (`ring_options_t`, read and converted), `ring` (the handle, its
// construction, lookups and derivations), `keys` (key arrays and the batch
// lookup), then `analysis`, `bounded` and `transition` over rings, and
// `follower` over rings and transitions, `handoff` over transitions, and
// `hot` (hot keys, hot sets, the near cache) over rings and followers.
// This root only declares and re-exports them: no module imports from it,
// so no module imports one that imports it. cbindgen writes include/ring.h
// in this order (a module's items in source order), so moving an item
// between modules moves it in the header.
mod error;
mod boundary;
mod options;
mod ring;
mod keys;
mod analysis;
mod bounded;
mod follower;
mod transition;
mod handoff;
mod hot;

use std::ffi::{CStr, c_char};

pub use analysis::*;
pub use boundary::RING_FINGERPRINT_HEX_LEN;
pub use bounded::*;
pub use error::*;
pub use follower::*;
pub use handoff::*;
pub use hot::*;
pub use keys::*;
pub use options::*;
pub use ring::*;
pub use transition::*;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
