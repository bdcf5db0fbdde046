//! `shardring fleet status`: every client that reports under a prefix, its
//! epoch and lag, whether the fleet agrees on one fingerprint, and the
//! request share per node summed over the fleet. `shardring route`: where
//! one key goes (owner, preference list, read and write sets, arc).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use shardring::{RingConfig, Transition};
use shardring_membership::{Admin, ClientStanding, Follower, FollowerOptions};

use crate::error::CliError;
use crate::etcd::{ENDPOINTS_ENV, EtcdSecurity, PREFIX_ENV};
use crate::member::Target;

#[derive(Subcommand)]
pub(crate) enum FleetCommand {
    /// Every client reporting under the prefix (`P/clients/<id>`), its
    /// epoch and standing, whether all agree on the ring's fingerprint,
    /// and lookups per node summed over the fleet. Exits 1 when a client
    /// lags, is stale, or a revision holds two fingerprints.
    Status {
        #[command(flatten)]
        target: Target,
        /// Slack added to twice a client's report interval before its
        /// report counts as stale, in seconds (clock skew, slow networks).
        #[arg(long, default_value_t = 1.0)]
        slack: f64,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn fleet(command: FleetCommand, out: &mut impl Write) -> Result<bool, CliError> {
    let FleetCommand::Status { target, slack, json } = command;
    if !slack.is_finite() || slack < 0.0 {
        return Err(CliError::Membership(format!("--slack {slack} must be a number of seconds >= 0")));
    }
    let mut admin = Admin::connect(target.access()?, target.prefix()).map_err(membership)?;
    let view = admin.fleet().map_err(membership)?;
    let verdict = view.verdict(Duration::from_secs_f64(slack));
    let total: u64 = verdict.lookups.values().sum();
    let fingerprint = view.fingerprint.as_ref().map(|f| format!("{f:016x}"));
    if json {
        let clients: Vec<serde_json::Value> = view
            .clients
            .iter()
            .zip(&verdict.clients)
            .map(|(entry, (id, standing, age))| {
                let record = entry.record.as_ref().ok();
                serde_json::json!({
                    "id": id,
                    "standing": standing_name(*standing),
                    "epoch": record.map(|r| r.epoch),
                    "revision": record.map(|r| r.revision),
                    "lag": record.map(|r| (view.ring_revision - r.revision).max(0)),
                    "fingerprint": record.map(|r| r.fingerprint.clone()),
                    "age_seconds": age.map(|a| a.as_secs_f64()),
                    "error": entry.record.as_ref().err(),
                })
            })
            .collect();
        let lookups: serde_json::Map<String, serde_json::Value> = verdict
            .lookups
            .iter()
            .map(|(node, count)| (node.clone(), serde_json::json!({"lookups": count, "share": share(*count, total)})))
            .collect();
        let line = serde_json::json!({
            "revision": view.revision,
            "ring_revision": view.ring_revision,
            "fingerprint": fingerprint.as_ref().ok(),
            "ring_error": fingerprint.as_ref().err(),
            "algorithm": view.algorithm,
            "members": view.members,
            "agrees": verdict.agrees(),
            "split": verdict.split.iter().map(|(r, f)| serde_json::json!({"revision": r, "fingerprints": f})).collect::<Vec<_>>(),
            "clients": clients,
            "lookups": lookups,
        });
        writeln!(out, "{line}")?;
        return Ok(verdict.agrees());
    }
    match &fingerprint {
        Ok(f) => writeln!(
            out,
            "ring: fingerprint {f}  {}  {} members  changed at revision {} (now {})",
            view.algorithm.as_deref().unwrap_or("?"),
            view.members.len(),
            view.ring_revision,
            view.revision
        )?,
        Err(error) => writeln!(out, "ring: no ring can be built: {error}")?,
    }
    for (id, state) in &view.members {
        writeln!(out, "  member {id}  {state}")?;
    }
    writeln!(out, "clients: {}", view.clients.len())?;
    for (entry, (id, standing, age)) in view.clients.iter().zip(&verdict.clients) {
        match &entry.record {
            Ok(r) => writeln!(
                out,
                "  {id}  epoch {}  revision {}  lag {}  fingerprint {}  age {:.1} s  {}",
                r.epoch,
                r.revision,
                (view.ring_revision - r.revision).max(0),
                r.fingerprint,
                age.unwrap_or_default().as_secs_f64(),
                standing_name(*standing)
            )?,
            Err(error) => writeln!(out, "  {id}  invalid report: {error}")?,
        }
    }
    for (revision, fingerprints) in &verdict.split {
        writeln!(out, "split: clients at revision {revision} hold {}", fingerprints.join(", "))?;
    }
    writeln!(out, "agreement: {}", if verdict.agrees() { "yes" } else { "NO" })?;
    if total > 0 {
        writeln!(out, "lookups per node over the clients' last interval ({total} in all):")?;
        for (node, count) in &verdict.lookups {
            writeln!(out, "  {node}  {count}  {:.2}%", 100.0 * share(*count, total))?;
        }
    }
    Ok(verdict.agrees())
}

fn share(count: u64, total: u64) -> f64 {
    if total == 0 { 0.0 } else { count as f64 / total as f64 }
}

pub(crate) fn standing_name(standing: ClientStanding) -> &'static str {
    match standing {
        ClientStanding::Current => "current",
        ClientStanding::Pending => "pending",
        ClientStanding::Lagging => "lagging",
        ClientStanding::Stale => "stale",
        ClientStanding::Invalid => "invalid",
    }
}

fn membership(error: shardring_membership::MembershipError) -> CliError {
    CliError::Membership(error.to_string())
}

/// `shardring route`: the ring from a config file or from etcd.
#[derive(Args)]
pub(crate) struct RouteArgs {
    /// The keys (UTF-8 arguments).
    #[arg(required = true)]
    keys: Vec<String>,
    /// A JSON ring config file (node states included).
    #[arg(long, conflicts_with_all = ["etcd", "prefix"])]
    config: Option<PathBuf>,
    /// etcd endpoints, comma-separated.
    #[arg(long, value_delimiter = ',', env = ENDPOINTS_ENV, hide_env_values = true)]
    etcd: Vec<String>,
    /// The ring's key prefix in etcd.
    #[arg(long, env = PREFIX_ENV)]
    prefix: Option<String>,
    /// Length of the preference list.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    replicas: u32,
    /// One JSON object per key.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    security: EtcdSecurity,
}

pub(crate) fn route(args: &RouteArgs, out: &mut impl Write) -> Result<(), CliError> {
    let transition = match (&args.config, &args.prefix) {
        (Some(path), _) => {
            let config = RingConfig::from_json_bytes(&crate::config::read(path)?)
                .and_then(|c| Transition::from_config(&c))
                .map_err(|source| CliError::Ring { path: path.display().to_string(), source })?;
            Arc::new(config)
        }
        (None, Some(prefix)) if !args.etcd.is_empty() => {
            let options = FollowerOptions { count_lookups: false, ..FollowerOptions::default() };
            let follower = Follower::etcd(args.security.access(&args.etcd)?, prefix, options).map_err(membership)?;
            let epoch = follower.epoch();
            Arc::clone(&epoch.transition)
        }
        _ => {
            return Err(CliError::Membership(format!(
                "route needs --config FILE, or --etcd and --prefix (or {ENDPOINTS_ENV} and {PREFIX_ENV})"
            )));
        }
    };
    let ring = transition.read_ring();
    for key in &args.keys {
        let owner = ring.get(key)?.id().to_owned();
        let list: Vec<&str> = ring.get_n(key, args.replicas as usize)?.iter().map(|n| n.id()).collect();
        let reads: Vec<&str> = transition.read_nodes(key)?.iter().map(|n| n.id()).collect();
        let writes: Vec<&str> = transition.write_nodes(key)?.iter().map(|n| n.id()).collect();
        let arc = ring.arc_of(key)?;
        let hash = ring.hash_key(key);
        if args.json {
            let arc = arc.map(|a| {
                serde_json::json!({"start": a.start, "end": a.end, "position": a.position, "owner": ring.nodes()[a.owner].id()})
            });
            let line = serde_json::json!({
                "key": key, "hash": hash, "owner": owner, "preference": list,
                "read": reads, "write": writes, "arc": arc, "fingerprint": format!("{:016x}", transition.fingerprint()),
            });
            writeln!(out, "{line}")?;
            continue;
        }
        writeln!(out, "{key}")?;
        writeln!(out, "  hash        {hash} ({})", ring.algorithm().name())?;
        writeln!(out, "  owner       {owner}")?;
        writeln!(out, "  preference  {}", list.join(", "))?;
        writeln!(out, "  read        {}", reads.join(", "))?;
        writeln!(out, "  write       {}", writes.join(", "))?;
        match arc {
            Some(a) => writeln!(
                out,
                "  arc         {:#018x} ..= {:#018x} (position {:#018x}, {:.6}% of the ring)",
                a.start,
                a.end,
                a.position,
                100.0 * (a.end.wrapping_sub(a.start) as f64 + 1.0) / 2f64.powi(64)
            )?,
            None => writeln!(out, "  arc         none: {} places keys without arcs", ring.algorithm().name())?,
        }
    }
    Ok(())
}
