//! Followers on a real etcd: joins, leaves, weight and config changes,
//! lease expiry, malformed records, 1,000 members, a burst coalesced into a
//! few rings, idle connections that etcd's default keepalive policy keeps,
//! a frozen etcd noticed through keepalive pings, and the file source
//! (a wiped etcd: `restored.rs`).
//!
//! Waits have deadlines generous for a loaded 2-core machine (`WAIT`); the
//! times measured are printed rather than asserted.

mod common;

use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{Etcd, eventually};
use shardring::{Algorithm, Node, Ring};
use shardring_membership::{Admin, Event, Follower, FollowerOptions, Member, MemberRecord, ParamsRecord};

const PREFIX: &str = "/shardring/test";
/// The deadline for a change to reach a follower: generous, for a loaded
/// 2-core machine; the times measured are printed.
const WAIT: Duration = Duration::from_secs(30);

/// The ring the records describe, built from scratch: members in id order.
fn expected(params: &ParamsRecord, members: &BTreeMap<&str, (f64, Option<&str>)>) -> Ring {
    let nodes = members.iter().map(|(id, (weight, zone))| {
        let node = Node::new(*id, *weight);
        match zone {
            Some(zone) => node.with_zone(*zone),
            None => node,
        }
    });
    Ring::builder().params(params.params.clone()).nodes(nodes).build().unwrap()
}

/// Waits until the follower holds `revision`, then checks its ring is the
/// one the records describe.
fn converges(follower: &Follower, revision: i64, want: &Ring) {
    let epoch = follower.wait_for_revision(revision, WAIT).unwrap();
    assert!(epoch.revision >= revision);
    assert_eq!(epoch.fingerprint, want.fingerprint(), "at revision {}", epoch.revision);
    assert_eq!(epoch.fingerprint, epoch.ring.fingerprint());
    if want.live_node_count() == 0 {
        return assert_eq!(epoch.ring.live_node_count(), 0);
    }
    for i in 0..2000 {
        let key = format!("key-{i}");
        assert_eq!(epoch.ring.get(&key).unwrap().id(), want.get(&key).unwrap().id());
    }
}

fn rejected_keys(events: &Receiver<Event>) -> Vec<String> {
    events.try_iter().filter_map(|e| if let Event::Rejected(r) = e { Some(r.key) } else { None }).collect()
}

