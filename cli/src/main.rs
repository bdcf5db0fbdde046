//! `shardring`: answers "what happens if...?" about a ring before anyone
//! touches a cluster. Ring configs are the core's JSON config files.

mod bounded;
mod config;
mod dashboard;
mod error;
mod etcd;
mod fleet;
mod hot;
mod keys;
mod member;
mod metrics_http;
mod plot;
mod rebalance;
mod report;
mod roles;
mod server_access;
mod simulate;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use config::{load, load_placing, read};
use error::CliError;
use keys::Framing;

/// Consistent-hash ring tool: place keys, inspect balance, diff two rings,
/// and replay the classic experiments.
#[derive(Parser)]
#[command(name = "shardring", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the owner of each key (or its preference list with --replicas),
    /// one line per key: the key, a tab, the node ids.
    ///
    /// A key is bytes, exactly as given (it need not be UTF-8; nothing is
    /// trimmed or decoded): each argument is one key; without arguments,
    /// each line of standard input is one (a line ends at LF, and an empty
    /// line is the empty key). A key ending in CR is refused, from an
    /// argument or a line alike, since a CR LF line end would otherwise be
    /// placed as part of the key; an argument holding LF is refused, since
    /// it would print as two lines. With --null, keys end at NUL instead
    /// and may hold any other byte (arguments too), and records end in NUL.
    Lookup {
        /// Ring config (JSON).
        config: PathBuf,
        /// Keys to place, as bytes; none means read standard input.
        keys: Vec<OsString>,
        /// Print the first N distinct nodes clockwise (the preference list).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        replicas: u32,
        /// Keys on standard input end at NUL, not LF; any key, an argument
        /// too, may hold any other byte (CR and LF, a final CR too); each
        /// output record ends in NUL.
        #[arg(short = '0', long)]
        null: bool,
    },
    /// Each node's exact share of the hash space and, with --keys, of a key sample.
    Stats {
        /// Ring config (JSON).
        config: PathBuf,
        /// A file of keys to place and count, one per line as `lookup` reads
        /// standard input (an empty line is the empty key; a key ending in
        /// CR is refused).
        #[arg(long)]
        keys: Option<PathBuf>,
        /// Keys in the --keys file end at NUL, not LF, and may hold any other byte.
        #[arg(short = '0', long, requires = "keys")]
        null: bool,
    },
    /// What moves between two rings: the exact moved share, who gives to
    /// whom, and the migration arcs.
    Diff {
        /// The ring in service (JSON config).
        old: PathBuf,
        /// The ring to move to (JSON config).
        new: PathBuf,
        /// Print the whole result as JSON, arcs included.
        #[arg(long)]
        json: bool,
    },
    /// Replay the classic experiments on synthetic keys: scale-out and
    /// failure against hash % N, the vnode sweep, and weights.
    Simulate(simulate::Args),
    /// The ring's members in etcd: join (with a lease), set-state,
    /// set-weight, leave, list, config, abandon-move, and the etcd roles (roles). `--etcd`
    /// and `--prefix` default to the environment's SHARDRING_ETCD_ENDPOINTS
    /// and SHARDRING_PREFIX; TLS and etcd's auth: --etcd-ca, --etcd-cert,
    /// --etcd-key, --etcd-user (password from --etcd-password-file or
    /// SHARDRING_ETCD_PASSWORD).
    #[command(subcommand)]
    Member(member::MemberCommand),
    /// Follow the ring in etcd (--etcd and --prefix, or SHARDRING_ETCD_ENDPOINTS
    /// and SHARDRING_PREFIX) or a config file (--file) and print each epoch,
    /// its fingerprint and what moved.
    Watch(member::WatchArgs),
    /// What the followers under a prefix report: each client's epoch and
    /// standing, whether they agree, lookups per node over the fleet.
    #[command(subcommand)]
    Fleet(fleet::FleetCommand),
    /// Where keys go: owner, preference list, read and write sets during a
    /// transition, and the arc each key falls in.
    Route(fleet::RouteArgs),
    /// The fleet's hot set (`P/hot`): publish it from the clients' reports,
    /// or show it.
    #[command(subcommand)]
    Hot(hot::HotCommand),
    /// Serve a live page of the ring under a prefix: members' arcs, states,
    /// ownership, request rates, key counts and memory, clients and their
    /// agreement, a running rebalance's progress.
    Dashboard(dashboard::DashboardArgs),
    /// Move the keys whose owner changes between two rings (or as members
    /// warm up or drain in etcd) between real memcached or Redis servers.
    Rebalance(Box<rebalance::Args>),
}

/// Prints `shardring: MESSAGE` on stderr. A stderr that cannot be written
/// (`2>/dev/full`) loses the message but keeps the exit code; `eprintln!`
/// would panic instead.
fn complain(message: impl std::fmt::Display) {
    let _ = writeln!(io::stderr(), "shardring: {message}");
}

