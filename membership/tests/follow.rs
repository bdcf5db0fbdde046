//! Followers on a real etcd: joins, leaves, weight and config changes,
//! lease expiry, malformed records, 1,000 members, and the file source.

mod common;

use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{Etcd, eventually};
use shardring::{Algorithm, Node, Ring};
use shardring_membership::{Admin, Event, Follower, FollowerOptions, Member, MemberRecord, ParamsRecord};

const PREFIX: &str = "/shardring/test";
const WAIT: Duration = Duration::from_secs(10);

/// The ring the records describe, built from scratch: members in id order.
fn expected(params: &ParamsRecord, members: &BTreeMap<&str, (f64, Option<&str>)>) -> Ring {
    let nodes = members.iter().map(|(id, (weight, zone))| {
        let node = Node::new(*id, *weight);
        match zone {
            Some(zone) => node.with_zone(*zone),
            None => node,
        }
    });
    let mut builder = Ring::builder().algorithm(params.algorithm).nodes(nodes);
    if let Some(v) = params.vnodes {
        builder = builder.vnodes(v);
    }
    builder.build().unwrap()
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
    let gone = Instant::now();
    eventually(Duration::from_secs(4), "m3's lease to expire", || follower.ring().position("m3").is_none());
    assert!(gone.elapsed() <= Duration::from_secs(3), "m3 lingered {:?} after its 2 s TTL", gone.elapsed());
    converges(&follower, 0, &expected(&params, &members));

    // Leaving revokes the lease: gone at once.
    let left = Instant::now();
    m1.leave();
    members.remove("m1");
    eventually(Duration::from_secs(2), "m1 to leave", || follower.ring().position("m1").is_none());
    assert!(left.elapsed() < Duration::from_secs(1));
    converges(&follower, 0, &expected(&params, &members));

    params.vnodes = Some(40);
    let revision = admin.set_config(&params).unwrap();
    converges(&follower, revision, &expected(&params, &members));
    assert_eq!(follower.ring().vnodes(), Some(40));
    params.algorithm = Algorithm::Rendezvous;
    params.vnodes = None;
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
    let missing = Follower::file(
        dir.path().join("absent.json"),
        FollowerOptions { initial_timeout: Duration::from_millis(300), ..Default::default() },
    );
    assert!(matches!(missing, Err(shardring_membership::MembershipError::Timeout { .. })), "{missing:?}");
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
    let params = ParamsRecord { algorithm: Algorithm::Memento, ..ParamsRecord::default() };
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
        Follower::etcd::<&str>(&[], PREFIX, FollowerOptions::default()),
        Err(MembershipError::InvalidEndpoint { .. })
    ));
    assert!(matches!(
        Follower::etcd(&["127.0.0.1:1"], "/", FollowerOptions::default()),
        Err(MembershipError::InvalidPrefix { .. })
    ));
    let quick = FollowerOptions { initial_timeout: Duration::from_millis(500), ..Default::default() };
    let started = Instant::now();
    let unreachable = Follower::etcd(&["127.0.0.1:1"], PREFIX, quick);
    assert!(matches!(unreachable, Err(MembershipError::Timeout { .. })), "{unreachable:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_burst_of_hundreds_of_changes_is_coalesced() {
    let etcd = Etcd::start();
    let endpoints = [etcd.url()];
    let mut admin = Admin::connect(&endpoints, PREFIX).unwrap();
    let follower = Follower::etcd(&endpoints, PREFIX, FollowerOptions::default()).unwrap();
    let events = follower.subscribe();
    let mut members = BTreeMap::new();
    let ids: Vec<String> = (0..500).map(|i| format!("burst-{i:03}")).collect();
    let mut revision = 0;
    for chunk in ids.chunks(100) {
        let batch: Vec<(&str, MemberRecord)> = chunk.iter().map(|id| (id.as_str(), MemberRecord::new(1.0))).collect();
        revision = admin.put_members(&batch).unwrap();
        members.extend(chunk.iter().map(|id| (id.as_str(), (1.0, None))));
    }
    // Then 200 single writes as fast as one connection sends them.
    for id in &ids[..200] {
        revision = admin.put_member(id, &MemberRecord::new(2.0)).unwrap();
        members.insert(id.as_str(), (2.0, None));
    }
    converges(&follower, revision, &expected(&ParamsRecord::default(), &members));
    let rings = events.try_iter().filter(|e| matches!(e, Event::Epoch { changed: true, .. })).count();
    println!("700 changes (500 members in 5 transactions, then 200 weight changes) became {rings} rings");
    assert!(rings <= 205, "{rings} rings for 205 revisions");
}
