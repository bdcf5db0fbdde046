//! Errors: the core's `RingError` as a JS `Error` whose `code` is the C
//! result name, and the argument checks that throw `TypeError`
//! (`ERR_INVALID_ARG_TYPE`, or `ERR_INVALID_ARG_VALUE` for an unknown
//! field), `RangeError` (`ERR_OUT_OF_RANGE`) or `RING_INVALID_UTF8` before
//! anything reaches the core.
//!
//! The rule for arguments (`docs/bad-inputs.md`): a parameter left out
//! (absent or `undefined`) takes its default; anything passed must be a valid
//! value: `null` is never a value and a boolean is never a number. Objects
//! are read by their own properties only, so nothing inherited from
//! `Object.prototype` (which npm `hashring`'s cache writes to) is read.

use napi::bindgen_prelude::{
    FromNapiValue, JsObjectValue, KeyCollectionMode, KeyConversion, KeyFilter, Object, ToNapiValue, TypeName,
    Utf16String, ValidateNapiValue,
};
use napi::{Env, Error, JsValue, Result, Status, Unknown, ValueType, sys};

use shardring::RingError;

/// Throws `error` as a JS `Error` whose `code` is the C result name (for
/// example `RING_INVALID_WEIGHT`) and whose message, the core's, names the
/// bad value ("invalid ring config: " heads it only when a JSON config
/// could not be read).
pub(crate) fn throw(env: &Env, error: RingError) -> Error {
    pending(env.throw_error(&error.to_string(), Some(error.code())))
}

/// Throws a JS `TypeError` with Node's `ERR_INVALID_ARG_TYPE` code.
pub(crate) fn type_error(env: &Env, message: String) -> Error {
    pending(env.throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE")))
}

/// Throws a JS `RangeError` with Node's `ERR_OUT_OF_RANGE` code.
pub(crate) fn range_error(env: &Env, message: String) -> Error {
    pending(env.throw_range_error(&message, Some("ERR_OUT_OF_RANGE")))
}

/// Throws a JS `Error` with code `RING_INVALID_UTF8`.
pub(crate) fn invalid_utf8(env: &Env, message: String) -> Error {
    pending(env.throw_error(&message, Some("RING_INVALID_UTF8")))
}

/// The error napi-rs returns once an exception is pending.
pub(crate) fn pending(thrown: Result<()>) -> Error {
    match thrown {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(failed) => failed,
    }
}

/// The `typeof` of a value, as a message names it (`null` for null).
pub(crate) fn js_type(value_type: ValueType) -> &'static str {
    match value_type {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Object => "object",
        ValueType::Function => "function",
        ValueType::BigInt => "bigint",
        _ => "another type",
    }
}

/// A number as JavaScript prints it (`Infinity`, not Rust's `inf`).
pub(crate) fn js_number(value: f64) -> String {
    match value {
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ => value.to_string(),
    }
}

/// UTF-16 code units as a JS string literal would show them, lone
/// surrogates escaped (`"a\ud800"`).
pub(crate) fn shown_units(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|unit| unit.map_or_else(|lone| format!("\\u{:x}", lone.unpaired_surrogate()), String::from))
        .collect()
}

/// A string argument (an id, a zone, an algorithm name, a config): read as
/// UTF-16 so a lone surrogate throws `RING_INVALID_UTF8` instead of silently
/// becoming U+FFFD (as Node-API's UTF-8 read would make it); `TypeError`
/// naming `what` for any other type.
pub(crate) fn text(env: &Env, value: Unknown<'_>, what: &str) -> Result<String> {
    let kind = value.get_type()?;
    if kind != ValueType::String {
        return Err(type_error(env, format!("{what} must be a string, not {}", js_type(kind))));
    }
    // SAFETY: a live string value of this env.
    let units = unsafe { Utf16String::from_napi_value(env.raw(), value.raw()) }?;
    String::from_utf16(&units).map_err(|_| {
        let message = format!("{what} \"{}\" is not valid UTF-16: it holds a lone surrogate", shown_units(&units));
        invalid_utf8(env, message)
    })
}

