//! The `Ring` constructor's arguments, converted for the core: its nodes
//! (str ids, `shardring.Node` objects, or a mapping of id to weight), its
//! keyword options (every ring parameter by the kind the core gives it) and
//! the per-node `haproxy_ids` and `buckets`; and back: a ring's parameters
//! as those keyword options (`Ring.params`). Nothing here imports `ring.rs`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFrozenSet, PyMapping, PySet, PyString};

use shardring::{Node, ParamKind, ParamValue, RingParams};

use crate::errors::{
    bool_argument, number_argument, package_class, text_argument, to_py_err, type_name, whole_argument,
};
/// A node from a `str` id (weight 1.0) or a `shardring.Node` (whose `zone`
/// is `None` for a node without one).
pub(crate) fn to_node(item: &Bound<'_, PyAny>) -> PyResult<Node> {
    if item.cast::<PyString>().is_ok() {
        return Ok(Node::new(text_argument(item, "id")?.into_owned(), 1.0));
    }
    if item.is_instance(package_class(item.py(), "Node")?.as_any())? {
        let id = text_argument(&item.getattr("id")?, "id")?.into_owned();
        let node = Node::new(id, number_argument(&item.getattr("weight")?, "weight")?);
        let zone = item.getattr("zone")?;
        return Ok(if zone.is_none() { node } else { node.with_zone(text_argument(&zone, "zone")?.into_owned()) });
    }
    Err(PyTypeError::new_err(format!("a node must be a str id or a shardring.Node, not {}", type_name(item))))
}

/// `haproxy_ids` or `buckets`: a mapping of node id to a u32.
pub(crate) fn to_ids(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<(String, u32)>> {
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a mapping of id to int, not {}", type_name(value)))
    })?;
    let items = mapping.items()?;
    items
        .iter()
        .map(|item| {
            let (id, number): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let id = text_argument(&id, &format!("{what} id"))?.into_owned();
            Ok((id, whole_argument(&number, &format!("{what} value"), u64::from(u32::MAX))? as u32))
        })
        .collect()
}

/// A list of whole numbers (`removed_buckets`): an iterable of ints, not a
/// str, bytes, a mapping or a set (an order is a history).
fn to_wholes(value: &Bound<'_, PyAny>, what: &str, max: u64) -> PyResult<Vec<u64>> {
    let refused =
        || PyTypeError::new_err(format!("{what} must be a list of ints in removal order, not {}", type_name(value)));
    // The order is the history, so unordered collections are refused, and so
    // are str and bytes, which iterate as characters or bytes.
    if value.cast::<PyString>().is_ok()
        || value.cast::<PyBytes>().is_ok()
        || value.cast::<PyByteArray>().is_ok()
        || value.cast::<PyMapping>().is_ok()
        || value.cast::<PySet>().is_ok()
        || value.cast::<PyFrozenSet>().is_ok()
    {
        return Err(refused());
    }
    let items = value.try_iter().map_err(|_| refused())?;
    items.map(|b| whole_argument(&b?, &format!("{what} item"), max)).collect()
}

/// A node of an id -> weight mapping.
fn weighted(id: &Bound<'_, PyAny>, weight: &Bound<'_, PyAny>) -> PyResult<Node> {
    Ok(Node::new(text_argument(id, "id")?.into_owned(), number_argument(weight, "weight")?))
}

pub(crate) fn to_nodes(nodes: &Bound<'_, PyAny>) -> PyResult<Vec<Node>> {
    if let Ok(dict) = nodes.cast::<PyDict>() {
        return dict.iter().map(|(id, weight)| weighted(&id, &weight)).collect();
    }
    // Any other mapping (MappingProxyType, UserDict, ...) is id -> weight too.
    if let Ok(mapping) = nodes.cast::<PyMapping>() {
        let items = mapping.items()?;
        return items
            .iter()
            .map(|item| {
                let (id, weight): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
                weighted(&id, &weight)
            })
            .collect();
    }
    if nodes.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err("nodes must be a list of ids or Node objects, or a dict, not a single str"));
    }
    let items = nodes.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "nodes must be a list of ids or Node objects, or a dict, not {}",
            type_name(nodes)
        ))
    })?;
    items.map(|item| to_node(&item?)).collect()
}

/// The keyword options of `Ring(...)` (the algorithm and every ring
/// parameter) as [`RingParams`], each converted by the kind of value the
/// core says it takes ([`RingParams::KINDS`]): a parameter added to the core
/// needs nothing here. A keyword that is no parameter is a `TypeError`, as
/// Python's own; `None` and values of another type are `TypeError`s naming
/// the keyword; a number beyond the parameter's range an `OutOfRangeError`.
pub(crate) fn ring_params(options: Option<&Bound<'_, PyDict>>) -> PyResult<RingParams> {
    let mut params = RingParams::default();
    for (key, value) in options.into_iter().flat_map(|o| o.iter()) {
        let name = text_argument(&key, "keyword")?.into_owned();
        let Some(kind) = RingParams::kind(&name) else {
            return Err(PyTypeError::new_err(format!("Ring() got an unexpected keyword argument '{name}'")));
        };
        let converted = match kind {
            ParamKind::Whole { max } => ParamValue::Whole(whole_argument(&value, &name, max)?),
            ParamKind::Name | ParamKind::Text => ParamValue::Text(text_argument(&value, &name)?.into_owned()),
            ParamKind::Flag => ParamValue::Flag(bool_argument(&value, &name)?),
            ParamKind::Wholes { max } => ParamValue::Wholes(to_wholes(&value, &name, max)?),
            _ => return Err(PyTypeError::new_err(format!("{name}: this version cannot take it as a keyword"))),
        };
        params.set(&name, converted).map_err(to_py_err)?;
    }
    Ok(params)
}

/// A ring's parameters as the keyword options that rebuild it (`Ring.params`).
pub(crate) fn to_options<'py>(py: Python<'py>, parameters: &RingParams) -> PyResult<Bound<'py, PyDict>> {
    let params = PyDict::new(py);
    for (name, value) in parameters.values() {
        match value {
            ParamValue::Whole(v) => params.set_item(name, v)?,
            ParamValue::Text(text) => params.set_item(name, text)?,
            ParamValue::Flag(flag) => params.set_item(name, flag)?,
            ParamValue::Wholes(values) => params.set_item(name, values)?,
            other => params.set_item(name, other.to_string())?,
        }
    }
    Ok(params)
}
