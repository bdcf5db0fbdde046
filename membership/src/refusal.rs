//! [`Refusal`]: why etcd refused a client, read from the one-line error a
//! follower records or a member agent or admin returns ([`crate::etcd`]'s
//! `describe`, explained by [`EtcdAccess::explain`](crate::EtcdAccess)).
//! A refusal does not go away by waiting: the credentials, the TLS
//! settings or the roles have to change.

/// What etcd refused: the connection's TLS, the user's authentication, or
/// a permission of the user's roles. `Display`: `TLS`, `authentication`,
/// `permission`; [`Refusal::name`] gives the lowercase name the bindings
/// use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The TLS connection failed: etcd's certificate is not signed by the
    /// CA given, does not name the endpoint's host or has expired; etcd
    /// refused our client certificate (none given, from a CA it does not
    /// trust, expired) or ended the handshake with an alert; or one side
    /// speaks TLS and the other plain TCP (`https://` to a plain etcd, or
    /// `http://` to a TLS-only one).
    Tls,
    /// etcd's auth refused the user: a wrong user or password
    /// (`authentication failed, invalid user ID or password`), an auth
    /// token it no longer accepts, no user given to an etcd whose auth is
    /// enabled, or a user given to one whose auth is not.
    Authentication,
    /// The user authenticated, but its roles do not grant the read or
    /// write asked for (`etcdserver: permission denied`).
    Permission,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Tls => "TLS",
            Refusal::Authentication => "authentication",
            Refusal::Permission => "permission",
        })
    }
}

/// etcd's own messages (`etcdserver: ...`, its `rpctypes`) for a user its
/// auth refuses.
const AUTHENTICATION: [&str; 6] = [
    "authentication failed",
    "invalid user ID or password",
    "invalid auth token",
    "user name not found",
    "user name is empty",
    "authentication is not enabled",
];

/// etcd's messages for a request the user's roles do not allow. Matched
/// case-sensitively: the operating system's `Permission denied (os error
/// 13)` is no refusal by etcd.
const PERMISSION: [&str; 3] = ["permission denied", "role is not granted", "permission is not granted"];

/// The TLS layer's words (rustls, and the hints [`EtcdAccess::explain`]
/// adds), compared in lowercase: a certificate check that failed
/// (`invalid peer certificate: UnknownIssuer`, `NotValidForName`,
/// `Expired`), an alert, a handshake that ended, and one side speaking TLS
/// to the other's plain TCP.
///
/// [`EtcdAccess::explain`]: crate::EtcdAccess
const TLS: [&str; 9] = [
    "certificate",
    "fatal alert",
    "tls handshake",
    "ended the tls connection",
    "does not speak tls",
    "speaks tls only",
    "use an http:// endpoint",
    "use an https:// endpoint",
    "invalidcontenttype",
];

impl Refusal {
    /// The refusal `message` describes, if it is one: etcd's words for a
    /// permission denied or a failed authentication, or a TLS failure
    /// (see [`Refusal::Tls`]). `None` for every other failure, which may
    /// pass: no answer, a connection refused at the TCP level (no server
    /// listening), a timeout, a name that does not resolve.
    pub fn classify(message: &str) -> Option<Refusal> {
        if PERMISSION.iter().any(|w| message.contains(w)) {
            return Some(Refusal::Permission);
        }
        if AUTHENTICATION.iter().any(|w| message.contains(w)) {
            return Some(Refusal::Authentication);
        }
        let lower = message.to_lowercase();
        TLS.iter().any(|w| lower.contains(w)).then_some(Refusal::Tls)
    }

    /// The refusal's lowercase name, as the bindings give it: `"tls"`,
    /// `"authentication"`, `"permission"`.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::Tls => "tls",
            Refusal::Authentication => "authentication",
            Refusal::Permission => "permission",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::access::EtcdAccess;

    #[test]
    fn etcds_own_messages_are_authentication_and_permission() {
        let cases = [
            // py/tests/test_etcd_security.py, node/__test__/follower.test.mjs (a wrong password).
            ("etcdserver: authentication failed, invalid user ID or password", Refusal::Authentication),
            ("etcdserver: invalid auth token", Refusal::Authentication),
            ("etcdserver: user name not found", Refusal::Authentication),
            // No user given to an etcd with auth enabled.
            ("etcdserver: user name is empty", Refusal::Authentication),
            ("etcdserver: authentication is not enabled", Refusal::Authentication),
            // A follower role that may not read, a member that may not write another's record.
            ("etcdserver: permission denied", Refusal::Permission),
            ("etcdserver: role is not granted to the user", Refusal::Permission),
        ];
        for (message, refusal) in cases {
            assert_eq!(Refusal::classify(message), Some(refusal), "{message}");
        }
    }

