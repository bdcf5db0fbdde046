//! `shardring rebalance`: moves the keys whose owner changes between two
//! rings (or across a transition in etcd) from their old owner to their new
//! one, on real memcached or Redis servers whose addresses are the node
//! ids. Which keys move is read off the diff's arcs (`Ring::diff`): a key
//! moves when its hash lies in an arc that leaves its server. Copies are
//! rate-limited, checkpointed (a resumed run skips what is done and copies
//! nothing twice) and reported per server; a server that fails is reported
//! and the others go on.

mod memcached;
mod redis;

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use shardring::{MovedArc, NodeState, Ring, RingConfig, Transition};
use shardring_membership::{Admin, Follower, FollowerOptions};

use crate::CliError;

/// Keys per copy call: one multi-get and one pipelined write for each.
const BATCH: usize = 64;

/// One key of a server, with what the backend knows of it.
pub(crate) struct Key {
    /// The key's bytes.
    pub(crate) bytes: Vec<u8>,
    /// Absolute expiry, Unix seconds (memcached's metadump `exp`); `None`: never or unknown.
    pub(crate) expiry: Option<i64>,
    /// Size in bytes when the listing gives it (memcached), else 0.
    pub(crate) size: u64,
}

/// What one copy did.
pub(crate) enum Outcome {
    /// Written to the target.
    Copied {
        /// Bytes of the value (memcached) or of its DUMP (Redis).
        bytes: u64,
    },
    /// The target holds the key already (a dual write, or an earlier copy).
    Present,
    /// The source no longer holds it (expired or deleted meanwhile).
    Gone,
}

/// What deleting a moved key's old copy did.
pub(crate) enum Deletion {
    /// Deleted from the source (or already gone there).
    Deleted,
    /// Left on the source: the backend is a cache whose stale copies expire.
    Kept,
    /// Left on the source: the target does not hold the key.
    Missing,
}

/// Which server of a copy failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    Source,
    Target,
}

/// A server that failed (unreachable, or an error answer), and the message
/// naming its address.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) side: Side,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn source(message: impl Into<String>) -> Failure {
        Failure { side: Side::Source, message: message.into() }
    }

    pub(crate) fn target(message: impl Into<String>) -> Failure {
        Failure { side: Side::Target, message: message.into() }
    }
}

/// A key-value store the rebalancer copies between; servers are named by
/// their addresses (`host:port`).
pub(crate) trait Backend {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// Every key `server` holds (a failure is the source's).
    fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure>;
    /// Copies `keys` from `source` to `target`, never overwriting a value
    /// there; one outcome per key, in order.
    fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure>;
    /// Deletes each of `keys` from `source` once `target` is seen to hold it
    /// (a move); one outcome per key, in order.
    fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure>;
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum BackendName {
    /// memcached (`lru_crawler metadump all`, get/add with flags and expiry).
    Memcached,
    /// Redis (SCAN, DUMP/PTTL/RESTORE; moves with --delete).
    Redis,
}

/// `shardring rebalance`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The ring in service (JSON config); with --to.
    #[arg(long, requires = "to", conflicts_with = "etcd")]
    from: Option<PathBuf>,
    /// The ring to move to (JSON config).
    #[arg(long, requires = "from")]
    to: Option<PathBuf>,
    /// Follow the ring in etcd instead: when members turn warming or
    /// draining, copy their keys, then make the warming ones active and
    /// remove the draining ones. Endpoints comma-separated.
    #[arg(long, value_delimiter = ',', requires = "prefix")]
    etcd: Vec<String>,
    /// The ring's key prefix in etcd.
    #[arg(long)]
    prefix: Option<String>,
    /// The servers' kind.
    #[arg(long, value_enum)]
    backend: BackendName,
    /// A node's server address, `ID=HOST:PORT` (repeat for each node); a
    /// node without one is reached at its id, which is then `host:port`.
    #[arg(long = "address", value_name = "ID=HOST:PORT", value_parser = parse_address)]
    addresses: Vec<(String, String)>,
    /// At most this many keys per second (default: as fast as the servers answer).
    #[arg(long)]
    rate: Option<f64>,
    /// Print what would move (per source and target) and move nothing.
    #[arg(long)]
    dry_run: bool,
    /// A checkpoint file: what is done is recorded there, and a rerun with
    /// the same file skips it.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Delete each moved key from its old owner once its new owner holds it
    /// (a move, for a database). Only once clients read from the new ring;
    /// with --etcd it runs by itself after the members turn active.
    #[arg(long)]
    delete: bool,
    /// With --etcd: seconds to wait after a transition appears before
    /// scanning (so clients write to both owners), and after making members
    /// active before deleting the moved keys' old copies (--backend redis or
    /// --delete), so clients' followers have switched to the new ring.
    #[arg(long, default_value_t = 2.0)]
    grace: f64,
    /// With --etcd: handle one transition, then exit.
    #[arg(long)]
    once: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_address(text: &str) -> Result<(String, String), String> {
    match text.rsplit_once('=') {
        Some((id, address)) if !id.is_empty() && address.contains(':') => Ok((id.to_owned(), address.to_owned())),
        _ => Err(format!("{text:?} is not ID=HOST:PORT")),
    }
}

impl Args {
    /// The server address of node `id`.
    fn address<'a>(&'a self, id: &'a str) -> &'a str {
        self.addresses.iter().rev().find(|(node, _)| node == id).map_or(id, |(_, address)| address.as_str())
    }
}

/// Which keys of a server move, and where: the diff's arcs, sorted.
struct Plan {
    old: Arc<Ring>,
    new: Arc<Ring>,
    /// The moved arcs in hash order (empty for jump and rendezvous, which
    /// have none: there the owners are compared).
    arcs: Vec<MovedArc>,
    /// The diff's moved share of the hash space.
    predicted: f64,
}

impl Plan {
    fn new(old: Arc<Ring>, new: Arc<Ring>) -> Result<Plan, CliError> {
        let diff = old.diff(&new)?;
        let mut arcs = diff.arcs;
        arcs.sort_unstable_by_key(|a| a.start);
        Ok(Plan { old, new, arcs, predicted: diff.moved_share })
    }

