//! Every row of `testdata/bad-inputs.json` (the table in
//! `docs/bad-inputs.md`), run through the Rust API: the error variant and
//! code, or the answer, each row records. The C, Python and Node suites run
//! the same rows.

use std::sync::Arc;

use serde_json::Value;
use shardring::{LoadTracker, Node, Ring, RingError};

const CASES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bad-inputs.json");

/// The bytes an id or key of the file stands for.
fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Object(spec) if spec.contains_key("hex") => hex::decode(spec["hex"].as_str().unwrap()).unwrap(),
        Value::Object(spec) if spec.contains_key("fill") => {
            let byte = hex::decode(spec["fill"].as_str().unwrap()).unwrap()[0];
            vec![byte; spec["len"].as_u64().unwrap() as usize]
        }
        Value::Object(spec) if spec.contains_key("every_byte") => (0..=255).collect(),
        other => panic!("not a key or id: {other}"),
    }
}

fn number(value: &Value) -> f64 {
    match value {
        Value::String(text) => text.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

/// Builds the case's ring: `Err` when building fails, or `Ok(None)` when an
/// id is not UTF-8, which `&str` cannot even carry into the API.
fn build(case: &Value) -> Result<Option<Ring>, RingError> {
    let mut builder = Ring::builder();
    let options = &case["options"];
    if let Some(name) = options["algorithm"].as_str() {
        builder = builder.algorithm(name.parse()?);
    }
    if let Some(vnodes) = options["vnodes"].as_u64() {
        builder = builder.vnodes(vnodes as u32);
    }
    if let Some(seed) = options["seed"].as_u64() {
        builder = builder.seed(seed);
    }
    if let Some(size) = options["table_size"].as_u64() {
        builder = builder.table_size(size as u32);
    }
    for node in case["nodes"].as_array().unwrap() {
        let (id, weight, zone) = match node {
            Value::String(_) => (node, 1.0, None),
            spec => (&spec["id"], number(&spec["weight"]), spec["zone"].as_str()),
        };
        let Ok(id) = String::from_utf8(bytes(id)) else { return Ok(None) };
        let node = Node::new(id, weight);
        builder = builder.nodes([match zone {
            Some(zone) => node.with_zone(zone),
            None => node,
        }]);
    }
    builder.build().map(Some)
}

/// Runs the case's operation: the answer as JSON (an id, a list of ids, or
/// `true` when the operation returns nothing).
fn run(case: &Value) -> Result<Option<Value>, RingError> {
    let Some(ring) = build(case)? else { return Ok(None) };
    let op = &case["op"];
    let ids = |nodes: Vec<&Node>| Value::from(nodes.iter().map(|n| n.id()).collect::<Vec<_>>());
    Ok(Some(if let Some(key) = op.get("get") {
        Value::from(ring.get(bytes(key))?.id())
    } else if let Some(args) = op.get("get_n") {
        ids(ring.get_n(bytes(&args[0]), args[1].as_u64().unwrap() as usize)?)
    } else if let Some(hash) = op.get("get_by_hash") {
        Value::from(ring.get_by_hash(hash.as_u64().unwrap())?.id())
    } else if let Some(id) = op.get("remove") {
        Value::from(ring.without_node(id.as_str().unwrap())?.nodes().len())
    } else if let Some(id) = op.get("add") {
        Value::from(ring.with_node(Node::new(id.as_str().unwrap(), 1.0))?.nodes().len())
    } else if let Some(epsilon) = op.get("tracker") {
        Value::from(LoadTracker::new(Arc::new(ring), number(epsilon))?.balance_factor())
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
    assert!(cases.len() >= 30, "the table lost rows");
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
        // A non-UTF-8 id has no Rust spelling: `String::from_utf8` refused it.
        (Ok(None), Some(wanted)) => {
            (!wanted["rust"].as_str().unwrap().starts_with("(no path")).then(|| format!("{name}: id not UTF-8"))
        }
        (outcome, _) => Some(format!("{name}: got {outcome:?}, expected {expect}")),
    }
}
