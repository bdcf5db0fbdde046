//! The errors of membership operations.

use std::time::Duration;

use shardring::RingError;

use crate::refusal::Refusal;

/// Why a membership operation failed. Every variant names the endpoint, key
/// or value concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MembershipError {
    /// An empty prefix (every ring needs its own prefix, such as `/shardring/cache`).
    #[error("invalid prefix {prefix:?}: a ring's prefix must be a non-empty key such as /shardring/cache")]
    InvalidPrefix {
        /// The prefix given.
        prefix: String,
    },

    /// An empty endpoint list, or an endpoint that is not `http://host:port`
    /// or `host:port`.
    #[error("invalid etcd endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A user name etcd cannot have (empty).
    #[error("invalid etcd user {user:?}: {reason}")]
    InvalidUser {
        /// The user given.
        user: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A password or private key file that cannot be used (readable by group
    /// or others, unreadable, empty), named, never its content.
    #[error(transparent)]
    Secret(#[from] crate::secret::SecretError),

    /// etcd did not answer, or answered with an error.
    #[error("etcd at {endpoints}: {message}")]
    Etcd {
        /// The endpoints tried, comma-separated.
        endpoints: String,
        /// The client's error.
        message: String,
    },

    /// etcd refused this client, and waiting will not change that: a TLS
    /// failure (a certificate, a handshake, TLS against plain TCP), a
    /// wrong user or password, or a role without the permission asked for.
    /// A follower gives it instead of [`MembershipError::Timeout`] when the
    /// last error before its initial timeout was a refusal; a member agent
    /// or an admin instead of [`MembershipError::Etcd`].
    #[error("{source_name} refused this client ({refusal}): {message}")]
    Refused {
        /// The etcd endpoints (and, for a follower, the prefix).
        source_name: String,
        /// What was refused.
        refusal: Refusal,
        /// etcd's or the TLS layer's words, with what they mean
        /// (the endpoint, the TLS reason); never a password.
        message: String,
    },

    /// The first ring could not be read within the time allowed.
    #[error("no ring from {source_name} within {waited:?}: {last_error}")]
    Timeout {
        /// The etcd endpoints or the file.
        source_name: String,
        /// How long the follower waited.
        waited: Duration,
        /// The last error seen, if any.
        last_error: String,
    },

    /// A record, or the ring the records describe, is invalid.
    #[error("{key}: {error}")]
    Record {
        /// The etcd key or file path.
        key: String,
        /// The core's error.
        error: RingError,
    },

    /// A follower's [`ClientReport`](crate::ClientReport) has a bad client
    /// id or interval (the message names it).
    #[error("{0}")]
    InvalidClientReport(String),

    /// A follower's [`shardring::HotKeysOptions`] are out of range (the
    /// message names the setting).
    #[error("hot keys: {0}")]
    InvalidHotKeys(String),

    /// A member id given to an operation is empty or has no record.
    #[error("no member {id:?} under {prefix}")]
    UnknownMember {
        /// The id.
        id: String,
        /// The ring's prefix.
        prefix: String,
    },

    /// A member record changed between reading and writing it.
    #[error("member {id:?} changed while it was being updated; try again")]
    Conflict {
        /// The id.
        id: String,
    },

    /// A membership write refused because a move of a transition's keys is
    /// under way or unfinished ([`crate::MoveLock`] at `P/move`): a member
    /// made active, added, removed or reweighted now would send moving
    /// keys' commands where the mover does not move them. A rebalancer
    /// (`shardring rebalance --etcd`) ends the move; a move whose mover
    /// died stays until one runs again, or an operator abandons it
    /// ([`crate::Admin::abandon_move`]).
    #[error(
        "a move is in progress under {prefix} (recorded at {prefix}/move since revision {revision}); \
         the membership cannot change until `shardring rebalance --etcd` finishes that move, or \
         `shardring member abandon-move` abandons it"
    )]
    MoveInProgress {
        /// The ring's prefix.
        prefix: String,
        /// The etcd revision the move began at.
        revision: i64,
    },

    /// An unfinished move cannot be abandoned while its rebalancer lives
    /// (`P/mover` exists, under the rebalancer's lease).
    #[error(
        "a rebalancer is moving keys under {prefix} (it holds {prefix}/mover since revision {revision}{}): stop it \
         first; {prefix}/mover goes within 10 s of its end (one written by hand with no lease stays until deleted)",
        holder.as_ref().map_or(String::new(), |holder| format!(": {holder}"))
    )]
    MoverLives {
        /// The ring's prefix.
        prefix: String,
        /// The etcd revision the mover took the move at.
        revision: i64,
        /// The rebalancer, as its `P/mover` names it (`process 4242 on
        /// "host-a"`); `None` for a record that names none.
        holder: Option<String>,
    },

    /// The members or config changed since a mover read them (or its lock
    /// was lost): its plan is stale, so it neither takes the lock nor makes
    /// its members active.
    #[error("the membership under {prefix} changed during the move; its plan is stale")]
    MembershipChanged {
        /// The ring's prefix.
        prefix: String,
    },

    /// The ring's config file could not be read (missing, a directory, no
    /// permission), or the core refused its config (not UTF-8, a byte-order
    /// mark, bad JSON, a value the algorithm refuses).
    #[error("{path}: {message}")]
    File {
        /// The path.
        path: String,
        /// Why: the I/O error, or the core's error naming the field, value,
        /// or byte and position.
        message: String,
    },

    /// The follower or member was stopped.
    #[error("stopped")]
    Stopped,
}

impl MembershipError {
    /// etcd's error `error` for a member agent or admin: [`MembershipError::Refused`]
    /// when it is a refusal, else [`MembershipError::Etcd`].
    pub(crate) fn etcd(endpoints: &[String], error: impl std::fmt::Display) -> MembershipError {
        let (endpoints, message) = (endpoints.join(","), error.to_string());
        match Refusal::classify(&message) {
            Some(refusal) => MembershipError::Refused { source_name: format!("etcd at {endpoints}"), refusal, message },
            None => MembershipError::Etcd { endpoints, message },
        }
    }

    /// A follower's initial timeout as [`MembershipError::Refused`] when
    /// the last error it saw was a refusal; any other error as it is.
    pub(crate) fn refused_if_so(self) -> MembershipError {
        match self {
            MembershipError::Timeout { source_name, waited, last_error } => match Refusal::classify(&last_error) {
                Some(refusal) => MembershipError::Refused { source_name, refusal, message: last_error },
                None => MembershipError::Timeout { source_name, waited, last_error },
            },
            other => other,
        }
    }
}
