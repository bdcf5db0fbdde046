//! `shardring dashboard`: one page, served from the binary (no CDN, works
//! offline), that shows the ring under a prefix live: each member's arcs
//! (or shares), state, ownership, request rate (from the clients' reports),
//! key count and memory (from the servers themselves), every client and
//! whether it agrees, and a running rebalance's progress. The page polls
//! `GET /api/state` (JSON) every 500 ms; a thread rebuilds that state every
//! 500 ms from a follower, one range read of the prefix and the servers'
//! stats.

mod stats;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::{Value, json};
use shardring::{HotEntry, HotSet, Ring, Transition};
use shardring_membership::{Admin, FleetView, Follower, FollowerOptions};

use crate::error::CliError;
use crate::member::Target;
use crate::server_access::{Credentials, ServerKind, ServerSecurity};

/// The page: markup, style and script in one file, embedded.
const PAGE: &str = include_str!("page.html");

/// How often the state is rebuilt and the page asks for it.
const REFRESH: Duration = Duration::from_millis(500);

/// At most this many arcs are drawn; a ring with more is drawn by shares.
const MAX_ARCS: usize = 4096;

#[derive(Args)]
pub(crate) struct DashboardArgs {
    #[command(flatten)]
    target: Target,
    /// Where to serve the page: loopback by default; a wider address shows
    /// the fleet's layout to whoever can reach it.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Read each member's key count and memory from its server: at the
    /// member id (`host:port`), or at its `--address`; over TLS and as a
    /// user with the flags below, as `rebalance` reaches them.
    #[arg(long, value_enum)]
    servers: Option<ServerKind>,
    /// The server of a member whose id is not its address (repeatable).
    #[arg(long = "address", value_name = "ID=HOST:PORT", value_parser = member_address, requires = "servers")]
    addresses: Vec<(String, String)>,
    /// With --servers: TLS and the servers' users (`--tls*`, `--redis-*`,
    /// `--memcached-*`), as `rebalance` takes them.
    #[command(flatten)]
    security: ServerSecurity,
}

fn member_address(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((id, address)) if !id.is_empty() && address.contains(':') => Ok((id.to_owned(), address.to_owned())),
        _ => Err(format!("{text:?} is not ID=HOST:PORT")),
    }
}

/// Where the dashboard reads servers' stats, if it does, and how.
#[derive(Clone)]
struct Servers {
    kind: ServerKind,
    addresses: BTreeMap<String, String>,
    credentials: Credentials,
}

impl Servers {
    /// The servers `args` names, with their credentials read once, now.
    ///
    /// Errors: a TLS or credential flag without `--servers`, or one that
    /// cannot be used ([`ServerSecurity::credentials`]).
    fn of(args: &DashboardArgs) -> Result<Option<Servers>, CliError> {
        let Some(kind) = args.servers else {
            if args.security.given() {
                return Err(CliError::ServerAccess(
                    "--tls, --tls-ca, --tls-cert, --redis-* and --memcached-* are for the servers' stats: give \
                     --servers too"
                        .into(),
                ));
            }
            return Ok(None);
        };
        let credentials = args.security.credentials(kind, "--servers")?;
        Ok(Some(Servers { kind, addresses: args.addresses.iter().cloned().collect(), credentials }))
    }
}