/// The command line, or the exit of a refused one: help and version print as
/// clap renders them; every usage error is one line naming the argument and
/// the value, and exit code 2, like bad input.
fn parse() -> Result<Cli, ExitCode> {
    let error = match parse_settled() {
        Ok(cli) => return Ok(cli),
        Err(error) => error,
    };
    use clap::error::ErrorKind::{DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand, DisplayVersion};
    if matches!(error.kind(), DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand) {
        let _ = error.print();
        return Err(ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2)));
    }
    // The message is clap's first paragraph: one line, or a heading and the
    // missing arguments under it (joined here); tips and usage follow it.
    let text = error.render().to_string();
    let first: Vec<&str> = text.split("\n\n").next().unwrap_or_default().lines().map(str::trim).collect();
    let message = first.join(" ");
    complain(message.strip_prefix("error: ").unwrap_or(&message));
    Err(ExitCode::from(2))
}

/// The command line as clap parses it, then with the source of `watch` and
/// `rebalance` settled (`etcd::settle`: files on the command line win over
/// etcd endpoints from the environment).
fn parse_settled() -> Result<Cli, clap::Error> {
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(std::env::args_os())?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    match (&mut cli.command, matches.subcommand()) {
        (Command::Watch(args), Some(("watch", sub))) => {
            args.settle(command.find_subcommand_mut("watch").expect("watch is a subcommand"), sub)?
        }
        (Command::Rebalance(args), Some(("rebalance", sub))) => {
            args.settle(command.find_subcommand_mut("rebalance").expect("rebalance is a subcommand"), sub)?
        }
        _ => {}
    }
    Ok(cli)
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Lookup { config, keys, replicas, null } => {
            lookup(&config, &keys, replicas as usize, Framing::of(null))
        }
        Command::Stats { config, keys, null } => stats(&config, keys.as_deref(), Framing::of(null)),
        Command::Diff { old, new, json } => diff(&old, &new, json),
        Command::Simulate(args) => simulate(&args),
        Command::Member(command) => member::member(command, &mut io::stdout().lock()),
        Command::Watch(args) => member::watch(&args, &mut io::stdout().lock()),
        Command::Fleet(command) => match fleet::fleet(command, &mut io::stdout().lock()) {
            // The fleet disagrees or lags: reported above.
            Ok(false) => return ExitCode::from(1),
            other => other.map(drop),
        },
        Command::Route(args) => fleet::route(&args, &mut io::stdout().lock()),
        Command::Hot(command) => hot::hot(command, &mut io::stdout().lock()),
        Command::Dashboard(args) => dashboard::dashboard(&args),
        Command::Rebalance(args) => match rebalance::rebalance(&args, &mut io::stdout().lock()) {
            // Some server failed: reported above; the others were done.
            Ok(false) => return ExitCode::from(1),
            other => other.map(drop),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`shardring lookup ... | head`) is not an error.
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            complain(error);
            ExitCode::from(2)
        }
    }
}

/// Places each key of `keys` (standard input when there are none) and
/// writes one record per key: the key's bytes, a tab, the node ids joined
/// by commas, the framing's terminator.
fn lookup(config: &Path, keys: &[OsString], replicas: usize, framing: Framing) -> Result<(), CliError> {
    let ring = load_placing(config)?;
    // Every argument is checked before anything is written.
    let arguments: Vec<&[u8]> =
        keys.iter().enumerate().map(|(i, key)| keys::argument(key, i + 1, framing)).collect::<Result<_, _>>()?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut place = |key: &[u8]| -> Result<(), CliError> {
        let list = ring.get_n(key, replicas)?;
        out.write_all(key)?;
        out.write_all(b"\t")?;
        for (i, node) in list.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            out.write_all(node.id().as_bytes())?;
        }
        out.write_all(&[framing.terminator()])?;
        Ok(())
    };
    if keys.is_empty() {
        keys::each(io::stdin().lock(), framing, &mut place)?;
    } else {
        arguments.into_iter().try_for_each(&mut place)?;
    }
    out.flush()?;
    Ok(())
}

fn simulate(args: &simulate::Args) -> Result<(), CliError> {
    let mut out = BufWriter::new(io::stdout().lock());
    simulate::run(args, &mut out)?;
    out.flush()?;
    Ok(())
}

fn stats(config: &Path, keys: Option<&Path>, framing: Framing) -> Result<(), CliError> {
    let ring = load(config)?;
    let sample = match keys {
        Some(path) => {
            let data = read(path)?;
            let keys = keys::split(&data, framing, &path.display().to_string())?;
            if keys.is_empty() {
                return Err(CliError::NoKeys { path: path.display().to_string() });
            }
            let balance = ring.balance(&keys);
            Some(balance.map_err(|source| CliError::Ring { path: config.display().to_string(), source })?)
        }
        None => None,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    report::stats(&mut out, &ring, sample.as_ref())?;
    out.flush()?;
    Ok(())
}

fn diff(old: &Path, new: &Path, json: bool) -> Result<(), CliError> {
    let (old_ring, new_ring) = (load_placing(old)?, load_placing(new)?);
    let diff = old_ring.diff(&new_ring)?;
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut out, &report::DiffJson::from(&diff)).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        report::diff(&mut out, &diff)?;
    }
    out.flush()?;
    Ok(())
}
