//! `shardring rebalance --delete` against real redis-servers, where a
//! mistake deletes data: two nodes that reach one server are refused
//! before any copy (an `--address` naming another node's server, a name
//! resolving to it, another address of the same process), and every key
//! stays where it was; a move to a server of its own still moves and
//! deletes; a `--migrate` move to a target that is down fails naming the
//! servers and moves nothing; a `--migrate` report counts each key once.
//! The `--address` and `--rate` checks run before any server is contacted.

#[path = "../../membership/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::process::Output;

use assert_cmd::Command;
use common::Redis;
use shardring::handoff::MARK_PREFIX;
use shardring::{Ring, Transition};

const KEYS: usize = 1000;

fn config(ids: &[&str]) -> String {
    let nodes: Vec<String> = ids.iter().map(|id| format!("{{\"id\": \"{id}\"}}")).collect();
    format!("{{\"format_version\": 1, \"nodes\": [{}]}}", nodes.join(", "))
}

fn connection(server: &Redis) -> redis::Connection {
    redis::Client::open(format!("redis://{}/", server.address())).unwrap().get_connection().unwrap()
}

/// Every key of `server` with its value (handoff marks, hashes, left out).
fn contents(server: &Redis) -> BTreeMap<String, String> {
    let mut connection = connection(server);
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut connection).unwrap();
    keys.into_iter()
        .filter(|key| !key.starts_with(MARK_PREFIX))
        .map(|key| {
            let value: String = redis::cmd("GET").arg(&key).query(&mut connection).unwrap();
            (key, value)
        })
        .collect()
}

/// How many keys of `before` (two servers' contents) neither server holds `after`.
fn lost(before: &(Map, Map), after: &(Map, Map)) -> usize {
    before.0.keys().chain(before.1.keys()).filter(|k| !after.0.contains_key(*k) && !after.1.contains_key(*k)).count()
}

type Map = BTreeMap<String, String>;

/// Two servers holding `KEYS` keys placed by a ring of both, and the
/// config files of that ring and of one with `new` added.
struct Fleet {
    a: Redis,
    b: Redis,
    dir: tempfile::TempDir,
}

impl Fleet {
    fn start(a: Redis) -> Fleet {
        let fleet = Fleet { a, b: Redis::start(), dir: tempfile::tempdir().unwrap() };
        let (a, b) = (fleet.a.address(), fleet.b.address());
        let ring = Ring::from_json(&config(&[&a, &b])).unwrap();
        let (mut on_a, mut on_b) = (connection(&fleet.a), connection(&fleet.b));
        for i in 0..KEYS {
            let key = format!("key-{i}");
            let connection = if ring.get(&key).unwrap().id() == a { &mut on_a } else { &mut on_b };
            let () = redis::cmd("SET").arg(&key).arg(format!("value-{i}")).query(connection).unwrap();
        }
        std::fs::write(fleet.dir.path().join("from.json"), config(&[&a, &b])).unwrap();
        std::fs::write(fleet.dir.path().join("to.json"), config(&[&a, &b, "new"])).unwrap();
        fleet
    }

    fn rebalance(&self, extra: &[&str]) -> Output {
        let (from, to) = (self.dir.path().join("from.json"), self.dir.path().join("to.json"));
        let mut command = Command::new(assert_cmd::cargo::cargo_bin!("shardring"));
        command.arg("rebalance").arg("--from").arg(from).arg("--to").arg(to).args(["--backend", "redis"]);
        command.args(extra).env_remove("SHARDRING_ETCD_ENDPOINTS").env_remove("SHARDRING_PREFIX");
        command.output().unwrap()
    }

    fn contents(&self) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        (contents(&self.a), contents(&self.b))
    }

    /// How many of the keys the ring with `new` gives to `new`.
    fn moving(&self) -> u64 {
        let ring = Ring::from_json(&config(&[&self.a.address(), &self.b.address(), "new"])).unwrap();
        (0..KEYS).filter(|i| ring.get(format!("key-{i}")).unwrap().id() == "new").count() as u64
    }

    /// The handoff mark of the move to `new`.
    fn mark(&self) -> String {
        let (a, b) = (self.a.address(), self.b.address());
        let (old, new) =
            (Ring::from_json(&config(&[&a, &b])).unwrap(), Ring::from_json(&config(&[&a, &b, "new"])).unwrap());
        Transition::between(&old, &new).unwrap().handoff_mark()
    }

    /// The `--json` report of a run with `extra`, and its exit code.
    fn report(&self, extra: &[&str]) -> (serde_json::Value, Option<i32>) {
        let output = self.rebalance(&[extra, &["--json"]].concat());
        let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
            panic!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        });
        (report, output.status.code())
    }
}