    #[test]
    fn tls_failures_as_the_follower_records_them_are_tls() {
        let tls = EtcdAccess::new(&["https://127.0.0.1:2379"]);
        let plain = EtcdAccess::new(&["http://127.0.0.1:2379"]);
        let expired = tls.clone().with_expiry(PathBuf::from("/pki/expired.pem"), SystemTime::UNIX_EPOCH);
        let in_an_hour = SystemTime::now() + Duration::from_secs(3600);
        let other_ca = tls.clone().with_expiry(PathBuf::from("/pki/other.pem"), in_an_hour);
        let cases = [
            // A server from an unknown CA (the Node and Python tests), another host, an expired server.
            (&tls, "invalid peer certificate: UnknownIssuer"),
            (&tls, "invalid peer certificate: NotValidForName"),
            (&tls, "invalid peer certificate: Expired"),
            // No client certificate, another CA's, an expired one: etcd ends the connection.
            (&tls, "error trying to connect: connection closed via error"),
            (&expired, "h2 protocol error: broken pipe"),
            (&other_ca, "received fatal alert: BadCertificate"),
            (&tls, "received fatal alert: CertificateRequired"),
            // https:// to a plain etcd (ffi-c/tests/follower.c): closed, or reset.
            (&tls, "error trying to connect: tls handshake eof"),
            (&tls, "received corrupt message of type InvalidContentType"),
            (&tls, "Connection reset by peer (os error 104)"),
            // http:// to a TLS-only etcd (py/tests/test_etcd_security.py).
            (&plain, "h2 protocol error: connection closed"),
            (&plain, "Connection reset by peer (os error 104)"),
        ];
        for (access, message) in cases {
            let explained = access.explain(message.to_owned());
            assert_eq!(Refusal::classify(&explained), Some(Refusal::Tls), "{explained}");
        }
    }

    #[test]
    fn failures_that_may_pass_are_no_refusal() {
        let tls = EtcdAccess::new(&["https://127.0.0.1:2379"]);
        let plain = EtcdAccess::new(&["http://127.0.0.1:2379"]);
        let cases = [
            "transport error: Connection refused (os error 111)",
            "no answer within 3s",
            "range read of /p/ took longer than 3s",
            "keys-only read took longer than 3s",
            "watch not created within 3s",
            "etcd closed the watch",
            "dns error: failed to lookup address information: Name or service not known",
            "etcdserver: request timed out",
            "etcdserver: no leader",
            "Permission denied (os error 13)",
        ];
        for message in cases {
            for access in [&tls, &plain] {
                let explained = access.explain(message.to_owned());
                assert_eq!(Refusal::classify(&explained), None, "{explained}");
            }
        }
    }

    #[test]
    fn a_follower_timeout_after_a_refusal_and_an_admins_refusal_are_refused() {
        use crate::error::MembershipError;
        let timeout = |last_error: &str| MembershipError::Timeout {
            source_name: "etcd https://127.0.0.1:2379 /p".into(),
            waited: Duration::from_secs(2),
            last_error: last_error.into(),
        };
        let refused = timeout("etcdserver: authentication failed, invalid user ID or password").refused_if_so();
        let MembershipError::Refused { refusal: Refusal::Authentication, .. } = &refused else { panic!("{refused:?}") };
        assert_eq!(
            refused.to_string(),
            "etcd https://127.0.0.1:2379 /p refused this client (authentication): etcdserver: authentication failed, \
             invalid user ID or password"
        );
        let unreachable = timeout("transport error: Connection refused (os error 111)").refused_if_so();
        assert!(matches!(unreachable, MembershipError::Timeout { .. }), "{unreachable:?}");
        let endpoints = ["https://127.0.0.1:2379".to_owned()];
        let denied = MembershipError::etcd(&endpoints, "etcdserver: permission denied");
        assert!(matches!(denied, MembershipError::Refused { refusal: Refusal::Permission, .. }), "{denied:?}");
        assert_eq!(
            denied.to_string(),
            "etcd at https://127.0.0.1:2379 refused this client (permission): etcdserver: permission denied"
        );
        let silent = MembershipError::etcd(&endpoints, "no answer within 3s");
        assert_eq!(silent.to_string(), "etcd at https://127.0.0.1:2379: no answer within 3s");
    }

    #[test]
    fn names_and_display() {
        let all = [Refusal::Tls, Refusal::Authentication, Refusal::Permission];
        assert_eq!(all.map(Refusal::name), ["tls", "authentication", "permission"]);
        assert_eq!(all.map(|r| r.to_string()), ["TLS", "authentication", "permission"]);
    }
}
