//! [`EtcdAccess`]: how a follower, a member agent or an admin reaches etcd:
//! the endpoints, TLS (a CA bundle, a client certificate) and a user.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};

use crate::error::MembershipError;
use crate::secret::{Secret, read_private};

/// The endpoints of an etcd cluster and how to prove who we are to it.
///
/// Plain TCP by default. TLS when an endpoint is `https://` or a CA or
/// client certificate is given (then a bare `host:port` means `https://`):
/// the server's certificate is checked against the CA bundle given, else
/// against the system's roots, and must name the endpoint's host (an IP
/// address needs an IP SAN). With [`EtcdAccess::with_client_cert`] the
/// client presents its certificate (etcd's `--client-cert-auth`; with auth
/// enabled and no user, etcd takes the certificate's CN as the user). With
/// [`EtcdAccess::with_user`] the client authenticates with etcd's auth
/// (`Authenticate` RPC) and renews its token whenever etcd reports it
/// expired (`--auth-token-ttl`, 300 s by default), on every connection.
///
/// `Debug` shows the endpoints, whether TLS is on and the user, never the
/// password or the key. Converts from a slice, array or `Vec` of endpoints
/// (plain TCP, no user), so `Follower::etcd(&["127.0.0.1:2379"], ..)` works.
#[derive(Clone, Default)]
pub struct EtcdAccess {
    endpoints: Vec<String>,
    tls: bool,
    ca: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The client certificate's file and the end of its validity.
    client_expiry: Option<(PathBuf, SystemTime)>,
    user: Option<(String, Secret)>,
}

impl std::fmt::Debug for EtcdAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdAccess")
            .field("endpoints", &self.endpoints)
            .field("tls", &self.uses_tls())
            .field("client_cert", &self.identity.is_some())
            .field("user", &self.user.as_ref().map(|(user, _)| user))
            .finish()
    }
}

impl<E: AsRef<str>> From<&[E]> for EtcdAccess {
    fn from(endpoints: &[E]) -> EtcdAccess {
        EtcdAccess::new(endpoints)
    }
}

impl<E: AsRef<str>, const N: usize> From<&[E; N]> for EtcdAccess {
    fn from(endpoints: &[E; N]) -> EtcdAccess {
        EtcdAccess::new(endpoints)
    }
}

impl<E: AsRef<str>> From<&Vec<E>> for EtcdAccess {
    fn from(endpoints: &Vec<E>) -> EtcdAccess {
        EtcdAccess::new(endpoints)
    }
}

impl From<&EtcdAccess> for EtcdAccess {
    fn from(access: &EtcdAccess) -> EtcdAccess {
        access.clone()
    }
}

fn unreadable(path: &Path, message: impl std::fmt::Display) -> MembershipError {
    MembershipError::File { path: path.display().to_string(), message: message.to_string() }
}

/// The PEM file at `path`, which must hold at least one `what` block
/// (`CERTIFICATE`, `PRIVATE KEY`).
fn pem(path: &Path, bytes: Vec<u8>, what: &str) -> Result<Vec<u8>, MembershipError> {
    let text = String::from_utf8_lossy(&bytes);
    let found = text.lines().any(|line| line.starts_with("-----BEGIN ") && line.contains(what));
    if !found {
        return Err(unreadable(path, format!("no PEM {what} block in it")));
    }
    Ok(bytes)
}

/// TLS files and a user as the bindings and the CLI take them, applied
/// in one place ([`EtcdAccess::with_credentials`]). Every field is
/// optional; `Debug` never shows the password.
#[derive(Clone, Debug, Default)]
pub struct EtcdCredentials {
    /// PEM CA bundle that signed etcd's server certificate.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate (needs `key_file`).
    pub cert_file: Option<PathBuf>,
    /// PEM private key of `cert_file`, readable by its owner alone.
    pub key_file: Option<PathBuf>,
    /// etcd user (needs `password` or `password_file`).
    pub user: Option<String>,
    /// The user's password, held by the application.
    pub password: Option<Secret>,
    /// A file holding the user's password (its first line), readable by its
    /// owner alone.
    pub password_file: Option<PathBuf>,
}

