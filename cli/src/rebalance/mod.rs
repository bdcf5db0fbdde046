//! `shardring rebalance`: moves the keys whose owner changes between two
//! rings (or across a transition in etcd) from their old owner to their new
//! one, on real memcached or Redis servers whose addresses are the node
//! ids. Which keys move is read off the diff's arcs (`Ring::diff`): a key
//! moves when its hash lies in an arc that leaves its server. Copies are
//! rate-limited, resumable (a rerun with the checkpoint skips the keys their
//! new owner holds and copies nothing twice) and reported per server; a server that fails is reported
//! and the others go on. Nothing is deleted unless `--delete` asks for a
//! move: a copy can always be run again, a deletion cannot be undone.

mod address;
mod args;
mod backend;
mod checkpoint;
mod checks;
mod memcached;
mod pass;
mod plan;
mod progress;
mod rate;
mod redis;
mod report;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use shardring::{NodeState, Transition};
use shardring_membership::{Admin, Follower, FollowerOptions, LeftMove, MembershipError, MoveLock, UnfinishedMove};

use crate::config::load;
use crate::error::CliError;
use crate::server_access::Credentials;
pub(crate) use args::Args;
use args::BackendName;
use backend::Backend;
use checkpoint::Checkpoint;
use checks::identities;
use pass::{Pass, RESCANS};
use plan::Plan;
use rate::Pacer;
use report::{Tally, report, report_plan};

/// The backend `args` name, with its credentials (read before: see
/// [`credentials`]).
pub(super) fn backend(args: &Args, credentials: &Credentials) -> Box<dyn Backend> {
    match args.backend {
        BackendName::Memcached => Box::new(memcached::Memcached::new(credentials.clone())),
        BackendName::Redis => Box::new(redis::Redis::new(credentials.clone(), args.rate.is_some())),
    }
}

/// How `args` reaches the servers: TLS and the user
/// ([`crate::server_access::ServerSecurity::credentials`]).
pub(super) fn credentials(args: &Args) -> Result<Credentials, CliError> {
    args.security.credentials(args.backend.kind(), "--backend")
}

/// Runs `shardring rebalance`; `Ok(false)` when a server failed (exit code 1).
pub(crate) fn rebalance(args: &Args, out: &mut impl Write) -> Result<bool, CliError> {
    if !(args.grace.is_finite() && args.grace >= 0.0 && args.grace <= 3600.0) {
        return Err(CliError::Rebalance(format!("--grace {}: a number of seconds from 0 to 3600", args.grace)));
    }
    args.check_addresses()?;
    if args.migrate && matches!(args.backend, BackendName::Memcached) {
        return Err(CliError::Rebalance(
            "--migrate needs --backend redis: memcached has no atomic move (docs/transitions.md says what a cache \
             does instead)"
                .into(),
        ));
    }
    if !args.etcd.is_empty() {
        return follow(args, out);
    }
    let (Some(from), Some(to)) = (&args.from, &args.to) else {
        return Err(CliError::Rebalance("give --from and --to, or --etcd and --prefix".into()));
    };
    let plan = Plan::new(Arc::new(load(from)?), Arc::new(load(to)?))?;
    args.check_addresses_name_nodes(&plan, from, to)?;
    let credentials = credentials(args)?;
    let mut store = backend(args, &credentials);
    run(args, &plan, store.as_mut(), args.delete, out)
}

