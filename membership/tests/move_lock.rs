//! The move lock on a real etcd: while a rebalancer holds `P/move`, every
//! membership write is refused with `MoveInProgress` and changes nothing; a
//! second mover cannot take it; the mover's own promotion is refused when
//! the members changed past the lock (written by etcdctl, or deleted), and
//! goes through when nothing did, also after the lock outlived its lease's
//! TTL (kept alive); a lock whose lease is gone says so; a move whose mover
//! stops or dies stays recorded until a mover resumes and ends it, an
//! operator abandons it, or (promoted already) the ring is steady; a
//! record that cannot be read is said so, with why.

mod common;

use std::time::Duration;

use common::Etcd;
use shardring::NodeState;
use shardring_membership::{Admin, LeftMove, Member, MemberRecord, MembershipError, ParamsRecord};

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

/// A real etcd holding member `a` active and `b` warming: a transition to
/// move by, an admin connected to it, and the plan's fingerprint.
fn warming_fleet() -> (Etcd, Admin, u64) {
    let etcd = Etcd::start();
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    admin.put_members(&[("a", record(NodeState::Active)), ("b", record(NodeState::Warming))]).unwrap();
    let plan = fingerprint(&mut admin);
    (etcd, admin, plan)
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
    changed(admin.finish_move(&lock, &["e"], &[], false));
    assert_eq!(states(&mut admin).iter().find(|(id, _)| id == "e").unwrap().1, NodeState::Warming);
    // A mover that stops leaves its move recorded: the membership holds.
    drop(lock);
    in_progress(other.set_weight("a", 2.0));

    // The next mover takes it over and says the transition changed under
    // it; a member deleted past the lock (an agent's lease expiring) is
    // caught too.
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    assert_eq!(lock.resumed().map(|r| r.same_transition), Some(false));
    etcd.etcdctl(&["del", &format!("{PREFIX}/members/f")]);
    changed(admin.finish_move(&lock, &["e"], &[], false));
    drop(lock);
    // An operator abandons a move no mover finishes.
    assert!(admin.abandon_move().unwrap().is_some());
    assert_eq!(admin.abandon_move().unwrap(), None);

    // Nothing changed past it: e turns active, d leaves, in one revision.
    admin.set_state("d", NodeState::Draining).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    // Kept alive past its lease's TTL of 10 s, as a long move's is.
    std::thread::sleep(Duration::from_secs(12));
    in_progress(other.set_weight("a", 2.0));
    let revision = admin.finish_move(&lock, &["e"], &["d"], false).unwrap();
    let after: Vec<(String, NodeState)> =
        ["a", "b", "c", "e"].into_iter().map(|id| (id.to_owned(), NodeState::Active)).collect();
    assert_eq!(states(&mut admin), after);
    assert!(admin.members().unwrap().iter().all(|m| m.mod_revision <= revision));
    // The move is recorded until ended, then writes go through again.
    in_progress(other.set_weight("a", 2.0));
    admin.end_move(lock).unwrap();
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
    changed(admin.finish_move(&lock, &[], &["a"], false));
    assert_eq!(states(&mut admin).len(), 4);
    // Its mover is gone and the move stays recorded.
    assert_eq!(etcd.etcdctl(&["get", "--keys-only", &format!("{PREFIX}/mover")]).trim(), "");
    assert_eq!(etcd.etcdctl(&["get", "--keys-only", &format!("{PREFIX}/move")]).trim(), format!("{PREFIX}/move"));
    drop(lock);
}

