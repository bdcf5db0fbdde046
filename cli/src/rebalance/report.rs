//! The report of a `rebalance` run: what it did per server (its tallies),
//! printed as text or JSON, for a dry run the moves it would make.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use super::args::Args;
use super::backend::Key;
use super::plan::Plan;
use crate::error::CliError;

/// Per server, what the run did.
#[derive(Default, Clone, serde::Serialize)]
pub(super) struct Tally {
    /// Keys the first scan found.
    pub(super) scanned: u64,
    /// Keys to move, found by any scan.
    pub(super) to_move: u64,
    /// Of those, the ones only a later scan found (written since, or missed).
    pub(super) late: u64,
    pub(super) copied: u64,
    pub(super) present: u64,
    pub(super) gone: u64,
    /// Copies deleted again because the source's value changed meanwhile (memcached).
    pub(super) changed: u64,
    pub(super) done_before: u64,
    pub(super) deleted: u64,
    pub(super) failed: u64,
    /// `--migrate`: moving keys the last listing still found on this source.
    pub(super) remaining: u64,
    pub(super) bytes: u64,
    pub(super) error: Option<String>,
    /// `--migrate`: of the moving keys this source's latest listing found,
    /// those it did not move (still there).
    #[serde(skip)]
    pub(super) unmoved: u64,
    /// `--migrate`: the moving keys this source's first listing found.
    #[serde(skip)]
    pub(super) first_found: u64,
}

impl Tally {
    /// `--migrate`: counts each moving key once. Its listings count a key
    /// each time one finds it (they keep no list of keys, so that memory
    /// stays flat), but a key `MIGRATE` moved is listed no more and one that
    /// did not move is still there for the latest listing: the distinct
    /// keys are those moved or gone plus those the latest listing still
    /// found, and these are the ones that failed.
    pub(super) fn settle_migrate(&mut self) {
        self.to_move = self.copied + self.gone + self.unmoved;
        self.failed = self.unmoved;
        self.late = self.to_move.saturating_sub(self.first_found);
    }

    /// Adds `other`'s counts to this one's; keeps this one's error, else takes `other`'s.
    pub(super) fn absorb(&mut self, other: Tally) {
        self.scanned += other.scanned;
        self.to_move += other.to_move;
        self.late += other.late;
        self.copied += other.copied;
        self.present += other.present;
        self.gone += other.gone;
        self.changed += other.changed;
        self.done_before += other.done_before;
        self.deleted += other.deleted;
        self.failed += other.failed;
        self.remaining += other.remaining;
        self.bytes += other.bytes;
        if self.error.is_none() {
            self.error = other.error;
        }
    }
}