pub(crate) fn dashboard(args: &DashboardArgs) -> Result<(), CliError> {
    let servers = Servers::of(args)?;
    let membership = |e: shardring_membership::MembershipError| CliError::Membership(e.to_string());
    let options = FollowerOptions { count_lookups: false, ..FollowerOptions::default() };
    let follower = Follower::etcd(args.target.access()?, args.target.prefix(), options).map_err(membership)?;
    let mut admin = Admin::connect(args.target.access()?, args.target.prefix()).map_err(membership)?;
    let state = Arc::new(Mutex::new(build(&follower, admin.fleet().ok(), servers.as_ref(), args.target.prefix())));
    let server = tiny_http::Server::http(args.listen)
        .map_err(|e| CliError::Membership(format!("cannot serve the dashboard on {}: {e}", args.listen)))?;
    let bound = server.server_addr().to_ip().unwrap_or(args.listen);
    crate::complain(format!("dashboard at http://{bound}/"));
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let (shared, prefix) = (Arc::clone(&state), args.target.prefix().to_owned());
    let refresher_stop = Arc::clone(&stop);
    std::thread::Builder::new().name("shardring-dashboard".into()).spawn(move || {
        while !refresher_stop.load(Ordering::Relaxed) {
            std::thread::sleep(REFRESH);
            let next = build(&follower, admin.fleet().ok(), servers.as_ref(), &prefix);
            *shared.lock().unwrap_or_else(|p| p.into_inner()) = next;
        }
    })?;
    let json = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]).expect("a header");
    let html = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"text/html; charset=utf-8"[..]).expect("a header");
    while !stop.load(Ordering::Relaxed) {
        let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(200)) else { continue };
        if !addressed_by_ip(&request) {
            // A page on another site whose name resolves here (DNS rebinding)
            // would read the fleet's layout: only IP addresses and localhost.
            let _ = request.respond(tiny_http::Response::from_string("use an IP address\n").with_status_code(421));
            continue;
        }
        let response = match request.url() {
            "/" | "/index.html" => tiny_http::Response::from_string(PAGE).with_header(html.clone()),
            "/api/state" => {
                let body = state.lock().unwrap_or_else(|p| p.into_inner()).to_string();
                tiny_http::Response::from_string(body).with_header(json.clone())
            }
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        let _ = request.respond(response);
    }
    Ok(())
}