/// A mover that dies loses its lease, but its move stays recorded: no
/// member changes, not even once the transition's keys could be half
/// moved for minutes; the next mover of the transition resumes it. On a
/// steady ring a record left by a mover that stopped after promoting goes
/// when nothing was left to do, and stays, said, when old copies were left
/// or the membership changed under an unpromoted move. A live mover's move
/// is neither abandoned nor cleared.
#[test]
fn a_move_whose_mover_died_stays_until_resumed_or_abandoned() {
    let etcd = Etcd::start();
    let mut admin = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    let mut other = Admin::connect(&[etcd.url()], PREFIX).unwrap();
    admin.put_members(&[("a", record(NodeState::Active)), ("b", record(NodeState::Active))]).unwrap();
    admin.put_member("c", &record(NodeState::Warming)).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    assert_eq!(lock.resumed(), None);
    // The refusal names the rebalancer to stop: this process, on this host.
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    match other.abandon_move() {
        Err(error @ MembershipError::MoverLives { .. }) => assert!(
            error.to_string().contains(&format!(
                "(it holds {PREFIX}/mover since revision {}: process {} on {host:?}): stop it first",
                lock.revision() + 1,
                std::process::id()
            )),
            "{error}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(other.clear_finished_move().unwrap(), Some(LeftMove::MoverLives { .. })));

    // The mover dies: its lease ends (revoked here, as etcd expires it 10 s after a SIGKILL).
    revoke_every_lease(&etcd);
    drop(lock);
    in_progress(other.set_state("c", NodeState::Active));
    in_progress(Member::join(&[etcd.url()], PREFIX, "d", record(NodeState::Warming), Duration::from_secs(5)));
    assert_eq!(other.clear_finished_move().unwrap(), None, "the transition is still under way");

    // The next mover resumes it; a second one waits.
    let lock = other.lock_move(plan).unwrap();
    let resumed = lock.resumed().expect("the unfinished move is taken over");
    assert!(resumed.same_transition && resumed.since > 0 && resumed.since < lock.revision(), "{resumed:?}");
    in_progress(admin.lock_move(plan));
    other.finish_move(&lock, &["c"], &[], false).unwrap();

    // It stops between promoting and ending the move: the record goes once the ring is steady.
    drop(lock);
    in_progress(admin.set_weight("a", 2.0));
    assert_eq!(admin.clear_finished_move().unwrap(), Some(LeftMove::Cleared { since: resumed.since }));
    admin.set_weight("a", 2.0).unwrap();
    assert_eq!(etcd.etcdctl(&["get", "--prefix", "--keys-only", &format!("{PREFIX}/move")]).trim(), "");

    // Stopped before deleting its old copies: the record stays, said, until abandoned.
    admin.put_member("d", &record(NodeState::Warming)).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    admin.finish_move(&lock, &["d"], &[], true).unwrap();
    drop(lock);
    let since = match admin.clear_finished_move().unwrap() {
        Some(LeftMove::OldCopiesLeft { since }) => since,
        other => panic!("expected OldCopiesLeft, got {other:?}"),
    };
    in_progress(admin.set_weight("a", 1.0));
    assert_eq!(admin.abandon_move().unwrap(), Some(since));

    // A member's lease ends under an unpromoted move: the ring is steady
    // again, but keys it moved may be on that server; the record stays.
    let agent = Member::join(&[etcd.url()], PREFIX, "e", record(NodeState::Warming), Duration::from_secs(5)).unwrap();
    let plan = fingerprint(&mut admin);
    let lock = admin.lock_move(plan).unwrap();
    drop(lock);
    drop(agent);
    common::eventually(Duration::from_secs(10), "e's record goes with its lease", || {
        states(&mut admin).iter().all(|(id, _)| id != "e")
    });
    assert!(matches!(admin.clear_finished_move().unwrap(), Some(LeftMove::NotPromoted { .. })));
    in_progress(admin.set_weight("a", 1.0));
}

/// Revokes every lease etcd holds, as etcd expires a dead holder's.
fn revoke_every_lease(etcd: &Etcd) {
    for lease in etcd.etcdctl(&["lease", "list"]).lines().skip(1) {
        etcd.etcdctl(&["lease", "revoke", lease.trim()]);
    }
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
    admin.finish_move(&lock, &activate, &[], false).unwrap();
    admin.end_move(lock).unwrap();
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
    let (etcd, mut admin, plan) = warming_fleet();
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

/// A move record written by hand that cannot be read is said so, with
/// why, not taken for a membership that changed under the move: a mover
/// takes it over as another transition's, and on a steady ring it stays
/// for an operator to abandon.
#[test]
fn an_unreadable_move_record_is_said_so_with_why() {
    let (etcd, mut admin, plan) = warming_fleet();
    let move_key = format!("{PREFIX}/move");
    let cases = [
        ("moving", "it is not JSON (expected value at line 1 column 1)"),
        (r#"{"revision": 5}"#, "it names no transition's fingerprint"),
        (r#"{"fingerprint": "0123"}"#, "its fingerprint \"0123\" is not 16 hex digits"),
        (r#"{"fingerprint": "zz23456789abcdef"}"#, "its fingerprint \"zz23456789abcdef\" is not 16 hex digits"),
        (r#"{"fingerprint": 7}"#, "its fingerprint 7 is not 16 hex digits"),
    ];
    for (value, why) in cases {
        etcd.etcdctl(&["put", &move_key, value]);
        let lock = admin.lock_move(plan).unwrap();
        let resumed = lock.resumed().expect("the record is taken over");
        assert_eq!((resumed.same_transition, resumed.unreadable.as_deref()), (false, Some(why)), "{value}");
        drop(lock);
        etcd.etcdctl(&["del", &format!("{PREFIX}/mover")]);
    }
    // Steady: the record stays, said unreadable.
    admin.abandon_move().unwrap();
    admin.set_state("b", NodeState::Active).unwrap();
    etcd.etcdctl(&["put", &move_key, "moving"]);
    match admin.clear_finished_move().unwrap() {
        Some(LeftMove::Unreadable { since, why }) => {
            assert!(since > 0);
            assert!(why.starts_with("it is not JSON"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(etcd.etcdctl(&["get", "--print-value-only", &move_key]).trim(), "moving", "kept");
}

/// A move record deleted by hand frees the membership, so the lock that
/// wrote it is lost within a renewal (every 3.3 s), its mover stops, and
/// it neither promotes nor ends the move; a
/// record taken over from a dead mover (kept by the put, with its create
/// revision) and a record rewritten by the mover's own promotion are not.
#[test]
fn a_move_record_deleted_by_hand_loses_the_lock() {
    let (etcd, mut admin, plan) = warming_fleet();
    drop(admin.lock_move(plan).unwrap());
    let lock = admin.lock_move(plan).unwrap();
    assert!(lock.resumed().is_some_and(|r| r.same_transition), "taken over");
    let lost = lock.lost();
    std::thread::sleep(Duration::from_secs(4));
    assert!(!lost.load(std::sync::atomic::Ordering::Acquire), "a record taken over is the lock's");
    etcd.etcdctl(&["del", &format!("{PREFIX}/move")]);
    common::eventually(Duration::from_secs(5), "the lock is lost", || lost.load(std::sync::atomic::Ordering::Acquire));
    // Nor does it promote, or end a move it no longer records.
    changed(admin.finish_move(&lock, &["b"], &[], false));
    assert_eq!(states(&mut admin)[1], ("b".to_owned(), NodeState::Warming));
    changed(admin.end_move(lock));
    assert_eq!(etcd.etcdctl(&["get", "--keys-only", "--prefix", &format!("{PREFIX}/move")]).trim(), "");

    let lock = admin.lock_move(plan).unwrap();
    assert_eq!(lock.resumed(), None);
    let lost = lock.lost();
    admin.finish_move(&lock, &["b"], &[], false).unwrap();
    std::thread::sleep(Duration::from_secs(4));
    assert!(!lost.load(std::sync::atomic::Ordering::Acquire), "promoted, the record is still the lock's");
    admin.end_move(lock).unwrap();
}
