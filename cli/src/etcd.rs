//! Where `--etcd` and `--prefix` come from, and how the tool proves who
//! it is to etcd ([`EtcdSecurity`]). `--etcd` and `--prefix` come from: the command line, else the
//! environment (`SHARDRING_ETCD_ENDPOINTS`, `SHARDRING_PREFIX`), as etcdctl
//! reads `ETCDCTL_ENDPOINTS` when `--endpoints` is not given.
//!
//! `watch` and `rebalance` follow either etcd or files (`--file`,
//! `--from`/`--to`). clap counts a value read from the environment as given,
//! so its `conflicts_with` and `requires` would refuse `watch --file` in a
//! shell that exports the variables; [`settle`] applies the rule instead:
//! files named on the command line win over the environment, and only
//! flags given on both sides conflict.

use std::path::PathBuf;

use clap::{ArgMatches, Args};
use shardring_membership::{EtcdAccess, EtcdCredentials, Secret};

use crate::error::CliError;
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
        let etcd_only = ["etcd", "prefix", "etcd_ca", "etcd_cert", "etcd_key", "etcd_user", "etcd_password_file"];
        if let Some(flag) = etcd_only.into_iter().find(|id| given(matches, id)) {
            return Err(command.error(
                ErrorKind::ArgumentConflict,
                format!(
                    "the argument '--{}' cannot be used with '--{}'",
                    file.replace('_', "-"),
                    flag.replace('_', "-")
                ),
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

/// The variable `--etcd-password-file` falls back to: the password itself.
pub(crate) const PASSWORD_ENV: &str = "SHARDRING_ETCD_PASSWORD";

/// `--*-password-file`'s parser: the secret in the file (owner-only), or
/// why not (clap prints it after the path, which is not secret).
pub(crate) fn password_file(text: &str) -> Result<Secret, String> {
    Secret::from_file(text).map_err(|e| e.to_string())
}

/// How to prove who we are to etcd: TLS and a user, for every command that
/// talks to etcd. The flags follow etcdctl's (`--cacert`, `--cert`,
/// `--key`, `--user`) under the `--etcd-` prefix; the password never comes
/// from a flag.
#[derive(Args, Clone, Default)]
pub(crate) struct EtcdSecurity {
    /// PEM CA bundle that signed etcd's server certificate; turns TLS on
    /// (endpoints become https://). Without it an https:// endpoint is
    /// checked against the system's roots.
    #[arg(long, value_name = "PATH", env = "SHARDRING_ETCD_CA")]
    etcd_ca: Option<PathBuf>,
    /// PEM client certificate for etcd's --client-cert-auth (with --etcd-key).
    #[arg(long, value_name = "PATH", requires = "etcd_key", env = "SHARDRING_ETCD_CERT")]
    etcd_cert: Option<PathBuf>,
    /// PEM private key of --etcd-cert, readable by its owner alone (mode 600).
    #[arg(long, value_name = "PATH", requires = "etcd_cert", env = "SHARDRING_ETCD_KEY")]
    etcd_key: Option<PathBuf>,
    /// etcd user (etcd's auth); the password comes from --etcd-password-file
    /// or SHARDRING_ETCD_PASSWORD, never a flag.
    #[arg(long, value_name = "USER", env = "SHARDRING_ETCD_USER")]
    etcd_user: Option<String>,
    /// A file holding the etcd user's password (its first line), readable by
    /// its owner alone (mode 600); refused otherwise, naming the file.
    #[arg(long, value_name = "PATH", value_parser = password_file, requires = "etcd_user")]
    etcd_password_file: Option<Secret>,
}

impl EtcdSecurity {
    /// `endpoints` with these settings.
    ///
    /// Errors: a CA, certificate or key file that cannot be used, naming
    /// it; `--etcd-user` without a password.
    pub(crate) fn access(&self, endpoints: &[String]) -> Result<EtcdAccess, CliError> {
        let password = match (&self.etcd_user, &self.etcd_password_file) {
            (Some(_), None) => Secret::from_env(PASSWORD_ENV).map_err(|e| CliError::Membership(e.to_string()))?,
            (None, _) if std::env::var_os(PASSWORD_ENV).is_some() => {
                return Err(CliError::Membership(format!(
                    "{PASSWORD_ENV} is set but no etcd user is given (--etcd-user or SHARDRING_ETCD_USER)"
                )));
            }
            (_, file) => file.clone(),
        };
        let credentials = EtcdCredentials {
            ca_file: self.etcd_ca.clone(),
            cert_file: self.etcd_cert.clone(),
            key_file: self.etcd_key.clone(),
            user: self.etcd_user.clone(),
            password,
            password_file: None,
        };
        let access = EtcdAccess::new(endpoints).with_credentials(&credentials);
        if let (Ok(access), Some(user)) = (&access, &self.etcd_user)
            && !access.uses_tls()
        {
            crate::complain(format!("warning: etcd user {user:?}'s password goes to etcd over plain TCP (no TLS)"));
        }
        access.map_err(|e| match (&self.etcd_user, &credentials.password) {
            (Some(user), None) => CliError::Membership(format!(
                "--etcd-user {user:?} needs a password: --etcd-password-file or {PASSWORD_ENV}"
            )),
            _ => CliError::Membership(e.to_string()),
        })
    }
}
