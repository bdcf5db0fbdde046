//! The `Ring` constructor's arguments, converted for the core: its nodes
//! (ids, `{ id, weight, zone }` objects, or an object mapping id to weight)
//! and its options (every ring parameter by the kind the core gives it,
//! under its camelCase name, plus the per-node `haproxyIds` and `buckets`),
//! and back: a ring's parameters as those options (`ring.params`). The
//! options' TypeScript shape, `RingOptions`, is declared with the class in
//! `ring.rs`; nothing here imports it.

use napi::bindgen_prelude::{BigInt, FromNapiValue, JsObjectValue, Object};
use napi::{Env, JsValue, Result, Unknown, ValueType};

use shardring::{Node, ParamKind, ParamValue, RingParams};

use crate::errors::{
    Fields, MAX_SAFE_INTEGER, boolean, number, plain_object, text, throw, type_error, u64_value, whole,
};
/// A node argument: an id string, or a `{ id, weight, zone }` object read by
/// its own properties (a left-out or `undefined` weight is 1, a left-out
/// zone is none; `null` is a `TypeError` for either).
pub(crate) fn to_node(env: &Env, node: Unknown<'_>) -> Result<Node> {
    if node.get_type()? == ValueType::String {
        return Ok(Node::new(text(env, node, "id")?, 1.0));
    }
    if node.get_type()? != ValueType::Object {
        let kind = crate::errors::js_type(node.get_type()?);
        return Err(type_error(
            env,
            format!("a node must be an id string or a {{ id, weight, zone }} object, not {kind}"),
        ));
    }
    let fields = Fields::read(env, node, "node", &["id", "weight", "zone"])?;
    let Some(id) = fields.get("id")? else {
        return Err(type_error(env, "a node object needs an id".into()));
    };
    let weight = fields.get("weight")?.map(|w| number(env, w, "weight")).transpose()?;
    let node = Node::new(text(env, id, "id")?, weight.unwrap_or(1.0));
    Ok(match fields.get("zone")? {
        Some(zone) => node.with_zone(text(env, zone, "zone")?),
        None => node,
    })
}

/// The `nodes` argument of the constructor: an array of node arguments, or a
/// plain object mapping id to weight (its own properties, in key order).
pub(crate) fn to_nodes(env: &Env, nodes: Unknown<'_>) -> Result<Vec<Node>> {
    if nodes.is_array()? {
        // SAFETY: `nodes` is a live array of this env.
        let list = unsafe { Object::from_napi_value(env.raw(), nodes.raw()) }?;
        return (0..list.get_array_length()?).map(|i| to_node(env, list.get_element::<Unknown>(i)?)).collect();
    }
    if plain_object(env, nodes)? {
        // SAFETY: `nodes` is a live object of this env.
        let object = unsafe { Object::from_napi_value(env.raw(), nodes.raw()) }?;
        let names = object.get_property_names()?;
        let mut weighted = Vec::new();
        for i in 0..names.get_array_length()? {
            let id = text(env, names.get_element::<Unknown>(i)?, "id")?;
            // Own enumerable keys only: an inherited `Object.prototype.x` is not a node.
            if !object.has_own_property(&id)? {
                continue;
            }
            let weight = number(env, object.get_named_property::<Unknown>(&id)?, "weight")?;
            weighted.push(Node::new(id, weight));
        }
        return Ok(weighted);
    }
    let kind = if nodes.get_type()? == ValueType::Object {
        "another object"
    } else {
        crate::errors::js_type(nodes.get_type()?)
    };
    Err(type_error(
        env,
        format!(
            "nodes must be an array of ids or {{ id, weight, zone }} objects, or an object mapping id to weight, not {kind}"
        ),
    ))
}

/// The option name of a [`RingParams`] parameter: `table_size` is `tableSize`.
fn option_name(parameter: &str) -> String {
    let mut name = String::with_capacity(parameter.len());
    let mut upper = false;
    for c in parameter.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            name.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            name.push(c);
        }
    }
    name
}

