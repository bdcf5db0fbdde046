//! The handoff protocol (`core/SPEC.md`, *Handoff*), model-checked with
//! stateright: every interleaving of two clients, the mover, a crash of
//! each and the membership change, for one moving key whose old owner holds
//! a counter.
//!
//! Each client sends a few commands (`INCR`, `DEL`, `SET`). A client first
//! runs on the old ring (it writes the old owner directly) until it learns
//! of the transition; the mover starts only once every client has (the
//! grace period). Under the protocol a client sends each command through
//! the guard on the old owner (one atomic step: run it if the key is there,
//! else "moved") and, when moved, to the new owner (a second atomic step).
//! The mover's `MIGRATE` is one atomic step; once, it may be cut short by
//! its target: the key restored there and kept on the old owner, or moved
//! but unconfirmed. The mover holds the key in doubt around each `MIGRATE`,
//! ends the doubt once it answers, and settles a doubt its failure left at
//! the end of the listing; the members change state once a listing finds
//! the key gone from the old owner and deletes no stale copy (the doubt of
//! a key that moved just ends). After that a client
//! may still use the guard (it has not heard yet) or send to the new owner.
//! A client may crash between its steps; so may the mover, and a restarted
//! mover starts over. The membership (the promotion) can change only once
//! the mover is done, or while no move is recorded: the move lock
//! (`core/SPEC.md`, `P/move`) is taken before the grace period and, being
//! durable, outlives a crashed mover.
//!
//! Properties: the key is never on both servers; once everything is done
//! the new owner holds the acknowledged commands applied in the order they
//! were acknowledged, and the old owner holds nothing (nothing lost, no
//! deleted key back). With the guard removed (the cache's dual write:
//! commands to both owners, a copy with `RESTORE` that does not replace,
//! then a delete from the old owner) the checker finds the lost increments
//! that a Redis scale-out showed; with a move lock that ends with its
//! mover's lease (as it did before it was durable), it finds a promotion
//! after a mover's crash sending a command to the new owner while the key
//! is still on the old one; without the doubt, a key deleted after a
//! `MIGRATE` cut short comes back from the new owner's leftover copy.

use stateright::{Checker, Model, Property};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Command {
    Incr,
    Del,
    Set(i8),
}

impl Command {
    fn apply(self, value: Option<i8>) -> Option<i8> {
        match self {
            Command::Incr => Some(value.unwrap_or(0) + 1),
            Command::Del => None,
            Command::Set(v) => Some(v),
        }
    }
}

