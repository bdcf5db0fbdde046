//! Every subcommand and error path of the `shardring` binary. Text outputs
//! of small configs are compared with golden files in `tests/data/`; lookups
//! are checked against the core library itself.

use assert_cmd::Command;
use shardring::Ring;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn data(name: &str) -> String {
    format!("{DATA}/{name}")
}

/// The binary, without the environment's etcd endpoints and prefix (a
/// developer's shell may export them).
fn shardring() -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("shardring"));
    command.env_remove("SHARDRING_ETCD_ENDPOINTS").env_remove("SHARDRING_PREFIX");
    command
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
    let rows: Vec<&str> = out.lines().skip(2).take(shardring::Algorithm::ALL.len()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(names, shardring::Algorithm::ALL.map(|a| a.name()));
    let percent = |cell: &str| cell.trim_end_matches('%').parse::<f64>().unwrap();
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let (moved, to_new) = (percent(cells[1]), percent(cells[2]));
        // 5 -> 6 nodes: about a sixth moves, nearly all of it to the new node;
        // Envoy's and gRPC's rings shrink every host's points as one joins,
        // so more moves there, some of it between old hosts, as in Envoy.
        let (most, new_share) = if cells[0].ends_with("ring-hash") { (35.0, 0.5) } else { (25.0, 0.8) };
        assert!((10.0..most).contains(&moved) && to_new <= moved && to_new > new_share * moved, "{row}");
        // A middle node of 5 leaving: memento and the continuum move about a
        // fifth; jump and jumpback renumber the nodes after it.
        let mid_out = percent(cells[3]);
        match cells[0] {
            "memento" | "ring" | "rendezvous" => assert!((15.0..25.0).contains(&mid_out), "{row}"),
            "jump" | "jumpback" => assert!(mid_out > 40.0, "{row}"),
            _ => {}
        }
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
        (
            vec!["stats".into(), data("broken.json")],
            "broken.json: invalid ring config: nodes: EOF while parsing a list at line 2 column 0",
        ),
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

/// Writes `text` as `name` in a fresh temporary directory (kept while the
/// returned guard lives).
fn scratch(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.to_str().unwrap().to_owned())
}

/// A config of nodes with these ids, weight 1 each.
fn config(ids: &[&str]) -> String {
    let nodes: Vec<serde_json::Value> = ids.iter().map(|id| serde_json::json!({ "id": id })).collect();
    serde_json::json!({ "format_version": 1, "nodes": nodes }).to_string()
}

/// Runs the binary and returns its exit code and stderr, asserting the
/// one-line "shardring: ..." shape of a refused input.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let output = shardring().args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("shardring: ") && stderr.lines().count() == 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (output.status.code(), stderr)
}

#[test]
fn ids_longer_than_a_format_width_are_printed_in_full_in_stats_and_diff() {
    // Rust's format width must be below 65,536: such ids used to panic (exit 101).
    let long = "x".repeat(65_536);
    let (_dir, path) = scratch("long.json", &config(&[&long, "b"]));
    let (_dir2, keys) = scratch("keys.txt", "user:1\nuser:2\n");
    let out = stdout(&["stats", &path, "--keys", &keys]);
    let lines: Vec<&str> = out.lines().collect();
    // The id column stops widening at 64 characters; a longer id is printed
    // whole and pushes only its own row to the right.
    assert!(
        lines[1].starts_with(&format!("{:<64}  {:>7}  {:>8}  {:>8}  {:>9}", "node", "weight", "fair", "owns", "keys"))
    );
    assert!(lines[2].starts_with(&format!("{long}        1   50.000%")), "{}", &lines[2][65_530..]);
    assert!(lines[3].starts_with(&format!("{:<64}        1   50.000%", "b")), "{}", lines[3]);
    assert_eq!(lines[4], "2 keys");

    let short = "y".repeat(65_535);
    let (_dir3, old) = scratch("old.json", &config(&["b"]));
    let (_dir4, new) = scratch("new.json", &config(&[&short, "b"]));
    let out = stdout(&["diff", &old, &new]);
    let exact = Ring::from_json(&config(&["b"])).unwrap().diff(&Ring::from_json(&config(&[&short, "b"])).unwrap());
    let exact = exact.unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("moved: {:.4}% of keys, in {} arcs", 100.0 * exact.moved_share, exact.arcs.len()));
    assert_eq!(lines[1], format!("  b -> {short}  {:>8.4}%", 100.0 * exact.flows[0].share));
    let json = stdout(&["diff", "--json", &old, &new]);
    assert!(json.contains(&format!("\"to\": \"{short}\"")));
}