/// Whether the request's `Host` is an IP address or `localhost` (with any
/// port), not a name that could point anywhere.
fn addressed_by_ip(request: &tiny_http::Request) -> bool {
    let Some(host) = request.headers().iter().find(|h| h.field.equiv("Host")) else { return false };
    let host = host.value.as_str();
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// The page's state now.
fn build(follower: &Follower, fleet: Option<FleetView>, servers: Option<&Servers>, prefix: &str) -> Value {
    let epoch = follower.epoch();
    let status = follower.status();
    let transition: &Transition = &epoch.transition;
    let read = transition.read_ring();
    let shares: BTreeMap<&str, f64> = read.ownership().into_iter().map(|(n, s)| (n.id(), s)).collect();
    let future: BTreeMap<&str, f64> = transition.new_ring().ownership().into_iter().map(|(n, s)| (n.id(), s)).collect();
    let ids: BTreeSet<&str> =
        transition.old_ring().nodes().iter().chain(transition.new_ring().nodes()).map(|n| n.id()).collect();
    let verdict = fleet.as_ref().map(|f| f.verdict(Duration::from_secs(1)));
    // Requests per second per node: each client's last interval, summed.
    let mut rates: BTreeMap<String, f64> = BTreeMap::new();
    for entry in fleet.iter().flat_map(|f| &f.clients) {
        if let Ok(record) = &entry.record
            && record.interval_seconds.is_finite()
            && record.interval_seconds > 0.0
        {
            for (node, count) in &record.lookups {
                *rates.entry(node.clone()).or_default() += *count as f64 / record.interval_seconds.max(0.001);
            }
        }
    }
    // Every server at once: a slow one costs its deadline, not the sum.
    let stats: BTreeMap<&str, Result<stats::ServerStats, String>> = match servers {
        Some(servers) => std::thread::scope(|scope| {
            let reads: Vec<_> = ids
                .iter()
                .map(|&id| {
                    let address = servers.addresses.get(id).map_or(id, String::as_str);
                    (id, scope.spawn(move || stats::read(servers.kind, address, &servers.credentials)))
                })
                .collect();
            reads
                .into_iter()
                .map(|(id, read)| (id, read.join().unwrap_or_else(|_| Err("the stats reader failed".into()))))
                .collect()
        }),
        None => BTreeMap::new(),
    };
    let members: Vec<Value> = ids
        .iter()
        .map(|&id| {
            let node = transition.new_ring().nodes().iter().chain(transition.old_ring().nodes()).find(|n| n.id() == id);
            let stats = stats.get(id);
            json!({
                "id": id,
                "state": transition.state(id).map(shardring::NodeState::name),
                "weight": node.map(|n| n.weight()),
                "share": shares.get(id).copied().unwrap_or(0.0),
                "future_share": future.get(id).copied().unwrap_or(0.0),
                "rate": rates.get(id).copied().unwrap_or(0.0),
                "keys": stats.as_ref().and_then(|s| s.as_ref().ok()).map(|s| s.keys),
                "bytes": stats.as_ref().and_then(|s| s.as_ref().ok()).map(|s| s.bytes),
                "server_error": stats.as_ref().and_then(|s| s.as_ref().err()),
            })
        })
        .collect();
    let clients: Vec<Value> = match (&fleet, &verdict) {
        (Some(fleet), Some(verdict)) => fleet
            .clients
            .iter()
            .zip(&verdict.clients)
            .map(|(entry, (id, standing, age))| {
                let record = entry.record.as_ref().ok();
                json!({
                    "id": id,
                    "standing": crate::fleet::standing_name(*standing),
                    "epoch": record.map(|r| r.epoch),
                    "revision": record.map(|r| r.revision),
                    "fingerprint": record.map(|r| r.fingerprint.clone()),
                    "age_seconds": age.map(|a| a.as_secs_f64()),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let (kind, segments) = segments(read);
    let hot = hot_keys(&follower.hot_set(), read);
    json!({
        "prefix": prefix,
        "epoch": epoch.number,
        "revision": epoch.revision,
        "fingerprint": format!("{:016x}", epoch.fingerprint),
        "algorithm": read.algorithm().name(),
        "connected": status.connected,
        "last_error": status.last_error,
        "ring": {"kind": kind, "segments": segments},
        "members": members,
        "clients": clients,
        "agrees": verdict.as_ref().map(|v| v.agrees()),
        "split": verdict.as_ref().map(|v| v.split.clone()).unwrap_or_default(),
        "rebalance": fleet.as_ref().and_then(|f| f.rebalance.clone()),
        "hot": hot,
        "etcd_answers": fleet.is_some(),
        "updated_at_ms": SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
    })
}

/// Most hot keys the page lists (the set's highest rates).
const MAX_HOT_SHOWN: usize = 20;

/// The fleet's hot set as the page shows it: its epoch, its size, and its
/// keys of highest rate (at most [`MAX_HOT_SHOWN`]), each with its phase,
/// rate and the members holding it (its owner first), never more.
fn hot_keys(set: &HotSet, ring: &Ring) -> Value {
    let mut entries: Vec<&HotEntry> = set.keys().iter().collect();
    entries.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    let keys: Vec<Value> = entries
        .into_iter()
        .take(MAX_HOT_SHOWN)
        .map(|entry| {
            let nodes = ring.get_n(&entry.key, entry.replicas as usize).unwrap_or_default();
            json!({
                "key": String::from_utf8_lossy(&entry.key),
                "phase": entry.phase.name(),
                "replicas": entry.replicas,
                "generation": entry.generation,
                "rate": entry.rate,
                "nodes": nodes.iter().map(|n| n.id()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"epoch": set.epoch, "count": set.keys().len(), "keys": keys})
}

/// The circle's segments as `[start, end, member id]`, fractions of the
/// ring: each arc (runs of one owner merged) for the algorithms with
/// points, else one sector per node by its share ("shares").
fn segments(ring: &Ring) -> (&'static str, Vec<Value>) {
    let scale = 2f64.powi(ring.algorithm().hash_bits() as i32);
    let points: Vec<(u64, usize)> = ring.points().collect();
    let mut arcs: Vec<(f64, f64, usize)> = Vec::new();
    if let Some(&(last, _)) = points.last() {
        let mut start = last as f64 / scale - 1.0;
        for &(point, owner) in &points {
            let end = point as f64 / scale;
            match arcs.last_mut() {
                Some(arc) if arc.2 == owner => arc.1 = end,
                _ => arcs.push((start, end, owner)),
            }
            start = end;
        }
    }
    if !arcs.is_empty() && arcs.len() <= MAX_ARCS {
        let nodes = ring.nodes();
        return ("arcs", arcs.into_iter().map(|(s, e, o)| json!([s.max(-1.0), e, nodes[o].id()])).collect());
    }
    let mut at = 0.0;
    let sectors = ring
        .ownership()
        .into_iter()
        .filter(|(_, share)| *share > 0.0)
        .map(|(node, share)| {
            let sector = json!([at, at + share, node.id()]);
            at += share;
            sector
        })
        .collect();
    ("shares", sectors)
}
