//! One move at a time per ring: [`MoveLock`]. The move is recorded in etcd
//! at `P/move` (no lease) by the rebalancer that moves a transition's keys,
//! from before the first key moves until its members are made active or
//! removed, and its live mover at `P/mover` (under the mover's lease).
//!
//! While a move is under way, the handoff (`core/SPEC.md`, *Handoff*) holds
//! only if every client routes by the transition the mover moves: a member
//! made active, added, removed or reweighted meanwhile would send a moving
//! key's commands to a server the mover does not move it to. So every
//! membership write of [`Admin`] and [`crate::Member`] is a transaction that
//! requires `P/move` to be absent ([`MembershipError::MoveInProgress`]
//! otherwise), and the mover's own promotion is a transaction that requires
//! the members and config to be exactly those its plan was made from
//! ([`MembershipError::MembershipChanged`] otherwise). A mover that dies
//! loses `P/mover` within its lease's TTL, but `P/move` stays: the next
//! mover takes the unfinished move over ([`MoveLock::resumed`]), and only
//! an operator's [`Admin::abandon_move`] ends it otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};

use crate::error::MembershipError;
use crate::etcd::{REQUEST_TIMEOUT, connect};
use crate::member::{Admin, Target, held_since, no_move, timed};
use crate::records::{KeyKind, Layout, MemberRecord, Records};

/// How long a dead mover's lock outlives it.
const LOCK_TTL: Duration = Duration::from_secs(10);

/// How long the lock goes without a confirmed renewal before it counts as
/// lost: the TTL less 2 s, so a mover stops before etcd may expire it.
const UNCONFIRMED_LIMIT: Duration = Duration::from_secs(LOCK_TTL.as_secs() - 2);

/// Up to this many members, a transaction compares each one's revision.
const PER_MEMBER_COMPARES: usize = 120;

/// etcd's default limit of operations in one transaction (`--max-txn-ops`).
const MAX_TXN_OPS: usize = 128;

/// A held move: the revision the plan was read at and what the members and
/// config were then. Dropping it revokes its lease, so `P/mover` goes and
/// `P/move` stays: the move counts as unfinished until a mover of the
/// transition ends it ([`Admin::end_move`]) or an operator abandons it
/// ([`Admin::abandon_move`]).
pub struct MoveLock {
    held: Reading,
    /// The fingerprint of the transition it moves.
    fingerprint: u64,
    /// The revision `P/move` and `P/mover` were written at.
    create_revision: i64,
    /// `P/move`'s create revision: `create_revision`, or an earlier one
    /// for a record taken over (a put keeps it, as the mover's own
    /// promotion does). Another means the record was deleted by hand.
    record_since: i64,
    lease: i64,
    resumed: Option<UnfinishedMove>,
    stop: Arc<AtomicBool>,
    lost: Arc<AtomicBool>,
    keeper: Option<JoinHandle<()>>,
    target: Target,
}

/// A move that a mover left unfinished (`P/move` without a live
/// `P/mover`: the mover died, stopped or lost its lease) and
/// [`Admin::lock_move`] took over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnfinishedMove {
    /// The etcd revision the unfinished move began at.
    pub since: i64,
    /// Whether it moved the transition the lock is taken for. `false`: the
    /// membership changed under it (a member agent's lease ended, or a
    /// write past the lock), so keys it moved may sit where the new
    /// transition does not look.
    pub same_transition: bool,
    /// Why its record cannot be read, if it cannot (written by hand: not
    /// JSON, or no fingerprint of 16 hex digits); such a move counts as
    /// another transition's (`same_transition` is `false`).
    pub unreadable: Option<String>,
}