#[test]
fn ids_are_aligned_by_characters_not_bytes() {
    let (_dir, path) = scratch("utf8.json", &config(&["café", "b"]));
    let out = stdout(&["stats", &path]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "node   weight      fair      owns");
    assert!(lines[2].starts_with("café        1   50.000%"), "{}", lines[2]);
    assert!(lines[3].starts_with("b           1   50.000%"), "{}", lines[3]);
}

#[test]
fn stats_refuses_an_empty_key_file_and_names_the_config_of_a_drained_ring() {
    let (_dir, keys) = scratch("empty.txt", "");
    let (code, stderr) = refused(&["stats", &data("three.json"), "--keys", &keys]);
    assert_eq!(code, Some(2));
    assert_eq!(stderr, format!("shardring: {keys}: no keys (one key per line, or NUL-terminated with --null)\n"));
    // Empty lines are empty keys (the key rule of `lookup`), so a file of them is a sample.
    let (_dir, blank) = scratch("blank.txt", "\n\n");
    assert!(stdout(&["stats", &data("three.json"), "--keys", &blank]).contains("\n2 keys\n"));
    let (_dir, keys) = scratch("keys.txt", "k\n");
    let (code, stderr) = refused(&["stats", &data("drained.json"), "--keys", &keys]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with(&format!("shardring: {}: ring has no points", data("drained.json"))), "{stderr}");
}

#[test]
fn an_unwritable_stderr_does_not_turn_an_error_into_a_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
        .args(["stats", &data("missing.json")])
        .stderr(full)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

