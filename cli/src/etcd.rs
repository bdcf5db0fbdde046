//! Where `--etcd` and `--prefix` come from: the command line, else the
//! environment (`SHARDRING_ETCD_ENDPOINTS`, `SHARDRING_PREFIX`), as etcdctl
//! reads `ETCDCTL_ENDPOINTS` when `--endpoints` is not given.
//!
//! `watch` and `rebalance` follow either etcd or files (`--file`,
//! `--from`/`--to`). clap counts a value read from the environment as given,
//! so its `conflicts_with` and `requires` would refuse `watch --file` in a
//! shell that exports the variables; [`settle`] applies the rule instead:
//! files named on the command line win over the environment, and only
//! flags given on both sides conflict.

use clap::ArgMatches;
use clap::error::ErrorKind;
use clap::parser::ValueSource;

/// The variable `--etcd` falls back to: endpoints, comma-separated.
pub(crate) const ENDPOINTS_ENV: &str = "SHARDRING_ETCD_ENDPOINTS";
/// The variable `--prefix` falls back to.
pub(crate) const PREFIX_ENV: &str = "SHARDRING_PREFIX";

fn given(matches: &ArgMatches, id: &str) -> bool {
    matches.value_source(id) == Some(ValueSource::CommandLine)
}

/// Settles a command's source for `matches` (the subcommand's): when one of
/// `files` (argument ids) is on the command line, `--etcd` and `--prefix`
/// from the environment are dropped and on the command line conflict with
/// it; otherwise etcd needs both endpoints and a prefix. `alternative` is
/// the file form, as the messages name it (`--file <FILE>`).
pub(crate) fn settle(
    command: &mut clap::Command,
    matches: &ArgMatches,
    files: &[&str],
    alternative: &str,
    etcd: &mut Vec<String>,
    prefix: &mut Option<String>,
) -> Result<(), clap::Error> {
    if let Some(file) = files.iter().find(|id| given(matches, id)) {
        if let Some(flag) = ["etcd", "prefix"].into_iter().find(|id| given(matches, id)) {
            return Err(command.error(
                ErrorKind::ArgumentConflict,
                format!("the argument '--{}' cannot be used with '--{flag}'", file.replace('_', "-")),
            ));
        }
        etcd.clear();
        *prefix = None;
        return Ok(());
    }
    match (etcd.is_empty(), prefix.is_none()) {
        (false, false) => Ok(()),
        (true, true) => Err(command.error(
            ErrorKind::MissingRequiredArgument,
            format!(
                "the following required arguments were not provided: --etcd <ETCD> and --prefix <PREFIX> (or \
                 {ENDPOINTS_ENV} and {PREFIX_ENV}), or {alternative}"
            ),
        )),
        (false, true) => Err(command.error(
            ErrorKind::MissingRequiredArgument,
            format!("the following required arguments were not provided: --prefix <PREFIX> (or {PREFIX_ENV})"),
        )),
        (true, false) => Err(command.error(
            ErrorKind::MissingRequiredArgument,
            format!("the following required arguments were not provided: --etcd <ETCD> (or {ENDPOINTS_ENV})"),
        )),
    }
}