/// A move record found on a steady ring with no mover
/// ([`Admin::clear_finished_move`]), or the mover that keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeftMove {
    /// A rebalancer still holds it (`P/mover`), or it changed while being
    /// looked at: look again later.
    MoverLives {
        /// The etcd revision the move began at.
        since: i64,
    },
    /// Its members changed state and nothing was left to do: deleted.
    Cleared {
        /// The etcd revision the move began at.
        since: i64,
    },
    /// Its members changed state, but its rebalancer stopped before it
    /// deleted every old copy (`--delete`): copies may sit on servers that
    /// no longer own them, and come back when a key moves there again.
    /// Kept, for an operator to abandon once they are deleted.
    OldCopiesLeft {
        /// The etcd revision the move began at.
        since: i64,
    },
    /// Its members never changed state: the membership changed under the
    /// move (a member's lease ended), so keys it moved may sit on a server
    /// outside the ring. Kept, for an operator to abandon once they are
    /// recovered.
    NotPromoted {
        /// The etcd revision the move began at.
        since: i64,
    },
    /// Its record cannot be read (written by hand: not JSON, or no
    /// fingerprint of 16 hex digits), so whether its move finished is
    /// unknown. Kept, for an operator to abandon once the keys are where
    /// the ring places them.
    Unreadable {
        /// The etcd revision the record was written at.
        since: i64,
        /// Why it cannot be read.
        why: String,
    },
}

/// `P/move`'s value: the plan's revision and the transition's fingerprint;
/// once its members changed state, `promoted` and whether old copies are
/// still to be deleted (`old_copies`).
fn record_value(revision: i64, fingerprint: u64, old_copies: Option<bool>) -> String {
    let stage = old_copies.map_or(String::new(), |left| format!(",\"promoted\":true,\"old_copies\":{left}"));
    format!("{{\"revision\":{revision},\"fingerprint\":\"{fingerprint:016x}\"{stage}}}")
}

/// A read of the ring's prefix for a move: the members and config to
/// compare later, the transition they make, the move record and its mover.
struct Reading {
    revision: i64,
    /// Every key under `P/members/` at the read, in key order.
    members: Vec<HeldMember>,
    config_mod_revision: i64,
    /// The fingerprint of the transition the records make and whether it
    /// is steady; `None` when they make no ring.
    transition: Option<(u64, bool)>,
    record: Option<MoveRecord>,
    /// `P/mover`, when a mover lives.
    mover: Option<Mover>,
}

/// `P/mover` as read: the revision it was written at and, when its value
/// names them, the rebalancer's process id and host.
struct Mover {
    since: i64,
    holder: Option<String>,
}

impl Mover {
    fn read(create_revision: i64, value: &[u8]) -> Mover {
        let value = serde_json::from_slice::<serde_json::Value>(value).unwrap_or_default();
        let holder = match (value.get("pid").and_then(|p| p.as_u64()), value.get("host").and_then(|h| h.as_str())) {
            (Some(pid), Some(host)) => Some(format!("process {pid} on {host:?}")),
            _ => None,
        };
        Mover { since: create_revision, holder }
    }
}

/// `P/mover`'s value: the revision of the membership read and who moves,
/// this process's id and host, so that an operator can find the
/// rebalancer (`{"revision": R, "pid": N, "host": "H"}`).
fn mover_value(revision: i64) -> String {
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    serde_json::json!({"revision": revision, "pid": std::process::id(), "host": host}).to_string()
}

/// `P/move` as read.
struct MoveRecord {
    create_revision: i64,
    mod_revision: i64,
    /// The fingerprint of the transition it moves, or why the record
    /// cannot be read (not JSON, or no fingerprint of 16 hex digits: one
    /// written by hand).
    fingerprint: Result<u64, String>,
    /// `Some(old_copies)` once its members changed state.
    promoted: Option<bool>,
}

/// A key under `P/members/` as the lock read it.
struct HeldMember {
    key: Vec<u8>,
    mod_revision: i64,
    lease: i64,
    /// Its record, or why it does not parse (or names no member).
    record: Result<MemberRecord, String>,
}

impl std::fmt::Debug for MoveLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MoveLock").field("revision", &self.held.revision).field("lease", &self.lease).finish()
    }
}

impl MoveLock {
    /// The etcd revision the members and config were read at.
    pub fn revision(&self) -> i64 {
        self.held.revision
    }

    /// The unfinished move this lock took over, if any.
    pub fn resumed(&self) -> Option<UnfinishedMove> {
        self.resumed.clone()
    }