#[test]
fn bad_flags_on_every_subcommand_are_one_line_and_exit_code_2() {
    let three = data("three.json");
    let cases: [(&[&str], &str); 16] = [
        (&["lookup"], "the following required arguments were not provided: <CONFIG>"),
        (&["lookup", &three, "--replicas", "-1", "k"], "unexpected argument '-1'"),
        (
            &["lookup", &three, "--replicas", "4294967296", "k"],
            "invalid value '4294967296' for '--replicas <REPLICAS>'",
        ),
        (&["lookup", &three, "--bogus"], "unexpected argument '--bogus'"),
        (&["stats"], "the following required arguments were not provided"),
        (&["stats", &three, "--keys"], "a value is required for '--keys <KEYS>'"),
        (&["stats", &three, &three], "unexpected argument"),
        (&["diff", &three], "the following required arguments were not provided: <NEW>"),
        (&["diff", &three, &three, "--json=yes"], "unexpected value 'yes' for '--json'"),
        (&["simulate", "--nodes", "0"], "invalid value '0' for '--nodes <NODES>': 0 is not in 2..=10000"),
        (&["simulate", "--nodes", "1"], "1 is not in 2..=10000"),
        (&["simulate", "--keys", "18446744073709551616"], "invalid value '18446744073709551616' for '--keys <KEYS>'"),
        (&["simulate", "--keys", "100000001"], "100000001 is not in 1..=100000000"),
        (&["simulate", "--vnodes", "0"], "0 is not in 1..=100000"),
        (&["simulate", "--algorithm", "jump", "--bounded", "0.1"], "cannot be used with"),
        (&["simulate", "--algorithm", "nope"], "invalid value 'nope' for '--algorithm <NAME|all>'"),
    ];
    for (args, message) in cases {
        let (code, stderr) = refused(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // More points than a ring may hold is an error of the ring, not a crash.
    let (code, stderr) = refused(&["simulate", "--nodes", "10000", "--vnodes", "100000", "--keys", "1"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("over the limit of 16777216"), "{stderr}");
    // Help and version still print on stdout with success.
    assert!(stdout(&["simulate", "--help"]).contains("--bounded"));
    assert!(stdout(&["--version"]).starts_with("shardring "));
}

/// A loopback `host:port` nothing listens on (bound, then closed).
fn closed_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

#[test]
fn a_rebalance_whose_sources_all_fail_says_so_before_any_figure() {
    let (a, b, c) = (closed_address(), closed_address(), closed_address());
    let (_old_dir, old) = scratch("old.json", &config(&[&a, &b]));
    let (_new_dir, new) = scratch("new.json", &config(&[&a, &b, &c]));
    let exact = Ring::from_json(&config(&[&a, &b])).unwrap().diff(&Ring::from_json(&config(&[&a, &b, &c])).unwrap());
    let predicted = 100.0 * exact.unwrap().moved_share;
    for backend in ["memcached", "redis"] {
        let run = |extra: &[&str]| {
            let mut args = vec!["rebalance", "--from", &old, "--to", &new, "--backend", backend];
            args.extend_from_slice(extra);
            let output = shardring().args(&args).output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
            String::from_utf8(output.stdout).unwrap()
        };
        // It used to read "dry run: 0 of 0 keys would move (0.000%; the diff predicts ...)".
        let dry = run(&["--dry-run"]);
        let lines: Vec<&str> = dry.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "dry run FAILED: no source could be listed (2 of 2 failed, errors below): nothing is known of what \
                 would move (the diff predicts {predicted:.3}%)"
            ),
            "{backend}"
        );
        let mut sources = [&a, &b];
        sources.sort();
        assert_eq!(lines.len(), 3, "{backend}: {dry}");
        for (line, server) in lines[1..].iter().zip(sources) {
            assert!(line.starts_with(&format!("  {server}: FAILED: {server}: ")), "{backend}: {line}");
        }
        let moved = run(&[]);
        assert_eq!(
            moved.lines().next().unwrap(),
            format!(
                "rebalance FAILED: no source could be listed (2 of 2 failed, errors below): nothing moved (the diff \
                 predicts {predicted:.3}%)"
            ),
            "{backend}"
        );
        let json: serde_json::Value = serde_json::from_str(&run(&["--dry-run", "--json"])).unwrap();
        assert_eq!((json["servers_failed"].as_u64(), json["scanned"].as_u64()), (Some(2), Some(0)), "{json}");
    }
}

#[test]
fn help_names_every_algorithm_and_every_member_subcommand() {
    // `simulate --help` listed 9 of the 20 algorithms `--algorithm` accepts.
    let help = stdout(&["simulate", "--help"]);
    for algorithm in shardring::Algorithm::ALL {
        assert!(
            help.contains(&format!(" {},", algorithm.name())),
            "simulate --help lacks {}: {help}",
            algorithm.name()
        );
    }
    assert!(help.contains(" all]"), "{help}");
    // `member --help` left set-state out of its summary.
    let help = stdout(&["member", "--help"]);
    let (summary, commands) = help.split_once("Commands:").unwrap();
    let names: Vec<&str> = commands
        .lines()
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert_eq!(names, ["join", "set-state", "leave", "set-weight", "list", "config", "abandon-move", "roles"]);
    for name in names {
        assert!(summary.contains(name), "member --help's summary lacks {name}: {summary}");
    }
}

#[test]
fn watch_and_rebalance_name_every_source_they_can_follow() {
    let cases: [(&[&str], &str); 5] = [
        // `watch` without arguments named only --file.
        (
            &["watch"],
            "shardring: the following required arguments were not provided: --etcd <ETCD> and --prefix <PREFIX> (or \
             SHARDRING_ETCD_ENDPOINTS and SHARDRING_PREFIX), or --file <FILE>\n",
        ),
        (
            &["watch", "--etcd", "http://127.0.0.1:9"],
            "shardring: the following required arguments were not provided: --prefix <PREFIX> (or SHARDRING_PREFIX)\n",
        ),
        (
            &["watch", "--file", "ring.json", "--prefix", "/p"],
            "shardring: the argument '--file' cannot be used with '--prefix'\n",
        ),
        (
            &["rebalance", "--backend", "redis"],
            "shardring: the following required arguments were not provided: --etcd <ETCD> and --prefix <PREFIX> (or \
             SHARDRING_ETCD_ENDPOINTS and SHARDRING_PREFIX), or --from <FROM> and --to <TO>\n",
        ),
        (
            &["rebalance", "--backend", "redis", "--from", "a", "--to", "b", "--etcd", "http://127.0.0.1:9"],
            "shardring: the argument '--from' cannot be used with '--etcd'\n",
        ),
    ];
    for (args, message) in cases {
        let (code, stderr) = refused(args);
        assert_eq!((code, stderr.as_str()), (Some(2), message), "{args:?}");
    }
}

#[test]
fn etcd_endpoints_and_prefix_come_from_the_environment_and_files_win_over_them() {
    let closed = format!("http://{}", closed_address());
    let env = [("SHARDRING_ETCD_ENDPOINTS", closed.as_str()), ("SHARDRING_PREFIX", "/shardring/test")];
    // `member list` with neither flag reaches the endpoint the environment names.
    let output = shardring().args(["member", "list"]).envs(env).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with(&format!("shardring: etcd at {closed}: ")), "{stderr}");
    // A flag beats the environment.
    let other = format!("http://{}", closed_address());
    let output = shardring().args(["member", "list", "--etcd", &other]).envs(env).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with(&format!("shardring: etcd at {other}: ")), "{stderr}");
    // A file source given on the command line is followed, the environment's etcd ignored.
    let (_dir, file) = scratch("one.json", &config(&["a"]));
    let output = shardring().args(["watch", "--file", &file, "--count", "1"]).envs(env).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(out.starts_with("epoch ") && out.ends_with("  1 node\n"), "{out}");
}

