//! The command line of `rebalance`: its arguments, each node's server
//! address (`--address`), and the source rule it settles.

use std::path::PathBuf;

use clap::ValueEnum;

use super::address::Address;
use super::rate::Rate;
use crate::etcd::{ENDPOINTS_ENV, PREFIX_ENV};
use crate::server_access::ServerKind;

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum BackendName {
    /// memcached (`lru_crawler metadump hash`, get/add with flags and
    /// expiry; with --delete, delete).
    Memcached,
    /// Redis (SCAN, DUMP/PTTL/RESTORE; with --delete, EXISTS/DEL; with
    /// --migrate, MIGRATE).
    Redis,
}

impl BackendName {
    /// The protocol the servers speak.
    pub(crate) fn kind(self) -> ServerKind {
        match self {
            BackendName::Memcached => ServerKind::Memcached,
            BackendName::Redis => ServerKind::Redis,
        }
    }
}

/// `shardring rebalance`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The ring in service (JSON config); with --to. The environment's etcd
    /// endpoints and prefix are then ignored.
    #[arg(long, requires = "to")]
    pub(super) from: Option<PathBuf>,
    /// The ring to move to (JSON config).
    #[arg(long, requires = "from")]
    pub(super) to: Option<PathBuf>,
    /// Follow the ring in etcd instead: when members turn warming or
    /// draining, copy their keys, then make the warming ones active and
    /// remove the draining ones. Endpoints comma-separated.
    #[arg(long, value_delimiter = ',', env = ENDPOINTS_ENV, hide_env_values = true)]
    pub(super) etcd: Vec<String>,
    /// The ring's key prefix in etcd.
    #[arg(long, env = PREFIX_ENV)]
    pub(super) prefix: Option<String>,
    /// The servers' kind.
    #[arg(long, value_enum)]
    pub(super) backend: BackendName,
    /// A node's server address, `ID=HOST:PORT` (repeat for each node); a
    /// node without one is reached at its id, which must then be
    /// `HOST:PORT`. HOST is a name, an IPv4 address or an IPv6 address in
    /// brackets ([::1]:6379), PORT 1 to 65535. With --from/--to an id in
    /// neither config is refused; with --etcd it may name a member yet to
    /// join. An id given twice is refused, and so are two nodes (of either
    /// ring) that reach one server.
    #[arg(long = "address", value_name = "ID=HOST:PORT", value_parser = parse_address)]
    pub(super) addresses: Vec<(String, Address)>,
    /// At most this many keys per second, from 0.001 to 1e9 (default: as
    /// fast as the servers answer).
    #[arg(long, value_parser = Rate::parse, allow_negative_numbers = true)]
    pub(super) rate: Option<Rate>,
    /// Serve the run's progress as OpenMetrics text at
    /// http://ADDRESS/metrics while it runs (keys and bytes moved and
    /// failed per source and target, scans, rate, ETA).
    #[arg(long, value_name = "ADDRESS")]
    pub(super) metrics_listen: Option<std::net::SocketAddr>,
    /// Print what would move (per source and target) and move nothing.
    #[arg(long)]
    pub(super) dry_run: bool,
    /// A checkpoint file, one line naming the plan: a rerun with the same
    /// file asks each key's new owner first (EXISTS, mg) and skips the keys
    /// it holds, so a killed run resumes without copying anything twice.
    #[arg(long)]
    pub(super) resume: Option<PathBuf>,
    /// Move instead of copy: delete each moved key from its old owner once
    /// its new owner is seen to hold it, on memcached and Redis alike (a
    /// database that must not keep stale copies). Without it nothing is
    /// ever deleted: the old copies stay (a cache's expire or are evicted).
    /// Use it only once clients read from the new ring: with --from/--to
    /// each key is deleted right after its copy; with --etcd the deleting
    /// pass runs by itself, --grace seconds after the members turn active.
    #[arg(long)]
    pub(super) delete: bool,
    /// Redis only: move each key with MIGRATE, atomically (it leaves its old
    /// owner as it lands on its new one), for clients that follow the
    /// handoff protocol (Transition.route and the Redis guard; docs/
    /// transitions.md): any command is then safe during the move, not only
    /// SET. A run ends by listing the sources again and fails, naming the
    /// keys, when a moving key is still on its old owner; with --etcd the
    /// members change state only after such a clean listing. A killed run
    /// is resumed by running it again (what moved is no longer listed), so
    /// it keeps no checkpoint. Not with --delete (a move deletes by itself)
    /// or --resume.
    #[arg(long, conflicts_with_all = ["delete", "resume"])]
    pub(super) migrate: bool,
    /// With --etcd: seconds to wait after a transition appears before
    /// scanning (so clients write to both owners), and, with --delete,
    /// after making members active before deleting the moved keys' old
    /// copies, so clients' followers have switched to the new ring.
    #[arg(long, default_value_t = 2.0)]
    pub(super) grace: f64,
    /// With --etcd: handle one transition, then exit.
    #[arg(long)]
    pub(super) once: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// TLS and the servers' users (`--tls*`, `--redis-*`, `--memcached-*`),
    /// as `dashboard --servers` takes them.
    #[command(flatten)]
    pub(super) security: crate::server_access::ServerSecurity,
    #[command(flatten)]
    pub(super) etcd_security: crate::etcd::EtcdSecurity,
}

/// `--address ID=HOST:PORT`, its host and port checked ([`Address::parse`]).
fn parse_address(text: &str) -> Result<(String, Address), String> {
    let (id, address) = match text.rsplit_once('=') {
        Some((id, address)) if !id.is_empty() => (id, address),
        _ => return Err(format!("{text:?} is not ID=HOST:PORT")),
    };
    let address = Address::parse(address).map_err(|reason| format!("{text:?} is not ID=HOST:PORT: {reason}"))?;
    Ok((id.to_owned(), address))
}

impl Args {
    /// Applies the source rule of [`crate::etcd::settle`] to `matches` (the
    /// `rebalance` subcommand's): `--from`/`--to` or `--etcd` and `--prefix`.
    pub(crate) fn settle(
        &mut self,
        command: &mut clap::Command,
        matches: &clap::ArgMatches,
    ) -> Result<(), clap::Error> {
        let files = &["from", "to"];
        crate::etcd::settle(command, matches, files, "--from <FROM> and --to <TO>", &mut self.etcd, &mut self.prefix)
    }

    /// The server address of node `id`.
    pub(super) fn address<'a>(&'a self, id: &'a str) -> &'a str {
        self.addresses.iter().find(|(node, _)| node == id).map_or(id, |(_, address)| address.as_str())
    }
}
