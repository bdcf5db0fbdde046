//! Every subcommand and error path of the `shardring` binary. Text outputs
//! of small configs are compared with golden files in `tests/data/`; lookups
//! are checked against the core library itself.

use assert_cmd::Command;
use shardring::Ring;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn data(name: &str) -> String {
    format!("{DATA}/{name}")
}

fn shardring() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
}

fn stdout(args: &[&str]) -> String {
    let output = shardring().args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn ring(name: &str) -> Ring {
    Ring::from_json(&std::fs::read_to_string(data(name)).unwrap()).unwrap()
}

#[test]
fn lookup_from_arguments_and_stdin_matches_the_library() {
    let ring = ring("three.json");
    let out = stdout(&["lookup", &data("three.json"), "user:1", "café", ""]);
    let expected: String =
        ["user:1", "café", ""].iter().map(|k| format!("{k}\t{}\n", ring.get(k).unwrap().id())).collect();
    assert_eq!(out, expected);

    let keys = std::fs::read_to_string(data("keys.txt")).unwrap();
    let output = shardring()
        .args(["lookup", &data("three.json"), "--replicas", "2"])
        .write_stdin(keys.clone())
        .output()
        .unwrap();
    let expected: String = keys
        .lines()
        .map(|k| {
            let ids: Vec<&str> = ring.get_n(k, 2).unwrap().iter().map(|n| n.id()).collect();
            format!("{k}\t{}\n", ids.join(","))
        })
        .collect();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

#[test]
fn stats_and_diff_match_golden_outputs() {
    let stats = stdout(&["stats", &data("three.json"), "--keys", &data("keys.txt")]);
    assert_eq!(stats, std::fs::read_to_string(data("stats.golden")).unwrap());
    let diff = stdout(&["diff", &data("three.json"), &data("four.json")]);
    assert_eq!(diff, std::fs::read_to_string(data("diff.golden")).unwrap());
}

#[test]
fn diff_json_is_the_exact_library_diff() {
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&["diff", "--json", &data("three.json"), &data("four.json")])).unwrap();
    let exact = ring("three.json").diff(&ring("four.json")).unwrap();
    assert_eq!(json["moved_share"].as_f64().unwrap(), exact.moved_share);
    let arcs = json["arcs"].as_array().unwrap();
    assert_eq!(arcs.len(), exact.arcs.len());
    for (arc, want) in arcs.iter().zip(&exact.arcs) {
        assert_eq!(arc["start"], want.start.to_string());
        assert_eq!(arc["end"], want.end.to_string());
        assert_eq!((arc["from"].as_str().unwrap(), arc["to"].as_str().unwrap()), (want.from.as_str(), "d"));
    }
}

#[test]
fn simulate_reports_each_experiment_and_draws_the_chart() {
    let chart = std::env::temp_dir().join(format!("shardring-simulate-{}.svg", std::process::id()));
    let out =
        stdout(&["simulate", "--keys", "20000", "--nodes", "5", "--vnodes", "100", "--plot", chart.to_str().unwrap()]);
    let svg = std::fs::read_to_string(&chart).unwrap();
    std::fs::remove_file(&chart).unwrap();
    assert!(
        svg.starts_with("<svg")
            && svg.contains("keys per node against the mean")
            && svg.contains("share of keys moved")
    );
    for section in [
        "scale-out 5 -> 6",
        "scale-in 5 -> 4",
        "balance of 5 equal nodes",
        "failure of the most loaded node",
        "weights 1:2:1",
    ] {
        assert!(out.contains(section), "missing {section:?} in\n{out}");
    }
}

#[test]
fn simulate_compares_every_algorithm() {
    let out = stdout(&["simulate", "--algorithm", "all", "--keys", "20000", "--nodes", "5"]);
    let rows: Vec<&str> = out.lines().skip(2).take(9).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(names, shardring::Algorithm::ALL.map(|a| a.name()));
    let percent = |cell: &str| cell.trim_end_matches('%').parse::<f64>().unwrap();
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let (moved, to_new) = (percent(cells[1]), percent(cells[2]));
        // 5 -> 6 nodes: about a sixth moves, nearly all of it to the new node.
        assert!((10.0..25.0).contains(&moved) && to_new <= moved && to_new > 0.8 * moved, "{row}");
    }
    let one = stdout(&["simulate", "--algorithm", "jump", "--keys", "1000"]);
    assert_eq!(one.lines().filter(|l| l.starts_with("jump ")).count(), 1, "{one}");
}