#[test]
fn one_node_and_one_key_are_singular() {
    let (_dir, one) = scratch("one.json", &config(&["a"]));
    let (_dir, key) = scratch("key.txt", "k\n");
    let out = stdout(&["stats", &one, "--keys", &key]);
    assert!(out.starts_with("1 node, 160 points"), "{out}");
    assert!(out.contains("\n1 key\n"), "{out}");
}

/// `watch --file` with a file the follower cannot use says why at once, as
/// `lookup` says it of the same file: it said "no ring from bom8.json within
/// 5.0s: no answer" after the whole wait, and "stream did not contain valid
/// UTF-8" without a position for a Latin-1 byte.
#[test]
fn watch_names_why_a_config_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"format_version": 1, "nodes": [{"id": "a"}]}"#;
    let files: [(&str, Vec<u8>); 4] = [
        ("bom8.json", [&b"\xEF\xBB\xBF"[..], good.as_bytes()].concat()),
        ("latin1.json", b"{\"format_version\": 1, \"nodes\": [{\"id\": \"caf\xE9\"}]}".to_vec()),
        (
            "down.json",
            br#"{"format_version": 1, "algorithm": "ketama", "nodes": [{"id": "a:1", "down": true}]}"#.to_vec(),
        ),
        ("broken.json", b"{".to_vec()),
    ];
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap();
        let started = std::time::Instant::now();
        let (code, watched) = refused(&["watch", "--file", path, "--count", "1"]);
        assert!(started.elapsed() < std::time::Duration::from_secs(4), "{name}: after {:?}", started.elapsed());
        let (_, looked_up) = refused(&["lookup", path, "k"]);
        assert_eq!((code, watched), (Some(2), looked_up), "{name}: watch says what lookup says");
    }
    let missing = dir.path().join("missing.json");
    let (code, stderr) = refused(&["watch", "--file", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("shardring: {}: cannot read it: No such file or directory (os error 2)\n", missing.display())
    );
    let (_, stderr) = refused(&["watch", "--file", dir.path().to_str().unwrap()]);
    assert!(stderr.ends_with(": cannot read it: Is a directory (os error 21)\n"), "{stderr}");
}
