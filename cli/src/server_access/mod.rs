//! How the tool reaches the memcached and Redis servers whose keys or
//! stats it reads (`rebalance`, `dashboard --servers`): TLS, and the user
//! it authenticates as, with the same flags and environment variables on
//! every command ([`ServerSecurity`]), read once into [`Credentials`]; and
//! the connections of our own it opens with them ([`open`]). A password
//! comes from a file readable by its owner alone or from an environment
//! variable, never from a flag, and no error, log line or report shows it.

mod auth;
pub(crate) mod tls;

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use shardring_membership::Secret;

use crate::error::CliError;
use tls::{ServerTls, Stream};

/// The environment variable a Redis password may come from instead of
/// `--redis-password-file`.
pub(crate) const REDIS_PASSWORD_ENV: &str = "SHARDRING_REDIS_PASSWORD";

/// The environment variable a memcached password may come from instead of
/// `--memcached-password-file`.
pub(crate) const MEMCACHED_PASSWORD_ENV: &str = "SHARDRING_MEMCACHED_PASSWORD";

/// Which protocol the servers speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ServerKind {
    Memcached,
    Redis,
}

impl ServerKind {
    /// The name the flags use (`--redis-user`, `--backend redis`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            ServerKind::Memcached => "memcached",
            ServerKind::Redis => "redis",
        }
    }
}

/// The flags that say how to reach the servers: TLS and a user. The same on
/// every command that talks to memcached or Redis; the password never
/// comes from a flag.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct ServerSecurity {
    /// Redis: the ACL user to authenticate as, on every server (with
    /// `rebalance --migrate`, in MIGRATE to the target too); its password
    /// comes from --redis-password-file or the SHARDRING_REDIS_PASSWORD
    /// environment variable, never a flag. A password without a user is
    /// the `default` user's.
    #[arg(long, value_name = "USER")]
    pub(crate) redis_user: Option<String>,
    /// Redis: a file holding the password (its first line), readable by its
    /// owner alone (mode 600); refused otherwise, naming the file.
    #[arg(long, value_name = "PATH", value_parser = crate::etcd::password_file)]
    pub(crate) redis_password_file: Option<Secret>,
    /// memcached: the user of memcached's text-protocol authentication
    /// (`memcached -Y FILE`, lines `user:password`), on every server; its
    /// password comes from --memcached-password-file or the
    /// SHARDRING_MEMCACHED_PASSWORD environment variable, never a flag.
    #[arg(long, value_name = "USER")]
    pub(crate) memcached_user: Option<String>,
    /// memcached: a file holding the password (its first line), readable by
    /// its owner alone (mode 600); refused otherwise, naming the file.
    #[arg(long, value_name = "PATH", value_parser = crate::etcd::password_file)]
    pub(crate) memcached_password_file: Option<Secret>,
    /// Speak TLS to the servers (Redis `--tls-port`, memcached `-Z`),
    /// checking their certificates against --tls-ca or the system's roots.
    /// With `rebalance --migrate`, the servers themselves must MIGRATE over
    /// TLS too (Redis `tls-cluster yes`, each with a client certificate).
    #[arg(long)]
    pub(crate) tls: bool,
    /// PEM CA bundle that signed the servers' certificates (implies --tls).
    #[arg(long, value_name = "PATH")]
    pub(crate) tls_ca: Option<PathBuf>,
    /// PEM client certificate for servers that ask for one (Redis
    /// `tls-auth-clients yes`, memcached `ssl_verify_mode=2`), with
    /// --tls-key (implies --tls).
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert, readable by its owner alone (mode 600).
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
}

/// How every connection to the servers goes: whom it authenticates as (on
/// Redis an ACL user, `AUTH user password`, or without one the `default`
/// user's password; on memcached the `-Y` user), and TLS. Its `Debug`
/// would show nothing secret either: it has none.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    pub(crate) user: Option<String>,
    pub(crate) password: Option<Secret>,
    pub(crate) tls: Option<Arc<ServerTls>>,
}

impl ServerSecurity {
    /// Whether any of these flags is on the command line.
    pub(crate) fn given(&self) -> bool {
        self.tls
            || self.tls_ca.is_some()
            || self.tls_cert.is_some()
            || self.redis_user.is_some()
            || self.redis_password_file.is_some()
            || self.memcached_user.is_some()
            || self.memcached_password_file.is_some()
    }

