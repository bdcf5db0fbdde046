//! TLS files checked when they are given, not when a connection fails:
//! a CA bundle whose every block parses as an X.509 certificate, and a
//! client certificate with its private key, parsed, matching each other
//! and not expired. Shared by [`EtcdAccess`](crate::EtcdAccess) and the
//! CLI's TLS to Redis and memcached. Errors name the file and why, never
//! the key.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::MembershipError;
use crate::secret::{read_bounded, read_private};

fn refused(path: &Path, message: impl std::fmt::Display) -> MembershipError {
    MembershipError::File { path: path.display().to_string(), message: message.to_string() }
}

/// The certificates of the PEM file at `path`, with its bytes: at least
/// one, each an X.509 certificate.
///
/// Errors: [`MembershipError::File`] naming the file: unreadable (not a
/// regular file, over 1 MiB), no `CERTIFICATE` block, or a block that is
/// not a certificate (its number given).
pub fn certificates(path: &Path) -> Result<(Vec<u8>, Vec<CertificateDer<'static>>), MembershipError> {
    let pem = read_bounded(path).map_err(|e| refused(path, strip(path, &e.to_string())))?;
    let mut certificates = Vec::new();
    for (i, block) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        let der = block.map_err(|e| refused(path, format!("certificate {} is not PEM: {e}", i + 1)))?;
        x509_parser::parse_x509_certificate(&der)
            .map_err(|e| refused(path, format!("certificate {} is not an X.509 certificate: {e}", i + 1)))?;
        certificates.push(der);
    }
    if certificates.is_empty() {
        return Err(refused(path, "no PEM CERTIFICATE block in it"));
    }
    Ok((pem, certificates))
}

/// `message` without a leading `PATH: `, for errors that name the path
/// themselves.
fn strip(path: &Path, message: &str) -> String {
    message.strip_prefix(&format!("{}: ", path.display())).unwrap_or(message).to_owned()
}

/// A client certificate and its private key, checked.
pub struct ClientIdentity {
    /// The certificate file's PEM bytes.
    pub cert_pem: Vec<u8>,
    /// The key file's PEM bytes.
    pub key_pem: Vec<u8>,
    /// The certificate chain, end entity first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key.
    pub key: PrivateKeyDer<'static>,
    /// The certificate file.
    pub cert_path: PathBuf,
    /// When the end-entity certificate expires.
    pub not_after: SystemTime,
}

impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity").field("cert_path", &self.cert_path).finish_non_exhaustive()
    }
}

impl ClientIdentity {
    /// Reads the PEM certificate at `cert` and the PEM private key at `key`
    /// (readable by its owner alone), and checks that the key parses, is
    /// the certificate's, and that the certificate has not expired.
    ///
    /// Errors: [`MembershipError::File`] naming the certificate or key file
    /// and why (no such block, not a key ring can use, not the
    /// certificate's key, expired at a given time);
    /// [`MembershipError::Secret`] when group or others may read the key.
    pub fn load(cert: &Path, key: &Path) -> Result<ClientIdentity, MembershipError> {
        let (cert_pem, chain) = certificates(cert)?;
        let key_pem = read_private(key)?;
        let private = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| refused(key, format!("no PEM private key in it: {e}")))?;
        let provider = rustls::crypto::ring::default_provider();
        rustls::sign::CertifiedKey::from_der(chain.clone(), private.clone_key(), &provider).map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => refused(key, format!("not the private key of {}", cert.display())),
            other => refused(key, format!("not a private key TLS can use: {other}")),
        })?;
        let (_, parsed) = x509_parser::parse_x509_certificate(&chain[0])
            .map_err(|e| refused(cert, format!("not an X.509 certificate: {e}")))?;
        let seconds = parsed.validity().not_after.timestamp();
        let not_after = UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
        if not_after < SystemTime::now() {
            return Err(refused(cert, format!("the client certificate expired at {}", utc(not_after))));
        }
        Ok(ClientIdentity { cert_pem, key_pem, chain, key: private, cert_path: cert.to_owned(), not_after })
    }
}

/// `time` as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn utc(time: SystemTime) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_gives_the_civil_date() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723)), "2000-02-29 01:02:03 UTC");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(1_796_256_000)), "2026-12-03 00:00:00 UTC");
    }

    #[test]
    fn a_garbage_certificate_or_a_fifo_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("ca.pem");
        std::fs::write(&garbage, "-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n").unwrap();
        let error = certificates(&garbage).unwrap_err().to_string();
        assert!(error.contains("ca.pem") && error.contains("certificate 1 is not an X.509 certificate"), "{error}");
        let error = certificates(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(error.contains("/dev/zero") && error.contains("not a regular file"), "{error}");
    }
}