/// A number argument (a weight, an epsilon): `TypeError` naming `what` for
/// any other type, `null` and booleans included.
pub(crate) fn number(env: &Env, value: Unknown<'_>, what: &str) -> Result<f64> {
    let kind = value.get_type()?;
    if kind != ValueType::Number {
        return Err(type_error(env, format!("{what} must be a number, not {}", js_type(kind))));
    }
    // SAFETY: a live number value of this env.
    unsafe { f64::from_napi_value(env.raw(), value.raw()) }
}

/// A boolean argument (HAProxy's avalanche): `TypeError` naming `what` for
/// any other type.
pub(crate) fn boolean(env: &Env, value: Unknown<'_>, what: &str) -> Result<bool> {
    let kind = value.get_type()?;
    if kind != ValueType::Boolean {
        return Err(type_error(env, format!("{what} must be a boolean, not {}", js_type(kind))));
    }
    // SAFETY: a live boolean value of this env.
    unsafe { bool::from_napi_value(env.raw(), value.raw()) }
}

/// A whole-number argument in `[0, max]` (vnodes, a table size; `n` with
/// `max` = `f64::MAX`, any whole number):
/// `TypeError` for another type, `RangeError` naming the value otherwise.
pub(crate) fn whole(env: &Env, value: Unknown<'_>, what: &str, max: f64) -> Result<f64> {
    let number = number(env, value, what)?;
    if number.fract() == 0.0 && (0.0..=max).contains(&number) {
        return Ok(number);
    }
    let range = if max == f64::MAX { ">= 0".to_owned() } else { format!("from 0 to {}", js_number(max)) };
    let message = format!("{what} must be a whole number {range}, got {}", js_number(number));
    Err(range_error(env, message))
}

/// Largest integer a JS number holds exactly, 2^53 - 1.
pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A 64-bit unsigned argument (a seed, a hash): a whole number up to 2^53 - 1
/// or a bigint in `[0, 2^64)`; `bigint_only` for hashes, which `hashKey`
/// returns as bigints. `TypeError` for another type, `RangeError` when out
/// of range.
pub(crate) fn u64_value(env: &Env, value: Unknown<'_>, what: &str, bigint_only: bool) -> Result<u64> {
    match value.get_type()? {
        ValueType::BigInt => {
            // SAFETY: a live bigint value of this env.
            let big = unsafe { napi::bindgen_prelude::BigInt::from_napi_value(env.raw(), value.raw()) }?;
            match big.get_u64() {
                (false, value, true) => Ok(value),
                _ => Err(range_error(env, format!("{what} must be a bigint in [0, 2^64)"))),
            }
        }
        ValueType::Number if !bigint_only => Ok(whole(env, value, what, MAX_SAFE_INTEGER)? as u64),
        kind => {
            let expected = if bigint_only { "a bigint" } else { "a number or a bigint" };
            Err(type_error(env, format!("{what} must be {expected}, not {}", js_type(kind))))
        }
    }
}

/// Converts `value` with napi-rs, or throws `TypeError` "`what` must be
/// `expected`, not <type>" (for typed arrays, strings and the like).
pub(crate) fn convert<T: FromNapiValue + ValidateNapiValue>(
    env: &Env,
    value: Unknown<'_>,
    what: &str,
    expected: &str,
) -> Result<T> {
    // SAFETY: a live value of this env.
    let valid = unsafe { T::validate(env.raw(), value.raw()) }.is_ok();
    // SAFETY: a live value of this env, of the type `validate` checked.
    let converted = if valid { unsafe { T::from_napi_value(env.raw(), value.raw()) }.ok() } else { None };
    match converted {
        Some(converted) => Ok(converted),
        None => {
            let kind = value.get_type()?;
            Err(type_error(env, format!("{what} must be {expected}, not {}", js_type(kind))))
        }
    }
}