    /// How to reach `kind` servers: TLS (`--tls*`), and the user with its
    /// password: Redis `--redis-user` with `--redis-password-file` or
    /// `SHARDRING_REDIS_PASSWORD` (a password alone is the `default` user's),
    /// memcached `--memcached-user` (its `-Y` authentication) with
    /// `--memcached-password-file` or `SHARDRING_MEMCACHED_PASSWORD`.
    /// `chooser` is the flag that chose `kind` (`--backend`), as errors
    /// name it. Warns on stderr when a password would go without TLS.
    ///
    /// Errors: the other protocol's user or password file; a user without
    /// a password, a memcached password without a user; an empty password
    /// variable; a TLS file that cannot be used (naming it).
    pub(crate) fn credentials(&self, kind: ServerKind, chooser: &str) -> Result<Credentials, CliError> {
        let (user, file, env, foreign) = match kind {
            ServerKind::Redis => (
                &self.redis_user,
                &self.redis_password_file,
                REDIS_PASSWORD_ENV,
                self.memcached_user.is_some() || self.memcached_password_file.is_some(),
            ),
            ServerKind::Memcached => (
                &self.memcached_user,
                &self.memcached_password_file,
                MEMCACHED_PASSWORD_ENV,
                self.redis_user.is_some() || self.redis_password_file.is_some(),
            ),
        };
        let flag = kind.name();
        let other = match kind {
            ServerKind::Redis => ServerKind::Memcached,
            ServerKind::Memcached => ServerKind::Redis,
        }
        .name();
        if foreign {
            return Err(CliError::ServerAccess(format!(
                "--{other}-user and --{other}-password-file are for {chooser} {other}"
            )));
        }
        let tls = ServerTls::from_flags(self.tls, self.tls_ca.as_ref(), self.tls_cert.as_ref(), self.tls_key.as_ref())?
            .map(Arc::new);
        let password = match file {
            Some(secret) => Some(secret.clone()),
            None => Secret::from_env(env).map_err(|e| CliError::ServerAccess(e.to_string()))?,
        };
        if user.is_some() && password.is_none() {
            return Err(CliError::ServerAccess(format!(
                "--{flag}-user needs a password: --{flag}-password-file or {env}"
            )));
        }
        if kind == ServerKind::Memcached && password.is_some() && user.is_none() {
            return Err(CliError::ServerAccess(format!(
                "a memcached password needs --memcached-user (from {env} or the file)"
            )));
        }
        if password.is_some() && tls.is_none() {
            crate::complain(format!("warning: the {flag} password goes to the servers over plain TCP (no --tls)"));
        }
        Ok(Credentials { user: user.clone(), password, tls })
    }
}

/// A TCP connection to `server` (`host:port`), within `timeout` per address
/// it resolves to (an IP address and port need no resolver).
pub(crate) fn connect(server: &str, timeout: Duration) -> Result<TcpStream, String> {
    let mut last = None;
    for address in server.to_socket_addrs().map_err(|e| format!("{server}: {e}"))? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(match last {
        Some(error) => format!("{server}: {error}"),
        None => format!("{server}: the address resolves to nothing"),
    })
}

/// A connection of our own to the `kind` server at `server`: connected
/// within `connect_within`, reads and writes each within `timeout`, TLS
/// when `credentials` has it (the handshake done here, so a refused
/// certificate is reported as such), then authenticated when it has a
/// password: memcached's `-Y` user ([`auth::memcached`]), Redis's `AUTH`
/// ([`auth::redis`]).
///
/// Errors: as text naming `server` and the reason (the server's answer to
/// the authentication included), never the password.
pub(crate) fn open(
    server: &str,
    kind: ServerKind,
    credentials: &Credentials,
    connect_within: Duration,
    timeout: Duration,
) -> Result<Stream, String> {
    let io = |e: std::io::Error| format!("{server}: {e}");
    let stream = connect(server, connect_within)?;
    stream.set_nodelay(true).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut stream = match &credentials.tls {
        Some(tls) => tls.wrap(server, stream)?,
        None => Stream::Plain(stream),
    };
    match (kind, &credentials.user, &credentials.password) {
        (ServerKind::Memcached, Some(user), Some(password)) => auth::memcached(server, &mut stream, user, password)?,
        (ServerKind::Redis, user, Some(password)) => auth::redis(server, &mut stream, user.as_deref(), password)?,
        _ => {}
    }
    Ok(stream)
}