pub(super) fn report_plan(
    args: &Args,
    plan: &Plan,
    tallies: &BTreeMap<String, Tally>,
    work: &[(String, Key, String)],
    scanned: u64,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let failed = Failed::of(plan, tallies);
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
        let line = serde_json::json!({"dry_run": true, "scanned": scanned, "to_move": work.len(), "late": late, "moved_share": share(work.len() as u64 - late, scanned) / 100.0, "predicted_share": plan.predicted, "moves": moves, "servers_failed": failed.servers, "errors": errors});
        writeln!(out, "{line}")?;
    } else {
        if failed.nothing_listed() {
            writeln!(
                out,
                "{}: nothing is known of what would move (the diff predicts {:.3}%)",
                failed.headline("dry run"),
                100.0 * plan.predicted
            )?;
        } else {
            writeln!(
                out,
                "{}: {} of {scanned} keys would move ({:.3}%; the diff predicts {:.3}%)",
                failed.headline("dry run"),
                work.len(),
                share(work.len() as u64 - tallies.values().map(|t| t.late).sum::<u64>(), scanned),
                100.0 * plan.predicted
            )?;
        }
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

/// Which servers of a run failed: how many, and how many of the sources
/// (the old ring's nodes, every key's starting point) failed before their
/// listing found anything. A source that was listed and then failed (its
/// target down, say) is a failed server, not an unlisted source.
struct Failed {
    servers: usize,
    sources: usize,
    of_sources: usize,
}

impl Failed {
    fn of(plan: &Plan, tallies: &BTreeMap<String, Tally>) -> Failed {
        let sources = plan.sources();
        let failed = |server: &String| {
            tallies.get(server).is_some_and(|t| t.error.is_some() && t.scanned == 0 && t.to_move == 0)
        };
        Failed {
            servers: tallies.values().filter(|t| t.error.is_some()).count(),
            sources: sources.iter().filter(|s| failed(s)).count(),
            of_sources: sources.len(),
        }
    }

    /// The start of a report's first line: the run's name, and first of all
    /// whether it failed (`dry run FAILED: ...`).
    fn headline(&self, run: &str) -> String {
        if self.of_sources > 0 && self.sources == self.of_sources {
            format!(
                "{run} FAILED: no source could be listed ({} of {} failed, errors below)",
                self.sources, self.of_sources
            )
        } else if self.servers > 0 {
            let s = if self.servers == 1 { "" } else { "s" };
            format!("{run} FAILED on {} server{s} (errors below); on the others", self.servers)
        } else {
            run.to_owned()
        }
    }

    fn nothing_listed(&self) -> bool {
        self.of_sources > 0 && self.sources == self.of_sources
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

#[allow(clippy::too_many_arguments)] // one report of one run: every figure it prints
pub(super) fn report(
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
    // MIGRATE moves keys without the mover reading them: their sizes are unknown.
    let sized = (!args.migrate).then_some(bytes);
    let failed = Failed::of(plan, tallies);
    if args.json {
        let line = serde_json::json!({
            "scanned": scanned, "to_move": to_move, "late": sum(|t| t.late), "copied": copied, "present": sum(|t| t.present),
            "gone": sum(|t| t.gone), "changed": sum(|t| t.changed), "done_before": sum(|t| t.done_before), "deleted": sum(|t| t.deleted),
            "failed": sum(|t| t.failed), "remaining": sum(|t| t.remaining), "bytes": sized, "seconds": seconds,
            "keys_per_second": copied as f64 / seconds, "megabytes_per_second": sized.map(|b| b as f64 / 1e6 / seconds),
            "moved_share": share(to_move - sum(|t| t.late), scanned) / 100.0, "predicted_share": plan.predicted, "scans": scans,
            "servers_failed": failed.servers, "servers": tallies,
        });
        writeln!(out, "{line}")?;
        return Ok(());
    }
    if failed.nothing_listed() {
        writeln!(
            out,
            "{}: nothing moved (the diff predicts {:.3}%)",
            failed.headline("rebalance"),
            100.0 * plan.predicted
        )?;
    } else {
        writeln!(
            out,
            "{}: {to_move} keys move ({} of the {scanned} of the first scan, {:.3}%; the diff predicts {:.3}%): {copied} copied, {} already there, {} gone, {} changed meanwhile (left a miss), {} done before, {} deleted, {} failed",
            failed.headline("rebalance"),
            to_move - sum(|t| t.late),
            share(to_move - sum(|t| t.late), scanned),
            100.0 * plan.predicted,
            sum(|t| t.present),
            sum(|t| t.gone),
            sum(|t| t.changed),
            sum(|t| t.done_before),
            sum(|t| t.deleted),
            sum(|t| t.failed),
        )?;
    }
    // Nothing is deleted without --delete: say so, for a database.
    let kept = sum(|t| t.copied + t.present + t.done_before);
    if !args.delete && !args.migrate && kept > 0 {
        writeln!(
            out,
            "  the old copies of the {kept} moved keys stay on their old owners (--delete removes them, once clients \
             read from the new ring)"
        )?;
    }
    match sized {
        Some(bytes) => writeln!(
            out,
            "  {bytes} bytes in {seconds:.2} s ({scans} scans): {:.0} keys/s, {:.2} MB/s",
            copied as f64 / seconds,
            bytes as f64 / 1e6 / seconds
        )?,
        None => writeln!(
            out,
            "  {copied} keys in {seconds:.2} s ({scans} listings): {:.0} keys/s (MIGRATE moves keys unread: sizes unknown)",
            copied as f64 / seconds
        )?,
    }
    for (server, tally) in tallies {
        write!(out, "  {server}: scanned {}, moved out {}", tally.scanned, tally.copied + tally.present)?;
        match &tally.error {
            Some(error) => writeln!(out, ", FAILED: {error}")?,
            None => writeln!(out)?,
        }
    }
    Ok(())
}