    /// Where `key`, held by `source`, must go: its new owner when that is
    /// another server. A key inside a moved arc leaving `source` takes the
    /// arc's destination; a key `source` holds without owning it (a stale
    /// copy) goes to its owner.
    fn target(&self, source: &str, key: &[u8]) -> Option<String> {
        let hash = self.old.hash_key(key);
        if !self.arcs.is_empty() {
            let i = self.arcs.partition_point(|a| a.end < hash);
            if let Some(arc) = self.arcs.get(i).filter(|a| a.start <= hash && a.from == source) {
                return Some(arc.to.clone());
            }
        }
        let owner = self.new.get(key).ok()?.id();
        (owner != source).then(|| owner.to_owned())
    }

    /// Every server that holds keys now: the old ring's nodes.
    fn sources(&self) -> Vec<String> {
        self.old.nodes().iter().map(|n| n.id().to_owned()).collect()
    }
}

/// Per server, what the run did.
#[derive(Default, Clone, serde::Serialize)]
struct Tally {
    /// Keys the first scan found.
    scanned: u64,
    /// Keys to move, found by any scan.
    to_move: u64,
    /// Of those, the ones only a later scan found (written since, or missed).
    late: u64,
    copied: u64,
    present: u64,
    gone: u64,
    done_before: u64,
    deleted: u64,
    failed: u64,
    bytes: u64,
    error: Option<String>,
}

/// Records what is done, one line per key, and reads it back on a rerun.
struct Checkpoint {
    file: Option<File>,
    done: HashSet<(String, Vec<u8>, bool)>,
}

impl Checkpoint {
    /// Opens (or creates) `path` for a plan from `from` to `to`.
    fn open(path: Option<&PathBuf>, from: u64, to: u64, backend: &str) -> Result<Checkpoint, CliError> {
        let Some(path) = path else { return Ok(Checkpoint { file: None, done: HashSet::new() }) };
        let header = format!("# shardring rebalance checkpoint: {backend} from {from:016x} to {to:016x}");
        let mut done = HashSet::new();
        if let Ok(existing) = File::open(path) {
            let mut lines = BufReader::new(existing).lines();
            let first = lines.next().transpose()?.unwrap_or_default();
            if first != header {
                return Err(CliError::Rebalance(format!(
                    "{}: a checkpoint of another rebalance ({first:?}); this one is {header:?}",
                    path.display()
                )));
            }
            for line in lines {
                let line = line?;
                let mut parts = line.splitn(3, ' ');
                let (Some(action), Some(server), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
                    continue;
                };
                let Ok(key) = hex::decode(key) else { continue };
                done.insert((server.to_owned(), key, action == "deleted"));
            }
        }
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() == 0 {
            writeln!(file, "{header}")?;
        }
        Ok(Checkpoint { file: Some(file), done })
    }

