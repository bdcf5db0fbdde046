//! `shardring`: answers "what happens if...?" about a ring before anyone
//! touches a cluster. Ring configs are the core's JSON config files.

mod bounded;
mod member;
mod plot;
mod rebalance;
mod report;
mod simulate;

use std::fs;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use shardring::{Ring, RingError};

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
    /// Print the owner of each key (or its preference list with --replicas).
    /// Keys come from the arguments, or one per line on stdin.
    Lookup {
        /// Ring config (JSON).
        config: PathBuf,
        /// Keys to place; none means read stdin.
        keys: Vec<String>,
        /// Print the first N distinct nodes clockwise (the preference list).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        replicas: u32,
    },
    /// Each node's exact share of the hash space and, with --keys, of a key sample.
    Stats {
        /// Ring config (JSON).
        config: PathBuf,
        /// A file of keys, one per line, to place and count.
        #[arg(long)]
        keys: Option<PathBuf>,
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
    /// The ring's members in etcd: join (with a lease), leave, set-weight,
    /// list, config.
    #[command(subcommand)]
    Member(member::MemberCommand),
    /// Follow the ring in etcd (or a config file) and print each epoch, its
    /// fingerprint and what moved.
    Watch(member::WatchArgs),
    /// Move the keys whose owner changes between two rings (or as members
    /// warm up or drain in etcd) between real memcached or Redis servers.
    Rebalance(rebalance::Args),
}

/// Every way the tool can fail; each prints one line and exits with code 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("{path}: cannot draw the chart: {message}")]
    Plot { path: String, message: String },
    #[error("{path}: no keys (one key per line)")]
    NoKeys { path: String },
    #[error("{path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("{path}: {source}")]
    Ring { path: String, source: RingError },
    #[error("{0}")]
    Placement(#[from] RingError),
    #[error("{0}")]
    Membership(String),
    /// A rebalance that cannot start: a bad option or another run's checkpoint.
    #[error("{0}")]
    Rebalance(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    fs::read(path).map_err(|source| CliError::Read { path: path.display().to_string(), source })
}

fn load(path: &Path) -> Result<Ring, CliError> {
    let text = read(path)?;
    let ring = std::str::from_utf8(&text)
        .map_err(|e| RingError::InvalidConfig { message: format!("not UTF-8: {e}") })
        .and_then(Ring::from_json);
    ring.map_err(|source| CliError::Ring { path: path.display().to_string(), source })
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
    let error = match Cli::try_parse() {
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

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Lookup { config, keys, replicas } => lookup(&config, &keys, replicas as usize),
        Command::Stats { config, keys } => stats(&config, keys.as_deref()),
        Command::Diff { old, new, json } => diff(&old, &new, json),
        Command::Simulate(args) => simulate(&args),
        Command::Member(command) => member::member(command, &mut io::stdout().lock()),
        Command::Watch(args) => member::watch(&args, &mut io::stdout().lock()),
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

/// A ring that can place keys: errors name the config file when it has no points.
fn load_placing(path: &Path) -> Result<Ring, CliError> {
    let ring = load(path)?;
    if ring.live_node_count() == 0 {
        return Err(CliError::Ring { path: path.display().to_string(), source: RingError::EmptyRing });
    }
    Ok(ring)
}

fn lookup(config: &Path, keys: &[String], replicas: usize) -> Result<(), CliError> {
    let ring = load_placing(config)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let place = |key: &[u8], out: &mut BufWriter<io::StdoutLock>| -> Result<(), CliError> {
        let list = ring.get_n(key, replicas)?;
        out.write_all(key)?;
        out.write_all(b"\t")?;
        for (i, node) in list.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            out.write_all(node.id().as_bytes())?;
        }
        out.write_all(b"\n")?;
        Ok(())
    };
    if keys.is_empty() {
        for line in io::stdin().lock().split(b'\n') {
            let line = line?;
            place(line.strip_suffix(b"\r").unwrap_or(&line), &mut out)?;
        }
    } else {
        for key in keys {
            place(key.as_bytes(), &mut out)?;
        }
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

fn stats(config: &Path, keys: Option<&Path>) -> Result<(), CliError> {
    let ring = load(config)?;
    let sample = match keys {
        Some(path) => {
            let data = read(path)?;
            let keys: Vec<&[u8]> = data.split(|&b| b == b'\n').filter(|k| !k.is_empty()).collect();
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
