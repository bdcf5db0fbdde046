//! The command line's rows of `testdata/bad-inputs.json` (`cli_cases`, the
//! second table of `docs/bad-inputs.md`), each run through the built
//! `shardring` binary: its files written to a temporary directory, its
//! arguments and standard input given as bytes, and its standard output or
//! its one-line error compared exactly.

use std::collections::BTreeMap;

use assert_cmd::Command;
use serde_json::Value;

const CASES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bad-inputs.json");

/// The bytes a value of the file stands for: a string's UTF-8 bytes, or
/// `{"hex": "..."}`.
fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Object(spec) => hex::decode(spec["hex"].as_str().unwrap()).unwrap(),
        other => panic!("not bytes: {other}"),
    }
}

/// `text` with each `{name}` of a file replaced by that file's path.
fn expand(text: &[u8], paths: &BTreeMap<String, String>) -> Vec<u8> {
    let mut text = text.to_vec();
    for (name, path) in paths {
        let placeholder = format!("{{{name}}}");
        while let Some(at) = text.windows(placeholder.len()).position(|w| w == placeholder.as_bytes()) {
            text.splice(at..at + placeholder.len(), path.bytes());
        }
    }
    text
}

#[cfg(unix)]
fn argument(bytes: Vec<u8>) -> std::ffi::OsString {
    std::os::unix::ffi::OsStringExt::from_vec(bytes)
}

/// What is wrong with one row's outcome, if anything.
fn check(case: &Value) -> Option<String> {
    let name = case["name"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut paths = BTreeMap::new();
    for (file, content) in case["files"].as_object().into_iter().flatten() {
        let path = dir.path().join(format!("{file}.txt"));
        std::fs::write(&path, bytes(content)).unwrap();
        paths.insert(file.clone(), path.to_str().unwrap().to_owned());
    }
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("shardring"));
    for arg in case["args"].as_array().unwrap() {
        command.arg(argument(expand(&bytes(arg), &paths)));
    }
    command.write_stdin(case.get("stdin").map(bytes).unwrap_or_default());
    let output = command.output().unwrap();
    let expect = &case["expect"];
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(stdout) = expect.get("stdout") {
        let wanted = expand(&bytes(stdout), &paths);
        return (!output.status.success() || output.stdout != wanted).then(|| {
            format!(
                "{name}: exit {:?}, stdout {:?}, stderr {stderr:?}; expected {:?}",
                output.status.code(),
                output.stdout.escape_ascii().to_string(),
                wanted.escape_ascii().to_string()
            )
        });
    }
    let wanted = format!("shardring: {}\n", String::from_utf8(expand(&bytes(&expect["error"]), &paths)).unwrap());
    (output.status.code() != Some(2) || stderr != wanted || !output.stdout.is_empty()).then(|| {
        format!(
            "{name}: exit {:?}, stderr {stderr:?}, stdout {:?}; expected exit 2 and {wanted:?}",
            output.status.code(),
            output.stdout
        )
    })
}

#[test]
fn every_command_line_row_behaves_as_documented() {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(CASES_PATH).unwrap()).unwrap();
    let cases = file["cli_cases"].as_array().unwrap();
    assert!(cases.len() >= 13, "the command line's table lost rows");
    let failures: Vec<String> = cases.iter().filter_map(check).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
