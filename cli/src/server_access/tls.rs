//! TLS to the data servers (`--tls`, `--tls-ca`, `--tls-cert`,
//! `--tls-key`): the rebalancer's Redis connections through the `redis`
//! crate's rustls support (`rediss://`, fed [`ServerTls::ca`] and
//! [`ServerTls::identity`]), every other connection (memcached's `-Z`, the
//! dashboard's stats from either) through rustls around our own stream
//! ([`ServerTls::wrap`]). The server's certificate is checked against the CA
//! given, else the system's roots, and must name the host the node's
//! address gives (an IP address needs an IP SAN).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use shardring_membership::pem::{self, ClientIdentity};

use crate::error::CliError;

/// The TLS settings of a run, read once at start.
pub(crate) struct ServerTls {
    /// The CA bundle (PEM), if given.
    pub(crate) ca: Option<Vec<u8>>,
    /// The client certificate and key (PEM), if given.
    pub(crate) identity: Option<(Vec<u8>, Vec<u8>)>,
    /// rustls's configuration (for [`ServerTls::wrap`]).
    config: Arc<ClientConfig>,
}

impl ServerTls {
    /// The settings the flags give: `None` without `--tls` and its files.
    /// The files are checked now (`shardring_membership::pem`): every CA
    /// block a certificate, the key the certificate's, the certificate not
    /// expired.
    ///
    /// Errors: a file that cannot be read or fails a check (naming it), a
    /// key others can read, a certificate without its key.
    pub(crate) fn from_flags(
        tls: bool,
        ca: Option<&PathBuf>,
        cert: Option<&PathBuf>,
        key: Option<&PathBuf>,
    ) -> Result<Option<ServerTls>, CliError> {
        if !tls && ca.is_none() && cert.is_none() {
            return Ok(None);
        }
        let failed = |e: shardring_membership::MembershipError| CliError::ServerAccess(e.to_string());
        let mut roots = RootCertStore::empty();
        let ca_pem = match ca {
            Some(path) => {
                let (pem, certificates) = pem::certificates(path).map_err(failed)?;
                for certificate in certificates {
                    roots.add(certificate).map_err(|e| {
                        CliError::ServerAccess(format!("{}: not a CA certificate TLS can use: {e}", path.display()))
                    })?;
                }
                Some(pem)
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
                None
            }
        };
        let builder = ClientConfig::builder().with_root_certificates(roots);
        let (config, identity) = match (cert, key) {
            (Some(cert), Some(key)) => {
                let identity = ClientIdentity::load(cert, key).map_err(failed)?;
                let config = builder
                    .with_client_auth_cert(identity.chain, identity.key)
                    .map_err(|e| CliError::ServerAccess(format!("{}: {e}", cert.display())))?;
                (config, Some((identity.cert_pem, identity.key_pem)))
            }
            (None, None) => (builder.with_no_client_auth(), None),
            _ => return Err(CliError::ServerAccess("--tls-cert and --tls-key go together".into())),
        };
        let mut config = config;
        // No session resumption: every server is named by the same host
        // (127.0.0.1:11211 and 127.0.0.1:11212 share a ticket cache entry),
        // and memcached's OpenSSL set to verify clients answers a resumption
        // attempt without a session id context with an internal-error alert.
        config.resumption = rustls::client::Resumption::disabled();
        Ok(Some(ServerTls { ca: ca_pem, identity, config: Arc::new(config) }))
    }

    /// A TLS session over `stream` to `server` (`host:port`).
    pub(crate) fn wrap(&self, server: &str, stream: TcpStream) -> Result<Stream, String> {
        let host = server.rsplit_once(':').map_or(server, |(host, _)| host);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned()).map_err(|e| format!("{server}: {e}"))?;
        let connection = ClientConnection::new(Arc::clone(&self.config), name).map_err(|e| format!("{server}: {e}"))?;
        let mut tls = StreamOwned::new(connection, stream);
        // Handshake now, so a refused certificate is reported as such, not as a failed command.
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock).map_err(|e| format!("{server}: TLS handshake: {e}"))?;
        }
        Ok(Stream::Tls(Box::new(tls)))
    }
}

/// A connection to a memcached server: plain TCP or TLS.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// The largest TLS write of whole commands sent to memcached. memcached
/// 1.6 (to 1.6.18 at least) reads TLS into a 16 KiB buffer and waits for
/// the socket to be readable again once it has parsed what it read, so
/// bytes OpenSSL decrypted but did not hand over wait forever: measured
/// here, 150 pipelined 100-byte sets in one 18 KB write stalled after 136.
/// Records holding whole commands, well under that buffer, never leave
/// such a tail.
const TLS_COMMANDS: usize = 8 * 1024;

impl Stream {
    /// Sends `bytes`, text-protocol commands that end at `ends` (offsets
    /// past each command's last byte; `None`: every command is one line,
    /// ending at each CRLF). Over TLS each write is a run of whole commands
    /// of at most [`TLS_COMMANDS`] bytes, or one larger command alone, so
    /// every TLS record ends where a command ends.
    pub(crate) fn send(&mut self, bytes: &[u8], ends: Option<&[usize]>) -> std::io::Result<()> {
        let Stream::Tls(tls) = self else {
            return self.write_all(bytes);
        };
        let lines: Vec<usize>;
        let ends = match ends {
            Some(ends) => ends,
            None => {
                lines = bytes.windows(2).enumerate().filter(|(_, w)| w == b"\r\n").map(|(i, _)| i + 2).collect();
                &lines
            }
        };
        let mut start = 0;
        let mut end = 0;
        for &next in ends.iter().chain(std::iter::once(&bytes.len())) {
            if next - start > TLS_COMMANDS && end > start {
                tls.write_all(&bytes[start..end])?;
                tls.flush()?;
                start = end;
            }
            end = next;
        }
        if end > start {
            tls.write_all(&bytes[start..end])?;
        }
        tls.flush()
    }
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(stream) => stream.read(buffer),
            Stream::Tls(tls) => tls.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(stream) => stream.write(buffer),
            Stream::Tls(tls) => tls.write(buffer),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(stream) => stream.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}
