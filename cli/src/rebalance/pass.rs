//! The copy loop of `rebalance`: a pass over the sources, scan after scan,
//! copying (and with `--delete`, moving) the keys that leave each server in
//! batches, rate-limited; a resumed run first asks each key's new owner.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::address::Address;
use super::args::Args;
use super::backend::{Backend, Deletion, Failure, Key, Outcome, Side};
use super::checkpoint::Checkpoint;
use super::plan::Plan;
use super::progress::{SharedProgress, lock};
use super::rate::Pacer;
use super::report::Tally;
use crate::error::CliError;

/// Keys per copy call: one pipelined read and one pipelined write for
/// each. At 1,000,000 memcached items of 100 bytes, 256 copied 63,000 keys/s
/// here and 64 copied 41,000-50,000.
pub(super) const BATCH: usize = 256;

/// Bytes per copy call, as far as the listing gives sizes (memcached's
/// metadump does): a batch holds its values in memory twice, so 2,000 items
/// of 1 MiB go 4 at a time, not 256.
const BATCH_BYTES: u64 = 4 << 20;

/// The length of the next run of `keys`: at most `limit` keys and, past
/// the first key, at most [`BATCH_BYTES`] of known size.
fn run_length(keys: &[&Key], limit: usize) -> usize {
    let mut bytes = 0;
    let mut end = 0;
    while end < keys.len() && end < limit && (end == 0 || bytes + keys[end].size <= BATCH_BYTES) {
        bytes += keys[end].size;
        end += 1;
    }
    end
}

/// Keys in the first copy batch of a run, before sizes are known (Redis's
/// SCAN gives none): 16, then [`next_copy_size`] adapts.
pub(super) const FIRST_COPY_BATCH: usize = 16;

/// The next copy batch size after `keys` keys (of a batch limit `size`)
/// copied `bytes`: shrunk so that a batch holds about [`BATCH_BYTES`],
/// doubled (up to [`BATCH`]) while a full batch holds under a quarter of it.
fn next_copy_size(size: usize, keys: usize, bytes: u64) -> usize {
    if bytes > BATCH_BYTES {
        ((keys as u64 * BATCH_BYTES / bytes) as usize).max(1)
    } else if bytes <= BATCH_BYTES / 4 && keys >= size {
        (size * 2).min(BATCH)
    } else {
        size
    }
}

/// The hash [`Pass::seen`] keeps of a leaving key: SipHash-1-3 with fixed
/// keys (std's `DefaultHasher::new()`) over the source id and the key.
fn seen_hash(source: &str, key: &[u8]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    source.hash(&mut hasher);
    key.hash(&mut hasher);
    hasher.finish()
}

/// Keys per `MIGRATE` with `--migrate`, at most: one command moves them
/// all, and blocks the source meanwhile (512 keys of 100 bytes: about 1 ms
/// here).
pub(super) const MIGRATE_BATCH: usize = 512;

/// How long one `MIGRATE` should block its source: a batch that took longer
/// halves the next one (down to one key), a batch under a quarter of it
/// doubles it (up to [`MIGRATE_BATCH`]). SCAN gives no sizes, so large
/// values are found by their time: 512 keys of 1 MiB would block a source
/// for a second.
const MIGRATE_PAUSE: Duration = Duration::from_millis(20);

/// The next `MIGRATE` batch size after one of `size` keys took `took`.
fn next_migrate_size(size: usize, took: Duration) -> usize {
    if took > MIGRATE_PAUSE {
        (size / 2).max(1)
    } else if took < MIGRATE_PAUSE / 4 {
        (size * 2).min(MIGRATE_BATCH)
    } else {
        size
    }
}

/// Scans after the first that may find new keys to move before a run
/// stops. A client that has not yet seen a transition writes to the old
/// owner alone, and a memcached without `metadump hash` lists keys by walking its live
/// LRU lists, which can pass over an item the LRU maintainer moves between
/// them meanwhile (measured here: 2 of 100,000 items on servers being read,
/// and 371 fresh items in one metadump of a server just written and read).
pub(super) const RESCANS: usize = 3;

