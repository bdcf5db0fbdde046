//! `shardring member ...` and `shardring watch`: the ring's membership in
//! etcd (`core/SPEC.md`, *Membership in etcd*) from the command line.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};
use shardring::Algorithm;
use shardring_membership::{
    Admin, AgentState, ClientReport, EtcdAccess, Event, Follower, FollowerOptions, Member, MemberRecord, ParamsRecord,
};

use crate::error::CliError;
use crate::etcd::{ENDPOINTS_ENV, EtcdSecurity, PREFIX_ENV};
use crate::report::counted;

/// Where the ring's records live.
#[derive(Args, Clone)]
pub(crate) struct Target {
    /// etcd endpoints, `http://host:port`, comma-separated.
    #[arg(long, value_delimiter = ',', required = true, env = ENDPOINTS_ENV, hide_env_values = true)]
    etcd: Vec<String>,
    /// The ring's key prefix in etcd, e.g. `/shardring/cache`.
    #[arg(long, env = PREFIX_ENV)]
    prefix: String,
    #[command(flatten)]
    security: EtcdSecurity,
}

impl Target {
    pub(crate) fn access(&self) -> Result<EtcdAccess, CliError> {
        self.security.access(&self.etcd)
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }
}

#[derive(Subcommand)]
pub(crate) enum MemberCommand {
    /// Register a member under a lease and keep it alive until SIGTERM or
    /// SIGINT (then revoke it: the member leaves at once). If this process
    /// dies, the lease expires after the TTL and the member drops out.
    Join {
        #[command(flatten)]
        target: Target,
        /// The member id (a server address for the ketama modes and nginx).
        #[arg(long)]
        id: String,
        /// Relative capacity, finite and >= 0.
        #[arg(long, default_value_t = 1.0)]
        weight: f64,
        /// Failure-domain label.
        #[arg(long)]
        zone: Option<String>,
        /// Lease time-to-live in whole seconds (at least 1; etcd may raise it to its minimum).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=86400))]
        ttl: u64,
        /// Join as `warming` (writes only, while `shardring rebalance --etcd`
        /// copies its keys, which then makes it active) or `active`.
        #[arg(long, value_enum, default_value_t = State::Active)]
        state: State,
    },
    /// Set a member's state: `warming`, `active` or `draining` (its keys are
    /// copied away by `shardring rebalance --etcd`, which then removes it).
    SetState {
        #[command(flatten)]
        target: Target,
        /// The member id.
        #[arg(long)]
        id: String,
        /// The new state.
        #[arg(long, value_enum)]
        state: State,
    },
    /// Remove a member: delete its record and revoke its lease.
    Leave {
        #[command(flatten)]
        target: Target,
        /// The member id.
        #[arg(long)]
        id: String,
    },
    /// Change a member's weight, keeping its lease and zone.
    SetWeight {
        #[command(flatten)]
        target: Target,
        /// The member id.
        #[arg(long)]
        id: String,
        /// The new weight.
        #[arg(long)]
        weight: f64,
    },
    /// List the members: id, weight, zone, lease and last change.
    List {
        #[command(flatten)]
        target: Target,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the ring parameters (`<prefix>/config`); left-out ones take their defaults.
    Config {
        #[command(flatten)]
        target: Target,
        /// Placement algorithm.
        #[arg(long, default_value = "ring")]
        algorithm: String,
        /// Points per unit of weight (`ring` only).
        #[arg(long)]
        vnodes: Option<u32>,
        /// Seed of the XXH3 hashes.
        #[arg(long)]
        seed: Option<u64>,
        /// Maglev table size.
        #[arg(long)]
        table_size: Option<u32>,
        /// libmemcached distribution (`libmemcached` only), e.g. `consistent_ketama`.
        #[arg(long)]
        distribution: Option<String>,
        /// Named key hash (`libmemcached` only), e.g. `one_at_a_time`.
        #[arg(long)]
        key_hash: Option<String>,
    },
    /// Abandon a move left unfinished (its rebalancer died or stopped and
    /// none runs again), so the membership can change. Keys it had not
    /// moved stay on their old owners: make no warming member active
    /// before they are copied.
    AbandonMove {
        #[command(flatten)]
        target: Target,
    },
    /// Print the etcdctl commands that create the roles of least privilege
    /// for the ring: followers read the prefix, an operator writes it, each
    /// member agent writes its own record alone. Connects to nothing.
    Roles {
        /// The ring's key prefix in etcd.
        #[arg(long, env = PREFIX_ENV)]
        prefix: String,
        /// A member id to create a role for (repeat for each).
        #[arg(long = "member", value_name = "ID")]
        members: Vec<String>,
    },
}

/// A member's state, as the command line spells it.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum State {
    Active,
    Warming,
    Draining,
}