    /// A flag that turns `true` once etcd answers that the lock's lease is
    /// gone, or no renewal was confirmed for 8 s of its 10 s TTL (etcd out
    /// of reach), or `P/move` is no longer the lock's record (deleted by
    /// hand, or deleted and created again, which frees the membership;
    /// looked at with each renewal, every 3.3 s): from then on another
    /// mover may take the move over, or the members change, so a mover
    /// stops moving and takes the lock anew. [`Admin::finish_move`]
    /// then fails with [`MembershipError::MembershipChanged`].
    pub fn lost(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.lost)
    }

    /// The compares under which this lock still holds the move: its own
    /// `P/mover` and its `P/move` record (neither deleted nor created
    /// anew since).
    fn holds(&self, layout: &Layout) -> [Compare; 2] {
        [
            Compare::create_revision(layout.mover_key(), CompareOp::Equal, self.create_revision),
            Compare::create_revision(layout.move_key(), CompareOp::Equal, self.record_since),
        ]
    }
}

impl MoveRecord {
    /// `P/move` read from its value and revisions.
    fn read(create_revision: i64, mod_revision: i64, value: &[u8]) -> MoveRecord {
        let value = serde_json::from_slice::<serde_json::Value>(value);
        let fingerprint = match &value {
            Err(error) => Err(format!("it is not JSON ({error})")),
            Ok(value) => match value.get("fingerprint") {
                Some(serde_json::Value::String(hex)) if hex.len() == 16 => {
                    u64::from_str_radix(hex, 16).map_err(|_| format!("its fingerprint {hex:?} is not 16 hex digits"))
                }
                Some(other) => Err(format!("its fingerprint {other} is not 16 hex digits")),
                None => Err("it names no transition's fingerprint".to_owned()),
            },
        };
        let promoted = value.as_ref().ok().and_then(|value| {
            (value.get("promoted") == Some(&serde_json::Value::Bool(true)))
                .then(|| value.get("old_copies") != Some(&serde_json::Value::Bool(false)))
        });
        MoveRecord { create_revision, mod_revision, fingerprint, promoted }
    }
    /// The compare under which `P/move` is still this record.
    fn unchanged(&self, layout: &Layout) -> Compare {
        Compare::mod_revision(layout.move_key(), CompareOp::Equal, self.mod_revision)
    }
}

impl Reading {
    /// The compares under which the members and config are still those
    /// read: no member key written since, the config's revision, and (when
    /// they fit etcd's default of 128 compares a transaction) each member's
    /// revision, which a deleted member fails; larger rings are checked for
    /// deletions by a read just before ([`Admin::finish_move`]).
    fn unchanged(&self, layout: &Layout) -> Vec<Compare> {
        let mut compares = vec![
            Compare::mod_revision(layout.members_prefix(), CompareOp::Less, self.revision + 1).with_prefix(),
            Compare::mod_revision(layout.config_key(), CompareOp::Equal, self.config_mod_revision),
        ];
        if self.members.len() <= PER_MEMBER_COMPARES {
            for member in &self.members {
                compares.push(Compare::mod_revision(member.key.clone(), CompareOp::Equal, member.mod_revision));
            }
        }
        compares
    }
}

impl Drop for MoveLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        let (target, lease) = (&self.target, self.lease);
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
            runtime.block_on(async {
                if let Ok(mut client) = connect(&target.endpoints, &target.access).await {
                    let _ = timed(target, client.lease_revoke(lease)).await;
                }
            });
        }
    }
}