/// The state of a run across its scans.
pub(super) struct Pass<'a> {
    pub(super) args: &'a Args,
    pub(super) plan: &'a Plan,
    pub(super) store: &'a mut dyn Backend,
    pub(super) delete: bool,
    pub(super) tallies: BTreeMap<String, Tally>,
    /// A 64-bit hash of (source, key) of every leaving key a listing found
    /// ([`seen_hash`]): 8 bytes a key, not the key, so that 2,000,000
    /// leaving keys take about 32 MiB. Two leaving keys of one source with
    /// one hash (odds about n^2 / 2^65: 1 in 10 million at 2,000,000 keys)
    /// would leave the second for a later run to find.
    pub(super) seen: HashSet<u64>,
    /// Servers that failed: reported once and left out of the rest.
    pub(super) down: HashSet<String>,
    pub(super) checkpoint: Checkpoint,
    pub(super) pacer: Pacer,
    /// Each node's server identity, when its backend has one (Redis's run_id).
    pub(super) identities: HashMap<String, String>,
    pub(super) bar: ProgressBar,
    pub(super) scans: usize,
    /// Keys in the next `MIGRATE` ([`next_migrate_size`]).
    pub(super) migrate_size: usize,
    /// Keys in the next copy batch at most ([`next_copy_size`]).
    pub(super) copy_size: usize,
    /// Redis credentials, for the connections of listing threads.
    pub(super) credentials: crate::server_access::Credentials,
    /// What the metrics endpoint and `P/rebalance` show.
    pub(super) progress: SharedProgress,
}

/// One source's listing by its thread: the source, the moving keys it
/// found, its tallies (the source's, and a target's error) and the servers
/// it found down.
type Listing<'s> = (&'s String, u64, BTreeMap<String, Tally>, HashSet<String>);