/// A ring builder with the constructor's options applied; `options` is
/// `undefined` or a plain object. Every ring parameter is converted by the
/// kind of value the core says it takes ([`RingParams::KINDS`]), under its
/// camelCase name, so a parameter added to the core needs no code here;
/// `haproxyIds` and `buckets` are per node.
pub(crate) fn with_options(env: &Env, options: Unknown<'_>) -> Result<shardring::RingBuilder> {
    let builder = shardring::Ring::builder();
    if options.get_type()? == ValueType::Undefined {
        return Ok(builder);
    }
    let parameters: Vec<(String, &str, ParamKind)> =
        RingParams::KINDS.iter().map(|&(name, kind)| (option_name(name), name, kind)).collect();
    let mut known: Vec<&str> = parameters.iter().map(|(option, _, _)| option.as_str()).collect();
    known.extend(["haproxyIds", "buckets"]);
    let fields = Fields::read(env, options, "option", &known)?;
    let mut params = RingParams::default();
    for (option, name, kind) in &parameters {
        let Some(value) = fields.get(option)? else { continue };
        let converted = match *kind {
            ParamKind::Whole { max } if max as f64 > MAX_SAFE_INTEGER => {
                ParamValue::Whole(u64_value(env, value, option, false)?)
            }
            ParamKind::Whole { max } => ParamValue::Whole(whole(env, value, option, max as f64)? as u64),
            ParamKind::Name | ParamKind::Text => ParamValue::Text(text(env, value, option)?),
            ParamKind::Flag => ParamValue::Flag(boolean(env, value, option)?),
            ParamKind::Wholes { max } => ParamValue::Wholes(wholes(env, value, option, max)?),
            _ => return Err(type_error(env, format!("{option}: this version cannot take it as an option"))),
        };
        params.set(name, converted).map_err(|e| throw(env, e))?;
    }
    let mut builder = builder.params(params);
    if let Some(ids) = fields.get("haproxyIds")? {
        for (id, puid) in id_numbers(env, ids, "haproxyIds")? {
            builder = builder.haproxy_id(id, puid);
        }
    }
    if let Some(buckets) = fields.get("buckets")? {
        for (id, bucket) in id_numbers(env, buckets, "buckets")? {
            builder = builder.bucket(id, bucket);
        }
    }
    Ok(builder)
}

/// An array of whole numbers from 0 to `max` (`removedBuckets`).
fn wholes(env: &Env, value: Unknown<'_>, what: &str, max: u64) -> Result<Vec<u64>> {
    if !value.is_array()? {
        let kind = crate::errors::js_type(value.get_type()?);
        return Err(type_error(env, format!("{what} must be an array of numbers, not {kind}")));
    }
    // SAFETY: `value` is a live array of this env.
    let list = unsafe { Object::from_napi_value(env.raw(), value.raw()) }?;
    (0..list.get_array_length()?)
        .map(|i| Ok(whole(env, list.get_element::<Unknown>(i)?, &format!("{what} item"), max as f64)? as u64))
        .collect()
}

/// An option mapping node id to a whole number (`haproxyIds`, `buckets`):
/// a plain object's own properties, in key order.
fn id_numbers(env: &Env, value: Unknown<'_>, what: &str) -> Result<Vec<(String, u32)>> {
    if !plain_object(env, value)? {
        let kind = crate::errors::js_type(value.get_type()?);
        return Err(type_error(env, format!("{what} must be an object mapping id to number, not {kind}")));
    }
    // SAFETY: `value` is a live object of this env.
    let object = unsafe { Object::from_napi_value(env.raw(), value.raw()) }?;
    let names = object.get_property_names()?;
    let mut pairs = Vec::new();
    for i in 0..names.get_array_length()? {
        let id = text(env, names.get_element::<Unknown>(i)?, &format!("{what} id"))?;
        if !object.has_own_property(&id)? {
            continue;
        }
        let number =
            whole(env, object.get_named_property::<Unknown>(&id)?, &format!("{what} value"), f64::from(u32::MAX))?;
        pairs.push((id, number as u32));
    }
    Ok(pairs)
}

/// A ring's parameters as the constructor's options (`ring.params`): the
/// 64-bit parameters (`seed`, the ring sizes) as bigints, as `seed` reads.
pub(crate) fn to_options<'a>(env: &Env, parameters: &RingParams) -> Result<Object<'a>> {
    let mut params = Object::new(env)?;
    for (name, value) in parameters.values() {
        let option = option_name(name);
        let wide = matches!(RingParams::kind(name), Some(ParamKind::Whole { max }) if max as f64 > MAX_SAFE_INTEGER);
        match value {
            // As `seed` reads: a 64-bit parameter is a bigint.
            ParamValue::Whole(v) if wide => params.set_named_property(&option, BigInt::from(v))?,
            ParamValue::Whole(v) => params.set_named_property(&option, v as f64)?,
            ParamValue::Text(text) => params.set_named_property(&option, text)?,
            ParamValue::Flag(flag) => params.set_named_property(&option, flag)?,
            ParamValue::Wholes(values) => {
                params.set_named_property(&option, values.into_iter().map(|v| v as f64).collect::<Vec<f64>>())?
            }
            other => params.set_named_property(&option, other.to_string())?,
        }
    }
    Ok(params)
}
