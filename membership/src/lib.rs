#![warn(missing_docs)]
#![forbid(unsafe_code)]
//! # shardring-membership
//!
//! A shardring ring across a fleet: members register in **etcd** under a
//! lease, and every application server runs a [`Follower`] that keeps the
//! ring of those members current, so all of them converge on the same ring
//! (the same fingerprint) and know which etcd revision (epoch) they hold.
//! The same follower also runs over a local JSON config file, so a single
//! machine needs no server. The placement engine (`shardring`) stays free
//! of I/O; this crate adds the I/O around it.
//!
//! Layout in etcd under a prefix `P` (`core/SPEC.md`, *Membership in etcd*):
//! `P/config` holds the ring parameters, `P/members/<id>` one JSON record per
//! member (`{"weight": 1.0, "zone": "a", "state": "active"}`) bound to the
//! member's lease. The ring at a revision is a pure function of the records
//! at that revision ([`Records`]).
//!
//! ```no_run
//! use std::time::Duration;
//! use shardring_membership::{Follower, FollowerOptions, Member, MemberRecord};
//!
//! let endpoints = ["http://127.0.0.1:2379"];
//! // On each cache server:
//! let member = Member::join(&endpoints, "/shardring/cache", "10.0.0.1:11211", MemberRecord::new(1.0), Duration::from_secs(5))?;
//! // On each application server:
//! let follower = Follower::etcd(&endpoints, "/shardring/cache", FollowerOptions::default())?;
//! let owner = follower.ring().get("user:42")?.id().to_owned();
//! println!("{owner} at revision {}", follower.revision());
//! member.leave();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A secured etcd ([`EtcdAccess`], `docs/security.md`): TLS with a CA and
//! a client certificate, and an etcd user whose password comes from an
//! owner-only file; the token is renewed when etcd says it expired.
//!
//! ```no_run
//! use shardring_membership::{EtcdAccess, Follower, FollowerOptions, Secret};
//!
//! let access = EtcdAccess::new(&["https://10.0.0.5:2379"])
//!     .with_ca_file("/etc/shardring/etcd-ca.pem")?
//!     .with_client_cert("/etc/shardring/client.pem", "/etc/shardring/client.key")?
//!     .with_user("cache-follower", Secret::from_file("/run/secrets/etcd-password")?)?;
//! let follower = Follower::etcd(access, "/shardring/cache", FollowerOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod access;
mod error;
mod etcd;
mod file;
mod fleet;
mod follower;
mod member;
mod move_lock;
pub mod metrics;
pub mod pem;
mod records;
mod refusal;
mod report;
mod secret;
mod state;

pub use access::{EtcdAccess, EtcdCredentials};
pub use error::MembershipError;
pub use fleet::{ClientEntry, ClientStanding, FleetView, Verdict};
pub use follower::{Follower, FollowerOptions};
pub use member::{Admin, Member, MemberEntry, MemberState as AgentState};
pub use move_lock::{LeftMove, MoveLock, UnfinishedMove};
pub use records::{Change, KeyKind, Layout, MemberRecord, ParamsRecord, Records, Rejected};
pub use refusal::Refusal;
pub use report::{CLIENT_FORMAT, ClientRecord, ClientReport, MIN_REPORTED_REQUESTS};
pub use secret::{MAX_FILE_BYTES, Secret, SecretError, read_bounded, read_private};
pub use shardring::NodeState;
pub use state::{Epoch, EpochHook, Event, Hook, Status};
