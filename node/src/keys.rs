//! Keys from JavaScript values: a string as its UTF-8 bytes, a Buffer or
//! Uint8Array as is; batches packed by `shardring.js` or by the caller; the
//! `hashKey` function. A string holding a lone surrogate has no UTF-8 bytes:
//! it throws `RING_INVALID_UTF8`, as in every binding, never hashed as U+FFFD.

use std::borrow::Cow;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{BigInt, Buffer, Uint8Array, Uint32Array, Utf16String};
use napi::{Either, Env, Error, JsValue, Result, Status, Task, Unknown, ValueType, sys};
use napi_derive::napi;

use shardring::{KeyBatch, RingError};

use crate::errors::{convert, invalid_utf8, js_type, range_error, shown_units, type_error, u64_value};

/// Why a value is not a key.
pub(crate) enum KeyError {
    /// Not a string, Buffer or Uint8Array: the `TypeError` message.
    Type(String),
    /// A string with a lone surrogate: the `RING_INVALID_UTF8` message.
    Utf8(String),
}

impl KeyError {
    /// Throws this as the JS error it stands for.
    pub(crate) fn throw(self, env: &Env) -> Error {
        match self {
            KeyError::Type(message) => type_error(env, message),
            KeyError::Utf8(message) => invalid_utf8(env, message),
        }
    }
}

/// Calls `place` with a key's bytes, reading a string through a stack
/// buffer when it fits (the `get` fast path, `placer.rs`, shares this).
///
/// Node-API's UTF-8 read turns a lone surrogate into U+FFFD, so when the
/// bytes hold U+FFFD (EF BF BD) the string is read again as UTF-16 to tell a
/// real U+FFFD from a lone surrogate; other keys pay one scan of their bytes.
///
/// # Safety
/// `env` and `key` must be live.
pub(crate) unsafe fn with_key_bytes<T>(
    env: sys::napi_env,
    key: sys::napi_value,
    place: impl FnOnce(&[u8]) -> T,
) -> std::result::Result<T, KeyError> {
    let mut buf = [0u8; 256];
    let mut len = 0usize;
    // SAFETY: napi writes at most `buf.len()` bytes, NUL included.
    if unsafe { sys::napi_get_value_string_utf8(env, key, buf.as_mut_ptr().cast(), buf.len(), &mut len) }
        == sys::Status::napi_ok
    {
        if len < buf.len() - 1 {
            // SAFETY: live env and string, by contract.
            unsafe { check_surrogates(env, key, &buf[..len]) }?;
            return Ok(place(&buf[..len]));
        }
        // Longer than the stack buffer: ask for the length, then read it all.
        // SAFETY: a NULL buffer makes napi report the length only.
        unsafe { sys::napi_get_value_string_utf8(env, key, ptr::null_mut(), 0, &mut len) };
        let mut text = vec![0u8; len + 1];
        // SAFETY: `text` holds `len + 1` bytes.
        unsafe { sys::napi_get_value_string_utf8(env, key, text.as_mut_ptr().cast(), text.len(), &mut len) };
        // SAFETY: live env and string, by contract.
        unsafe { check_surrogates(env, key, &text[..len]) }?;
        return Ok(place(&text[..len]));
    }
    let mut is_typed = false;
    // SAFETY: live env and value.
    unsafe { sys::napi_is_typedarray(env, key, &mut is_typed) };
    if is_typed {
        let (mut kind, mut length, mut bytes) = (0, 0usize, ptr::null_mut());
        // SAFETY: `key` is a typed array; the outputs are writable.
        unsafe {
            sys::napi_get_typedarray_info(
                env,
                key,
                &mut kind,
                &mut length,
                &mut bytes,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if kind != sys::TypedarrayType::uint8_array {
            return Err(KeyError::Type("key must be a string, Buffer or Uint8Array, not another typed array".into()));
        }
        let slice = if length == 0 {
            &[][..]
        } else {
            // SAFETY: a Uint8Array's data is valid for `length` bytes while the
            // value is alive, which it is for this call.
            unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), length) }
        };
        return Ok(place(slice));
    }
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: live env and value.
    unsafe { sys::napi_typeof(env, key, &mut kind) };
    let kind = js_type(ValueType::from(kind));
    Err(KeyError::Type(format!("key must be a string, Buffer or Uint8Array, not {kind}")))
}

/// `Err` when the string `key`, read as `utf8`, holds a lone surrogate.
///
/// # Safety
/// `env` and `key` (a string) must be live.
#[inline]
unsafe fn check_surrogates(env: sys::napi_env, key: sys::napi_value, utf8: &[u8]) -> std::result::Result<(), KeyError> {
    if !utf8.windows(3).any(|w| w == [0xEF, 0xBF, 0xBD]) {
        return Ok(());
    }
    // SAFETY: a live string value, by contract.
    let units = unsafe { <Utf16String as napi::bindgen_prelude::FromNapiValue>::from_napi_value(env, key) }
        .map_err(|e| KeyError::Type(e.reason.clone()))?;
    if char::decode_utf16(units.iter().copied()).all(|c| c.is_ok()) {
        return Ok(());
    }
    Err(KeyError::Utf8(format!("key \"{}\" is not valid UTF-16: it holds a lone surrogate", shown_units(&units))))
}