    fn is_done(&self, server: &str, key: &[u8], deletion: bool) -> bool {
        self.done.contains(&(server.to_owned(), key.to_vec(), deletion))
    }

    /// Appends one line, written at once (a killed run loses at most it).
    fn record(&mut self, action: &str, server: &str, key: &[u8]) -> Result<(), CliError> {
        if let Some(file) = &mut self.file {
            file.write_all(format!("{action} {server} {}\n", hex::encode(key)).as_bytes())?;
        }
        Ok(())
    }
}

/// Spaces calls at most `rate` per second.
struct Pacer {
    interval: Option<Duration>,
    next: Instant,
}

impl Pacer {
    fn new(rate: Option<f64>) -> Pacer {
        let interval = rate.filter(|r| *r > 0.0).map(|r| Duration::from_secs_f64(1.0 / r));
        Pacer { interval, next: Instant::now() }
    }

    /// Waits until `keys` more keys may go.
    fn wait(&mut self, keys: usize) {
        let Some(interval) = self.interval else { return };
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        }
        self.next = self.next.max(now) + interval * keys as u32;
    }
}

fn backend(name: BackendName) -> Box<dyn Backend> {
    match name {
        BackendName::Memcached => Box::new(memcached::Memcached::default()),
        BackendName::Redis => Box::new(redis::Redis::default()),
    }
}

fn load_ring(path: &PathBuf) -> Result<Arc<Ring>, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| CliError::Read { path: path.display().to_string(), source })?;
    let config =
        RingConfig::from_json(&text).map_err(|source| CliError::Ring { path: path.display().to_string(), source })?;
    Ok(Arc::new(config.build().map_err(|source| CliError::Ring { path: path.display().to_string(), source })?))
}

/// Runs `shardring rebalance`; `Ok(false)` when a server failed (exit code 1).
pub(crate) fn rebalance(args: &Args, out: &mut impl Write) -> Result<bool, CliError> {
    if let Some(rate) = args.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(CliError::Rebalance(format!("--rate {rate}: a number of keys per second > 0")));
    }
    if !(args.grace.is_finite() && args.grace >= 0.0 && args.grace <= 3600.0) {
        return Err(CliError::Rebalance(format!("--grace {}: a number of seconds from 0 to 3600", args.grace)));
    }
    if !args.etcd.is_empty() {
        return follow(args, out);
    }
    let (Some(from), Some(to)) = (&args.from, &args.to) else {
        return Err(CliError::Rebalance("give --from and --to, or --etcd and --prefix".into()));
    };
    let plan = Plan::new(load_ring(from)?, load_ring(to)?)?;
    let mut store = backend(args.backend);
    run(args, &plan, store.as_mut(), args.delete, out)
}

/// Scans after the first that may find new keys to move before a run
/// stops. memcached's LRU crawler walks live lists, so an item the LRU
/// maintainer moves between them during a metadump (after a read bumped it)
/// can be missed: measured here, 2 of 100,000 items on servers being read,
/// and 371 fresh items in one metadump of a server just written and read.
/// And a client that has not yet seen a transition writes to the old owner
/// alone.
const RESCANS: usize = 3;

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
    let checkpoint = if args.dry_run {
        Checkpoint::open(None, 0, 0, "")?
    } else {
        Checkpoint::open(args.resume.as_ref(), plan.old.fingerprint(), plan.new.fingerprint(), store.name())?
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
        bar,
        scans: 0,
    };
    if args.dry_run {
        let mut work = pass.scan();
        work.extend(pass.scan());
        let scanned = pass.tallies.values().map(|t| t.scanned).sum();
        return report_plan(args, plan, &pass.tallies, &work, scanned, out);
    }
    // At least two scans: the second finds what the first missed.
    loop {
        let work = pass.scan();
        if work.is_empty() && pass.scans >= 2 {
            break;
        }
        pass.copy(&work)?;
        if pass.scans > RESCANS {
            break;
        }
    }
    pass.bar.finish_and_clear();
    let tallies = pass.tallies;
    let scanned = tallies.values().map(|t| t.scanned).sum();
    let to_move = tallies.values().map(|t| t.to_move).sum();
    report(args, plan, &tallies, scanned, to_move, pass.scans, started.elapsed(), out)?;
    Ok(tallies.values().all(|t| t.error.is_none()))
}