/// Whether `value` is a plain object (`{...}` or `Object.create(null)`), not a
/// Map, Set, typed array, Date or other object whose own properties are not
/// its content.
pub(crate) fn plain_object(env: &Env, value: Unknown<'_>) -> Result<bool> {
    if value.get_type()? != ValueType::Object || value.is_array()? {
        return Ok(false);
    }
    let (mut prototype, mut empty, mut object_prototype, mut null) =
        (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let (mut is_object, mut is_null) = (false, false);
    // SAFETY: a live env and value; every out-pointer is writable; statuses are checked.
    let ok = unsafe {
        sys::napi_get_prototype(env.raw(), value.raw(), &mut prototype) == sys::Status::napi_ok
            && sys::napi_create_object(env.raw(), &mut empty) == sys::Status::napi_ok
            && sys::napi_get_prototype(env.raw(), empty, &mut object_prototype) == sys::Status::napi_ok
            && sys::napi_strict_equals(env.raw(), prototype, object_prototype, &mut is_object) == sys::Status::napi_ok
            && sys::napi_get_null(env.raw(), &mut null) == sys::Status::napi_ok
            && sys::napi_strict_equals(env.raw(), prototype, null, &mut is_null) == sys::Status::napi_ok
    };
    if !ok {
        return Err(Error::new(Status::GenericFailure, "could not read an object's prototype"));
    }
    Ok(is_object || is_null)
}

/// The own string-keyed properties of a plain object (enumerable or not;
/// inherited ones are never read), checked against the fields a shape knows.
pub(crate) struct Fields<'env> {
    object: Object<'env>,
    names: Vec<String>,
}

impl<'env> Fields<'env> {
    /// Reads `value` as a plain object of `what` (`"node"`, `"option"`):
    /// `TypeError` (`ERR_INVALID_ARG_TYPE`) when it is not one, `TypeError`
    /// (`ERR_INVALID_ARG_VALUE`) naming the first own property not in
    /// `known` (a misspelt `wieght` must not silently mean weight 1).
    pub(crate) fn read(env: &Env, value: Unknown<'env>, what: &str, known: &[&str]) -> Result<Fields<'env>> {
        if !plain_object(env, value)? {
            let kind = if value.is_array()? { "an array" } else { js_type(value.get_type()?) };
            return Err(type_error(env, format!("{what}s must be a plain object, not {kind}")));
        }
        // SAFETY: a live object of this env.
        let object = unsafe { Object::from_napi_value(env.raw(), value.raw()) }?;
        let list = object.get_all_property_names(
            KeyCollectionMode::OwnOnly,
            KeyFilter::SkipSymbols,
            KeyConversion::NumbersToStrings,
        )?;
        let names: Vec<String> = (0..list.get_array_length()?).map(|i| list.get_element(i)).collect::<Result<_>>()?;
        if let Some(unknown) = names.iter().find(|name| !known.contains(&name.as_str())) {
            let message = format!("unknown {what} field {unknown:?}; expected {}", known.join(", "));
            return Err(pending(env.throw_type_error(&message, Some("ERR_INVALID_ARG_VALUE"))));
        }
        Ok(Fields { object, names })
    }

    /// The own property `name`; `None` when absent or `undefined`.
    pub(crate) fn get(&self, name: &str) -> Result<Option<Unknown<'env>>> {
        if !self.names.iter().any(|n| n == name) {
            return Ok(None);
        }
        let value: Unknown<'env> = self.object.get_named_property(name)?;
        Ok((value.get_type()? != ValueType::Undefined).then_some(value))
    }
}

/// A node id or zone in a `#[napi]` signature: a well-formed JavaScript
/// string (TypeScript `string`), read as [`text`] reads it.
pub struct Id(pub String);

impl std::ops::Deref for Id {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl TypeName for Id {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for Id {}

impl FromNapiValue for Id {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Id> {
        // SAFETY: the caller passes a live env and value.
        let value = unsafe { Unknown::from_raw_unchecked(env, value) };
        text(&Env::from_raw(env), value, "id").map(Id)
    }
}

impl ToNapiValue for Id {
    unsafe fn to_napi_value(env: sys::napi_env, id: Id) -> Result<sys::napi_value> {
        // SAFETY: the caller passes a live env.
        unsafe { String::to_napi_value(env, id.0) }
    }
}