impl Admin {
    /// Takes the move of the transition whose fingerprint is `fingerprint`
    /// ([`shardring::Transition::fingerprint`]): reads the members and
    /// config, checks that they make that transition, and writes `P/move`
    /// (`{"revision": R, "fingerprint": "<16 hex digits>"}`, no lease) and
    /// `P/mover` (`{"revision": R, "pid": N, "host": "H"}`, this process,
    /// under a lease kept alive until the lock
    /// is dropped), if no mover lives and nothing changed since the read.
    /// A `P/move` without a mover (a move left unfinished) is taken over:
    /// [`MoveLock::resumed`] says so, and whether it moved this transition.
    ///
    /// Errors: [`MembershipError::MoveInProgress`] when another mover lives;
    /// [`MembershipError::MembershipChanged`] when the records make another
    /// transition (the caller's follower is behind) or changed during the
    /// call; [`MembershipError::Etcd`], [`MembershipError::Refused`].
    pub fn lock_move(&mut self, fingerprint: u64) -> Result<MoveLock, MembershipError> {
        let held = self.read_for_move()?;
        if let Some(mover) = &held.mover {
            return Err(self.move_in_progress(held.record.as_ref().map_or(mover.since, |r| r.create_revision)));
        }
        if held.transition.map(|(of, _)| of) != Some(fingerprint) {
            return Err(self.membership_changed());
        }
        let resumed = held.record.as_ref().map(|r| UnfinishedMove {
            since: r.create_revision,
            same_transition: r.fingerprint == Ok(fingerprint),
            unreadable: r.fingerprint.clone().err(),
        });
        let (move_key, mover_key) = (self.layout.move_key(), self.layout.mover_key());
        let (target, client) = (&self.target, &mut self.client);
        let seconds = LOCK_TTL.as_secs() as i64;
        let lease = self.runtime.block_on(timed(target, client.lease_grant(seconds, None)))?.id();
        let mut when = held.unchanged(&self.layout);
        when.push(no_move(&mover_key));
        when.push(match &held.record {
            None => no_move(&move_key),
            Some(record) => record.unchanged(&self.layout),
        });
        let record = record_value(held.revision, fingerprint, None);
        let mover = mover_value(held.revision);
        let mut lock = MoveLock {
            held,
            fingerprint,
            create_revision: 0,
            record_since: 0,
            lease,
            resumed,
            stop: Arc::new(AtomicBool::new(false)),
            lost: Arc::new(AtomicBool::new(false)),
            keeper: None,
            target: self.target.clone(),
        };
        let puts = [
            TxnOp::put(move_key.as_str(), record, None),
            TxnOp::put(mover_key.as_str(), mover, Some(PutOptions::new().with_lease(lease))),
        ];
        let txn = Txn::new().when(when).and_then(puts).or_else([TxnOp::get(mover_key.as_str(), None)]);
        let (target, client) = (&self.target, &mut self.client);
        let response = self.runtime.block_on(timed(target, client.txn(txn)))?;
        if !response.succeeded() {
            // Dropping `lock` revokes the unused lease. A mover now: another won.
            return Err(match held_since(&response) {
                Some(since) => self.move_in_progress(since),
                None => self.membership_changed(),
            });
        }
        lock.create_revision = response.header().map_or(0, |h| h.revision());
        let (stop, lost, target) = (Arc::clone(&lock.stop), Arc::clone(&lock.lost), lock.target.clone());
        lock.record_since = lock.held.record.as_ref().map_or(lock.create_revision, |r| r.create_revision);
        let record = (move_key, lock.record_since);
        lock.keeper = Some(
            std::thread::Builder::new()
                .name("shardring-move-lock".into())
                .spawn(move || keep_alive(target, lease, record, stop, lost))
                .map_err(|e| MembershipError::File { path: "<thread>".into(), message: e.to_string() })?,
        );
        Ok(lock)
    }

    /// Ends the move of `lock` once its members changed state (and any old
    /// copies are deleted): deletes `P/move` and `P/mover` if `lock` still
    /// holds them, then revokes its lease. The membership is writable again.
    ///
    /// Errors: [`MembershipError::MembershipChanged`] when the lock was lost
    /// (its lease ended): the record stays, and a mover that finds the ring
    /// steady deletes it unless old copies were left
    /// ([`Admin::clear_finished_move`]);
    /// [`MembershipError::Etcd`], [`MembershipError::Refused`].
    pub fn end_move(&mut self, lock: MoveLock) -> Result<(), MembershipError> {
        let (move_key, mover_key) = (self.layout.move_key(), self.layout.mover_key());
        let deletes = [TxnOp::delete(move_key.as_str(), None), TxnOp::delete(mover_key.as_str(), None)];
        let (target, client) = (&self.target, &mut self.client);
        let txn = Txn::new().when(lock.holds(&self.layout)).and_then(deletes);
        let response = self.runtime.block_on(timed(target, client.txn(txn)))?;
        drop(lock);
        if !response.succeeded() {
            return Err(self.membership_changed());
        }
        Ok(())
    }

