//! `shardring hot publish`: the fleet's hot set, decided from the clients'
//! reports and written to `P/hot` for every client and writer to spread by.
//! `shardring hot show`: the set as it is.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use clap::Subcommand;
use shardring::HotSet;
use shardring_membership::{Admin, FleetView};

use crate::error::CliError;
use crate::member::Target;

#[derive(Subcommand)]
pub(crate) enum HotCommand {
    /// Every interval, sum the hot keys and lookups per node the clients
    /// report (`P/clients/`), spread the keys that push a node over
    /// `--bound` times its share (`HotSet::advance`) and write the set to
    /// `P/hot` when it changed. A key moves one phase per publication
    /// (writing, spread, leaving), so the interval must exceed how long
    /// the slowest client takes to see a change. Runs until stopped;
    /// `--once` publishes one step.
    Publish {
        #[command(flatten)]
        target: Target,
        /// No node should take more than this times its weight's share of
        /// the requests (at least 1).
        #[arg(long, default_value_t = 1.2)]
        bound: f64,
        /// Seconds between publications (at least 0.1).
        #[arg(long, default_value_t = 10.0)]
        interval: f64,
        /// Publish one step, then exit.
        #[arg(long)]
        once: bool,
    },
    /// The hot set at `P/hot`: each key, its replicas, phase and rate.
    Show {
        #[command(flatten)]
        target: Target,
        /// The set's JSON as stored.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn hot(command: HotCommand, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        HotCommand::Show { target, json } => {
            let mut admin = Admin::connect(target.access()?, target.prefix()).map_err(membership)?;
            let set = admin.fleet().map_err(membership)?.hot_set.map_err(CliError::Membership)?;
            if json {
                writeln!(out, "{}", set.to_json())?;
            } else {
                describe(&set, out)?;
            }
            Ok(())
        }
        HotCommand::Publish { target, bound, interval, once } => {
            if !(bound.is_finite() && bound >= 1.0) {
                return Err(CliError::Membership(format!("--bound {bound} must be a number >= 1")));
            }
            if !(interval.is_finite() && interval >= 0.1) {
                return Err(CliError::Membership(format!("--interval {interval} must be at least 0.1 seconds")));
            }
            let mut admin = Admin::connect(target.access()?, target.prefix()).map_err(membership)?;
            loop {
                publish(&mut admin, bound, out)?;
                if once {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_secs_f64(interval));
            }
        }
    }
}

/// One publication: read the fleet, advance the set, write it if it changed.
fn publish(admin: &mut Admin, bound: f64, out: &mut impl Write) -> Result<(), CliError> {
    let view = admin.fleet().map_err(membership)?;
    let Some(ring) = view.ring.clone() else {
        let why = view.fingerprint.as_ref().err().cloned().unwrap_or_default();
        return Err(CliError::Membership(format!("no ring can be built from the records: {why}")));
    };
    let current = match &view.hot_set {
        Ok(set) => set.clone(),
        Err(error) => {
            writeln!(out, "P/hot is not a hot set ({error}): starting from an empty one")?;
            HotSet::default()
        }
    };
    let (observed, loads) = reported(&view, &ring);
    let next = current.advance(&ring, &observed, &loads, bound).map_err(|e| CliError::Membership(e.to_string()))?;
    let same = |a: &HotSet, b: &HotSet| {
        a.keys().len() == b.keys().len()
            && a.keys().iter().zip(b.keys()).all(|(x, y)| {
                (&x.key, x.replicas, x.phase, x.generation) == (&y.key, y.replicas, y.phase, y.generation)
            })
    };
    if same(&current, &next) && view.hot_set.is_ok() {
        writeln!(out, "hot set unchanged at epoch {} ({} keys)", current.epoch, current.keys().len())?;
        return Ok(());
    }
    if !admin.put_hot_set(&next, view.hot_set_revision).map_err(membership)? {
        writeln!(out, "another publisher wrote P/hot first: trying again next interval")?;
        return Ok(());
    }
    describe(&next, out)
}

/// The clients' hot keys (rates summed by key) and requests per node
/// (lookups over each report's interval, summed), from valid reports.
fn reported(view: &FleetView, ring: &shardring::Ring) -> (Vec<(Vec<u8>, f64)>, Vec<f64>) {
    let mut rates: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
    let mut loads = vec![0.0; ring.nodes().len()];
    for record in view.clients.iter().filter_map(|c| c.record.as_ref().ok()) {
        for hot in &record.hot_keys {
            if hot.rate.is_finite() && hot.rate > 0.0 {
                *rates.entry(hot.key.clone()).or_default() += hot.rate;
            }
        }
        let seconds = record.interval_seconds.max(0.1);
        for (node, count) in &record.lookups {
            if let Some(index) = ring.position(node) {
                loads[index] += *count as f64 / seconds;
            }
        }
    }
    (rates.into_iter().collect(), loads)
}

fn describe(set: &HotSet, out: &mut impl Write) -> Result<(), CliError> {
    writeln!(out, "hot set epoch {}: {} keys", set.epoch, set.keys().len())?;
    for entry in set.keys() {
        writeln!(
            out,
            "  {}  replicas {}  {}  generation {}  {:.1}/s",
            String::from_utf8_lossy(&entry.key).escape_debug(),
            entry.replicas,
            entry.phase.name(),
            entry.generation,
            entry.rate
        )?;
    }
    Ok(())
}

fn membership(error: shardring_membership::MembershipError) -> CliError {
    CliError::Membership(error.to_string())
}