/// Where a client is in its current command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// About to send it (through the guard, or to a server directly).
    Send,
    /// The guard answered "moved": about to send it to the new owner.
    Moved,
    /// Dual write: the old owner took it; about to send it to the new owner.
    Second,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Client {
    /// Index of its current command.
    next: usize,
    stage: Stage,
    knows_transition: bool,
    knows_promotion: bool,
    crashed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mover {
    Waiting,
    /// The key is in doubt if it was here: `MIGRATE` comes next.
    Doubted,
    /// `MIGRATE` answered: the doubt ends next.
    Migrated,
    /// The key is migrated (or, dual-write mode, copied): the listing of the
    /// old owner (or the delete from it) comes next.
    Copied,
    /// Every moving key is off the old owner: the members may change state.
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    old: Option<i8>,
    new: Option<i8>,
    clients: Vec<Client>,
    mover: Mover,
    /// The mover's mark on the old owner: keys missing there have moved.
    marked: bool,
    /// The move is recorded (`P/move`): no member changes state.
    locked: bool,
    /// The key is in doubt in the mark (`Some(deleted)`: a client deleted
    /// it on the old owner since).
    doubt: Option<bool>,
    /// Whether a `MIGRATE` was cut short already (once at most).
    cut_short: bool,
    /// Whether the old owner evicted the key already (once at most, and
    /// only on a server that evicts).
    evicted: bool,
    /// The new owner's copy is a leftover of a key since evicted on the old one.
    stale: bool,
    promoted: bool,
    /// The acknowledged commands applied in acknowledgement order.
    expected: Option<i8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Action {
    Learn(usize),
    LearnPromotion(usize),
    Step(usize),
    CrashClient(usize),
    Mark,
    /// The mover's script before `MIGRATE`: the key, if here, in doubt.
    Doubt,
    Migrate,
    /// A `MIGRATE` cut short by its target: `true`, the key moved but the
    /// answer never came; `false`, restored on the target and kept here.
    MigrateCutShort(bool),
    /// Once `MIGRATE` answered: the doubt ends unless a client deleted the key first.
    EndDoubt,
    CheckLeft,
    CrashMover,
    Promote,
    /// The old owner evicts the key (a cache's memory limit): no command
    /// deletes it, so the guard does not see it go.
    Evict,
}

/// What clients and the mover do with a moving key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// The handoff protocol: the guard runs a command on the old owner
    /// when the key is there or the old owner is not yet marked as moving;
    /// the mover marks the old owner, then migrates.
    Guard,
    /// The guard without the mark: a key missing from the old owner counts
    /// as moved even before the mover starts.
    GuardWithoutMark,
    /// The guard and mover without the doubt (guard 2): a key missing from
    /// the marked old owner has moved, even after a `MIGRATE` cut short.
    GuardWithoutDoubt,
    /// The cache's dual write: commands to both owners, a copy that does
    /// not replace, then a delete from the old owner.
    DualWrite,
}

/// What a mover's crash does to the move lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lock {
    /// The move stays recorded until a mover finishes it.
    Durable,
    /// The lock goes with the crashed mover's lease, until a mover runs again.
    Leased,
}

struct Handoff {
    protocol: Protocol,
    lock: Lock,
    commands: Vec<Vec<Command>>,
    /// The old owner evicts keys ([`Action::Evict`]).
    evicting: bool,
    /// The mover reads whether the old owner evicts, and then settles a
    /// key in doubt that it lacks as deleted (an evicted key and a moved
    /// one look alike; a miss beats a stale value).
    reads_policy: bool,
    /// The old owner may evict the key between the mover's doubt and its
    /// `MIGRATE` (one round trip).
    evict_while_doubted: bool,
}

impl Handoff {
    fn client_done(&self, state: &State, c: usize) -> bool {
        state.clients[c].crashed || state.clients[c].next == self.commands[c].len()
    }

    fn all_done(&self, state: &State) -> bool {
        (0..self.commands.len()).all(|c| self.client_done(state, c)) && state.promoted
    }
}

