//! [`EtcdAccess`]: how a follower, a member agent or an admin reaches etcd:
//! the endpoints, TLS (a CA bundle, a client certificate) and a user.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};

use crate::error::MembershipError;
use crate::pem::{ClientIdentity, utc};
use crate::secret::Secret;

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
        let endpoints: Vec<String> = self.endpoints.iter().map(|e| redacted(e)).collect();
        f.debug_struct("EtcdAccess")
            .field("endpoints", &endpoints)
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

/// `endpoint` with any user information (`user:password@`) replaced, for
/// messages: such an endpoint is refused, and never echoed whole.
fn redacted(endpoint: &str) -> String {
    let (scheme, rest) = endpoint.split_once("://").map_or(("", endpoint), |(s, r)| (s, r));
    match rest.rsplit_once('@') {
        Some((_, host)) if scheme.is_empty() => format!("<redacted>@{host}"),
        Some((_, host)) => format!("{scheme}://<redacted>@{host}"),
        None => endpoint.to_owned(),
    }
}

fn unreadable(path: &Path, message: impl std::fmt::Display) -> MembershipError {
    MembershipError::File { path: path.display().to_string(), message: message.to_string() }
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
    /// read, holds no certificate or a block that is not one.
    pub fn with_ca_file(mut self, path: impl AsRef<Path>) -> Result<EtcdAccess, MembershipError> {
        let (pem, _) = crate::pem::certificates(path.as_ref())?;
        self.ca = Some(pem);
        self.tls = true;
        Ok(self)
    }

    /// Presents the PEM client certificate at `cert` with the private key
    /// at `key` (mutual TLS; turns TLS on). The key file must be its
    /// owner's alone, as ssh requires of a key; the key must be the
    /// certificate's, and the certificate not expired.
    ///
    /// Errors: [`MembershipError::File`] naming the file that cannot be
    /// read, holds no such PEM block, is not the certificate's key, or (the
    /// certificate) has expired; [`MembershipError::Secret`] naming the key
    /// file when group or others may read it.
    pub fn with_client_cert(
        mut self,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<EtcdAccess, MembershipError> {
        let identity = ClientIdentity::load(cert.as_ref(), key.as_ref())?;
        self.client_expiry = Some((identity.cert_path.clone(), identity.not_after));
        self.identity = Some((identity.cert_pem, identity.key_pem));
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
                    endpoint: redacted(endpoint),
                    reason: reason.to_owned(),
                };
                if endpoint.contains('@') {
                    return Err(invalid(
                        "user information in an endpoint is not used: give the user as the etcd user setting and its \
                         password from a file or the environment",
                    ));
                }
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
        let lower = message.to_lowercase();
        let closed = ["broken pipe", "connection closed", "received fatal alert"].iter().any(|w| lower.contains(w));
        let hint = if message.contains("UnknownIssuer") {
            "etcd's certificate is not signed by the CA given (or, without one, by the system's roots)".to_owned()
        } else if message.contains("NotValidForName") {
            "etcd's certificate does not name the endpoint's host (an IP address needs an IP SAN)".to_owned()
        } else if message.contains("invalid peer certificate: Expired") {
            "etcd's certificate has expired".to_owned()
        } else if self.uses_tls()
            && ["tls handshake eof", "invalidcontenttype", "corrupt message"].iter().any(|w| lower.contains(w))
        {
            "the server does not speak TLS: use an http:// endpoint".to_owned()
        } else if self.uses_tls() && lower.contains("connection reset") {
            // A plain server resets a ClientHello; a TLS one may reset a refused client too.
            "the server reset the connection: if it does not speak TLS, use an http:// endpoint; if it does, it \
             refused our client certificate"
                .to_owned()
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
        } else if !self.uses_tls() && (closed || lower.contains("connection reset")) {
            "if etcd speaks TLS only, use an https:// endpoint with its CA".to_owned()
        } else {
            return message;
        };
        format!("{message} ({hint})")
    }

    /// This access as if it presented a client certificate from `cert`
    /// valid until `end` (for the tests of the messages).
    #[cfg(test)]
    pub(crate) fn with_expiry(mut self, cert: PathBuf, end: SystemTime) -> EtcdAccess {
        self.client_expiry = Some((cert, end));
        self.tls = true;
        self
    }

    /// `options` with this access's TLS and user.
    pub(crate) fn apply(&self, mut options: ConnectOptions) -> ConnectOptions {
        if self.uses_tls() {
            let mut tls = TlsOptions::new();
            tls = match &self.ca {
                Some(ca) => tls.ca_certificate(Certificate::from_pem(ca)),
                None => system_roots(tls),
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

/// `tls` trusting the operating system's root certificates (Linux: the
/// distribution's bundle; Windows: the certificate store), or on macOS
/// Mozilla's bundle as webpki-roots compiles it in: reading the keychain
/// needs Apple's Security framework, which the release builds do not link.
#[cfg(not(target_os = "macos"))]
fn system_roots(tls: TlsOptions) -> TlsOptions {
    tls.with_native_roots()
}

/// See the other platforms' `system_roots`.
#[cfg(target_os = "macos")]
fn system_roots(tls: TlsOptions) -> TlsOptions {
    tls.with_webpki_roots()
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
        let with_password = EtcdAccess::new(&["https://root:hunter2@127.0.0.1:2379"]);
        let error = with_password.urls().unwrap_err().to_string();
        assert!(error.contains("https://<redacted>@127.0.0.1:2379") && !error.contains("hunter2"), "{error}");
        assert!(!format!("{with_password:?}").contains("hunter2"));
        assert!(EtcdAccess::new::<&str>(&[]).urls().is_err());
    }

    #[test]
    fn debug_shows_the_user_never_the_password() {
        let access = EtcdAccess::new(&["h:1"]).with_user("follower", Secret::new("hunter2").unwrap()).unwrap();
        let shown = format!("{access:?}");
        assert!(shown.contains("follower") && !shown.contains("hunter2"), "{shown}");
    }
}