/// The end of the validity of the first certificate in `pem_bytes`.
fn not_after(path: &Path, pem_bytes: &[u8]) -> Result<SystemTime, MembershipError> {
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(pem_bytes).map_err(|e| unreadable(path, format!("not PEM: {e}")))?;
    let certificate = pem.parse_x509().map_err(|e| unreadable(path, format!("not an X.509 certificate: {e}")))?;
    let seconds = certificate.validity().not_after.timestamp();
    Ok(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// `time` as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

impl EtcdAccess {
    /// This access with `credentials` applied: the CA, the client
    /// certificate and the user, as the `with_*` methods apply them.
    ///
    /// Errors: those of the `with_*` methods; [`MembershipError::File`]
    /// for a certificate without its key or a key without its certificate;
    /// [`MembershipError::InvalidUser`] for a user without a password (or
    /// with both `password` and `password_file`), or a password without a
    /// user.
    pub fn with_credentials(mut self, credentials: &EtcdCredentials) -> Result<EtcdAccess, MembershipError> {
        let c = credentials;
        if let Some(ca) = &c.ca_file {
            self = self.with_ca_file(ca)?;
        }
        match (&c.cert_file, &c.key_file) {
            (Some(cert), Some(key)) => self = self.with_client_cert(cert, key)?,
            (Some(cert), None) => {
                return Err(unreadable(cert, "a client certificate needs its private key (key file)"));
            }
            (None, Some(key)) => return Err(unreadable(key, "a private key needs its client certificate (cert file)")),
            (None, None) => {}
        }
        let invalid =
            |user: &str, reason: &str| MembershipError::InvalidUser { user: user.into(), reason: reason.into() };
        match (&c.user, &c.password, &c.password_file) {
            (None, None, None) => {}
            (None, _, _) => return Err(invalid("", "a password was given without a user")),
            (Some(user), Some(_), Some(_)) => {
                return Err(invalid(user, "give a password or a password file, not both"));
            }
            (Some(user), None, None) => return Err(invalid(user, "no password given (password or password file)")),
            (Some(user), Some(password), None) => self = self.with_user(user, password.clone())?,
            (Some(user), None, Some(path)) => self = self.with_user(user, Secret::from_file(path)?)?,
        }
        Ok(self)
    }

    /// Plain TCP to `endpoints` (`http://host:port`, `https://host:port` or
    /// `host:port`), checked when a follower, member or admin starts.
    pub fn new<E: AsRef<str>>(endpoints: &[E]) -> EtcdAccess {
        EtcdAccess { endpoints: endpoints.iter().map(|e| e.as_ref().trim().to_owned()).collect(), ..Default::default() }
    }

    /// Checks the server's certificate against the PEM CA bundle at `path`
    /// (and turns TLS on).
    ///
    /// Errors: [`MembershipError::File`] naming the file when it cannot be
    /// read or holds no certificate.
    pub fn with_ca_file(mut self, path: impl AsRef<Path>) -> Result<EtcdAccess, MembershipError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| unreadable(path, e))?;
        self.ca = Some(pem(path, bytes, "CERTIFICATE")?);
        self.tls = true;
        Ok(self)
    }

    /// Presents the PEM client certificate at `cert` with the private key
    /// at `key` (mutual TLS; turns TLS on). The key file must be its
    /// owner's alone, as ssh requires of a key.
    ///
    /// Errors: [`MembershipError::File`] naming the file that cannot be
    /// read, holds no such PEM block, or (the certificate) has expired;
    /// [`MembershipError::Secret`] naming the key file when group or others
    /// may read it.
    pub fn with_client_cert(
        mut self,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<EtcdAccess, MembershipError> {
        let (cert, key) = (cert.as_ref(), key.as_ref());
        let cert_pem = pem(cert, std::fs::read(cert).map_err(|e| unreadable(cert, e))?, "CERTIFICATE")?;
        let key_pem = read_private(key)?;
        let not_after = not_after(cert, &cert_pem)?;
        if not_after < SystemTime::now() {
            return Err(unreadable(cert, format!("the client certificate expired at {}", utc(not_after))));
        }
        self.identity = Some((cert_pem, pem(key, key_pem, "PRIVATE KEY")?));
        self.client_expiry = Some((cert.to_owned(), not_after));
        self.tls = true;
        Ok(self)
    }

    /// Authenticates as etcd user `user` with `password` (etcd's auth).
    ///
    /// Errors: [`MembershipError::InvalidUser`] for an empty user name.
    pub fn with_user(mut self, user: &str, password: Secret) -> Result<EtcdAccess, MembershipError> {
        if user.is_empty() {
            return Err(MembershipError::InvalidUser { user: user.to_owned(), reason: "empty".into() });
        }
        self.user = Some((user.to_owned(), password));
        Ok(self)
    }

    /// Whether connections use TLS.
    pub fn uses_tls(&self) -> bool {
        self.tls || self.endpoints.iter().any(|e| e.starts_with("https://"))
    }

    /// The endpoints as the client takes them: `http://host:port`, or
    /// `https://host:port` when TLS is on.
    ///
    /// Errors: [`MembershipError::InvalidEndpoint`] for an empty list, an
    /// endpoint without a port, or `http://` beside TLS settings or
    /// `https://` endpoints.
    pub(crate) fn urls(&self) -> Result<Vec<String>, MembershipError> {
        if self.endpoints.is_empty() {
            return Err(MembershipError::InvalidEndpoint {
                endpoint: String::new(),
                reason: "no endpoint given".into(),
            });
        }
        let tls = self.uses_tls();
        let scheme = if tls { "https" } else { "http" };
        self.endpoints
            .iter()
            .map(|endpoint| {
                let invalid = |reason: &str| MembershipError::InvalidEndpoint {
                    endpoint: endpoint.clone(),
                    reason: reason.to_owned(),
                };
                let address = match endpoint.split_once("://") {
                    Some(("http", _)) if tls => {
                        return Err(invalid(
                            "http:// with TLS (a CA, a client certificate or an https:// endpoint): use https://",
                        ));
                    }
                    Some(("http" | "https", address)) => address,
                    Some(_) => return Err(invalid("expected http://host:port, https://host:port or host:port")),
                    None => endpoint.as_str(),
                };
                let port = address.rsplit_once(':').map(|(_, port)| port);
                if address.is_empty() || !port.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0)) {
                    return Err(invalid("expected http://host:port, https://host:port or host:port"));
                }
                Ok(format!("{scheme}://{address}"))
            })
            .collect()
    }

    /// `message` (a connection or request failure) with what it most likely
    /// means for this access, when the transport's words do not say it: a
    /// TLS connection etcd ends during or right after the handshake refused
    /// our client certificate (TLS 1.3 sends that alert after the client's
    /// handshake is done, so the client often sees only the connection
    /// closing); a plain connection closed at once may be a TLS-only etcd.
    pub(crate) fn explain(&self, message: String) -> String {
        let closed = ["broken pipe", "connection closed", "connection reset", "received fatal alert"]
            .iter()
            .any(|words| message.contains(words));
        let hint = if message.contains("UnknownIssuer") {
            "etcd's certificate is not signed by the CA given (or, without one, by the system's roots)".to_owned()
        } else if message.contains("NotValidForName") {
            "etcd's certificate does not name the endpoint's host (an IP address needs an IP SAN)".to_owned()
        } else if message.contains("invalid peer certificate: Expired") {
            "etcd's certificate has expired".to_owned()
        } else if self.uses_tls()
            && ["tls handshake eof", "InvalidContentType", "corrupt message"].iter().any(|w| message.contains(w))
        {
            "the server does not speak TLS: use an http:// endpoint".to_owned()
        } else if self.uses_tls() && closed {
            match &self.client_expiry {
                None => "etcd ended the TLS connection: it requires a client certificate, and none was given".into(),
                Some((path, end)) if *end < SystemTime::now() => {
                    format!(
                        "etcd ended the TLS connection: our client certificate {} expired at {}",
                        path.display(),
                        utc(*end)
                    )
                }
                Some((path, _)) => format!(
                    "etcd ended the TLS connection: it refused our client certificate {} (not from a CA it trusts?)",
                    path.display()
                ),
            }
        } else if !self.uses_tls() && closed {
            "if etcd speaks TLS only, use an https:// endpoint with its CA".to_owned()
        } else {
            return message;
        };
        format!("{message} ({hint})")
    }

    /// `options` with this access's TLS and user.
    pub(crate) fn apply(&self, mut options: ConnectOptions) -> ConnectOptions {
        if self.uses_tls() {
            let mut tls = TlsOptions::new();
            tls = match &self.ca {
                Some(ca) => tls.ca_certificate(Certificate::from_pem(ca)),
                None => tls.with_native_roots(),
            };
            if let Some((cert, key)) = &self.identity {
                tls = tls.identity(Identity::from_pem(cert, key));
            }
            options = options.with_tls(tls);
        }
        if let Some((user, password)) = &self.user {
            options = options.with_user(user.clone(), password.expose().to_owned()).with_auto_token_refresh(true);
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_take_the_scheme_tls_asks_for_and_mixing_is_refused() {
        let plain = EtcdAccess::new(&["127.0.0.1:2379", "http://10.0.0.1:2379"]);
        assert_eq!(plain.urls().unwrap(), ["http://127.0.0.1:2379", "http://10.0.0.1:2379"]);
        let secure = EtcdAccess::new(&["https://127.0.0.1:2379", "10.0.0.1:2379"]);
        assert_eq!(secure.urls().unwrap(), ["https://127.0.0.1:2379", "https://10.0.0.1:2379"]);
        let mixed = EtcdAccess::new(&["https://127.0.0.1:2379", "http://10.0.0.1:2379"]);
        let error = mixed.urls().unwrap_err().to_string();
        assert!(error.contains("\"http://10.0.0.1:2379\"") && error.contains("use https://"), "{error}");
        for bad in ["ftp://h:1", "h", "h:0", "https://h:x"] {
            assert!(EtcdAccess::new(&[bad]).urls().is_err(), "{bad}");
        }
        assert!(EtcdAccess::new::<&str>(&[]).urls().is_err());
    }

    #[test]
    fn debug_shows_the_user_never_the_password() {
        let access = EtcdAccess::new(&["h:1"]).with_user("follower", Secret::new("hunter2").unwrap()).unwrap();
        let shown = format!("{access:?}");
        assert!(shown.contains("follower") && !shown.contains("hunter2"), "{shown}");
    }
}