impl Model for Handoff {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let client =
            Client { next: 0, stage: Stage::Send, knows_transition: false, knows_promotion: false, crashed: false };
        vec![State {
            old: Some(10),
            new: None,
            clients: vec![client; self.commands.len()],
            mover: Mover::Waiting,
            marked: false,
            locked: true,
            doubt: None,
            cut_short: false,
            evicted: false,
            stale: false,
            promoted: false,
            expected: Some(10),
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        for (c, client) in state.clients.iter().enumerate() {
            if self.client_done(state, c) {
                continue;
            }
            if !client.knows_transition && client.stage == Stage::Send {
                actions.push(Action::Learn(c));
            }
            if state.promoted && !client.knows_promotion && client.stage == Stage::Send {
                actions.push(Action::LearnPromotion(c));
            }
            actions.push(Action::Step(c));
            actions.push(Action::CrashClient(c));
        }
        // The grace period: the mover starts once every client knows.
        let grace = state.clients.iter().all(|c| c.knows_transition || c.crashed);
        match state.mover {
            Mover::Waiting
                if grace
                    && self.protocol != Protocol::GuardWithoutMark
                    && self.protocol != Protocol::DualWrite
                    && !state.marked =>
            {
                actions.push(Action::Mark)
            }
            Mover::Waiting if grace && self.protocol != Protocol::DualWrite => actions.push(Action::Doubt),
            Mover::Waiting if grace => actions.push(Action::Migrate),
            Mover::Doubted => {
                actions.push(Action::Migrate);
                if !state.cut_short && state.old.is_some() {
                    actions.push(Action::MigrateCutShort(true));
                    actions.push(Action::MigrateCutShort(false));
                }
            }
            Mover::Migrated => actions.push(Action::EndDoubt),
            Mover::Copied => actions.push(Action::CheckLeft),
            _ => {}
        }
        if state.mover != Mover::Done {
            actions.push(Action::CrashMover);
        }
        if (state.mover == Mover::Done || !state.locked) && !state.promoted {
            actions.push(Action::Promote);
        }
        if self.evicting
            && !state.evicted
            && state.old.is_some()
            && (self.evict_while_doubted || state.mover != Mover::Doubted)
        {
            actions.push(Action::Evict);
        }
    }

    fn next_state(&self, state: &State, action: Action) -> Option<State> {
        let mut next = state.clone();
        match action {
            Action::Learn(c) => next.clients[c].knows_transition = true,
            Action::LearnPromotion(c) => next.clients[c].knows_promotion = true,
            Action::CrashClient(c) => next.clients[c].crashed = true,
            Action::Step(c) => {
                let command = self.commands[c][state.clients[c].next];
                let client = &mut next.clients[c];
                let ack = |next: &mut State, c: usize| {
                    next.expected = command.apply(next.expected);
                    next.clients[c].next += 1;
                    next.clients[c].stage = Stage::Send;
                };
                match client.stage {
                    Stage::Send if !client.knows_transition => {
                        // Still on the old ring: the old owner is the owner.
                        next.old = command.apply(next.old);
                        ack(&mut next, c);
                    }
                    Stage::Send if client.knows_promotion => {
                        next.new = command.apply(next.new);
                        next.stale = false;
                        ack(&mut next, c);
                    }
                    Stage::Send if self.protocol != Protocol::DualWrite => {
                        let moved = next.old.is_none() && (next.marked || self.protocol == Protocol::GuardWithoutMark);
                        if moved && next.doubt.is_some() {
                            // SHARDRING_TRYAGAIN: nothing ran; the client sends it again later.
                            return None;
                        }
                        if !moved {
                            next.old = command.apply(next.old);
                            if next.old.is_none() && next.doubt.is_some() {
                                next.doubt = Some(true);
                            }
                            ack(&mut next, c);
                        } else {
                            client.stage = Stage::Moved;
                        }
                    }
                    Stage::Send => {
                        next.old = command.apply(next.old);
                        client.stage = Stage::Second;
                    }
                    Stage::Moved | Stage::Second => {
                        next.new = command.apply(next.new);
                        next.stale = false;
                        ack(&mut next, c);
                    }
                }
            }
            Action::Mark => {
                next.marked = true;
                next.locked = true;
            }
            Action::Migrate if self.protocol != Protocol::DualWrite => {
                next.locked = true;
                // MIGRATE ... REPLACE: atomic on the old owner.
                if let Some(value) = next.old.take() {
                    next.new = Some(value);
                    next.stale = false;
                }
                next.mover = Mover::Migrated;
            }
            Action::Doubt => {
                next.locked = true;
                // A listing that does not find the key sends no doubt, MIGRATE or end of doubt.
                if next.old.is_none() {
                    next.mover = Mover::Copied;
                    return Some(next);
                }
                if self.protocol != Protocol::GuardWithoutDoubt {
                    next.doubt = Some(false);
                }
                next.mover = Mover::Doubted;
            }
            Action::MigrateCutShort(moved) => {
                next.cut_short = true;
                if moved {
                    next.new = next.old.take();
                    next.stale = false;
                } else {
                    next.new = next.old;
                    next.stale = false;
                }
                next.mover = Mover::Copied;
            }
            Action::EndDoubt => {
                if next.doubt == Some(false) {
                    next.doubt = None;
                }
                next.mover = Mover::Copied;
            }
            Action::Migrate => {
                // DUMP + RESTORE without REPLACE: a dual write's value stays.
                if next.new.is_none() {
                    next.new = next.old;
                    next.stale = false;
                }
                next.mover = Mover::Copied;
            }
            // The listing after the move: done when the old owner holds
            // nothing, else migrate again.
            Action::CheckLeft if self.protocol != Protocol::DualWrite => {
                // Settling a doubt: a key deleted here has its leftover deleted
                // there, and the listing is not clean (the mover's count); one
                // missing and not deleted moved: its doubt just ends.
                let evicts = self.evicting && self.reads_policy;
                let settled = next.doubt == Some(true) || (evicts && next.doubt == Some(false) && next.old.is_none());
                if settled {
                    // A copy that was the live key (moved, unconfirmed) is lost as if evicted.
                    if next.doubt == Some(false) && next.new.is_some() && !next.stale {
                        next.expected = None;
                    }
                    next.new = None;
                }
                if settled || (next.doubt == Some(false) && next.old.is_none()) {
                    next.doubt = None;
                }
                next.mover =
                    if next.old.is_none() && !settled && next.doubt.is_none() { Mover::Done } else { Mover::Waiting }
            }
            Action::CheckLeft => {
                // --delete: the old copy goes once the new owner holds the key.
                if next.new.is_some() {
                    next.old = None;
                }
                next.mover = Mover::Done;
            }
            Action::CrashMover => {
                next.mover = Mover::Waiting;
                next.locked &= self.lock == Lock::Durable;
            }
            Action::Promote => next.promoted = true,
            Action::Evict => {
                next.old = None;
                next.expected = None;
                next.evicted = true;
                next.stale = next.new.is_some();
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            // A leftover of a MIGRATE cut short is on the new owner too, held in doubt: no client reads it.
            Property::always("never on both servers", |model: &Handoff, state: &State| {
                model.protocol == Protocol::DualWrite
                    || state.old.is_none()
                    || state.new.is_none()
                    || (state.doubt.is_some() && state.clients.iter().all(|c| !c.knows_promotion))
            }),
            Property::always("every acknowledged command survives", |model: &Handoff, state: &State| {
                !model.all_done(state) || (state.new == state.expected && state.old.is_none())
            }),
            Property::sometimes("a command is sent on after the key moved", |_: &Handoff, state: &State| {
                state.old.is_none() && state.new.is_some() && state.clients.iter().any(|c| c.next > 0)
            }),
        ]
    }
}

fn check(protocol: Protocol) -> impl Checker<Handoff> {
    check_with(protocol, Lock::Durable)
}

fn check_with(protocol: Protocol, lock: Lock) -> impl Checker<Handoff> {
    model(protocol, lock, false, false).checker().spawn_bfs().join()
}

fn model(protocol: Protocol, lock: Lock, evicting: bool, reads_policy: bool) -> Handoff {
    let commands = vec![vec![Command::Incr, Command::Del, Command::Incr], vec![Command::Incr, Command::Set(3)]];
    Handoff { protocol, lock, commands, evicting, reads_policy, evict_while_doubted: false }
}

/// The counterexample to "every acknowledged command survives" that the
/// checker finds under `protocol`: the final values and the steps.
fn lost(protocol: Protocol) -> (State, Vec<Action>) {
    let checker = check(protocol);
    let path = checker.discovery("every acknowledged command survives").expect("a lost command");
    (path.last_state().clone(), path.into_actions())
}

#[test]
fn under_the_protocol_no_interleaving_loses_or_resurrects_a_command() {
    let checker = check(Protocol::Guard);
    checker.assert_properties();
    let states = checker.unique_state_count();
    println!("handoff: {states} states, every property holds");
    assert!(states > 1000, "{states} states: the model explores too little");
}

#[test]
fn without_the_guard_the_checker_finds_a_command_lost_or_a_key_left_behind() {
    let (last, steps) = lost(Protocol::DualWrite);
    println!(
        "dual write: {:?} on the new owner, {:?} on the old, {:?} acknowledged, after {steps:?}",
        last.new, last.old, last.expected
    );
    assert!(last.new != last.expected || last.old.is_some());
}

/// Without the mover's mark, a key deleted during the grace period and then
/// written by a client that knows the transition lands on the new owner,
/// while a client still on the old ring writes it on the old owner: the
/// key is on both, and the migration replaces the newer one.
#[test]
fn without_the_mark_a_key_written_during_the_grace_period_is_lost() {
    let (last, steps) = lost(Protocol::GuardWithoutMark);
    println!(
        "guard without the mark: {:?} on the new owner, {:?} acknowledged, after {steps:?}",
        last.new, last.expected
    );
    assert_ne!(last.new, last.expected);
    assert!(check(Protocol::GuardWithoutMark).discovery("never on both servers").is_some());
}

/// Without the doubt (guard 2), a `MIGRATE` cut short by its target leaves
/// a copy there and the key here; a client deletes it here, and its next
/// command, told the key moved, runs on the stale copy: a deleted key comes
/// back (the `WRONGTYPE` a writer of the Redis handoff test met once the
/// target restarted mid-move).
#[test]
fn without_the_doubt_a_key_deleted_after_a_cut_short_migrate_comes_back() {
    let (last, steps) = lost(Protocol::GuardWithoutDoubt);
    println!(
        "guard without the doubt: {:?} on the new owner, {:?} acknowledged, after {steps:?}",
        last.new, last.expected
    );
    assert_ne!(last.new, last.expected);
    assert!(steps.contains(&Action::MigrateCutShort(false)), "{steps:?}");
}

/// A move lock that goes with a crashed mover's lease frees the membership
/// mid-move: a promotion then sends a client that learnt of it straight to
/// the new owner while the key is still on the old one.
#[test]
fn with_a_lock_that_ends_with_the_movers_lease_a_promotion_races_the_move() {
    let checker = check_with(Protocol::Guard, Lock::Leased);
    let path = checker.discovery("never on both servers").expect("the key on both servers");
    let steps = path.into_actions();
    println!("leased lock: the key on both servers after {steps:?}");
    let crash = steps.iter().position(|a| *a == Action::CrashMover).expect("a mover crash");
    let promote = steps.iter().position(|a| *a == Action::Promote).expect("a promotion");
    assert!(crash < promote, "{steps:?}");
}

/// An old owner that evicts keys: a key in doubt that it evicts after a
/// `MIGRATE` cut short looks like one that moved. A mover that reads the
/// server's policy deletes the target's copy of either (a moved key is then
/// lost as if evicted: a miss); one that does not brings the evicted key
/// back from the stale copy. One window stays open (`core/SPEC.md`,
/// *Handoff*): a key already in doubt, evicted between the next doubt and
/// its `MIGRATE`, looks moved when that `MIGRATE` answers.
#[test]
fn on_an_evicting_old_owner_the_mover_misses_a_key_in_doubt_rather_than_bring_it_back() {
    let checker = model(Protocol::Guard, Lock::Durable, true, true).checker().spawn_bfs().join();
    checker.assert_properties();
    println!("evicting: {} states, every property holds", checker.unique_state_count());
    let blind = model(Protocol::Guard, Lock::Durable, true, false).checker().spawn_bfs().join();
    let path = blind.discovery("every acknowledged command survives").expect("an evicted key back");
    let (last, steps) = (path.last_state().clone(), path.into_actions());
    println!(
        "evicting, policy not read: {:?} on the new owner, {:?} acknowledged, after {steps:?}",
        last.new, last.expected
    );
    assert!(steps.contains(&Action::Evict) && steps.contains(&Action::MigrateCutShort(false)), "{steps:?}");
    assert_ne!(last.new, last.expected);
    let window = Handoff { evict_while_doubted: true, ..model(Protocol::Guard, Lock::Durable, true, true) };
    let path =
        window.checker().spawn_bfs().join().discovery("every acknowledged command survives").map(|p| p.into_actions());
    let steps = path.expect("the window between the doubt and MIGRATE");
    println!("evicting, between the doubt and MIGRATE: after {steps:?}");
    let evict = steps.iter().position(|a| *a == Action::Evict).unwrap();
    assert_eq!((steps[evict - 1], steps[evict + 1]), (Action::Doubt, Action::Migrate), "{steps:?}");
}