impl Pass<'_> {
    /// Scans every source not down, each in one piece; returns the keys no
    /// earlier scan found that leave it, with their targets (a dry run).
    pub(super) fn scan(&mut self) -> Vec<(String, Key, String)> {
        self.scans += 1;
        let mut work = Vec::new();
        for source in self.plan.sources() {
            self.tallies.entry(source.clone()).or_default();
            if self.down.contains(&source) {
                continue;
            }
            match self.store.keys(self.args.address(&source)) {
                Ok(keys) => work.extend(self.leaving(&source, keys)),
                Err(failure) => {
                    self.tallies.entry(source.clone()).or_default().error.get_or_insert(failure.message);
                    self.down.insert(source);
                }
            }
        }
        self.bar.inc_length(work.len() as u64);
        work
    }

    /// One listing of every source not down, page by page, each page's
    /// leaving keys copied (and with `delete`, moved) before the next page
    /// is read, so memory holds one page, not the server's keys. Returns how
    /// many keys no earlier listing found leave their source.
    pub(super) fn copy_listing(&mut self) -> Result<usize, CliError> {
        self.scans += 1;
        let mut found = 0;
        for source in self.plan.sources() {
            found += self.list_source(&source)?;
        }
        Ok(found)
    }

    /// One source's listing, page by page, each page's leaving keys copied
    /// or migrated ([`Pass::copy`]) before the next page is read; a source
    /// that cannot be listed is marked down. Returns how many leaving keys
    /// it found.
    fn list_source(&mut self, source: &str) -> Result<usize, CliError> {
        self.tallies.entry(source.to_owned()).or_default();
        let mut found = 0;
        let mut cursor = 0;
        while !self.down.contains(source) {
            let mark = self.args.migrate.then_some(self.plan.mark.as_str());
            let (next, keys) = match self.store.page(self.args.address(source), cursor, mark) {
                Ok(page) => page,
                Err(failure) => {
                    self.tallies.entry(source.to_owned()).or_default().error.get_or_insert(failure.message);
                    self.down.insert(source.to_owned());
                    break;
                }
            };
            let work = self.leaving(source, keys);
            found += work.len();
            self.bar.inc_length(work.len() as u64);
            self.copy(&work)?;
            if self.args.migrate && self.scans > RESCANS {
                self.name_returning(source, &work);
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        if self.args.migrate && !self.args.dry_run && !self.down.contains(source) {
            found += self.settle_doubts(source);
        }
        Ok(found)
    }

    /// `--migrate`, after each listing of `source`: the keys in doubt there
    /// (a `MIGRATE` that failed, [`Backend::migrate`]) that a client deleted
    /// since have their copies deleted on their targets, and their doubt
    /// ends. Returns how many: a listing that settles one is not clean (the
    /// next listing proves the source holds no doubt). A target that cannot
    /// be reached keeps its keys in doubt and is marked down.
    fn settle_doubts(&mut self, source: &str) -> usize {
        // A mover that lost its lock leaves the doubts to the one that holds it.
        if self.plan.halted() {
            return 0;
        }
        let from = self.args.address(source).to_owned();
        let stale = match self.store.doubts(&from, &self.plan.mark) {
            Ok(stale) => stale,
            Err(failure) => {
                self.fail(source, source, failure);
                return 0;
            }
        };
        // A key in doubt moves (this transition's mark put it there); one
        // that would not (`None`) only leaves the doubt: no copy of it is
        // anywhere, and its source's copy is never deleted.
        let mut by_target: BTreeMap<Option<String>, Vec<&Key>> = BTreeMap::new();
        for key in &stale {
            by_target.entry(self.plan.target(source, &key.bytes, self.args.migrate)).or_default().push(key);
        }
        let mut settled = 0;
        for (target, keys) in by_target {
            if self.plan.halted() {
                break;
            }
            let to = target.as_deref().map(|target| self.args.address(target).to_owned());
            match self.store.drop_doubts(&from, to.as_deref(), &self.plan.mark, &keys) {
                Ok(()) => {
                    settled += keys.len();
                    self.tallies.entry(source.to_owned()).or_default().gone += keys.len() as u64;
                }
                Err(failure) => self.fail(source, target.as_deref().unwrap_or(source), failure),
            }
        }
        settled
    }

    /// Of `keys` listed on `source`, those that leave it and no earlier
    /// listing found, with their targets; counts them (and, in the first
    /// listing, every key) in the source's tally. With `--migrate` every
    /// leaving key is returned, found before or not: a key `MIGRATE` moved
    /// is no longer listed, so one listed again is still there, and a
    /// listing that finds it must not pass for a clean one (the report
    /// counts it once: [`Tally::settle_migrate`]).
    fn leaving(&mut self, source: &str, keys: Vec<Key>) -> Vec<(String, Key, String)> {
        let first = self.scans == 1;
        let listed = keys.len() as u64;
        let tally = self.tallies.entry(source.to_owned()).or_default();
        tally.scanned += if first { listed } else { 0 };
        let mut work = Vec::new();
        for key in keys {
            let Some(target) = self.plan.target(source, &key.bytes, self.args.migrate) else { continue };
            // A dry run lists twice and moves nothing: it counts a key once, `--migrate` or not.
            if (!self.args.migrate || self.args.dry_run) && !self.seen.insert(seen_hash(source, &key.bytes)) {
                continue;
            }
            tally.to_move += 1;
            tally.late += u64::from(!first);
            work.push((source.to_owned(), key, target));
        }
        lock(&self.progress).listed(source, self.scans, listed, work.len() as u64);
        work
    }

    /// `--migrate`'s last listing: the moving keys it found again on
    /// `source` (their targets up) after earlier listings had moved every
    /// moving key. Under the handoff protocol nothing writes a moving key
    /// on its old owner once marked, so one that keeps coming back is a
    /// client writing there unguarded: the run fails naming the first few,
    /// whether or not `check_left`'s listing then catches one between two
    /// writes.
    fn name_returning(&mut self, source: &str, work: &[(String, Key, String)]) {
        let back: Vec<String> = work
            .iter()
            .filter(|(_, _, target)| !self.down.contains(target))
            .map(|(_, key, _)| format!("{:?}", String::from_utf8_lossy(&key.bytes)))
            .collect();
        if back.is_empty() || self.down.contains(source) {
            return;
        }
        let listings = RESCANS + 1;
        let message = format!(
            "moving keys kept coming back to {} after they moved: listing {listings} of {listings} still found {}, \
             among them {} (does a client write them on their old owner without the handoff guard?)",
            self.args.address(source),
            back.len(),
            back.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
        self.tallies.entry(source.to_owned()).or_default().error.get_or_insert(message);
    }

    /// Marks the server of `failure` down and records its error.
    fn fail(&mut self, source: &str, target: &str, failure: Failure) {
        let failed = if failure.side == Side::Target { target } else { source };
        self.down.insert(failed.to_owned());
        self.tallies.entry(failed.to_owned()).or_default().error.get_or_insert(failure.message);
    }

    /// Copies `work` in batches of one source and one target (and deletes
    /// the old copies with `delete`), rate-limited.
    pub(super) fn copy(&mut self, work: &[(String, Key, String)]) -> Result<(), CliError> {
        let mut batches: BTreeMap<(&str, &str), Vec<&Key>> = BTreeMap::new();
        for (source, key, target) in work {
            batches.entry((source, target)).or_default().push(key);
        }
        for ((source, target), keys) in batches {
            let mut rest = keys.as_slice();
            while !rest.is_empty() {
                let size = if self.args.migrate { self.migrate_size } else { self.copy_size };
                let limit = size.min(self.pacer.batch_limit());
                let (chunk, after) = rest.split_at(run_length(rest, limit));
                rest = after;
                self.bar.inc(chunk.len() as u64);
                let before = self.tallies.get(source).cloned().unwrap_or_default();
                self.copy_batch(source, target, chunk)?;
                let after = self.tallies.get(source).cloned().unwrap_or_default();
                lock(&self.progress).batch(source, target, chunk.len() as u64, &before, &after);
                let before = before.bytes;
                if !self.args.migrate {
                    let bytes = self.tallies.get(source).map_or(0, |t| t.bytes) - before;
                    self.copy_size = next_copy_size(self.copy_size, chunk.len(), bytes);
                }
            }
        }
        Ok(())
    }

    /// Why `source` and `target` are one server, if they are: the same id,
    /// the same address, or the same identity. `check_servers` and
    /// `identities` refuse such a run before any copy; this keeps a move
    /// from ever deleting a key from the server it was found on.
    fn same_server(&self, source: &str, target: &str) -> Option<String> {
        let (from, to) = (self.args.address(source), self.args.address(target));
        if source == target || from == to {
            return Some(format!("{from} is both the source and the target"));
        }
        if let (Ok(a), Ok(b)) = (Address::parse(from), Address::parse(to))
            && a.same_host_and_port(&b)
        {
            return Some(format!("{from} and {to} are one address"));
        }
        match (self.identities.get(source), self.identities.get(target)) {
            (Some(a), Some(b)) if a == b => Some(format!("{from} and {to} answer as one server ({a})")),
            _ => None,
        }
    }

    fn copy_batch(&mut self, source: &str, target: &str, chunk: &[&Key]) -> Result<(), CliError> {
        if self.plan.halted() {
            self.tallies.get_mut(source).expect("every source has a tally").failed += chunk.len() as u64;
            let message = "the move lock was lost (its lease expired or went unrenewed for 8 s, etcd out of reach, or \
                           its move record was deleted by hand): no key moves";
            self.fail(source, target, Failure::source(message));
            return Ok(());
        }
        if let Some(why) = self.same_server(source, target) {
            let tally = self.tallies.get_mut(source).expect("every source has a tally");
            tally.failed += chunk.len() as u64;
            let message = format!("{why}: nothing copied or deleted between {source:?} and {target:?}");
            self.fail(source, target, Failure::source(message));
            return Ok(());
        }
        let tally = self.tallies.get_mut(source).expect("every source has a tally");
        if self.down.contains(source) || self.down.contains(target) {
            tally.failed += chunk.len() as u64;
            return Ok(());
        }
        if self.args.migrate {
            return self.migrate_batch(source, target, chunk);
        }
        let (from, to) = (self.args.address(source), self.args.address(target));
        // Resumed: a key its new owner holds already (an earlier run's copy,
        // or a client's write) is done before, found without reading values.
        let (fresh, mut moved): (Vec<&Key>, Vec<&Key>) = if self.checkpoint.resumed {
            match self.store.held(to, chunk) {
                Ok(held) => {
                    let (done, fresh): (Vec<_>, Vec<_>) = chunk.iter().zip(held).partition(|(_, held)| *held);
                    (fresh.into_iter().map(|(k, _)| *k).collect(), done.into_iter().map(|(k, _)| *k).collect())
                }
                Err(failure) => {
                    tally.failed += chunk.len() as u64;
                    self.fail(source, target, failure);
                    return Ok(());
                }
            }
        } else {
            (chunk.to_vec(), Vec::new())
        };
        tally.done_before += moved.len() as u64;
        self.pacer.wait(fresh.len());
        let outcomes = if fresh.is_empty() { Ok(Vec::new()) } else { self.store.copy(from, to, &fresh) };
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(failure) => {
                tally.failed += fresh.len() as u64;
                self.fail(source, target, failure);
                return Ok(());
            }
        };
        for (key, outcome) in fresh.iter().zip(outcomes) {
            match outcome {
                Outcome::Copied { bytes } => {
                    tally.copied += 1;
                    tally.bytes += bytes;
                    moved.push(key);
                }
                Outcome::Present => {
                    tally.present += 1;
                    moved.push(key);
                }
                Outcome::Gone => tally.gone += 1,
                Outcome::Changed => tally.changed += 1,
            }
        }
        if !self.delete || moved.is_empty() {
            return Ok(());
        }
        match self.store.delete_moved(from, to, &moved) {
            Ok(deletions) => {
                for (key, deletion) in moved.iter().zip(deletions) {
                    match deletion {
                        Deletion::Deleted => tally.deleted += 1,
                        Deletion::Missing => {
                            tally.failed += 1;
                            tally.error.get_or_insert(format!(
                                "{to} does not hold {:?}: its copy on {from} stays",
                                String::from_utf8_lossy(&key.bytes)
                            ));
                        }
                    }
                }
            }
            Err(failure) => {
                tally.failed += moved.len() as u64;
                self.fail(source, target, failure);
            }
        }
        Ok(())
    }

    /// `--migrate`: moves `chunk` with the backend's atomic move; nothing is
    /// checkpointed (what moved is no longer on the source).
    fn migrate_batch(&mut self, source: &str, target: &str, chunk: &[&Key]) -> Result<(), CliError> {
        self.pacer.wait(chunk.len());
        let (from, to) = (self.args.address(source), self.args.address(target));
        let tally = self.tallies.get_mut(source).expect("every source has a tally");
        let started = Instant::now();
        let migrated = self.store.migrate(from, to, &self.plan.mark, chunk);
        self.migrate_size = next_migrate_size(self.migrate_size, started.elapsed());
        match migrated {
            Ok(outcomes) => {
                for outcome in outcomes {
                    match outcome {
                        Outcome::Copied { bytes } => {
                            tally.copied += 1;
                            tally.deleted += 1;
                            tally.bytes += bytes;
                        }
                        Outcome::Gone => tally.gone += 1,
                        Outcome::Present => tally.present += 1,
                        Outcome::Changed => tally.changed += 1,
                    }
                }
            }
            Err(failure) => {
                tally.failed += chunk.len() as u64;
                self.fail(source, target, failure);
            }
        }
        Ok(())
    }

    /// `--migrate`, before any key moves: sets the plan's handoff mark on
    /// every source not down, after which clients' guards send a key
    /// missing there to its new owner (the listings delete other
    /// transitions' marks); a source that cannot be marked is reported and
    /// left out.
    pub(super) fn mark_sources(&mut self) {
        for source in self.plan.sources() {
            if self.down.contains(&source) {
                continue;
            }
            if let Err(failure) = self.store.mark(self.args.address(&source), &self.plan.mark) {
                self.tallies.entry(source.clone()).or_default().error.get_or_insert(failure.message);
                self.down.insert(source);
            }
        }
    }

    /// `--migrate`: one listing of every source not down, page by page,
    /// each page's moving keys migrated before the next page is read (no
    /// list of all keys in memory). Returns how many moving keys it found;
    /// a listing that finds none proves every moving key left its old
    /// owner (a key present for a whole `SCAN` is in some page, and under
    /// the handoff protocol no client creates a moving key on its old owner
    /// once it is marked). Sources are listed in parallel, one thread and
    /// one set of connections each, sharing `--rate` equally.
    pub(super) fn migrate_listing(&mut self) -> u64 {
        self.scans += 1;
        let sources: Vec<String> = self.plan.sources().into_iter().filter(|s| !self.down.contains(s)).collect();
        let rate = self.args.rate.map(|rate| rate.share(sources.len()));
        let listed: Vec<Listing> = std::thread::scope(|scope| {
            let threads: Vec<_> = sources
                .iter()
                .map(|source| {
                    let (args, plan, bar) = (self.args, self.plan, self.bar.clone());
                    let (identities, down, scans, delete) =
                        (self.identities.clone(), self.down.clone(), self.scans, self.delete);
                    let credentials = self.credentials.clone();
                    let progress = Arc::clone(&self.progress);
                    scope.spawn(move || {
                        let mut store = super::backend(args, &credentials);
                        let mut lister = Pass {
                            args,
                            plan,
                            store: store.as_mut(),
                            delete,
                            tallies: BTreeMap::new(),
                            seen: HashSet::new(),
                            down,
                            checkpoint: Checkpoint::none(),
                            pacer: Pacer::new(rate),
                            identities,
                            bar,
                            scans,
                            migrate_size: MIGRATE_BATCH,
                            copy_size: FIRST_COPY_BATCH,
                            credentials,
                            progress,
                        };
                        let found = match lister.list_source(source) {
                            Ok(found) => found as u64,
                            Err(error) => {
                                // --migrate keeps no checkpoint, so no copy error reaches here; say so if one does.
                                lister
                                    .tallies
                                    .entry(source.clone())
                                    .or_default()
                                    .error
                                    .get_or_insert(error.to_string());
                                lister.down.insert(source.clone());
                                0
                            }
                        };
                        (source, found, lister.tallies, lister.down)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().expect("a listing thread panicked")).collect()
        });
        let mut found = 0;
        for (source, count, tallies, down) in listed {
            found += count;
            for (server, tally) in tallies {
                let entry = self.tallies.entry(server.clone()).or_default();
                // This listing of its source (another source's thread may hold its target's error).
                if &server == source {
                    let unmoved = tally.to_move.saturating_sub(tally.copied + tally.gone);
                    // Cut short (the source failed), it did not see every key an earlier listing left.
                    let earlier = entry.unmoved.saturating_sub(tally.copied + tally.gone);
                    entry.unmoved = if down.contains(source) { unmoved.max(earlier) } else { unmoved };
                    if self.scans == 1 {
                        entry.first_found = tally.to_move;
                    }
                }
                entry.absorb(tally);
            }
            self.down.extend(down);
        }
        found
    }

    /// `--migrate`'s last listing: every source not down listed again, and
    /// the keys still on a source that should have left it counted as
    /// remaining, the first few named in the source's error. A clean
    /// listing proves every moving key left its old owner (Redis's SCAN
    /// returns every key present for the whole scan, and under the handoff
    /// protocol no client creates a moving key on its old owner).
    pub(super) fn check_left(&mut self) {
        for source in self.plan.sources() {
            if self.down.contains(&source) {
                continue;
            }
            let keys = match self.store.keys(self.args.address(&source)) {
                Ok(keys) => keys,
                Err(failure) => {
                    self.tallies.entry(source.clone()).or_default().error.get_or_insert(failure.message);
                    self.down.insert(source);
                    continue;
                }
            };
            let left: Vec<Key> =
                keys.into_iter().filter(|k| self.plan.target(&source, &k.bytes, self.args.migrate).is_some()).collect();
            let tally = self.tallies.entry(source.clone()).or_default();
            tally.unmoved = left.len() as u64;
            if left.is_empty() {
                continue;
            }
            tally.remaining += left.len() as u64;
            let named: Vec<String> =
                left.iter().take(5).map(|k| format!("{:?}", String::from_utf8_lossy(&k.bytes))).collect();
            tally.error.get_or_insert(format!(
                "{} moving keys are still on {} after the move, among them {}",
                left.len(),
                self.args.address(&source),
                named.join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(size: u64) -> Key {
        Key { bytes: Vec::new(), expiry: None, size }
    }

    #[test]
    fn a_migrate_batch_halves_when_slow_and_doubles_when_fast() {
        let ms = Duration::from_millis;
        assert_eq!(next_migrate_size(512, ms(1)), 512);
        assert_eq!(next_migrate_size(512, ms(300)), 256);
        assert_eq!(next_migrate_size(1, ms(300)), 1);
        assert_eq!(next_migrate_size(16, ms(1)), 32);
        assert_eq!(next_migrate_size(16, ms(10)), 16);
    }

    #[test]
    fn runs_hold_at_most_their_limit_and_batch_bytes_past_their_first_key() {
        let small: Vec<Key> = (0..600).map(|_| key(100)).collect();
        let refs: Vec<&Key> = small.iter().collect();
        assert_eq!(run_length(&refs, BATCH), 256);
        assert_eq!(run_length(&refs[500..], BATCH), 100);
        let big: Vec<Key> = (0..10).map(|_| key(1 << 20)).chain([key(9 << 20), key(1)]).collect();
        let refs: Vec<&Key> = big.iter().collect();
        // 4 of 1 MiB fill 4 MiB; a key above the limit goes alone.
        assert_eq!(run_length(&refs, BATCH), 4);
        assert_eq!(run_length(&refs[10..], BATCH), 1);
        assert_eq!(run_length(&refs, 2), 2);
        assert_eq!(run_length(&[], BATCH), 0);
    }

    #[test]
    fn copy_batches_shrink_to_batch_bytes_and_grow_while_light() {
        // 16 keys of 1 MiB copied 16 MiB: the next batch holds 4.
        assert_eq!(next_copy_size(16, 16, 16 << 20), 4);
        assert_eq!(next_copy_size(4, 4, 4 << 20), 4);
        assert_eq!(next_copy_size(1, 1, 100 << 20), 1);
        // Light full batches double up to BATCH; a short batch (a page's end) keeps the size.
        assert_eq!(next_copy_size(16, 16, 1600), 32);
        assert_eq!(next_copy_size(256, 256, 25_600), 256);
        assert_eq!(next_copy_size(64, 3, 300), 64);
    }
}