    /// Abandons a move left unfinished: deletes `P/move` when no mover
    /// lives, so the membership is writable again. Keys the move had not
    /// moved stay on their old owners, and clients find them there only
    /// while the transition lasts: a warming member made active now sends
    /// their commands to a server without them. Returns the revision the
    /// abandoned move began at, or `None` when no move was recorded.
    ///
    /// Errors: [`MembershipError::MoverLives`] while a mover lives (stop it
    /// first; its lease ends within 10 s); [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn abandon_move(&mut self) -> Result<Option<i64>, MembershipError> {
        let reading = self.read_for_move()?;
        let Some(record) = &reading.record else { return Ok(None) };
        if let Some(Mover { since: revision, holder }) = reading.mover {
            return Err(MembershipError::MoverLives { prefix: self.layout.prefix().to_owned(), revision, holder });
        }
        if !self.delete_record(record, Vec::new())? {
            // A mover took it over meanwhile.
            return Err(self.move_in_progress(record.create_revision));
        }
        Ok(Some(record.create_revision))
    }

    /// Looks, on a steady ring, for a move record without a mover, and
    /// deletes it when the move was finished but for ending it (its mover
    /// stopped between [`Admin::finish_move`] and [`Admin::end_move`]), in
    /// a transaction that requires the members and config read unchanged.
    /// A record whose move needs an operator stays ([`LeftMove`]). `None`
    /// when no move is recorded or the ring is not steady.
    ///
    /// Errors: [`MembershipError::Etcd`], [`MembershipError::Refused`].
    pub fn clear_finished_move(&mut self) -> Result<Option<LeftMove>, MembershipError> {
        let reading = self.read_for_move()?;
        let Some(record) = &reading.record else { return Ok(None) };
        let since = record.create_revision;
        if reading.mover.is_some() {
            return Ok(Some(LeftMove::MoverLives { since }));
        }
        if !reading.transition.is_some_and(|(_, steady)| steady) {
            return Ok(None);
        }
        if let Err(why) = &record.fingerprint {
            return Ok(Some(LeftMove::Unreadable { since, why: why.clone() }));
        }
        match record.promoted {
            None => return Ok(Some(LeftMove::NotPromoted { since })),
            Some(true) => return Ok(Some(LeftMove::OldCopiesLeft { since })),
            Some(false) => {}
        }
        let cleared = self.delete_record(record, reading.unchanged(&self.layout))?;
        // Lost a race (a mover took it, a member changed): looked at again later.
        Ok(Some(if cleared { LeftMove::Cleared { since } } else { LeftMove::MoverLives { since } }))
    }

    /// Deletes `P/move` if it is still `record`, no mover lives, and
    /// `when` holds. Returns whether it did.
    fn delete_record(&mut self, record: &MoveRecord, mut when: Vec<Compare>) -> Result<bool, MembershipError> {
        when.push(no_move(&self.layout.mover_key()));
        when.push(record.unchanged(&self.layout));
        let txn = Txn::new().when(when).and_then([TxnOp::delete(self.layout.move_key(), None)]);
        let (target, client) = (&self.target, &mut self.client);
        Ok(self.runtime.block_on(timed(target, client.txn(txn)))?.succeeded())
    }

    /// Reads the ring's prefix: the members, config, the transition they
    /// make, `P/move` and `P/mover`.
    fn read_for_move(&mut self) -> Result<Reading, MembershipError> {
        let root = self.layout.root();
        let (move_key, mover_key) = (self.layout.move_key(), self.layout.mover_key());
        let (target, client) = (&self.target, &mut self.client);
        let response = self.runtime.block_on(timed(target, client.get(root, Some(GetOptions::new().with_prefix()))))?;
        let revision = response.header().map_or(0, |h| h.revision());
        let mut records = Records::new(self.layout.clone());
        let (mut changes, mut members, mut config_mod_revision) = (Vec::new(), Vec::new(), 0);
        let (mut record, mut mover) = (None, None);
        for kv in response.kvs() {
            match self.layout.classify(kv.key()) {
                KeyKind::Config => config_mod_revision = kv.mod_revision(),
                kind @ (KeyKind::Member(_) | KeyKind::BadMember) => {
                    let record = match kind {
                        KeyKind::Member(_) => MemberRecord::from_stored(kv.value()),
                        _ => Err("not a member id".to_owned()),
                    };
                    let (key, mod_revision, lease) = (kv.key().to_vec(), kv.mod_revision(), kv.lease());
                    members.push(HeldMember { key, mod_revision, lease, record });
                }
                KeyKind::Other => {}
            }
            if kv.key() == move_key.as_bytes() {
                record = Some(MoveRecord::read(kv.create_revision(), kv.mod_revision(), kv.value()));
            } else if kv.key() == mover_key.as_bytes() {
                mover = Some(Mover::read(kv.create_revision(), kv.value()));
            }
            if let Ok(Some(change)) = records.change_of(kv.key(), Some(kv.value())) {
                changes.push(change);
            }
        }
        let (built, _) = records.advance(None, changes);
        let transition = built.ok().map(|t| (t.fingerprint(), t.is_steady()));
        Ok(Reading { revision, members, config_mod_revision, transition, record, mover })
    }

    /// Ends the move of `lock`: makes each of `activate` active (keeping its
    /// lease, weight and zone) and removes each of `remove`, if the members
    /// and config are still those `lock` read and `lock` still holds
    /// `P/mover`, and records in `P/move` that the members changed state and
    /// whether old copies are still to be deleted (`old_copies`: a record
    /// left so needs an operator, [`LeftMove::OldCopiesLeft`]); then
    /// revokes the removed members' leases. One transaction
    /// (one revision, so followers see one change) for up to 128 changes,
    /// etcd's default limit; more go in transactions of 128 under the held
    /// lock, the first also checking the members. The move stays recorded
    /// until [`Admin::end_move`] (a move that deletes old copies afterwards
    /// keeps it).
    /// Returns the revision of the last write.
    ///
    /// Errors: [`MembershipError::MembershipChanged`] when a member or the
    /// config changed since the lock was taken, or the lock was lost (its
    /// lease expired): nothing is written; [`MembershipError::UnknownMember`]
    /// for an id the lock's read did not hold; [`MembershipError::Record`]
    /// for a record that does not parse; [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn finish_move(
        &mut self,
        lock: &MoveLock,
        activate: &[&str],
        remove: &[&str],
        old_copies: bool,
    ) -> Result<i64, MembershipError> {
        let record = record_value(lock.held.revision, lock.fingerprint, Some(old_copies));
        let mut operations = vec![TxnOp::put(self.layout.move_key(), record, None)];
        let mut revoke = Vec::new();
        for (id, active) in activate.iter().map(|id| (id, true)).chain(remove.iter().map(|id| (id, false))) {
            let key = self.layout.member_key(id);
            let Some(held) = lock.held.members.iter().find(|m| m.key == key.as_bytes()) else {
                let prefix = self.layout.prefix().to_owned();
                return Err(MembershipError::UnknownMember { id: (*id).to_owned(), prefix });
            };
            if !active {
                operations.push(TxnOp::delete(key.as_str(), None));
                revoke.extend((held.lease != 0).then_some(held.lease));
                continue;
            }
            let mut record = held.record.clone().map_err(|message| MembershipError::Record {
                key: key.clone(),
                error: shardring::RingError::InvalidConfig { message },
            })?;
            record.state = shardring::NodeState::Active;
            let put = PutOptions::new().with_lease(held.lease);
            operations.push(TxnOp::put(key.as_str(), record.to_json(), Some(put)));
        }
        // Deletions are caught by a read when the ring is too large to compare each member.
        let (target, client) = (&self.target, &mut self.client);
        let listing = GetOptions::new().with_prefix().with_keys_only();
        let now = self.runtime.block_on(timed(target, client.get(self.layout.members_prefix(), Some(listing))))?;
        let now: Vec<(&[u8], i64)> = now.kvs().iter().map(|kv| (kv.key(), kv.mod_revision())).collect();
        let then: Vec<(&[u8], i64)> = lock.held.members.iter().map(|m| (m.key.as_slice(), m.mod_revision)).collect();
        if now != then {
            return Err(self.membership_changed());
        }
        let mut revision = 0;
        for (i, chunk) in operations.chunks(MAX_TXN_OPS).enumerate() {
            let mut when = if i == 0 { lock.held.unchanged(&self.layout) } else { Vec::new() };
            when.extend(lock.holds(&self.layout));
            let (target, client) = (&self.target, &mut self.client);
            let txn = Txn::new().when(when).and_then(chunk.to_vec());
            let response = self.runtime.block_on(timed(target, client.txn(txn)))?;
            if !response.succeeded() {
                return Err(self.membership_changed());
            }
            revision = response.header().map_or(0, |h| h.revision());
        }
        let (target, client) = (&self.target, &mut self.client);
        self.runtime.block_on(async {
            for lease in revoke {
                let _ = timed(target, client.lease_revoke(lease)).await;
            }
        });
        Ok(revision)
    }

    /// [`MembershipError::MoveInProgress`] for a move held since `revision`.
    pub(crate) fn move_in_progress(&self, revision: i64) -> MembershipError {
        MembershipError::MoveInProgress { prefix: self.layout.prefix().to_owned(), revision }
    }

    /// [`MembershipError::MembershipChanged`] for this ring.
    fn membership_changed(&self) -> MembershipError {
        MembershipError::MembershipChanged { prefix: self.layout.prefix().to_owned() }
    }
}