/// A run: scan every source, copy (and with `delete`, move) the keys that
/// leave it, then scan again (at least once, at most [`RESCANS`] times)
/// until a scan finds nothing new; a dry run scans twice. Prints the
/// report; `Ok(false)` when a server failed.
fn run(
    args: &Args,
    plan: &Plan,
    store: &mut dyn Backend,
    delete: bool,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let started = Instant::now();
    args.check_servers(plan)?;
    let identities = if args.dry_run { HashMap::new() } else { identities(args, plan, store)? };
    let checkpoint = if args.dry_run {
        Checkpoint::none()
    } else {
        Checkpoint::open(args.resume.as_ref(), plan.old.fingerprint(), plan.new.fingerprint(), store.name())?
    };
    let progress: progress::SharedProgress = Arc::new(Mutex::new(progress::Progress::default()));
    if let Some(address) = args.metrics_listen {
        let served = Arc::clone(&progress);
        let bound = crate::metrics_http::serve_metrics(address, move || progress::render(&progress::lock(&served)))?;
        crate::complain(format!("metrics at http://{bound}/metrics"));
    }
    // Followed from etcd: the progress goes to `P/rebalance` for dashboards.
    let publisher = match (&args.prefix, args.etcd.is_empty() || args.dry_run) {
        (Some(prefix), false) => {
            Some(progress::publish(args.etcd_security.access(&args.etcd)?, prefix.clone(), Arc::clone(&progress)))
        }
        _ => None,
    };
    let bar = ProgressBar::new(0).with_message("moving keys");
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} keys, {per_sec}, ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut pass = Pass {
        args,
        plan,
        store,
        delete,
        tallies: BTreeMap::new(),
        seen: HashSet::new(),
        down: HashSet::new(),
        checkpoint,
        pacer: Pacer::new(args.rate),
        identities,
        bar,
        scans: 0,
        migrate_size: pass::MIGRATE_BATCH,
        copy_size: pass::FIRST_COPY_BATCH,
        credentials: credentials(args)?,
        progress: progress.clone(),
    };
    if args.dry_run {
        let mut work = pass.scan();
        work.extend(pass.scan());
        let scanned = pass.tallies.values().map(|t| t.scanned).sum();
        return report_plan(args, plan, &pass.tallies, &work, scanned, out);
    }
    if args.migrate {
        // Listings, migrating as they go, until one finds no moving key.
        pass.mark_sources();
        while pass.migrate_listing() > 0 {
            if pass.scans > RESCANS {
                pass.check_left();
                break;
            }
        }
    } else {
        // At least two listings: the second finds what the first missed.
        loop {
            let found = pass.copy_listing()?;
            if (found == 0 && pass.scans >= 2) || pass.scans > RESCANS {
                break;
            }
        }
    }
    pass.bar.finish_and_clear();
    progress::lock(&progress).finished = true;
    drop(publisher);
    let mut tallies = pass.tallies;
    if args.migrate {
        tallies.values_mut().for_each(Tally::settle_migrate);
    }
    let scanned = tallies.values().map(|t| t.scanned).sum();
    let to_move = tallies.values().map(|t| t.to_move).sum();
    report(args, plan, &tallies, scanned, to_move, pass.scans, started.elapsed(), out)?;
    Ok(tallies.values().all(|t| t.error.is_none()))
}