impl From<State> for shardring::NodeState {
    fn from(state: State) -> shardring::NodeState {
        match state {
            State::Active => shardring::NodeState::Active,
            State::Warming => shardring::NodeState::Warming,
            State::Draining => shardring::NodeState::Draining,
        }
    }
}

fn membership(error: shardring_membership::MembershipError) -> CliError {
    CliError::Membership(error.to_string())
}

/// Runs a `member` subcommand.
pub(crate) fn member(command: MemberCommand, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        MemberCommand::Roles { prefix, members } => {
            crate::roles::print(&shardring_membership::Layout::new(&prefix).map_err(membership)?, &members, out)?;
        }
        MemberCommand::Join { target, id, weight, zone, ttl, state } => {
            let record = MemberRecord { zone, state: state.into(), ..MemberRecord::new(weight) };
            let member = Member::join(target.access()?, &target.prefix, &id, record, Duration::from_secs(ttl))
                .map_err(membership)?;
            let state = shardring::NodeState::from(state).name();
            writeln!(
                out,
                "joined {} as {id:?} (weight {weight}, {state}, ttl {ttl} s); SIGTERM leaves",
                target.prefix
            )?;
            out.flush()?;
            let stop = Arc::new(AtomicBool::new(false));
            for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
                signal_hook::flag::register(signal, Arc::clone(&stop))?;
            }
            while !stop.load(Ordering::Relaxed) {
                if member.state() == AgentState::Removed {
                    writeln!(out, "{id:?} was removed from {} (its lease was revoked)", target.prefix)?;
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            member.leave();
            writeln!(out, "left {} ({id:?})", target.prefix)?;
        }
        MemberCommand::Leave { target, id } => {
            let revision =
                Admin::connect(target.access()?, &target.prefix).map_err(membership)?.leave(&id).map_err(membership)?;
            writeln!(out, "{id:?} left {} at revision {revision}", target.prefix)?;
        }
        MemberCommand::SetState { target, id, state } => {
            let mut admin = Admin::connect(target.access()?, &target.prefix).map_err(membership)?;
            let revision = admin.set_state(&id, state.into()).map_err(membership)?;
            writeln!(out, "{id:?} is {} at revision {revision}", shardring::NodeState::from(state).name())?;
        }
        MemberCommand::AbandonMove { target } => {
            let mut admin = Admin::connect(target.access()?, &target.prefix).map_err(membership)?;
            match admin.abandon_move().map_err(membership)? {
                Some(since) => writeln!(
                    out,
                    "abandoned the move begun at revision {since}: the membership of {} can change; keys it had \
                     not moved are still on their old owners",
                    target.prefix
                )?,
                None => {
                    let hint = if admin.members().map_err(membership)?.is_empty() { " (nor any member)" } else { "" };
                    writeln!(out, "no move is recorded under {}{hint}", target.prefix)?
                }
            }
        }
        MemberCommand::SetWeight { target, id, weight } => {
            let mut admin = Admin::connect(target.access()?, &target.prefix).map_err(membership)?;
            let revision = admin.set_weight(&id, weight).map_err(membership)?;
            writeln!(out, "{id:?} has weight {weight} at revision {revision}")?;
        }
        MemberCommand::List { target, json } => {
            let members =
                Admin::connect(target.access()?, &target.prefix).map_err(membership)?.members().map_err(membership)?;
            if json {
                let rows: Vec<serde_json::Value> = members
                    .iter()
                    .map(|m| match &m.record {
                        Ok(r) => serde_json::json!({"id": m.id, "weight": r.weight, "zone": r.zone, "state": r.state.name(), "lease": m.lease, "mod_revision": m.mod_revision}),
                        Err(e) => serde_json::json!({"id": m.id, "error": e, "lease": m.lease, "mod_revision": m.mod_revision}),
                    })
                    .collect();
                writeln!(out, "{}", serde_json::Value::Array(rows))?;
            } else {
                for m in &members {
                    match &m.record {
                        Ok(r) => writeln!(
                            out,
                            "{}  weight {}  {}{}  lease {:x}  revision {}",
                            m.id,
                            r.weight,
                            r.state.name(),
                            r.zone.as_ref().map(|z| format!("  zone {z}")).unwrap_or_default(),
                            m.lease,
                            m.mod_revision
                        )?,
                        Err(e) => writeln!(out, "{}  INVALID: {e}", m.id)?,
                    }
                }
                writeln!(out, "{}", counted(members.len(), "member"))?;
            }
        }
        MemberCommand::Config { target, algorithm, vnodes, seed, table_size, distribution, key_hash } => {
            let algorithm: Algorithm = algorithm.parse()?;
            let distribution = distribution.map(|d| d.parse::<shardring::Distribution>()).transpose()?;
            let key_hash = key_hash.map(|h| h.parse::<shardring::KeyHash>()).transpose()?;
            let params = ParamsRecord::new(shardring::RingParams {
                vnodes,
                seed,
                table_size,
                distribution,
                key_hash,
                ..shardring::RingParams::new(algorithm)
            });
            let revision = Admin::connect(target.access()?, &target.prefix)
                .map_err(membership)?
                .set_config(&params)
                .map_err(membership)?;
            writeln!(out, "{} config {} at revision {revision}", target.prefix, params.to_json())?;
        }
    }
    Ok(())
}

