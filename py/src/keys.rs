//! Keys from Python objects: `str` as UTF-8, bytes-like objects as bytes,
//! anything else a `TypeError` (never `str(obj)`).

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};
use shardring::KeyBatch;

use crate::errors::{Argument, utf8_failure, whole_argument};

/// The UTF-8 bytes of a `str`: a view of the string's own UTF-8 buffer
/// (`PyUnicode_AsUTF8AndSize`, in the stable ABI from Python 3.10, which
/// CPython caches inside the object). A lone surrogate raises
/// `InvalidUtf8Error` (code `RING_INVALID_UTF8`), as in every binding: such
/// a key has no UTF-8 bytes, and no replacement is guessed.
fn str_bytes<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match text.to_str() {
        Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
        Err(_) => Err(utf8_failure(text)),
    }
}

/// A key's bytes: a `str` as UTF-8; `bytes`, `bytearray` and `memoryview` as
/// their bytes; anything else is a `TypeError` naming the type.
pub(crate) fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(text) = key.cast::<PyString>() {
        return str_bytes(text);
    }
    if let Ok(bytes) = key.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = key.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    if key.cast::<PyMemoryView>().is_ok() {
        let copy = key.call_method0("tobytes")?;
        return Ok(Cow::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "key must be str or a bytes-like object (bytes, bytearray, memoryview), not {}",
        key.get_type().name()?
    )))
}

/// Reads every key of an iterable in order (a list or tuple without
/// building an iterator), into a collection that `with_capacity` makes
/// (with the key count when it is known, else 0) and `push` fills with each
/// key's bytes. Raises `TypeError` for a single str or bytes (an iterable of
/// characters, not of keys), and as [`key_bytes`] for a bad key.
fn read_keys<C>(
    keys: &Bound<'_, PyAny>,
    with_capacity: impl FnOnce(usize) -> C,
    mut push: impl FnMut(&mut C, &[u8]),
) -> PyResult<C> {
    if let Ok(list) = keys.cast::<pyo3::types::PyList>() {
        let mut collection = with_capacity(list.len());
        for key in list.iter() {
            push(&mut collection, &key_bytes(&key)?);
        }
        return Ok(collection);
    }
    if let Ok(tuple) = keys.cast::<pyo3::types::PyTuple>() {
        let mut collection = with_capacity(tuple.len());
        for key in tuple.iter() {
            push(&mut collection, &key_bytes(&key)?);
        }
        return Ok(collection);
    }
    if keys.cast::<PyString>().is_ok() || keys.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err("keys must be an iterable of keys, not a single str or bytes"));
    }
    let mut collection = with_capacity(0);
    for key in keys.try_iter()? {
        push(&mut collection, &key_bytes(&key?)?);
    }
    Ok(collection)
}

/// Packs every key of an iterable into one [`KeyBatch`], so placement can
/// run without the GIL. Raises as [`read_keys`].
pub(crate) fn pack_keys(keys: &Bound<'_, PyAny>) -> PyResult<KeyBatch<'static>> {
    read_keys(keys, |count| KeyBatch::with_capacity(count, 24), |batch, key| batch.push(key))
}

/// Hashes every key of an iterable under `ring`'s key hash while reading
/// it, so that placing them can run without the GIL on 8 bytes per key.
/// Raises as [`read_keys`].
pub(crate) fn hash_keys(ring: &shardring::Ring, keys: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    read_keys(keys, Vec::with_capacity, |hashes, key| hashes.push(ring.hash_key_observed(key)))
}

/// hash_key(key, seed=0) -> int
///
/// XXH3-64 of a key (str as UTF-8, or bytes-like) under `seed` (an int in
/// [0, 2**64), not a bool or None): the position every binding gives the key
/// on a ring with that seed, an int in [0, 2**64).
#[pyfunction]
#[pyo3(signature = (key, seed = Argument::Absent), text_signature = "(key, seed=0)")]
pub(crate) fn hash_key(key: &Bound<'_, PyAny>, seed: Argument<'_>) -> PyResult<u64> {
    let seed = seed.map(|s| whole_argument(s, "seed", u64::MAX))?.unwrap_or(shardring::DEFAULT_SEED);
    Ok(shardring::hash_key(&key_bytes(key)?, seed))
}