/// The state of a run across its scans.
struct Pass<'a> {
    args: &'a Args,
    plan: &'a Plan,
    store: &'a mut dyn Backend,
    delete: bool,
    tallies: BTreeMap<String, Tally>,
    /// (source, key) of every key a scan found.
    seen: HashSet<(String, Vec<u8>)>,
    /// Servers that failed: reported once and left out of the rest.
    down: HashSet<String>,
    checkpoint: Checkpoint,
    pacer: Pacer,
    bar: ProgressBar,
    scans: usize,
}

impl Pass<'_> {
    /// Scans every source not down; returns the keys no earlier scan found
    /// that leave it, with their targets.
    fn scan(&mut self) -> Vec<(String, Key, String)> {
        self.scans += 1;
        let mut work = Vec::new();
        for source in self.plan.sources() {
            let tally = self.tallies.entry(source.clone()).or_default();
            if self.down.contains(&source) {
                continue;
            }
            match self.store.keys(self.args.address(&source)) {
                Ok(keys) => {
                    for key in keys {
                        if !self.seen.insert((source.clone(), key.bytes.clone())) {
                            continue;
                        }
                        let first = self.scans == 1;
                        tally.scanned += u64::from(first);
                        if let Some(target) = self.plan.target(&source, &key.bytes) {
                            tally.to_move += 1;
                            tally.late += u64::from(!first);
                            work.push((source.clone(), key, target));
                        }
                    }
                }
                Err(failure) => {
                    tally.error.get_or_insert(failure.message);
                    self.down.insert(source);
                }
            }
        }
        self.bar.inc_length(work.len() as u64);
        work
    }

    /// Marks the server of `failure` down and records its error.
    fn fail(&mut self, source: &str, target: &str, failure: Failure) {
        let failed = if failure.side == Side::Target { target } else { source };
        self.down.insert(failed.to_owned());
        self.tallies.entry(failed.to_owned()).or_default().error.get_or_insert(failure.message);
    }

    /// Copies `work` in batches of one source and one target (and deletes
    /// the old copies with `delete`), rate-limited and checkpointed.
    fn copy(&mut self, work: &[(String, Key, String)]) -> Result<(), CliError> {
        let mut batches: BTreeMap<(&str, &str), Vec<&Key>> = BTreeMap::new();
        for (source, key, target) in work {
            batches.entry((source, target)).or_default().push(key);
        }
        for ((source, target), keys) in batches {
            for chunk in keys.chunks(BATCH) {
                self.bar.inc(chunk.len() as u64);
                self.copy_batch(source, target, chunk)?;
            }
        }
        Ok(())
    }

    fn copy_batch(&mut self, source: &str, target: &str, chunk: &[&Key]) -> Result<(), CliError> {
        let tally = self.tallies.get_mut(source).expect("every source has a tally");
        if self.down.contains(source) || self.down.contains(target) {
            tally.failed += chunk.len() as u64;
            return Ok(());
        }
        let checkpoint = &mut self.checkpoint;
        let fresh: Vec<&Key> = chunk.iter().copied().filter(|k| !checkpoint.is_done(source, &k.bytes, false)).collect();
        tally.done_before += (chunk.len() - fresh.len()) as u64;
        self.pacer.wait(fresh.len());
        let (from, to) = (self.args.address(source), self.args.address(target));
        let outcomes = if fresh.is_empty() { Ok(Vec::new()) } else { self.store.copy(from, to, &fresh) };
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(failure) => {
                tally.failed += fresh.len() as u64;
                self.fail(source, target, failure);
                return Ok(());
            }
        };
        let mut moved: Vec<&Key> =
            chunk.iter().copied().filter(|k| checkpoint.is_done(source, &k.bytes, false)).collect();
        for (key, outcome) in fresh.iter().zip(outcomes) {
            match outcome {
                Outcome::Copied { bytes } => {
                    tally.copied += 1;
                    tally.bytes += bytes;
                    checkpoint.record("copied", source, &key.bytes)?;
                    moved.push(key);
                }
                Outcome::Present => {
                    tally.present += 1;
                    checkpoint.record("present", source, &key.bytes)?;
                    moved.push(key);
                }
                Outcome::Gone => {
                    tally.gone += 1;
                    checkpoint.record("gone", source, &key.bytes)?;
                }
            }
        }
        moved.retain(|key| !checkpoint.is_done(source, &key.bytes, true));
        if !self.delete || moved.is_empty() {
            return Ok(());
        }
        match self.store.delete_moved(from, to, &moved) {
            Ok(deletions) => {
                for (key, deletion) in moved.iter().zip(deletions) {
                    match deletion {
                        Deletion::Deleted => tally.deleted += 1,
                        Deletion::Kept => {}
                        Deletion::Missing => {
                            tally.failed += 1;
                            tally.error.get_or_insert(format!(
                                "{to} does not hold {:?}: its copy on {from} stays",
                                String::from_utf8_lossy(&key.bytes)
                            ));
                            continue;
                        }
                    }
                    checkpoint.record("deleted", source, &key.bytes)?;
                }
            }
            Err(failure) => {
                tally.failed += moved.len() as u64;
                self.fail(source, target, failure);
            }
        }
        Ok(())
    }
}