/// `--etcd`: waits for members to turn warming or draining; takes the
/// ring's move lock (`P/move`: one move at a time, and no membership change
/// until it ends); copies their keys; makes the warming ones active and
/// removes the draining ones, if the membership is still the one the plan
/// was made from; for a move (--delete), after `--grace` seconds deletes
/// the moved keys' old copies. `--once` stops after one transition.
fn follow(args: &Args, out: &mut impl Write) -> Result<bool, CliError> {
    let prefix = args.prefix.as_deref().expect("settle requires --prefix with --etcd");
    let membership = |e: MembershipError| CliError::Membership(e.to_string());
    let follower = Follower::etcd(args.etcd_security.access(&args.etcd)?, prefix, FollowerOptions::default())
        .map_err(membership)?;
    let events = follower.subscribe();
    let credentials = credentials(args)?;
    let mut store = backend(args, &credentials);
    let mut healthy = true;
    // The revision of another mover's lock this one waits for, and the
    // epoch whose ring etcd's records no longer make: each said once.
    let (mut waiting_since, mut behind_at) = (None, None);
    // The move lock held, with the fingerprint of its transition, and one
    // etcd connection for it.
    let (mut held, mut admin): (Option<(u64, MoveLock)>, Option<Admin>) = (None, None);
    // The epoch at which a steady ring was last looked at for a move's
    // record: whether that settled it, and whether an error was said.
    let mut looked_at: Option<(i64, bool, bool)> = None;
    loop {
        let epoch = follower.epoch();
        let transition: &Transition = &epoch.transition;
        if transition.is_steady() {
            held = None;
            // A move recorded on a steady ring: a mover stopped after its
            // members changed state (the record goes when nothing was left
            // to do), or the membership changed under it (said).
            let (settled, error_said) = match looked_at {
                Some((at, settled, said)) if at == epoch.revision => (settled, said),
                _ => (false, false),
            };
            if !args.dry_run && !settled {
                let (settled, said) = left_move(args, prefix, &mut admin, error_said, out)?;
                looked_at = Some((epoch.revision, settled, error_said || said));
            }
            let _ = events.recv_timeout(Duration::from_millis(500));
            continue;
        }
        let mut plan = Plan::new(Arc::clone(transition.old_ring()), Arc::clone(transition.new_ring()))?;
        // The mark clients' guards read is their follower's transition's.
        plan.mark = transition.handoff_mark();
        // One move at a time, on the membership this plan was made from:
        // no member changes until this move ends, retries included (a dry
        // run moves nothing). A lock of another transition, or lost, goes.
        let fingerprint = transition.fingerprint();
        if held.as_ref().is_some_and(|(of, lock)| *of != fingerprint || lock.lost().load(Ordering::Acquire)) {
            held = None;
        }
        let admin = match &mut admin {
            Some(admin) => admin,
            None => admin.insert(Admin::connect(args.etcd_security.access(&args.etcd)?, prefix).map_err(membership)?),
        };
        if !args.dry_run && held.is_none() {
            match admin.lock_move(fingerprint) {
                Ok(lock) => {
                    match lock.resumed() {
                        Some(UnfinishedMove { since, same_transition: true, .. }) => {
                            writeln!(out, "resuming the move begun at revision {since}, left unfinished")?;
                        }
                        Some(UnfinishedMove { since, unreadable: Some(why), .. }) => writeln!(
                            out,
                            "the record of the move begun at revision {since} ({prefix}/move) cannot be read: {why}; \
                             taken over as another transition's move: moving by the transition at revision {}",
                            epoch.revision
                        )?,
                        Some(UnfinishedMove { since, same_transition: false, .. }) => writeln!(
                            out,
                            "the move begun at revision {since} was left unfinished and the membership changed \
                             since (a member's lease ended?): moving by the transition at revision {}",
                            epoch.revision
                        )?,
                        None => {}
                    }
                    held = Some((fingerprint, lock));
                }
                Err(MembershipError::MoveInProgress { revision, .. }) => {
                    if waiting_since != Some(revision) {
                        writeln!(out, "another rebalancer is moving keys (since revision {revision}): waiting")?;
                        out.flush()?;
                        waiting_since = Some(revision);
                    }
                    let _ = events.recv_timeout(Duration::from_secs(1));
                    continue;
                }
                // This follower is behind the records: plan again from the next epoch.
                Err(MembershipError::MembershipChanged { .. }) => {
                    if behind_at != Some(epoch.revision) {
                        writeln!(out, "etcd's records differ from the ring at revision {}: waiting", epoch.revision)?;
                        out.flush()?;
                        behind_at = Some(epoch.revision);
                    }
                    let _ = events.recv_timeout(Duration::from_millis(200));
                    continue;
                }
                Err(error) => return Err(membership(error)),
            }
        }
        waiting_since = None;
        plan.halt = held.as_ref().map(|(_, lock)| lock.lost());
        // Clients' followers take a moment to see the transition and start
        // writing to both owners; a key written to its old owner alone
        // before then must be in the scan.
        writeln!(out, "transition at revision {}: copying in {} s", epoch.revision, args.grace)?;
        // With etcd an address may name a member yet to join: said, not refused.
        for (id, address) in args.unused_addresses(&plan) {
            writeln!(out, "  --address {id}={}: no member {id:?} in this transition; unused", address.as_str())?;
        }
        out.flush()?;
        std::thread::sleep(Duration::from_secs_f64(args.grace));
        if !run(args, &plan, store.as_mut(), false, out)? {
            // A server failed: the members stay warming or draining (clients
            // keep reading the old owners), so nothing is lost; retry.
            // The lock stays held for the retry: a member made active in
            // between would meet keys still moving.
            healthy = false;
            let why = if plan.halted() { "the move lock was lost" } else { "a server failed" };
            if args.once || args.dry_run {
                writeln!(
                    out,
                    "{why}: the transition stays{}",
                    if args.dry_run {
                        ""
                    } else if plan.halted() {
                        " (its lease ended, or its record was deleted by hand, which lets the membership change): run \
                         a rebalancer again to resume the move"
                    } else {
                        ", and the move stays recorded (no member changes) until a rebalancer resumes it or \
                         `shardring member abandon-move`"
                    }
                )?;
                out.flush()?;
                return Ok(false);
            }
            writeln!(out, "{why}: the transition stays; retrying in 5 s")?;
            out.flush()?;
            let _ = events.recv_timeout(Duration::from_secs(5));
            continue;
        }
        let Some((_, lock)) = held.take() else { return Ok(healthy) };
        let (mut activate, mut remove) = (Vec::new(), Vec::new());
        for node in transition.old_ring().nodes().iter().chain(transition.new_ring().nodes()) {
            match transition.state(node.id()) {
                Some(NodeState::Warming) => activate.push(node.id()),
                Some(NodeState::Draining) => remove.push(node.id()),
                _ => {}
            }
        }
        for ids in [&mut activate, &mut remove] {
            ids.sort_unstable();
            ids.dedup();
        }
        let old_copies = args.delete && !args.migrate;
        let finished = match admin.finish_move(&lock, &activate, &remove, old_copies) {
            Ok(revision) => revision,
            Err(MembershipError::MembershipChanged { .. }) => {
                // Written past the lock (etcdctl, or the lock's lease lost):
                // this plan's members are not made active; move again.
                healthy = false;
                writeln!(out, "the membership changed during the move: its members stay as they are")?;
                out.flush()?;
                if args.once {
                    return Ok(false);
                }
                continue;
            }
            Err(error) => return Err(membership(error)),
        };
        writeln!(out, "members active at revision {finished}")?;
        if args.delete && !args.migrate {
            std::thread::sleep(Duration::from_secs_f64(args.grace));
            writeln!(out, "moving: deleting the old copies")?;
            healthy &= run(args, &plan, store.as_mut(), true, out)?;
        }
        if let Err(error) = admin.end_move(lock) {
            // Its lease ended: the record stays until a mover finds the ring steady.
            writeln!(out, "the move's record stays: {error}")?;
        }
        out.flush()?;
        if args.once {
            return Ok(healthy);
        }
        follower.wait_for_revision(finished, Duration::from_secs(10)).map_err(membership)?;
    }
}

