//! The move lock on a real etcd: while a rebalancer holds `P/move`, every
//! membership write is refused with `MoveInProgress` and changes nothing; a
//! second mover cannot take it; the mover's own promotion is refused when
//! the members changed past the lock (written by etcdctl, or deleted), and
//! goes through when nothing did, also after the lock outlived its lease's
//! TTL (kept alive); a lock whose lease is gone says so.

mod common;

use std::time::Duration;

use common::Etcd;
use shardring::NodeState;
use shardring_membership::{Admin, Member, MemberRecord, MembershipError, ParamsRecord};

const PREFIX: &str = "/shardring/lock";

fn record(state: NodeState) -> MemberRecord {
    MemberRecord { state, ..MemberRecord::new(1.0) }
}

/// Each member's id and state, as etcd holds them.
fn states(admin: &mut Admin) -> Vec<(String, NodeState)> {
    admin.members().unwrap().into_iter().map(|m| (m.id, m.record.unwrap().state)).collect()
}

fn fingerprint(admin: &mut Admin) -> u64 {
    admin.fleet().unwrap().fingerprint.unwrap()
}

fn in_progress<T: std::fmt::Debug>(result: Result<T, MembershipError>) {
    match result {
        Err(MembershipError::MoveInProgress { prefix, revision }) => {
            assert_eq!(prefix, PREFIX);
            assert!(revision > 0);
        }
        other => panic!("expected MoveInProgress, got {other:?}"),
    }
}

fn changed<T: std::fmt::Debug>(result: Result<T, MembershipError>) {
    assert!(matches!(result, Err(MembershipError::MembershipChanged { .. })), "{result:?}");
}

#[test]
fn no_member_changes_while_a_move_holds_the_lock() {
    let etcd = Etcd::start();
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    let mut members: Vec<(&str, MemberRecord)> =
        ["a", "b", "c", "d"].into_iter().map(|id| (id, record(NodeState::Active))).collect();
    members.push(("e", record(NodeState::Warming)));
    admin.put_members(&members).unwrap();
    let plan = fingerprint(&mut admin);
    // A follower behind the records plans another transition: no lock.
    changed(admin.lock_move(plan ^ 1));
    let lock = admin.lock_move(plan).unwrap();
    let before = states(&mut admin);

    // A second mover, and every membership write, is refused.
    let mut other = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    in_progress(other.lock_move(plan));
    in_progress(other.set_state("e", NodeState::Active));
    in_progress(other.set_weight("a", 2.0));
    in_progress(other.leave("b"));
    in_progress(other.put_member("f", &record(NodeState::Warming)));
    in_progress(other.put_members(&[("f", record(NodeState::Active))]));
    in_progress(other.set_config(&ParamsRecord::default()));
    in_progress(Member::join(&[etcd.url()], PREFIX, "g", record(NodeState::Warming), Duration::from_secs(5)));
    assert_eq!(states(&mut other), before, "a refused write changed nothing");

    // A write past the lock: the mover's plan is stale and it promotes nothing.
    etcd.etcdctl(&["put", &format!("{PREFIX}/members/f"), r#"{"weight":1.0,"state":"warming"}"#]);
    changed(admin.finish_move(&lock, &["e"], &[]));
    assert_eq!(states(&mut admin).iter().find(|(id, _)| id == "e").unwrap().1, NodeState::Warming);
    drop(lock);

    // A member deleted past the lock (an agent's lease expiring) is caught too.
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    etcd.etcdctl(&["del", &format!("{PREFIX}/members/f")]);
    changed(admin.finish_move(&lock, &["e"], &[]));
    drop(lock);

    // Nothing changed past it: e turns active, d leaves, in one revision.
    admin.set_state("d", NodeState::Draining).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    // Kept alive past its lease's TTL of 10 s, as a long move's is.
    std::thread::sleep(Duration::from_secs(12));
    in_progress(other.set_weight("a", 2.0));
    let revision = admin.finish_move(&lock, &["e"], &["d"]).unwrap();
    let after: Vec<(String, NodeState)> =
        ["a", "b", "c", "e"].into_iter().map(|id| (id.to_owned(), NodeState::Active)).collect();
    assert_eq!(states(&mut admin), after);
    assert!(admin.members().unwrap().iter().all(|m| m.mod_revision <= revision));
    // The lock is held until dropped, then writes go through again.
    in_progress(other.set_weight("a", 2.0));
    drop(lock);
    other.set_weight("a", 2.0).unwrap();

    // A lock whose lease etcd no longer has (revoked here; expired while
    // etcd was out of reach in a real fleet) says so, and promotes nothing.
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    let lost = lock.lost();
    for lease in etcd.etcdctl(&["lease", "list"]).lines().skip(1) {
        etcd.etcdctl(&["lease", "revoke", lease.trim()]);
    }
    common::eventually(Duration::from_secs(10), "the lock sees its lease gone", || {
        lost.load(std::sync::atomic::Ordering::Acquire)
    });
    changed(admin.finish_move(&lock, &[], &["a"]));
    assert_eq!(states(&mut admin).len(), 4);
    assert_eq!(etcd.etcdctl(&["get", "--prefix", "--keys-only", &format!("{PREFIX}/move")]).trim(), "");
}

/// A key under `P/members/` that names no member (an empty id) is left out
/// of the ring and does not make every promotion fail; 130 members made
/// active at once exceed etcd's 128 operations a transaction and go in two.
#[test]
fn a_stray_member_key_and_more_changes_than_a_transaction_holds() {
    let etcd = Etcd::start();
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    let ids: Vec<String> = (0..130).map(|i| format!("m{i:03}")).collect();
    let warming: Vec<(&str, MemberRecord)> = ids.iter().map(|id| (id.as_str(), record(NodeState::Warming))).collect();
    admin.put_members(&warming[..100]).unwrap();
    admin.put_members(&warming[100..]).unwrap();
    admin.put_member("active", &record(NodeState::Active)).unwrap();
    etcd.etcdctl(&["put", &format!("{PREFIX}/members/"), r#"{"weight":1.0}"#]);
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    let activate: Vec<&str> = ids.iter().map(String::as_str).collect();
    admin.finish_move(&lock, &activate, &[]).unwrap();
    drop(lock);
    let states: Vec<(String, NodeState)> = admin
        .members()
        .unwrap()
        .into_iter()
        .filter(|m| !m.id.is_empty())
        .map(|m| (m.id, m.record.unwrap().state))
        .collect();
    assert_eq!(states.len(), 131);
    assert!(states.iter().all(|(_, state)| *state == NodeState::Active), "{states:?}");
}

/// A mover cut off from etcd (frozen here) cannot know whether its lease
/// lives: once no renewal was confirmed for 8 s of the 10 s TTL it counts
/// the lock as lost.
#[test]
fn a_lock_whose_renewals_go_unconfirmed_counts_as_lost() {
    let etcd = Etcd::start();
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    admin.put_members(&[("a", record(NodeState::Active)), ("b", record(NodeState::Warming))]).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    let lost = lock.lost();
    std::thread::sleep(Duration::from_secs(4));
    assert!(!lost.load(std::sync::atomic::Ordering::Acquire), "renewed while etcd answers");
    etcd.pause();
    let waited = common::eventually(Duration::from_secs(15), "the lock counts as lost", || {
        lost.load(std::sync::atomic::Ordering::Acquire)
    });
    etcd.resume();
    assert!(waited <= Duration::from_secs(9), "lost after {waited:?}");
    drop(lock);
}