/// The `to_move`, `copied`, `failed` and `late` counts of a `--json` report.
fn counts(report: &serde_json::Value) -> [u64; 4] {
    ["to_move", "copied", "failed", "late"].map(|field| report[field].as_u64().unwrap_or_else(|| panic!("{report}")))
}

/// The reviewer's case: `new` is given the server of node A. Without the
/// check, 575 keys "moved" (375 of them from A to A, found already there)
/// and all 575 were deleted: 375 keys lost. Now the run is refused before
/// any copy, naming both ids and the address, and no key changes.
#[test]
fn two_nodes_on_one_server_are_refused_before_any_copy() {
    let fleet = Fleet::start(Redis::start());
    let (a, before) = (fleet.a.address(), fleet.contents());
    assert_eq!(before.0.len() + before.1.len(), KEYS);
    let cases = [
        (format!("new={a}"), format!("nodes \"{a}\" (its id) and \"new\" (--address new={a}) are one server, {a}")),
        (
            format!("new=localhost:{}", fleet.a.port),
            format!(
                "nodes \"{a}\" (its id) and \"new\" (--address new=localhost:{}) are one server: {a} and \
                 localhost:{} both reach {a}",
                fleet.a.port, fleet.a.port
            ),
        ),
    ];
    for (address, says) in cases {
        for extra in [&["--delete"][..], &["--delete", "--dry-run"], &[]] {
            let mut args = vec!["--address", &address];
            args.extend_from_slice(extra);
            let output = fleet.rebalance(&args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert_eq!(lost(&before, &fleet.contents()), 0, "{args:?}: keys lost: {stdout}{stderr}");
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
            assert!(stderr.starts_with(&format!("shardring: {says}: a key moving between them")), "{args:?}: {stderr}");
            assert!(stdout.is_empty(), "{args:?}: nothing is reported, nothing ran");
            assert_eq!(fleet.contents(), before, "{args:?}: every key stays where it was");
        }
    }
}

/// Two addresses that differ (127.0.0.2 and 127.0.0.1, as a host's LAN
/// address and loopback would) can still reach one redis-server: its
/// run_id tells, and the run is refused before any copy.
#[test]
fn two_addresses_of_one_redis_process_are_refused_by_its_run_id() {
    let fleet = Fleet::start(Redis::start_on(&["127.0.0.1", "127.0.0.2"]));
    let (a, before) = (fleet.a.address(), fleet.contents());
    let other = format!("127.0.0.2:{}", fleet.a.port);
    let output = fleet.rebalance(&["--address", &format!("new={other}"), "--delete"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(lost(&before, &fleet.contents()), 0, "keys lost: {stdout}{stderr}");
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "shardring: nodes \"{a}\" ({a}) and \"new\" ({other}) are one server: both answer as redis run_id "
        )),
        "{stderr}"
    );
    assert_eq!(fleet.contents(), before, "every key stays where it was");
}