/// On a steady ring, looks for a move record left by a mover that stopped
/// ([`Admin::clear_finished_move`]) and says what it found. Returns
/// whether that settles this epoch (no record, or one dealt with: a mover
/// still alive, or etcd out of reach, is looked at again), and whether it
/// said etcd's error (said unless `error_said`).
fn left_move(
    args: &Args,
    prefix: &str,
    admin: &mut Option<Admin>,
    error_said: bool,
    out: &mut impl Write,
) -> Result<(bool, bool), CliError> {
    let found = match admin {
        Some(admin) => admin.clear_finished_move(),
        None => Admin::connect(args.etcd_security.access(&args.etcd)?, prefix)
            .and_then(|connected| admin.insert(connected).clear_finished_move()),
    };
    let abandon = "then run `shardring member abandon-move` to let the membership change";
    match &found {
        Ok(Some(LeftMove::Cleared { since })) => {
            writeln!(out, "the ring is steady: deleted the record of the move begun at revision {since}")?
        }
        Ok(Some(LeftMove::OldCopiesLeft { since })) => writeln!(
            out,
            "the move begun at revision {since} made its members active, but its rebalancer stopped before \
             deleting every old copy: keys may have stale copies on servers that no longer own them \
             (docs/transitions.md); delete them, {abandon}"
        )?,
        Ok(Some(LeftMove::Unreadable { since, why })) => writeln!(
            out,
            "the record of the move begun at revision {since} ({prefix}/move) cannot be read: {why}; whether its \
             move finished is unknown: once every key is on the server the ring places it on, {abandon}"
        )?,
        Ok(Some(LeftMove::NotPromoted { since })) => writeln!(
            out,
            "the move begun at revision {since} was left unfinished and the membership changed under it (a \
             member's lease ended?): keys it moved may be on a server outside the ring; recover them, {abandon}"
        )?,
        Err(error) if !error_said => writeln!(out, "could not look for a move's record: {error}")?,
        Ok(None | Some(LeftMove::MoverLives { .. })) | Err(_) => {}
    }
    out.flush()?;
    Ok((!matches!(found, Err(_) | Ok(Some(LeftMove::MoverLives { .. }))), found.is_err()))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use clap::Parser;
    use shardring::Ring;

    use super::backend::{Deletion, Failure, Key, Outcome};
    use super::pass::BATCH;
    use super::rate::{Rate, RateError};
    use super::*;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        args: Args,
    }

    /// Each server's keys and values, by address.
    type Servers = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

    /// Servers in memory; `aliases` maps an address to the server it reaches.
    #[derive(Default)]
    struct Memory {
        servers: Rc<RefCell<Servers>>,
        aliases: BTreeMap<String, String>,
    }

    impl Memory {
        fn server(&self, address: &str) -> String {
            self.aliases.get(address).cloned().unwrap_or_else(|| address.to_owned())
        }
    }

    impl Backend for Memory {
        fn name(&self) -> &'static str {
            "memory"
        }

        fn identity(&mut self, server: &str) -> Result<Option<String>, Failure> {
            Ok(Some(self.server(server)))
        }

        fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure> {
            let servers = self.servers.borrow();
            let held = servers.get(&self.server(server)).into_iter().flat_map(|s| s.keys());
            Ok(held.map(|bytes| Key { bytes: bytes.clone(), expiry: None, size: 0 }).collect())
        }

        fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
            let (source, target) = (self.server(source), self.server(target));
            let mut servers = self.servers.borrow_mut();
            let mut outcomes = Vec::new();
            for key in keys {
                let value = servers.get(&source).and_then(|s| s.get(&key.bytes)).cloned();
                let held = servers.entry(target.clone()).or_default();
                outcomes.push(match value {
                    None => Outcome::Gone,
                    Some(_) if held.contains_key(&key.bytes) => Outcome::Present,
                    Some(value) => {
                        held.insert(key.bytes.clone(), value);
                        Outcome::Copied { bytes: 1 }
                    }
                });
            }
            Ok(outcomes)
        }

        fn held(&mut self, server: &str, keys: &[&Key]) -> Result<Vec<bool>, Failure> {
            let servers = self.servers.borrow();
            let held = servers.get(&self.server(server));
            Ok(keys.iter().map(|k| held.is_some_and(|s| s.contains_key(&k.bytes))).collect())
        }

        fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure> {
            let (source, target) = (self.server(source), self.server(target));
            let mut servers = self.servers.borrow_mut();
            let mut outcomes = Vec::new();
            for key in keys {
                if servers.get(&target).is_some_and(|s| s.contains_key(&key.bytes)) {
                    servers.entry(source.clone()).or_default().remove(&key.bytes);
                    outcomes.push(Deletion::Deleted);
                } else {
                    outcomes.push(Deletion::Missing);
                }
            }
            Ok(outcomes)
        }
    }

    /// Defence in depth behind `check_servers` and `identities`: a batch
    /// whose source and target are one server (the same address, or the
    /// same identity under two addresses) copies and deletes nothing, and
    /// the source is reported failed. Without it a key found "already
    /// there" on its own server was deleted from it.
    #[test]
    fn a_move_never_deletes_a_key_from_the_server_it_was_found_on() {
        let ring = |ids: &[&str]| {
            Arc::new(Ring::builder().nodes(ids.iter().map(|&id| shardring::Node::new(id, 1.0))).build().unwrap())
        };
        let plan = Plan::new(ring(&["10.0.0.1:1", "10.0.0.2:1"]), ring(&["10.0.0.1:1", "10.0.0.2:1", "new"])).unwrap();
        for (address, alias) in [("10.0.0.1:1", None), ("10.0.0.9:1", Some("10.0.0.1:1"))] {
            let command = Command::try_parse_from([
                "rebalance",
                "--from",
                "a",
                "--to",
                "b",
                "--backend",
                "redis",
                "--delete",
                "--address",
                &format!("new={address}"),
            ])
            .unwrap();
            let mut store = Memory::default();
            if let Some(server) = alias {
                store.aliases.insert(address.to_owned(), server.to_owned());
            }
            let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
            for key in &keys {
                let owner = plan.old.get(key).unwrap().id().to_owned();
                store.servers.borrow_mut().entry(owner).or_default().insert(key.clone(), b"v".to_vec());
            }
            let servers = Rc::clone(&store.servers);
            let before = servers.borrow().clone();
            // The checks before any copy refuse this run...
            let refused = run(&command.args, &plan, &mut store, true, &mut Vec::new()).err().map(|e| e.to_string());
            assert!(refused.is_some_and(|e| e.contains("are one server")), "{address}");
            assert_eq!(*servers.borrow(), before);
            // ...and a pass that gets past them still moves nothing between one server's two names.
            let identities = if alias.is_some() {
                HashMap::from([
                    ("10.0.0.1:1".to_owned(), "10.0.0.1:1".to_owned()),
                    ("new".to_owned(), "10.0.0.1:1".to_owned()),
                ])
            } else {
                HashMap::new()
            };
            let mut pass = Pass {
                args: &command.args,
                plan: &plan,
                store: &mut store,
                delete: true,
                tallies: BTreeMap::new(),
                seen: HashSet::new(),
                down: HashSet::new(),
                checkpoint: Checkpoint::none(),
                pacer: Pacer::new(None),
                identities,
                bar: ProgressBar::hidden(),
                scans: 0,
                migrate_size: super::pass::MIGRATE_BATCH,
                copy_size: super::pass::FIRST_COPY_BATCH,
                credentials: Default::default(),
                progress: Default::default(),
            };
            let work = pass.scan();
            assert!(work.iter().any(|(source, _, target)| source == "10.0.0.1:1" && target == "new"), "{address}");
            pass.copy(&work).unwrap();
            let tally = &pass.tallies["10.0.0.1:1"];
            assert_eq!((tally.present, tally.deleted), (0, 0), "{address}");
            assert!(tally.error.as_ref().is_some_and(|e| e.contains("nothing copied or deleted")), "{address}");
            let held = servers.borrow();
            let lost = keys.iter().filter(|k| !held.values().any(|s| s.contains_key(*k))).count();
            assert_eq!(lost, 0, "{address}: keys lost");
        }
    }

    /// Once the move lock is lost (`Plan::halt` set mid-run), no
    /// further key moves and the run fails saying why.
    #[test]
    fn a_move_whose_lock_is_lost_moves_no_further_key() {
        let ring = |ids: &[&str]| {
            Arc::new(Ring::builder().nodes(ids.iter().map(|&id| shardring::Node::new(id, 1.0))).build().unwrap())
        };
        let mut plan = Plan::new(ring(&["a:1", "b:1"]), ring(&["a:1", "b:1", "c:1"])).unwrap();
        let halt = Arc::new(std::sync::atomic::AtomicBool::new(false));
        plan.halt = Some(Arc::clone(&halt));
        let command =
            Command::try_parse_from(["rebalance", "--from", "a", "--to", "b", "--backend", "redis", "--delete"])
                .unwrap();
        let mut store = Memory::default();
        for i in 0..500 {
            let key = format!("key-{i}").into_bytes();
            let owner = plan.old.get(&key).unwrap().id().to_owned();
            store.servers.borrow_mut().entry(owner).or_default().insert(key, b"v".to_vec());
        }
        let servers = Rc::clone(&store.servers);
        halt.store(true, std::sync::atomic::Ordering::Release);
        let mut out = Vec::new();
        assert!(!run(&command.args, &plan, &mut store, true, &mut out).unwrap());
        let report = String::from_utf8(out).unwrap();
        assert!(report.contains("the move lock was lost"), "{report}");
        assert!(servers.borrow().get("c:1").is_none_or(BTreeMap::is_empty), "a key moved after the lock was lost");
        halt.store(false, std::sync::atomic::Ordering::Release);
        assert!(run(&command.args, &plan, &mut store, true, &mut Vec::new()).unwrap());
        assert!(servers.borrow().get("c:1").is_some_and(|held| !held.is_empty()));
    }

    #[test]
    fn rates_are_checked_so_that_the_pause_is_a_duration() {
        assert_eq!(Rate::parse("0.001").unwrap().interval(), Duration::from_secs(1000));
        assert_eq!(Rate::parse("1e9").unwrap().interval(), Duration::from_nanos(1));
        assert_eq!(Rate::parse("1e-300"), Err(RateError::OutOfRange("1e-300".into())));
        assert_eq!(Rate::parse("inf"), Err(RateError::OutOfRange("inf".into())));
        assert_eq!(Rate::parse("fast"), Err(RateError::NotANumber("fast".into())));
        // The longest pause a batch waits converts too.
        let _ = Rate::parse("0.001").unwrap().interval() * BATCH as u32;
    }

    #[test]
    fn paced_batches_hold_3_ms_of_the_rate() {
        let limit = |rate: &str| Pacer::new(Some(Rate::parse(rate).unwrap())).batch_limit();
        assert_eq!(limit("10000"), 30);
        assert_eq!(limit("2000"), 6);
        assert_eq!(limit("0.001"), 1);
        assert_eq!(limit("1e9"), 3_000_000);
        assert_eq!(Pacer::new(None).batch_limit(), usize::MAX);
    }
}