/// `shardring watch`: where to follow from, `--etcd` and `--prefix` or
/// `--file` (checked by [`WatchArgs::settle`], since the environment can give
/// the first two).
#[derive(Args)]
pub(crate) struct WatchArgs {
    /// etcd endpoints, `http://host:port`, comma-separated.
    #[arg(long, value_delimiter = ',', env = ENDPOINTS_ENV, hide_env_values = true)]
    etcd: Vec<String>,
    /// The ring's key prefix in etcd.
    #[arg(long, env = PREFIX_ENV)]
    prefix: Option<String>,
    /// Follow a JSON ring config file instead (the environment's etcd
    /// endpoints and prefix are then ignored).
    #[arg(long)]
    file: Option<PathBuf>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    /// Stop after this many epochs (default: until interrupted).
    #[arg(long)]
    count: Option<u64>,
    /// Serve the follower's metrics (OpenMetrics text) at
    /// http://ADDRESS/metrics, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDRESS")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Report this watcher to the fleet as `P/clients/<ID>` (etcd only).
    #[arg(long, value_name = "ID")]
    report_as: Option<String>,
    /// Seconds between reports.
    #[arg(long, default_value_t = 10.0, requires = "report_as")]
    report_interval: f64,
    #[command(flatten)]
    security: EtcdSecurity,
}

impl WatchArgs {
    /// Applies the source rule of [`crate::etcd::settle`] to `matches`
    /// (the `watch` subcommand's).
    pub(crate) fn settle(
        &mut self,
        command: &mut clap::Command,
        matches: &clap::ArgMatches,
    ) -> Result<(), clap::Error> {
        crate::etcd::settle(command, matches, &["file"], "--file <FILE>", &mut self.etcd, &mut self.prefix)
    }
}

fn micros_now() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros())
}