#[test]
fn members_join_leave_reweight_expire_and_the_config_changes() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let follower = Follower::etcd(&endpoints, PREFIX, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    let mut params = ParamsRecord::default();
    let mut members = BTreeMap::new();
    assert_eq!(follower.ring().nodes().len(), 0);

    let m1 = Member::join(&endpoints, PREFIX, "m1", MemberRecord::new(1.0), Duration::from_secs(3)).unwrap();
    members.insert("m1", (1.0, None));
    let revision = admin.members().unwrap()[0].mod_revision;
    converges(&follower, revision, &expected(&params, &members));

    let zoned = MemberRecord { zone: Some("z".into()), ..MemberRecord::new(2.0) };
    let m2 = Member::join(&endpoints, PREFIX, "m2", zoned, Duration::from_secs(3)).unwrap();
    members.insert("m2", (2.0, Some("z")));
    let revision = admin.members().unwrap()[1].mod_revision;
    converges(&follower, revision, &expected(&params, &members));

    let revision = admin.set_weight("m2", 3.0).unwrap();
    members.insert("m2", (3.0, Some("z")));
    converges(&follower, revision, &expected(&params, &members));
    assert_eq!(admin.members().unwrap()[1].record.as_ref().unwrap().weight, 3.0);

    // A member whose process dies: its lease expires after the TTL.
    let lease = etcd.etcdctl(&["lease", "grant", "2"]);
    let lease = lease.split_whitespace().nth(1).unwrap().to_owned();
    etcd.etcdctl(&["put", "--lease", &lease, &format!("{PREFIX}/members/m3"), r#"{"weight": 1}"#]);
    eventually(WAIT, "m3 to join", || follower.ring().position("m3").is_some());
    let gone = eventually(WAIT, "m3's lease to expire", || follower.ring().position("m3").is_none());
    println!(
        "m3 (a lease of 2 s never kept alive) left the follower's ring {:.2} s after it joined",
        gone.as_secs_f64()
    );
    converges(&follower, 0, &expected(&params, &members));

    // Leaving revokes the lease before it returns: the record is gone from
    // etcd at once, not when the 3 s TTL runs out.
    let left = Instant::now();
    m1.leave();
    assert!(admin.members().unwrap().iter().all(|m| m.id != "m1"), "m1's record outlived leave()");
    members.remove("m1");
    eventually(WAIT, "m1 to leave", || follower.ring().position("m1").is_none());
    println!("m1 left the follower's ring {:.3} s after leave() was called", left.elapsed().as_secs_f64());
    converges(&follower, 0, &expected(&params, &members));

    params.params.vnodes = Some(40);
    let revision = admin.set_config(&params).unwrap();
    converges(&follower, revision, &expected(&params, &members));
    assert_eq!(follower.ring().vnodes(), Some(40));
    params.params.algorithm = Algorithm::Rendezvous;
    params.params.vnodes = None;
    let revision = admin.set_config(&params).unwrap();
    converges(&follower, revision, &expected(&params, &members));

    // Removing a member whose agent runs: the agent sees its lease revoked and stops.
    let revision = admin.leave("m2").unwrap();
    members.remove("m2");
    converges(&follower, revision, &expected(&params, &members));
    eventually(WAIT, "m2's agent to notice", || m2.state() == shardring_membership::AgentState::Removed);

    let epochs: Vec<(i64, bool)> = events
        .try_iter()
        .filter_map(|e| if let Event::Epoch { revision, changed, .. } = e { Some((revision, changed)) } else { None })
        .collect();
    assert!(epochs.windows(2).all(|w| w[0].0 < w[1].0), "revisions only grow: {epochs:?}");
    assert!(epochs.iter().filter(|e| e.1).count() >= 8, "{epochs:?}");
}

#[test]
fn malformed_records_are_reported_by_key_and_the_rest_of_the_ring_is_built() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let member = |id: &str| format!("{PREFIX}/members/{id}");
    etcd.etcdctl(&["put", &member("good"), r#"{"weight": 2}"#]);
    etcd.etcdctl(&["put", &member("broken"), "{not json"]);
    etcd.etcdctl(&["put", &member("extra"), r#"{"weight": 1, "colour": "red"}"#]);
    etcd.etcdctl(&["put", &member("twice"), r#"{"weight": 1, "weight": 0}"#]);
    etcd.etcdctl(&["put", &member("negative"), r#"{"weight": -1}"#]);
    etcd.etcdctl(&["put", &member("nan"), r#"{"weight": null}"#]);
    etcd.etcdctl(&["put", &member("state"), r#"{"state": "asleep"}"#]);
    let follower = Follower::etcd(&endpoints, PREFIX, FollowerOptions::default()).unwrap();
    assert_eq!(follower.ring().nodes().iter().map(|n| n.id()).collect::<Vec<_>>(), ["good"]);

    let events = follower.subscribe();
    etcd.etcdctl(&["put", &member("late"), "[]"]);
    etcd.etcdctl(&["put", &member("negative"), r#"{"weight": 1}"#]);
    eventually(WAIT, "negative to be repaired", || follower.ring().position("negative").is_some());
    assert_eq!(rejected_keys(&events), [member("late")]);
    let ids: Vec<String> = follower.ring().nodes().iter().map(|n| n.id().to_owned()).collect();
    assert_eq!(ids, ["good", "negative"]);

    // An invalid config keeps the last ring and reports the config key; a
    // valid one applies.
    etcd.etcdctl(&["put", &format!("{PREFIX}/config"), r#"{"format_version": 1, "vnodes": 0}"#]);
    eventually(WAIT, "the bad config to be reported", || rejected_keys(&events).contains(&format!("{PREFIX}/config")));
    assert_eq!(follower.ring().nodes().len(), 2);
    etcd.etcdctl(&["put", &format!("{PREFIX}/config"), r#"{"format_version": 1, "vnodes": 7}"#]);
    eventually(WAIT, "the good config to apply", || follower.ring().vnodes() == Some(7));
    assert_eq!(follower.ring().point_count(), 7 * 3);
}

#[test]
fn reported_record_messages_name_the_field() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    etcd.etcdctl(&["put", &format!("{PREFIX}/members/x"), r#"{"weight": 1, "colour": 2}"#]);
    let (sender, receiver) = std::sync::mpsc::channel();
    let hook = Box::new(move |event: &Event, _: &std::sync::Arc<shardring_membership::Epoch>| {
        if let Event::Rejected(r) = event {
            let _ = sender.send(r.clone());
        }
    });
    let _follower =
        Follower::etcd(&endpoints, PREFIX, FollowerOptions { hook: Some(hook), ..Default::default() }).unwrap();
    let rejected = receiver.recv_timeout(WAIT).unwrap();
    assert_eq!(rejected.key, format!("{PREFIX}/members/x"));
    assert!(rejected.message.contains("unknown field `colour`"), "{}", rejected.message);
}

#[test]
fn a_thousand_members_converge_and_one_change_derives_quickly() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let mut members = BTreeMap::new();
    let ids: Vec<String> = (0..1000).map(|i| format!("cache-{i:04}")).collect();
    for id in &ids {
        admin.put_member(id, &MemberRecord::new(1.0)).unwrap();
        members.insert(id.as_str(), (1.0, None));
    }
    let follower = Follower::etcd(&endpoints, PREFIX, FollowerOptions::default()).unwrap();
    let params = ParamsRecord::default();
    converges(&follower, 0, &expected(&params, &members));
    assert_eq!(follower.ring().point_count(), 160_000);
    let mut swaps = Vec::new();
    for round in 0..10 {
        let id = format!("extra-{round}");
        let started = Instant::now();
        let revision = admin.put_member(&id, &MemberRecord::new(1.0)).unwrap();
        follower.wait_for_revision(revision, WAIT).unwrap();
        swaps.push(started.elapsed());
        members.insert(Box::leak(id.into_boxed_str()), (1.0, None));
    }
    converges(&follower, 0, &expected(&params, &members));
    swaps.sort();
    println!("1,000-member ring: write-to-swap p50 {:?}, max {:?}", swaps[swaps.len() / 2], swaps[swaps.len() - 1]);
}

#[test]
fn the_file_source_follows_atomic_replacements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.json");
    let write = |json: &str| {
        let temporary = dir.path().join("ring.json.tmp");
        std::fs::write(&temporary, json).unwrap();
        std::fs::rename(&temporary, &path).unwrap();
    };
    write(r#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}"#);
    let follower = Follower::file(&path, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    assert_eq!((follower.revision(), follower.ring().nodes().len()), (1, 2));
    write(r#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c", "weight": 2}]}"#);
    let epoch = follower.wait_for_revision(2, WAIT).unwrap();
    let want =
        Ring::from_json(r#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c", "weight": 2}]}"#)
            .unwrap();
    assert_eq!(epoch.fingerprint, want.fingerprint());
    write(r#"{"format_version": 1, "nodes": [{"id": "a"}], "nodes": []}"#);
    eventually(WAIT, "the duplicate key to be reported", || !rejected_keys(&events).is_empty());
    assert_eq!((follower.revision(), follower.ring().nodes().len()), (2, 3), "the last ring stays");
    // Written in place (not renamed) also counts.
    std::fs::write(&path, r#"{"format_version": 1, "nodes": [{"id": "z"}]}"#).unwrap();
    let epoch = follower.wait_for_revision(3, WAIT).unwrap();
    assert_eq!(epoch.ring.nodes()[0].id(), "z");
}

/// A config file that cannot be read, or whose config the core refuses,
/// fails `Follower::file` at once (not after the initial timeout, here 30 s)
/// with `MembershipError::File` naming the path and the reason, as the CLI
/// names it: the I/O error, or the byte, byte-order mark or value.
#[test]
fn a_file_that_cannot_be_read_or_is_refused_fails_at_once_naming_why() {
    use shardring_membership::MembershipError;
    let dir = tempfile::tempdir().unwrap();
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(r#"{"format_version": 1, "nodes": [{"id": "a"}]}"#.encode_utf16().flat_map(u16::to_le_bytes));
    let cases: [(&str, Option<Vec<u8>>, &str); 7] = [
        ("absent.json", None, "cannot read it: No such file or directory"),
        (
            "bom8.json",
            Some(b"\xEF\xBB\xBF{\"format_version\": 1, \"nodes\": []}".to_vec()),
            "byte-order mark (U+FEFF, bytes EF BB BF)",
        ),
        ("utf16.json", Some(utf16), "UTF-16 byte-order mark (bytes FF FE)"),
        (
            "latin1.json",
            Some(b"{\"format_version\": 1, \"nodes\": [{\"id\": \"caf\xE9\"}]}".to_vec()),
            "byte 0xE9 at line 1 column 44 (offset 43) is not UTF-8",
        ),
        (
            "down.json",
            Some(br#"{"format_version": 1, "algorithm": "ketama", "nodes": [{"id": "a:1", "down": true}]}"#.to_vec()),
            "do not apply to algorithm \"ketama\"",
        ),
        ("broken.json", Some(b"{".to_vec()), "invalid ring config: EOF while parsing an object"),
        ("directory", None, "cannot read it: Is a directory"),
    ];
    std::fs::create_dir(dir.path().join("directory")).unwrap();
    for (name, bytes, reason) in cases {
        let path = dir.path().join(name);
        if let Some(bytes) = bytes {
            std::fs::write(&path, bytes).unwrap();
        }
        let started = Instant::now();
        let result = Follower::file(&path, FollowerOptions { initial_timeout: WAIT, ..Default::default() });
        let took = started.elapsed();
        let Err(MembershipError::File { path: named, message }) = result else {
            panic!("{name}: {result:?}, expected MembershipError::File");
        };
        assert_eq!(named, path.display().to_string());
        assert!(message.contains(reason), "{name}: {message:?} does not say {reason:?}");
        assert!(took < Duration::from_secs(5), "{name}: refused after {took:?}, not at once");
        println!("{name}: refused in {took:?}: {message}");
    }
}

/// After the start, a reload that fails keeps the last ring and says why:
/// a config the core refuses is `Rejected` with its reason (the byte-order
/// mark, the Latin-1 byte), a file that is gone `Disconnected` with the I/O
/// error; a good file again is the next revision.
#[test]
fn a_reload_that_fails_keeps_the_ring_and_reports_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.json");
    let write = |bytes: &[u8]| {
        let temporary = dir.path().join("ring.json.tmp");
        std::fs::write(&temporary, bytes).unwrap();
        std::fs::rename(&temporary, &path).unwrap();
    };
    write(br#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}"#);
    let follower = Follower::file(&path, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    let fingerprint = follower.epoch().fingerprint;
    let mut seen = Vec::new();
    // Waits for an event that `matches`; gives every event seen meanwhile.
    let mut wait_for = |what: &str, matches: &dyn Fn(&Event) -> bool| {
        eventually(WAIT, what, || {
            seen.extend(events.try_iter());
            seen.iter().any(matches)
        });
        std::mem::take(&mut seen)
    };
    let bom = b"\xEF\xBB\xBF{\"format_version\": 1, \"nodes\": [{\"id\": \"c\"}]}";
    write(bom);
    wait_for(
        "the byte-order mark to be rejected",
        &|e| matches!(e, Event::Rejected(r) if r.key == path.display().to_string() && r.message.contains("byte-order mark (U+FEFF")),
    );
    // The same refused bytes written again (another watcher event, another
    // read) are not reported again: the Latin-1 rejection comes next.
    write(bom);
    std::thread::sleep(Duration::from_millis(300));
    write(b"{\"format_version\": 1, \"nodes\": [{\"id\": \"caf\xE9\"}]}");
    let meanwhile = wait_for(
        "the Latin-1 byte to be rejected",
        &|e| matches!(e, Event::Rejected(r) if r.message.contains("byte 0xE9 at line 1 column 44")),
    );
    let again = meanwhile.iter().filter(|e| matches!(e, Event::Rejected(r) if r.message.contains("U+FEFF"))).count();
    assert_eq!(again, 0, "the refused byte-order mark was reported again: a refused version is reported once");
    std::fs::remove_file(&path).unwrap();
    wait_for(
        "the missing file to be reported",
        &|e| matches!(e, Event::Disconnected { message } if message.contains("No such file or directory")),
    );
    assert_eq!((follower.revision(), follower.epoch().fingerprint), (1, fingerprint), "the last ring stays");
    assert!(follower.status().last_error.is_some_and(|e| e.contains("ring.json")));
    write(br#"{"format_version": 1, "nodes": [{"id": "z"}]}"#);
    let epoch = follower.wait_for_revision(2, WAIT).unwrap();
    assert_eq!(epoch.ring.nodes()[0].id(), "z");
}

/// memento's placement depends on the order of removals, which member
/// records under leases cannot carry: etcd refuses it (the follower keeps
/// its ring and reports the config key), and a config file, which carries
/// the history, is followed like any other.
#[test]
fn memento_is_followed_from_a_file_and_refused_in_etcd() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    etcd.etcdctl(&["put", &format!("{PREFIX}/members/a"), "{}"]);
    etcd.etcdctl(&["put", &format!("{PREFIX}/members/b"), "{}"]);
    let follower = Follower::etcd(&endpoints, PREFIX, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    etcd.etcdctl(&["put", &format!("{PREFIX}/config"), r#"{"format_version": 1, "algorithm": "memento"}"#]);
    eventually(WAIT, "the memento config to be reported", || {
        rejected_keys(&events).contains(&format!("{PREFIX}/config"))
    });
    assert_eq!(follower.ring().algorithm(), Algorithm::Ring, "the last ring stays");
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let params = ParamsRecord::new(shardring::RingParams::new(Algorithm::Memento));
    let refused = admin.set_config(&params).unwrap_err().to_string();
    assert!(refused.contains("order in which nodes were removed"), "{refused}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.json");
    let ring = Ring::builder()
        .algorithm(Algorithm::Memento)
        .nodes((0..5).map(|i| Node::new(format!("shard-{i}"), 1.0)))
        .build()
        .and_then(|r| r.without_node("shard-1"))
        .and_then(|r| r.without_node("shard-3"))
        .unwrap();
    std::fs::write(&path, ring.to_config().to_json()).unwrap();
    let follower = Follower::file(&path, FollowerOptions::default()).unwrap();
    assert_eq!(follower.ring().fingerprint(), ring.fingerprint());
    assert_eq!(follower.ring().removed_buckets(), Some(&[1, 3][..]));
}

#[test]
fn bad_endpoints_and_prefixes_are_typed_errors() {
    use shardring_membership::MembershipError;
    assert!(matches!(
        Follower::etcd(&["nowhere"], PREFIX, FollowerOptions::default()),
        Err(MembershipError::InvalidEndpoint { .. })
    ));
    assert!(matches!(
        Follower::etcd(&[] as &[&str], PREFIX, FollowerOptions::default()),
        Err(MembershipError::InvalidEndpoint { .. })
    ));
    assert!(matches!(
        Follower::etcd(&["127.0.0.1:1"], "/", FollowerOptions::default()),
        Err(MembershipError::InvalidPrefix { .. })
    ));
    // Nothing listens on port 1: the constructor gives up after its
    // initial_timeout, however long the follower's own retries would take.
    let initial_timeout = Duration::from_millis(500);
    let (sender, returned) = std::sync::mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let quick = FollowerOptions { initial_timeout, ..Default::default() };
        let _ = sender.send(Follower::etcd(&["127.0.0.1:1"], PREFIX, quick).map(drop));
    });
    let unreachable = returned.recv_timeout(WAIT).expect("Follower::etcd returns");
    let took = started.elapsed();
    println!("an unreachable etcd: Follower::etcd gave up after {:.3} s (initial_timeout 0.5 s)", took.as_secs_f64());
    assert!(matches!(unreachable, Err(MembershipError::Timeout { .. })), "{unreachable:?}");
    assert!(took >= initial_timeout, "gave up after {took:?}, before its initial_timeout");
}

/// Holds the follower's thread in its hook while armed: what a slow
/// subscriber or a long ring build does to the follower.
#[derive(Default)]
struct Gate {
    /// (armed for rings after this revision, a ring is held)
    state: std::sync::Mutex<(Option<i64>, bool)>,
    changed: std::sync::Condvar,
}

impl Gate {
    /// Called by the hook with each new ring: waits while the gate is armed
    /// for its revision (at most a minute, so a failing test cannot hang).
    fn pass(&self, revision: i64) {
        let mut state = self.state.lock().unwrap();
        if state.0.is_none_or(|after| revision <= after) {
            return;
        }
        state.1 = true;
        self.changed.notify_all();
        let _ = self.changed.wait_timeout_while(state, Duration::from_secs(60), |s| s.0.is_some()).unwrap();
    }

    /// Holds the first ring after revision `after`. (Not any ring: the
    /// follower may still be announcing its first ring, whose epoch is
    /// in place before `Follower::etcd` returns and whose hook runs after.)
    fn arm(&self, after: i64) {
        *self.state.lock().unwrap() = (Some(after), false);
    }

    /// Waits until the follower is held on a ring.
    fn wait_held(&self) {
        let state = self.state.lock().unwrap();
        let (state, _) = self.changed.wait_timeout_while(state, WAIT, |s| !s.1).unwrap();
        assert!(state.1, "the follower built no ring within {WAIT:?}");
    }

    fn open(&self) {
        self.state.lock().unwrap().0 = None;
        self.changed.notify_all();
    }
}

/// Changes that reach a busy follower become one ring, not one ring each.
/// The follower is held on the burst's first ring (100 members in one
/// transaction) while the rest is written: 4 more transactions of 100
/// members, then 200 single weight changes, 204 revisions that etcd sends
/// as one watch response each. Released, it finds them all waiting and must
/// build a handful of rings (at most 10 for the 204 revisions, whatever
/// the load: they are all received before it resumes; one ring per
/// response would be 204). The last ring is the ring of a fresh read of
/// etcd, at the last write's revision.
#[test]
fn a_burst_of_hundreds_of_changes_is_coalesced() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let gate = std::sync::Arc::new(Gate::default());
    let hook = {
        let gate = std::sync::Arc::clone(&gate);
        Box::new(move |event: &Event, _: &std::sync::Arc<shardring_membership::Epoch>| {
            if let Event::Epoch { changed: true, revision, .. } = event {
                gate.pass(*revision);
            }
        })
    };
    let follower =
        Follower::etcd(&endpoints, PREFIX, FollowerOptions { hook: Some(hook), ..Default::default() }).unwrap();
    let events = follower.subscribe();
    let mut members = BTreeMap::new();
    let ids: Vec<String> = (0..500).map(|i| format!("burst-{i:03}")).collect();
    let mut revisions = Vec::new();
    gate.arm(follower.epoch().revision);
    for (n, chunk) in ids.chunks(100).enumerate() {
        let batch: Vec<(&str, MemberRecord)> = chunk.iter().map(|id| (id.as_str(), MemberRecord::new(1.0))).collect();
        revisions.push(admin.put_members(&batch).unwrap());
        members.extend(chunk.iter().map(|id| (id.as_str(), (1.0, None))));
        if n == 0 {
            gate.wait_held();
        }
    }
    for id in &ids[..200] {
        revisions.push(admin.put_member(id, &MemberRecord::new(2.0)).unwrap());
        members.insert(id.as_str(), (2.0, None));
    }
    let last = *revisions.last().unwrap();
    assert_eq!(revisions.len(), 205);
    assert!(revisions.windows(2).all(|w| w[1] == w[0] + 1), "one revision per write: {revisions:?}");
    let held = events.try_iter().filter(|e| matches!(e, Event::Epoch { changed: true, .. })).count();
    assert_eq!(held, 0, "the follower's first ring of the burst is held in the hook");
    gate.open();
    let epoch = follower.wait_for_revision(last, WAIT).unwrap();
    assert_eq!(epoch.revision, last, "the last ring is at the last write's revision");
    converges(&follower, last, &expected(&ParamsRecord::default(), &members));
    // A fresh read of etcd, built without the follower's code.
    let fresh = admin.members().unwrap();
    assert_eq!(fresh.len(), 500);
    let nodes = fresh.iter().map(|m| Node::new(m.id.as_str(), m.record.as_ref().unwrap().weight));
    let fresh = Ring::builder().nodes(nodes).build().unwrap();
    converges(&follower, last, &fresh);
    // The epoch at `last` is in place before its event is sent: read until
    // that event arrives rather than what happens to be queued.
    let mut rings: Vec<i64> = Vec::new();
    let deadline = Instant::now() + WAIT;
    while rings.last() != Some(&last) {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(Event::Epoch { revision, changed: true, .. }) => rings.push(revision),
            Ok(_) => {}
            Err(error) => panic!("no ring at {last} announced ({error}); rings so far {rings:?}"),
        }
    }
    println!(
        "a burst of 205 revisions (500 members in 5 transactions, then 200 weight changes) became {} rings, at revisions {rings:?} of {}..={last}",
        rings.len(),
        revisions[0]
    );
    assert_eq!(rings.first(), Some(&revisions[0]), "the held ring comes first");
    assert_eq!(rings.last(), Some(&last));
    assert!(rings.len() <= 10, "{} rings for 205 revisions: {rings:?}", rings.len());
}

/// How long the idle test leaves its clients alone: an hour shortened.
/// etcd keeps no state about an idle connection but its count of pings
/// that came too early, which a compliant client never raises, so 60 s
/// (6 of the follower's pings) shows what an hour would. (Planted, the
/// old 2 s ping on idle connections was cut 7 times in these 60 s, the
/// member agent 6 times.)
const IDLE: Duration = Duration::from_secs(60);

/// etcd started with its default keepalive flags (`--grpc-keepalive-min-time`
/// 5 s between a client's pings, and one ping in 2 h on a connection
/// without an open stream) closes a client that pings more often as abusive
/// (`too_many_pings`). A follower (its watch open), a member agent (its
/// lease keep-alive stream open, answered every 10 s) and an admin
/// connection (no stream between calls), left idle against it, lose no
/// connection: none is reported, none leaves the kernel's TCP table, and
/// the admin's next write reaches the follower.
#[test]
fn idle_clients_stay_connected_to_an_etcd_with_default_keepalive_flags() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    admin.put_member("static", &MemberRecord::new(1.0)).unwrap();
    let (sender, events) = std::sync::mpsc::channel();
    let sender = std::sync::Mutex::new(sender);
    let hook = Box::new(move |event: &Event, _: &std::sync::Arc<shardring_membership::Epoch>| {
        if let Event::Disconnected { .. } | Event::Reconnected { .. } = event {
            let _ = sender.lock().unwrap().send((Instant::now(), event.clone()));
        }
    });
    let follower =
        Follower::etcd(&endpoints, PREFIX, FollowerOptions { hook: Some(hook), ..Default::default() }).unwrap();
    let before_join = etcd.client_connections();
    let member = Member::join(&endpoints, PREFIX, "agent", MemberRecord::new(1.0), Duration::from_secs(30)).unwrap();
    let lease = member.state();
    eventually(WAIT, "the agent to join", || follower.ring().position("agent").is_some());
    // The clients' TCP connections to etcd (etcd's own gateway connection
    // among them), once the agent's thread has opened its own: a connection
    // etcd closes is gone from the table, and a reconnection is a new port.
    eventually(WAIT, "the agent's connection", || {
        let open = etcd.client_connections();
        before_join.is_subset(&open) && open.len() > before_join.len()
    });
    let connections = etcd.client_connections();
    let epochs = follower.status().epochs;
    let mut every_connection = connections.clone();
    let started = Instant::now();
    // The agent's state, sampled often enough to see a reconnection (its
    // backoff alone is 100 ms).
    let mut member_states = Vec::new();
    while started.elapsed() < IDLE {
        let state = member.state();
        if member_states.last() != Some(&state) {
            member_states.push(state);
        }
        every_connection.extend(etcd.client_connections());
        std::thread::sleep(Duration::from_millis(20));
    }
    let open_after = etcd.client_connections();
    let follower_events: Vec<(Duration, Event)> =
        events.try_iter().map(|(at, event)| (at.saturating_duration_since(started), event)).collect();
    let disconnects = follower_events.iter().filter(|(_, e)| matches!(e, Event::Disconnected { .. })).count();
    let member_disconnects =
        member_states.iter().filter(|s| matches!(s, shardring_membership::AgentState::Disconnected { .. })).count();
    println!(
        "idle {IDLE:?} against an etcd with default flags: the follower lost its connection {disconnects} times, \
         the member agent {member_disconnects} times"
    );
    assert_eq!(
        disconnects,
        0,
        "the follower's first connection events: {:?}",
        &follower_events[..2.min(follower_events.len())]
    );
    assert_eq!(member_states, [lease], "the agent's states");
    println!(
        "{} connections to etcd before the idle time, {} after, {} in all",
        connections.len(),
        open_after.len(),
        every_connection.len()
    );
    assert_eq!((&open_after, &every_connection), (&connections, &connections), "local ports of connections to etcd");
    let status = follower.status();
    assert!(status.connected && status.last_error.is_none(), "{status:?}");
    assert_eq!(status.epochs, epochs, "nothing changed, so no epoch either");
    let revision = admin.put_member("late", &MemberRecord::new(1.0)).unwrap();
    let epoch = follower.wait_for_revision(revision, WAIT).unwrap();
    let mut ids: Vec<&str> = epoch.ring.nodes().iter().map(|n| n.id()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["agent", "late", "static"]);
    assert!(events.try_iter().next().is_none(), "no connection event after the idle time either");
}

/// An etcd that stops answering without closing its connections (frozen
/// with SIGSTOP, as a hung server or a partition that drops packets) is
/// noticed only through keepalive pings: the follower reports the lost
/// connection within its ping interval plus ping timeout (10 s + 5 s; the
/// deadline here is three times that), answers from its last ring meanwhile,
/// and catches up once etcd answers again.
#[test]
fn a_follower_notices_an_etcd_that_stops_answering() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    admin.put_member("a", &MemberRecord::new(1.0)).unwrap();
    let (sender, events) = std::sync::mpsc::channel();
    let sender = std::sync::Mutex::new(sender);
    let hook = Box::new(move |event: &Event, _: &std::sync::Arc<shardring_membership::Epoch>| {
        let _ = sender.lock().unwrap().send((Instant::now(), event.clone()));
    });
    let follower =
        Follower::etcd(&endpoints, PREFIX, FollowerOptions { hook: Some(hook), ..Default::default() }).unwrap();
    let before = follower.epoch();
    etcd.pause();
    let paused = Instant::now();
    let deadline = paused + Duration::from_secs(45);
    let (noticed, message) = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok((at, Event::Disconnected { message })) => break (at - paused, message),
            Ok(_) => continue,
            Err(_) => {
                etcd.resume();
                panic!("a frozen etcd went unnoticed for 45 s: {:?}", follower.status());
            }
        }
    };
    println!("etcd frozen: the follower reported it after {:.1} s ({message})", noticed.as_secs_f64());
    let status = follower.status();
    assert!(!status.connected, "{status:?}");
    assert_eq!(follower.epoch().fingerprint, before.fingerprint, "the last ring stays");
    assert_eq!(follower.ring().get("key").unwrap().id(), "a");
    etcd.resume();
    let resumed = Instant::now();
    let deadline = resumed + Duration::from_secs(45);
    let back = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left).expect("a reconnection within 45 s of etcd answering again") {
            (at, Event::Reconnected { .. }) => break at - resumed,
            _ => continue,
        }
    };
    println!("etcd answering again: the follower reconnected after {:.1} s", back.as_secs_f64());
    let revision = admin.put_member("b", &MemberRecord::new(1.0)).unwrap();
    let epoch = follower.wait_for_revision(revision, WAIT).unwrap();
    assert_eq!(epoch.fingerprint, Ring::builder().node("a", 1.0).node("b", 1.0).build().unwrap().fingerprint());
}