/// The lock's thread: a keep-alive every third of the TTL until stopped,
/// each answer read (an unread stream would stall etcd's side once its
/// flow-control window filled); sets `lost` when etcd answers that the
/// lease is gone, or when no renewal was confirmed for the TTL less 2 s
/// (etcd out of reach: the lease may be expiring there).
fn keep_alive(target: Target, lease: i64, record: (String, i64), stop: Arc<AtomicBool>, lost: Arc<AtomicBool>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    runtime.block_on(async {
        let mut keeper = None;
        // Past the TTL less 2 s without a confirmed renewal, the lease may
        // have expired on etcd's side: each wait ends by then.
        let mut deadline = tokio::time::Instant::now() + UNCONFIRMED_LIMIT;
        while !stop.load(Ordering::Acquire) && !lost.load(Ordering::Acquire) {
            // A keep-alive each TTL / 3, the record's check within it.
            let next_renewal = tokio::time::Instant::now() + LOCK_TTL / 3;
            let renewal = async {
                if keeper.is_none() {
                    let mut client = connect(&target.endpoints, &target.access).await.ok()?;
                    let (sender, answers) = client.lease_keep_alive(lease).await.ok()?;
                    keeper = Some((sender, answers, client));
                }
                let (sender, answers, _) = keeper.as_mut()?;
                sender.keep_alive().await.ok()?;
                answers.message().await.ok()?
            };
            match tokio::time::timeout_at(deadline.min(tokio::time::Instant::now() + REQUEST_TIMEOUT), renewal).await {
                Ok(Some(answer)) if answer.ttl() > 0 => {
                    deadline = tokio::time::Instant::now() + UNCONFIRMED_LIMIT;
                    if let Some((_, _, client)) = keeper.as_mut()
                        && !holds_record(client, &record, next_renewal).await
                    {
                        lost.store(true, Ordering::Release);
                    }
                }
                Ok(Some(_)) => lost.store(true, Ordering::Release),
                _ => keeper = None,
            }
            // Wakes every 100 ms to stop promptly.
            while tokio::time::Instant::now() < next_renewal {
                if tokio::time::Instant::now() >= deadline {
                    lost.store(true, Ordering::Release);
                }
                if stop.load(Ordering::Acquire) || lost.load(Ordering::Acquire) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
}

/// Whether `P/move` is still the record the lock wrote (`record`: its key
/// and create revision, which a mover's own rewrite keeps); an answer that
/// does not come by `by` (the next renewal, which it must not delay)
/// counts as held: the lease's deadline covers etcd out of reach.
async fn holds_record(client: &mut etcd_client::Client, record: &(String, i64), by: tokio::time::Instant) -> bool {
    let get = client.get(record.0.as_str(), Some(GetOptions::new().with_keys_only()));
    match tokio::time::timeout_at(by.min(tokio::time::Instant::now() + REQUEST_TIMEOUT), get).await {
        Ok(Ok(found)) => found.kvs().first().map(|kv| kv.create_revision()) == Some(record.1),
        _ => true,
    }
}