/// Prints each epoch (revision, fingerprint, node count, what moved) and
/// each reported problem, until interrupted or `--count` epochs.
pub(crate) fn watch(args: &WatchArgs, out: &mut impl Write) -> Result<(), CliError> {
    let report = match &args.report_as {
        Some(_) if args.file.is_some() => {
            return Err(CliError::Membership("--report-as needs an etcd source, not --file".into()));
        }
        Some(id) if args.report_interval > 0.0 && Duration::try_from_secs_f64(args.report_interval).is_ok() => {
            Some(ClientReport { client_id: id.clone(), interval: Duration::from_secs_f64(args.report_interval) })
        }
        Some(_) => {
            return Err(CliError::Membership(format!(
                "--report-interval {} must be a number of seconds > 0",
                args.report_interval
            )));
        }
        None => None,
    };
    let options = FollowerOptions { report, ..FollowerOptions::default() };
    let follower = match (&args.file, &args.prefix) {
        (Some(path), _) => Follower::file(path, options),
        (None, Some(prefix)) => Follower::etcd(args.security.access(&args.etcd)?, prefix, options),
        (None, None) => unreachable!("settle requires --file or --etcd with --prefix"),
    }
    .map_err(membership)?;
    let follower = Arc::new(follower);
    if let Some(address) = args.metrics_listen {
        let served = Arc::clone(&follower);
        let bound = crate::metrics_http::serve_metrics(address, move || served.metrics())?;
        crate::complain(format!("metrics at http://{bound}/metrics"));
    }
    let events = follower.subscribe();
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let epoch = follower.epoch();
    let mut printed = 1;
    print_epoch(out, args.json, (epoch.number, epoch.revision), epoch.fingerprint, epoch.ring.nodes().len(), None)?;
    while !stop.load(Ordering::Relaxed) && args.count.is_none_or(|c| printed < c) {
        let Ok(event) = events.recv_timeout(Duration::from_millis(100)) else { continue };
        match event {
            Event::Epoch { epoch, revision, fingerprint, changed: true, diff } => {
                let nodes = follower.ring().nodes().len();
                print_epoch(out, args.json, (epoch, revision), fingerprint, nodes, diff.as_deref())?;
                printed += 1;
            }
            Event::Rejected(rejected) if args.json => writeln!(
                out,
                "{}",
                serde_json::json!({"kind": "rejected", "key": rejected.key, "message": rejected.message})
            )?,
            Event::Rejected(rejected) => writeln!(out, "rejected {}: {}", rejected.key, rejected.message)?,
            Event::Disconnected { message } if args.json => {
                writeln!(out, "{}", serde_json::json!({"kind": "disconnected", "message": message}))?
            }
            Event::Disconnected { message } => writeln!(out, "disconnected: {message} (answering from the last ring)")?,
            Event::Reconnected { revision, down_for } if args.json => writeln!(
                out,
                "{}",
                serde_json::json!({"kind": "reconnected", "revision": revision, "down_for": down_for.as_secs_f64()})
            )?,
            Event::Reconnected { revision, down_for } => {
                writeln!(out, "reconnected at revision {revision} after {:.1} s", down_for.as_secs_f64())?
            }
            _ => {}
        }
        out.flush()?;
    }
    Ok(())
}

/// One epoch: text `epoch N  fingerprint F  K nodes  moved ...` (N the
/// epoch number, which only grows; the revision too when it differs, after
/// etcd was restored), or a JSON line with both.
fn print_epoch(
    out: &mut impl Write,
    json: bool,
    (number, revision): (u64, i64),
    fingerprint: u64,
    nodes: usize,
    diff: Option<&shardring::RingDiff>,
) -> Result<(), CliError> {
    if json {
        let flows: Vec<serde_json::Value> = diff
            .iter()
            .flat_map(|d| &d.flows)
            .map(|f| serde_json::json!({"from": f.from, "to": f.to, "share": f.share}))
            .collect();
        let line = serde_json::json!({
            "kind": "epoch",
            "epoch": number,
            "revision": revision,
            "fingerprint": format!("{fingerprint:016x}"),
            "nodes": nodes,
            "moved_share": diff.map(|d| d.moved_share),
            "flows": flows,
            "at_us": micros_now() as u64,
        });
        writeln!(out, "{line}")?;
    } else {
        write!(out, "epoch {number}")?;
        if u64::try_from(revision).ok() != Some(number) {
            write!(out, " (revision {revision})")?;
        }
        write!(out, "  fingerprint {fingerprint:016x}  {}", counted(nodes, "node"))?;
        if let Some(diff) = diff {
            write!(out, "  moved {:.4}%", 100.0 * diff.moved_share)?;
            for flow in diff.flows.iter().take(4) {
                write!(out, "  {} -> {} {:.4}%", flow.from, flow.to, 100.0 * flow.share)?;
            }
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