#[test]
fn simulate_bounded_keeps_every_node_within_its_bound() {
    let out = stdout(&["simulate", "--bounded", "0.05,1", "--keys", "20000"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("bounded, epsilon"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Three workloads and the failure scenario for each, two epsilons each.
    assert_eq!(rows.len(), 12, "{out}");
    for row in &rows[..6] {
        let (max_over_mean, bound): (f64, f64) = (row[3].parse().unwrap(), row[4].parse().unwrap());
        assert!(max_over_mean <= bound + 1e-9, "{row:?}");
    }
    assert!(out.contains("Zipf s = 1.1") && out.contains("failure of one node at 80% utilisation"));
    let err = shardring().args(["simulate", "--bounded", "0"]).output().unwrap();
    assert_eq!(err.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&err.stderr).contains("epsilon must be finite and > 0, got 0"));
}

#[test]
fn configs_of_other_algorithms_place_through_the_library() {
    let ring = ring("memcached.json");
    let out = stdout(&["lookup", &data("memcached.json"), "user:1", "SVa_]_V41)"]);
    assert_eq!(out, format!("user:1\t{}\nSVa_]_V41)\t10.0.1.7:11211\n", ring.get("user:1").unwrap().id()));
    let stats = stdout(&["stats", &data("memcached.json")]);
    assert!(stats.starts_with("3 nodes, algorithm ketama, 472 points, seed 0"), "{stats}");
    // Table and point-free algorithms place too.
    let dir = std::env::temp_dir().join(format!("shardring-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for algorithm in ["jump", "rendezvous", "maglev", "slots"] {
        let path = dir.join(format!("{algorithm}.json"));
        let config =
            format!(r#"{{"format_version": 1, "algorithm": "{algorithm}", "nodes": [{{"id": "a"}}, {{"id": "b"}}]}}"#);
        std::fs::write(&path, &config).unwrap();
        let ring = Ring::from_json(&config).unwrap();
        let out = stdout(&["lookup", path.to_str().unwrap(), "user:1"]);
        assert_eq!(out, format!("user:1\t{}\n", ring.get("user:1").unwrap().id()), "{algorithm}");
        let diff = stdout(&["diff", path.to_str().unwrap(), path.to_str().unwrap()]);
        assert!(diff.contains("0.00"), "{algorithm}: {diff}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_naming_the_file_and_value_with_exit_code_2() {
    let cases: [(Vec<String>, &str); 6] = [
        (vec!["stats".into(), data("missing.json")], "missing.json: No such file or directory"),
        (vec!["stats".into(), data("broken.json")], "broken.json: invalid ring config: EOF while parsing"),
        (
            vec!["stats".into(), data("unknown-field.json")],
            "unknown-field.json: invalid ring config: unknown field `colour`",
        ),
        (
            vec!["lookup".into(), data("bad-weight.json"), "k".into()],
            "bad-weight.json: invalid weight -1 for node \"a\"",
        ),
        (vec!["diff".into(), data("three.json"), data("seeded.json")], "rings have different seeds (0 and 1)"),
        (
            vec!["stats".into(), data("three.json"), "--keys".into(), data("nope.txt")],
            "nope.txt: No such file or directory",
        ),
    ];
    for (args, message) in cases {
        let output = shardring().args(&args).output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr.starts_with("shardring: ") && stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
    let output = shardring().args(["lookup", &data("three.json"), "--replicas", "0", "k"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    // A failed lookup writes no half line before the error.
    let output = shardring().args(["lookup", &data("drained.json"), "k"]).output().unwrap();
    assert_eq!((output.status.code(), output.stdout.as_slice()), (Some(2), &b""[..]));
    assert!(String::from_utf8(output.stderr).unwrap().contains("drained.json: ring has no points"));
    let output = shardring().args(["diff", &data("three.json"), &data("drained.json")]).output().unwrap();
    assert!(String::from_utf8(output.stderr).unwrap().contains("drained.json: ring has no points"));
    // A config must be a JSON object, not a struct spelled as an array.
    let array = std::env::temp_dir().join(format!("shardring-array-{}.json", std::process::id()));
    std::fs::write(&array, r#"[1, "ring", 160, 0, [["a", 1.0, null]]]"#).unwrap();
    let output = shardring().args(["stats", array.to_str().unwrap()]).output().unwrap();
    std::fs::remove_file(&array).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8(output.stderr).unwrap().contains("expected a JSON object, found an array"));
}