/// With a server of its own, `new` receives its keys and `--delete`
/// removes their old copies: nothing lost, nothing left behind.
#[test]
fn a_move_to_a_server_of_its_own_still_moves_and_deletes() {
    let fleet = Fleet::start(Redis::start());
    let new = Redis::start();
    let (a, b) = (fleet.a.address(), fleet.b.address());
    let before = fleet.contents();
    let output = fleet.rebalance(&["--address", &format!("new={}", new.address()), "--delete", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let ring = Ring::from_json(&config(&[&a, &b, "new"])).unwrap();
    let (after_a, after_b) = fleet.contents();
    let on_new = contents(&new);
    let all: BTreeMap<String, String> = before.0.into_iter().chain(before.1).collect();
    for (key, value) in &all {
        let (owner, holder) = match ring.get(key).unwrap().id() {
            id if id == a => (&after_a, "a"),
            id if id == b => (&after_b, "b"),
            _ => (&on_new, "new"),
        };
        assert_eq!(owner.get(key), Some(value), "{key} on {holder}");
    }
    assert_eq!(after_a.len() + after_b.len() + on_new.len(), KEYS, "each key on its owner only");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["deleted"].as_u64(), Some(on_new.len() as u64), "{report}");
}

/// A `--migrate` move whose target is down lists every source and fails on
/// the MIGRATEs: its report says which servers failed, not that no source
/// could be listed (as it did: the failures were the sources'), and no key
/// leaves its source.
#[test]
fn a_move_to_a_target_that_is_down_lists_the_sources_and_says_the_copies_failed() {
    let fleet = Fleet::start(Redis::start());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let before = fleet.contents();
    let output = fleet.rebalance(&["--address", &format!("new={closed}"), "--migrate"]);
    let report = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{report}{}", String::from_utf8_lossy(&output.stderr));
    let headline = report.lines().next().unwrap_or_default();
    assert!(headline.starts_with("rebalance FAILED on "), "{report}");
    assert!(!report.contains("no source could be listed"), "{report}");
    assert!(report.contains(&closed), "the report names the target that is down: {report}");
    // --migrate marks each source (the guard's key) before it moves any; its failed MIGRATEs leave keys in doubt there.
    assert_eq!(fleet.contents(), before, "every key stays on its source");
    let doubted: usize = [&fleet.a, &fleet.b]
        .map(|server| redis::cmd("HLEN").arg(fleet.mark()).query::<usize>(&mut connection(server)).unwrap() - 1)
        .iter()
        .sum();
    assert_eq!(doubted as u64, fleet.moving(), "every key of a failed MIGRATE stays in doubt");
    // Each key counts once, however many listings found it (4 listings
    // counted 1,396 "to move" of these 1,000 keys, and as many failed).
    let moving = fleet.moving();
    assert!(moving > 100, "{moving}");
    let (report, code) = fleet.report(&["--address", &format!("new={closed}"), "--migrate"]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(counts(&report), [moving, 0, moving, 0], "{report}");
    assert!(report["scans"].as_u64().unwrap() > 1, "{report}");
}

/// A `--migrate` move counts each moving key once: found, moved, none
/// failed; its dry run (two listings, no move) counts the same keys.
#[test]
fn a_migrate_move_and_its_dry_run_count_each_key_once() {
    let fleet = Fleet::start(Redis::start());
    let new = Redis::start();
    let moving = fleet.moving();
    let address = format!("new={}", new.address());
    let (plan, code) = fleet.report(&["--address", &address, "--migrate", "--dry-run"]);
    assert_eq!((code, plan["to_move"].as_u64()), (Some(0), Some(moving)), "{plan}");
    let (report, code) = fleet.report(&["--address", &address, "--migrate"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(counts(&report), [moving, moving, 0, 0], "{report}");
    assert_eq!(contents(&new).len() as u64, moving);
}

/// What a `MIGRATE` cut short by its target leaves, settled by the next
/// run: keys in doubt in the source's mark, with copies on the target. A
/// key a client deleted since (marked `deleted` by the guard) has its stale
/// copy deleted; one still on the source is moved again, replacing the
/// copy; one the source lacks unmarked (moved before the failure) keeps
/// its copy. Without the first, a `DEL` acknowledged during the move came
/// back from the target (WRONGTYPE for the writer's next `HSET` in
/// `test_handoff.py`'s target-restart case).
#[test]
fn keys_left_in_doubt_by_a_cut_short_migrate_are_settled() {
    settle_doubts(false);
}

/// The same on a source that evicts keys (a memory limit and an LRU
/// policy): a key in doubt it lacks may have been evicted after the failed
/// `MIGRATE` rather than moved, so its copy on the target is deleted too (a
/// miss, never a stale value). Before, such a copy served clients with the
/// value the source had evicted.
#[test]
fn on_an_evicting_source_a_key_in_doubt_it_lacks_loses_its_copy() {
    settle_doubts(true);
}

fn settle_doubts(evicting: bool) {
    let fleet = Fleet::start(Redis::start());
    let new = Redis::start();
    let mark = fleet.mark();
    if evicting {
        let mut source = connection(&fleet.a);
        let () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("100mb").query(&mut source).unwrap();
        let () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-lru").query(&mut source).unwrap();
    }
    let ring = Ring::from_json(&config(&[&fleet.a.address(), &fleet.b.address()])).unwrap();
    let goes = Ring::from_json(&config(&[&fleet.a.address(), &fleet.b.address(), "new"])).unwrap();
    let on_a: Vec<String> = (0..KEYS)
        .map(|i| format!("key-{i}"))
        .filter(|k| ring.get(k).unwrap().id() == fleet.a.address() && goes.get(k).unwrap().id() == "new")
        .take(3)
        .collect();
    let [deleted, still, moved] = [&on_a[0], &on_a[1], &on_a[2]];
    // No MIGRATE of this move puts a key that stays in doubt; should one be
    // there (written by hand), its doubt ends and its value stays.
    let stays = (0..KEYS)
        .map(|i| format!("key-{i}"))
        .find(|k| ring.get(k).unwrap().id() == fleet.a.address() && goes.get(k).unwrap().id() == fleet.a.address())
        .unwrap();
    let (mut source, mut target) = (connection(&fleet.a), connection(&new));
    let () = redis::cmd("HSET").arg(&mark).arg(&mark).arg(1).query(&mut source).unwrap();
    let () = redis::cmd("HSET").arg(&mark).arg(&stays).arg("deleted").query(&mut source).unwrap();
    let () = redis::cmd("SET").arg(&stays).arg("stays").query(&mut source).unwrap();
    let () = redis::cmd("HSET")
        .arg(&mark)
        .arg(deleted)
        .arg("deleted")
        .arg(still)
        .arg(1)
        .arg(moved)
        .arg(1)
        .query(&mut source)
        .unwrap();
    let () = redis::cmd("DEL").arg(deleted).arg(moved).query(&mut source).unwrap();
    let () = redis::cmd("SET").arg(still).arg("live").query(&mut source).unwrap();
    for key in [deleted, still] {
        let () = redis::cmd("SET").arg(key).arg("stale").query(&mut target).unwrap();
    }
    let () = redis::cmd("SET").arg(moved).arg("moved").query(&mut target).unwrap();
    let (report, code) = fleet.report(&["--address", &format!("new={}", new.address()), "--migrate"]);
    assert_eq!(code, Some(0), "{report}");
    let on_new = contents(&new);
    assert_eq!(on_new.get(deleted.as_str()), None, "the deleted key's stale copy is gone");
    assert_eq!(on_new.get(still.as_str()).map(String::as_str), Some("live"), "moved again, replacing the copy");
    let kept = if evicting { None } else { Some("moved") };
    assert_eq!(
        on_new.get(moved.as_str()).map(String::as_str),
        kept,
        "a key that moved keeps its copy, unless evicting"
    );
    let fields: Vec<String> = redis::cmd("HKEYS").arg(&mark).query(&mut source).unwrap();
    assert_eq!(fields, vec![mark], "no key is left in doubt");
    assert_eq!(contents(&fleet.a).get(stays.as_str()).map(String::as_str), Some("stays"), "a key that stays stays");
}

/// A copy run without `--delete` leaves old copies on servers that no
/// longer own their keys. `--migrate` moves only keys leaving their old
/// owner: it used to send such a copy to the key's owner with `MIGRATE ...
/// REPLACE`, overwriting the live value with the stale one, for a key that
/// stays on B as for one that moves from B to the new server.
#[test]
fn migrate_leaves_stale_copies_and_never_replaces_a_live_value() {
    let fleet = Fleet::start(Redis::start());
    let new = Redis::start();
    let (a, b) = (fleet.a.address(), fleet.b.address());
    let ring = Ring::from_json(&config(&[&a, &b])).unwrap();
    let goes = Ring::from_json(&config(&[&a, &b, "new"])).unwrap();
    let on_b = |to: &str| {
        (0..KEYS)
            .map(|i| format!("key-{i}"))
            .find(|k| ring.get(k).unwrap().id() == b && goes.get(k).unwrap().id() == to)
            .unwrap()
    };
    let (stays, leaves) = (on_b(&b), on_b("new"));
    let mut source = connection(&fleet.a);
    for key in [&stays, &leaves] {
        let () = redis::cmd("SET").arg(key).arg("stale").query(&mut source).unwrap();
    }
    let before = contents(&fleet.b);
    let (report, code) = fleet.report(&["--address", &format!("new={}", new.address()), "--migrate"]);
    assert_eq!(code, Some(0), "{report}");
    let (on_a, on_b, on_new) = (contents(&fleet.a), contents(&fleet.b), contents(&new));
    assert_eq!(on_b.get(stays.as_str()), before.get(stays.as_str()), "the owner's live value stays");
    assert_eq!(on_new.get(leaves.as_str()), before.get(leaves.as_str()), "the moved key holds its owner's value");
    for key in [&stays, &leaves] {
        assert_eq!(on_a.get(key.as_str()).map(String::as_str), Some("stale"), "the stale copy is left alone");
    }
}

/// A source whose handoff mark goes mid-move (evicted, flushed, deleted by
/// hand): guards there no longer send moved keys on, so the mover moves no
/// more keys from it and fails naming the mark. Before, the doubt script
/// wrote the mark anew, holding only its batch's keys, and the move went on.
#[test]
fn a_source_that_loses_its_mark_mid_move_stops_moving_and_says_why() {
    let fleet = Fleet::start(Redis::start());
    let new = Redis::start();
    let mark = fleet.mark();
    let (from, to) = (fleet.dir.path().join("from.json"), fleet.dir.path().join("to.json"));
    let address = format!("new={}", new.address());
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
        .args(["rebalance", "--backend", "redis", "--migrate", "--rate", "100", "--json", "--address", &address])
        .arg("--from")
        .arg(from)
        .arg("--to")
        .arg(to)
        .env_remove("SHARDRING_ETCD_ENDPOINTS")
        .env_remove("SHARDRING_PREFIX")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut source = connection(&fleet.a);
    let started = std::time::Instant::now();
    while !redis::cmd("HEXISTS").arg(&mark).arg(&mark).query::<bool>(&mut source).unwrap() {
        assert!(started.elapsed().as_secs() < 30, "the mover never set its mark");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let () = redis::cmd("DEL").arg(&mark).query(&mut source).unwrap();
    let output = child.wait_with_output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(output.status.code(), Some(1), "{report}");
    let error = report["servers"][fleet.a.address()]["error"].as_str().unwrap_or_else(|| panic!("{report}"));
    assert!(error.contains(&format!("the handoff mark {mark:?} is gone")), "{error}");
    let exists: bool = redis::cmd("EXISTS").arg(&mark).query(&mut source).unwrap();
    assert!(!exists, "no script wrote the mark anew");
}

/// `--address` and `--rate` are checked before anything runs, naming the
/// value: `id=:`, `id=[::1]` (no port) and `id=host:99999` used to fail
/// only when connecting, and `--rate 1e-300` panicked (exit 101) even in a
/// dry run.
#[test]
fn addresses_and_rates_are_checked_up_front_naming_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("from.json"), dir.path().join("to.json"));
    std::fs::write(&from, config(&["127.0.0.1:1", "127.0.0.1:2"])).unwrap();
    std::fs::write(&to, config(&["127.0.0.1:1", "127.0.0.1:2", "new"])).unwrap();
    let cases: [(&[&str], &str); 12] = [
        (
            &["--address", "new=:"],
            "invalid value 'new=:' for '--address <ID=HOST:PORT>': \"new=:\" is not ID=HOST:PORT: no host before the \
             port",
        ),
        (&["--address", "new=[::1]"], "\"new=[::1]\" is not ID=HOST:PORT: no port after [::1]: write [::1]:PORT"),
        (
            &["--address", "new=host:99999"],
            "\"new=host:99999\" is not ID=HOST:PORT: the port 99999 is not from 1 to 65535",
        ),
        (&["--address", "new=host:0"], "the port 0 is not from 1 to 65535"),
        (&["--address", "new=foo"], "\"new=foo\" is not ID=HOST:PORT: no port: write HOST:PORT"),
        (&["--address", "new=::1:6379"], "the IPv6 address ::1 must be in brackets: [::1]:6379"),
        (
            &[],
            "node \"new\" has no --address and its id is not a server address HOST:PORT (no port: write HOST:PORT): \
             give --address new=HOST:PORT",
        ),
        (
            &["--rate", "1e-300"],
            "invalid value '1e-300' for '--rate <RATE>': 1e-300 is not a number of keys per second from 0.001 to 1e9 \
             (leave --rate out for no limit)",
        ),
        (&["--rate", "0"], "0 is not a number of keys per second from 0.001 to 1e9"),
        (&["--rate", "-5"], "-5 is not a number of keys per second from 0.001 to 1e9"),
        (&["--rate", "NaN"], "NaN is not a number of keys per second from 0.001 to 1e9"),
        (&["--rate", "1e10"], "1e10 is not a number of keys per second from 0.001 to 1e9"),
    ];
    for (extra, says) in cases {
        for dry_run in [true, false] {
            let mut command = Command::new(assert_cmd::cargo::cargo_bin!("shardring"));
            command.arg("rebalance").arg("--from").arg(&from).arg("--to").arg(&to).args(["--backend", "redis"]);
            command.args(extra).args(if dry_run { &["--dry-run"][..] } else { &[] });
            if !extra.is_empty() && extra[0] == "--rate" {
                command.args(["--address", "new=127.0.0.1:3"]);
            }
            let output = command.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
            assert!(stderr.starts_with("shardring: ") && stderr.contains(says), "{extra:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{extra:?}: {stderr}");
        }
    }
}
