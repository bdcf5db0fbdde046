//! Every row of `testdata/bad-inputs.json` (the table in
//! `docs/bad-inputs.md`), run through the Rust API: the error variant and
//! code, or the answer, each row records. The C, Python and Node suites run
//! the same rows.

use std::sync::Arc;

use serde_json::Value;
use shardring::{LoadTracker, Node, Ring, RingError};

const CASES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bad-inputs.json");

/// The bytes an id or key of the file stands for; `None` for a string of
/// UTF-16 code units (`{"utf16": [...]}`), which Rust's byte keys cannot be.
fn bytes(value: &Value) -> Option<Vec<u8>> {
    Some(match value {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Object(spec) if spec.contains_key("hex") => hex::decode(spec["hex"].as_str().unwrap()).unwrap(),
        Value::Object(spec) if spec.contains_key("fill") => {
            let byte = hex::decode(spec["fill"].as_str().unwrap()).unwrap()[0];
            vec![byte; spec["len"].as_u64().unwrap() as usize]
        }
        Value::Object(spec) if spec.contains_key("every_byte") => (0..=255).collect(),
        Value::Object(spec) if spec.contains_key("utf16") => return None,
        other => panic!("not a key or id: {other}"),
    })
}

/// A number of the file (`"nan"`, `"inf"` and `"-inf"` spelt as strings);
/// `None` for `true` or `null`, which Rust's typed parameters cannot be.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::String(text) => Some(text.parse().unwrap()),
        Value::Bool(_) | Value::Null => None,
        other => Some(other.as_f64().unwrap()),
    }
}

/// An option that must be an unsigned integer; `Err(())` for `true` or `null`.
fn whole(value: &Value) -> Result<Option<u64>, ()> {
    match value {
        Value::Bool(_) | Value::Null => Err(()),
        other => Ok(other.as_u64()),
    }
}

/// Builds the case's ring: `Err` when building fails, or `Ok(None)` when the
/// row has no Rust spelling (an id that is not UTF-8, a boolean or null
/// parameter).
fn build(case: &Value) -> Result<Option<Ring>, RingError> {
    let mut builder = Ring::builder();
    let options = &case["options"];
    if let Some(name) = options["algorithm"].as_str() {
        builder = builder.algorithm(name.parse()?);
    }
    let [Ok(vnodes), Ok(seed), Ok(table_size)] = ["vnodes", "seed", "table_size"].map(|o| match options.get(o) {
        Some(value) => whole(value),
        None => Ok(None),
    }) else {
        return Ok(None);
    };
    if let Some(vnodes) = vnodes {
        builder = builder.vnodes(vnodes as u32);
    }
    if let Some(seed) = seed {
        builder = builder.seed(seed);
    }
    if let Some(size) = table_size {
        builder = builder.table_size(size as u32);
    }
    for node in case["nodes"].as_array().unwrap() {
        let (id, weight, zone) = match node {
            Value::String(_) => (node, Some(1.0), None),
            spec => (&spec["id"], number(&spec["weight"]), spec["zone"].as_str()),
        };
        let (Some(Ok(id)), Some(weight)) = (bytes(id).map(String::from_utf8), weight) else { return Ok(None) };
        let node = Node::new(id, weight);
        builder = builder.nodes([match zone {
            Some(zone) => node.with_zone(zone),
            None => node,
        }]);
    }
    builder.build().map(Some)
}

/// Runs the case's operation: the answer as JSON (an id, a list of ids, a
/// fingerprint as a decimal string, or `true` when the operation returns
/// nothing), or `Ok(None)` when the row has no Rust spelling.
fn run(case: &Value) -> Result<Option<Value>, RingError> {
    let op = &case["op"];
    if let Some(json) = op.get("from_json") {
        Ring::from_json(json.as_str().unwrap())?;
        return Ok(Some(Value::Bool(true)));
    }
    let Some(ring) = build(case)? else { return Ok(None) };
    let ids = |nodes: Vec<&Node>| Value::from(nodes.iter().map(|n| n.id()).collect::<Vec<_>>());
    Ok(Some(if let Some(key) = op.get("get") {
        let Some(key) = bytes(key) else { return Ok(None) };
        Value::from(ring.get(key)?.id())
    } else if let Some(args) = op.get("get_n") {
        let (Some(key), Some(n)) = (bytes(&args[0]), args[1].as_u64()) else { return Ok(None) };
        ids(ring.get_n(key, n as usize)?)
    } else if let Some(hash) = op.get("get_by_hash") {
        Value::from(ring.get_by_hash(hash.as_u64().unwrap())?.id())
    } else if let Some(args) = op.get("hash_key") {
        let (Some(key), Some(seed)) = (bytes(&args[0]), args[1].as_u64()) else { return Ok(None) };
        Value::from(shardring::hash_key(&key, seed).to_string())
    } else if op.get("fingerprint").is_some() {
        Value::from(ring.fingerprint().to_string())
    } else if let Some(id) = op.get("remove") {
        Value::from(ring.without_node(id.as_str().unwrap())?.nodes().len())
    } else if let Some(id) = op.get("add") {
        Value::from(ring.with_node(Node::new(id.as_str().unwrap(), 1.0))?.nodes().len())
    } else if let Some(epsilon) = op.get("tracker") {
        Value::from(LoadTracker::new(Arc::new(ring), number(epsilon).unwrap())?.balance_factor())
    } else if let Some(id) = op.get("release") {
        LoadTracker::new(Arc::new(ring), 0.1)?.release(id.as_str().unwrap())?;
        Value::Bool(true)
    } else {
        Value::Bool(true)
    }))
}

#[test]
fn every_row_behaves_as_documented() {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(CASES_PATH).unwrap()).unwrap();
    let cases = file["cases"].as_array().unwrap();
    assert!(cases.len() >= 52, "the table lost rows");
    let failures: Vec<String> = cases.iter().filter_map(check).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is wrong with one row's outcome, if anything.
fn check(case: &Value) -> Option<String> {
    let name = case["name"].as_str().unwrap();
    let expect = &case["expect"];
    match (run(case), expect.get("error")) {
        (Ok(Some(answer)), None) => (answer != expect["ok"]).then(|| format!("{name}: answered {answer}")),
        (Err(error), Some(wanted)) => {
            let variant = format!("{error:?}");
            let rust = wanted["rust"].as_str().unwrap();
            (error.code() != wanted["c"] || !variant.starts_with(rust) || error.to_string().is_empty())
                .then(|| format!("{name}: {variant} ({}), expected {rust} ({})", error.code(), wanted["c"]))
        }
        // No Rust spelling: a non-UTF-8 id, a string of lone surrogates, a boolean or null.
        (Ok(None), Some(wanted)) => {
            (!wanted["rust"].as_str().unwrap().starts_with("(no path")).then(|| format!("{name}: no Rust spelling"))
        }
        (outcome, _) => Some(format!("{name}: got {outcome:?}, expected {expect}")),
    }
}
