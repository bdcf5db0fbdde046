//! Every way the tool can fail. Each prints one line naming the file,
//! argument or line and the value, and exits with code 2.

use std::io;

use shardring::RingError;

/// Every way the tool can fail; each prints one line and exits with code 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("{path}: cannot draw the chart: {message}")]
    Plot { path: String, message: String },
    #[error("{path}: no keys (one key per line, or NUL-terminated with --null)")]
    NoKeys { path: String },
    /// A key the key rule refuses (see `keys`): `origin` names the argument
    /// or the line, `message` the key and why.
    #[error("{origin}: {message}")]
    Key { origin: String, message: String },
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
    /// A memcached or Redis server option (`--tls*`, `--redis-*`,
    /// `--memcached-*`) that cannot be used: a file, a missing password, a
    /// flag of the other protocol.
    #[error("{0}")]
    ServerAccess(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}
