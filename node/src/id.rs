//! Node ids (and zones) from JavaScript strings. Node-API's UTF-8 reads turn
//! a lone surrogate into U+FFFD, so two different JS strings could name one
//! node; ids are read as UTF-16 instead and a lone surrogate throws
//! `RING_INVALID_UTF8`, as a non-UTF-8 id does in C.

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, Utf16String, ValidateNapiValue};
use napi::{Env, Result, ValueType, sys};

use crate::{js_type, pending};

/// A node id or zone: a well-formed JavaScript string (TypeScript `string`).
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
        let mut kind = sys::ValueType::napi_undefined;
        // SAFETY: the caller passes a live env and value; `kind` is writable.
        unsafe { sys::napi_typeof(env, value, &mut kind) };
        if kind != sys::ValueType::napi_string {
            let message = format!("an id must be a string, not {}", js_type(ValueType::from(kind)));
            return Err(pending(Env::from_raw(env).throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE"))));
        }
        // SAFETY: a live env and a string value.
        let units = unsafe { Utf16String::from_napi_value(env, value) }?;
        String::from_utf16(&units).map(Id).map_err(|_| {
            let shown: String = char::decode_utf16(units.iter().copied())
                .map(|unit| unit.map_or_else(|lone| format!("\\u{:x}", lone.unpaired_surrogate()), String::from))
                .collect();
            let message = format!("id \"{shown}\" is not valid UTF-16: it holds a lone surrogate");
            pending(Env::from_raw(env).throw_error(&message, Some("RING_INVALID_UTF8")))
        })
    }
}

impl ToNapiValue for Id {
    unsafe fn to_napi_value(env: sys::napi_env, id: Id) -> Result<sys::napi_value> {
        // SAFETY: the caller passes a live env.
        unsafe { String::to_napi_value(env, id.0) }
    }
}