fn report_plan(
    args: &Args,
    plan: &Plan,
    tallies: &BTreeMap<String, Tally>,
    work: &[(String, Key, String)],
    scanned: u64,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let mut pairs: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for (source, key, target) in work {
        let pair = pairs.entry((source, target)).or_default();
        pair.0 += 1;
        pair.1 += key.size;
    }
    if args.json {
        let moves: Vec<serde_json::Value> = pairs
            .iter()
            .map(|((s, t), (n, b))| serde_json::json!({"from": s, "to": t, "keys": n, "bytes": b}))
            .collect();
        let errors: BTreeMap<&String, &Option<String>> =
            tallies.iter().filter(|(_, t)| t.error.is_some()).map(|(s, t)| (s, &t.error)).collect();
        let late: u64 = tallies.values().map(|t| t.late).sum();
        let line = serde_json::json!({"dry_run": true, "scanned": scanned, "to_move": work.len(), "late": late, "moved_share": share(work.len() as u64 - late, scanned) / 100.0, "predicted_share": plan.predicted, "moves": moves, "errors": errors});
        writeln!(out, "{line}")?;
    } else {
        writeln!(
            out,
            "dry run: {} of {scanned} keys would move ({:.3}%; the diff predicts {:.3}%)",
            work.len(),
            share(work.len() as u64 - tallies.values().map(|t| t.late).sum::<u64>(), scanned),
            100.0 * plan.predicted
        )?;
        for ((source, target), (keys, bytes)) in &pairs {
            writeln!(
                out,
                "  {source} -> {target}: {keys} keys{}",
                if *bytes > 0 { format!(", {bytes} bytes") } else { String::new() }
            )?;
        }
        for (server, tally) in tallies {
            if let Some(error) = &tally.error {
                writeln!(out, "  {server}: FAILED: {error}")?;
            }
        }
    }
    Ok(tallies.values().all(|t| t.error.is_none()))
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

#[allow(clippy::too_many_arguments)] // one report of one run: every figure it prints
fn report(
    args: &Args,
    plan: &Plan,
    tallies: &BTreeMap<String, Tally>,
    scanned: u64,
    to_move: u64,
    scans: usize,
    elapsed: Duration,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let sum = |f: fn(&Tally) -> u64| tallies.values().map(f).sum::<u64>();
    let (copied, bytes) = (sum(|t| t.copied), sum(|t| t.bytes));
    let seconds = elapsed.as_secs_f64().max(1e-9);
    if args.json {
        let line = serde_json::json!({
            "scanned": scanned, "to_move": to_move, "late": sum(|t| t.late), "copied": copied, "present": sum(|t| t.present),
            "gone": sum(|t| t.gone), "done_before": sum(|t| t.done_before), "deleted": sum(|t| t.deleted),
            "failed": sum(|t| t.failed), "bytes": bytes, "seconds": seconds,
            "keys_per_second": copied as f64 / seconds, "megabytes_per_second": bytes as f64 / 1e6 / seconds,
            "moved_share": share(to_move - sum(|t| t.late), scanned) / 100.0, "predicted_share": plan.predicted, "scans": scans, "servers": tallies,
        });
        writeln!(out, "{line}")?;
        return Ok(());
    }
    writeln!(
        out,
        "rebalance: {to_move} keys move ({} of the {scanned} of the first scan, {:.3}%; the diff predicts {:.3}%): {copied} copied, {} already there, {} gone, {} done before, {} deleted, {} failed",
        to_move - sum(|t| t.late),
        share(to_move - sum(|t| t.late), scanned),
        100.0 * plan.predicted,
        sum(|t| t.present),
        sum(|t| t.gone),
        sum(|t| t.done_before),
        sum(|t| t.deleted),
        sum(|t| t.failed),
    )?;
    writeln!(
        out,
        "  {bytes} bytes in {seconds:.2} s ({scans} scans): {:.0} keys/s, {:.2} MB/s",
        copied as f64 / seconds,
        bytes as f64 / 1e6 / seconds
    )?;
    for (server, tally) in tallies {
        write!(out, "  {server}: scanned {}, moved out {}", tally.scanned, tally.copied + tally.present)?;
        match &tally.error {
            Some(error) => writeln!(out, ", FAILED: {error}")?,
            None => writeln!(out)?,
        }
    }
    Ok(())
}

/// `--etcd`: waits for members to turn warming or draining; copies their
/// keys; makes the warming ones active and removes the draining ones; for a
/// move (Redis, or --delete), after `--grace` seconds deletes the moved
/// keys' old copies. `--once` stops after one transition.
fn follow(args: &Args, out: &mut impl Write) -> Result<bool, CliError> {
    let prefix = args.prefix.as_deref().expect("clap requires --prefix with --etcd");
    let membership = |e: shardring_membership::MembershipError| CliError::Membership(e.to_string());
    let follower = Follower::etcd(&args.etcd, prefix, FollowerOptions::default()).map_err(membership)?;
    let events = follower.subscribe();
    let mut store = backend(args.backend);
    let mut healthy = true;
    loop {
        let epoch = follower.epoch();
        let transition: &Transition = &epoch.transition;
        if transition.is_steady() {
            let _ = events.recv_timeout(Duration::from_millis(500));
            continue;
        }
        let plan = Plan::new(Arc::clone(transition.old_ring()), Arc::clone(transition.new_ring()))?;
        // Clients' followers take a moment to see the transition and start
        // writing to both owners; a key written to its old owner alone
        // before then must be in the scan.
        writeln!(out, "transition at revision {}: copying in {} s", epoch.revision, args.grace)?;
        out.flush()?;
        std::thread::sleep(Duration::from_secs_f64(args.grace));
        if !run(args, &plan, store.as_mut(), false, out)? {
            // A server failed: the members stay warming or draining (clients
            // keep reading the old owners), so nothing is lost; retry.
            healthy = false;
            writeln!(out, "a server failed: the transition stays; retrying in 5 s")?;
            out.flush()?;
            if args.once || args.dry_run {
                return Ok(false);
            }
            let _ = events.recv_timeout(Duration::from_secs(5));
            continue;
        }
        if args.dry_run {
            return Ok(healthy);
        }
        let mut admin = Admin::connect(&args.etcd, prefix).map_err(membership)?;
        let mut finished = 0;
        for node in transition.old_ring().nodes().iter().chain(transition.new_ring().nodes()) {
            match transition.state(node.id()) {
                Some(NodeState::Warming) => {
                    finished = finished.max(admin.set_state(node.id(), NodeState::Active).map_err(membership)?)
                }
                Some(NodeState::Draining) => finished = finished.max(admin.leave(node.id()).map_err(membership)?),
                _ => {}
            }
        }
        writeln!(out, "members active at revision {finished}")?;
        if matches!(args.backend, BackendName::Redis) || args.delete {
            std::thread::sleep(Duration::from_secs_f64(args.grace));
            writeln!(out, "moving: deleting the old copies")?;
            healthy &= run(args, &plan, store.as_mut(), true, out)?;
        }
        out.flush()?;
        if args.once {
            return Ok(healthy);
        }
        follower.wait_for_revision(finished, Duration::from_secs(10)).map_err(membership)?;
    }
}
