//! Objects keyed by node id (`{ [id]: value }`), built so that every id is an
//! own property: napi-rs's map conversion assigns each key, and assigning
//! `"__proto__"` sets the object's prototype instead of adding the key.

use indexmap::IndexMap;
use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::{Result, ValueType, check_status, sys};

/// Values by node id, in node order, handed to JS as a plain object whose
/// own enumerable properties are the ids, any id included (`"__proto__"`,
/// ids holding NUL).
pub struct ById<V>(pub IndexMap<String, V>);

impl<V> FromIterator<(String, V)> for ById<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(entries: I) -> Self {
        ById(entries.into_iter().collect())
    }
}

impl<V> TypeName for ById<V> {
    fn type_name() -> &'static str {
        "Record<string, number>"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl<V: ToNapiValue> ToNapiValue for ById<V> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let mut object = std::ptr::null_mut();
        // SAFETY: `env` is the live environment of the call converting this value.
        check_status!(unsafe { sys::napi_create_object(env, &mut object) })?;
        let mut descriptors = Vec::with_capacity(val.0.len());
        for (id, value) in val.0 {
            descriptors.push(sys::napi_property_descriptor {
                utf8name: std::ptr::null(),
                // SAFETY: as above; the strings and values live in the call's handle scope.
                name: unsafe { String::to_napi_value(env, id)? },
                method: None,
                getter: None,
                setter: None,
                // SAFETY: as above.
                value: unsafe { V::to_napi_value(env, value)? },
                attributes: sys::PropertyAttributes::writable
                    | sys::PropertyAttributes::enumerable
                    | sys::PropertyAttributes::configurable,
                data: std::ptr::null_mut(),
            });
        }
        // Defining (not assigning) makes each id an own data property.
        // SAFETY: `object` is a live object; `descriptors` holds `len` descriptors.
        check_status!(unsafe { sys::napi_define_properties(env, object, descriptors.len(), descriptors.as_ptr()) })?;
        Ok(object)
    }
}