/// A key's bytes for `place`: a string as UTF-8, a Buffer or Uint8Array as
/// is; `TypeError` for another type, `RING_INVALID_UTF8` for a lone surrogate.
pub(crate) fn with_key<T>(env: &Env, key: Unknown<'_>, place: impl FnOnce(&[u8]) -> T) -> Result<T> {
    // SAFETY: `key` is a live value of this env.
    unsafe { with_key_bytes(env.raw(), key.raw(), place) }.map_err(|e| e.throw(env))
}

/// A packed batch over `bytes`; `RangeError` when the lengths overrun it.
pub(crate) fn packed<'a>(env: &Env, bytes: &'a [u8], lengths: &[u32]) -> Result<KeyBatch<'a>> {
    KeyBatch::from_lengths(Cow::Borrowed(bytes), lengths.iter().map(|&l| l as usize))
        .ok_or_else(|| range_error(env, format!("key lengths add up to more than the {} bytes packed", bytes.len())))
}

/// The packed-bytes arguments of `getIndices`: `TypeError` unless a
/// Uint8Array (or Buffer) and a Uint32Array.
pub(crate) fn packed_arguments(
    env: &Env,
    bytes: Unknown<'_>,
    lengths: Unknown<'_>,
) -> Result<(Uint8Array, Uint32Array)> {
    Ok((convert(env, bytes, "bytes", "a Uint8Array or Buffer")?, convert(env, lengths, "lengths", "a Uint32Array")?))
}

/// Owner indices of a batch, as `Uint32Array` elements.
pub(crate) fn place_batch(ring: &shardring::Ring, batch: &KeyBatch<'_>) -> std::result::Result<Vec<u32>, RingError> {
    let mut out = vec![0usize; batch.len()];
    ring.get_indices(batch.iter(), &mut out)?;
    Ok(out.into_iter().map(|i| i as u32).collect())
}

/// Unpacks a batch packed by `shardring.js`: one joined string with each
/// key's length in UTF-16 code units, or one buffer with each key's length
/// in bytes. Throws `RangeError` when the lengths add up to more than was
/// packed, `RING_INVALID_UTF8` naming the key holding a lone surrogate.
pub(crate) fn unpack<'a>(env: &Env, joined: &'a Either<Utf16String, Buffer>, lengths: &[u32]) -> Result<KeyBatch<'a>> {
    let overflow =
        |available: usize| range_error(env, format!("key lengths add up to more than the {available} units packed"));
    match joined {
        Either::A(text) => {
            let mut batch = KeyBatch::with_capacity(lengths.len(), 24);
            let mut start = 0usize;
            for (i, &length) in lengths.iter().enumerate() {
                let end = start.saturating_add(length as usize);
                let units = text.get(start..end).ok_or_else(|| overflow(text.len()))?;
                let key = String::from_utf16(units).map_err(|_| {
                    let message =
                        format!("key {i} \"{}\" is not valid UTF-16: it holds a lone surrogate", shown_units(units));
                    invalid_utf8(env, message)
                })?;
                batch.push(key.as_bytes());
                start = end;
            }
            Ok(batch)
        }
        Either::B(bytes) => packed(env, bytes, lengths),
    }
}

/// `getIndicesAsync`'s work: a copied batch and the snapshot to place it on.
pub struct Placing {
    ring: Arc<shardring::Ring>,
    bytes: Vec<u8>,
    lengths: Vec<u32>,
}

impl Placing {
    /// The task for a batch whose lengths `packed` accepted over `bytes`.
    pub(crate) fn new(ring: Arc<shardring::Ring>, bytes: &[u8], lengths: &[u32]) -> Placing {
        Placing { ring, bytes: bytes.to_vec(), lengths: lengths.to_vec() }
    }
}

impl Task for Placing {
    type Output = Vec<u32>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> Result<Vec<u32>> {
        let batch = KeyBatch::from_lengths(Cow::Borrowed(&self.bytes[..]), self.lengths.iter().map(|&l| l as usize));
        // Both checked on the JS thread before the task was queued.
        let batch = batch.ok_or_else(|| Error::new(Status::InvalidArg, "key lengths overrun the batch"))?;
        place_batch(&self.ring, &batch).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    }

    fn resolve(&mut self, _env: Env, indices: Vec<u32>) -> Result<Uint32Array> {
        Ok(Uint32Array::new(indices))
    }
}

/// XXH3-64 of a key (string as UTF-8, Buffer or Uint8Array) under `seed`
/// (a number up to 2^53 - 1 or a bigint below 2^64; default 0 when left out
/// or `undefined`, `null` is a `TypeError`), as a bigint: the position every
/// binding gives the key.
#[napi(ts_args_type = "key: string | Uint8Array, seed?: number | bigint")]
pub fn hash_key(env: Env, key: Unknown<'_>, seed: Unknown<'_>) -> Result<BigInt> {
    let seed = match seed.get_type()? {
        ValueType::Undefined => shardring::DEFAULT_SEED,
        _ => u64_value(&env, seed, "seed", false)?,
    };
    with_key(&env, key, |bytes| BigInt::from(shardring::hash_key(bytes, seed)))
}
