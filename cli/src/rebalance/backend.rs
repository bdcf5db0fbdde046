//! What the rebalancer asks of a key-value store (memcached, Redis): list
//! a server's keys, copy keys between two servers without overwriting,
//! delete a moved key's old copy once its new owner holds it, and (Redis)
//! move keys atomically for the handoff protocol.

/// One key of a server, with what the backend knows of it.
pub(crate) struct Key {
    /// The key's bytes.
    pub(crate) bytes: Vec<u8>,
    /// Absolute expiry, Unix seconds (memcached's metadump `exp`); `None`: never or unknown.
    pub(crate) expiry: Option<i64>,
    /// Size in bytes when the listing gives it (memcached), else 0.
    pub(crate) size: u64,
}

/// What one copy did.
pub(crate) enum Outcome {
    /// Written to the target.
    Copied {
        /// Bytes of the value (memcached) or of its DUMP (Redis).
        bytes: u64,
    },
    /// The target holds the key already (a dual write, or an earlier copy).
    Present,
    /// The source no longer holds it (expired or deleted meanwhile).
    Gone,
    /// The source's value changed while it was copied (memcached: its CAS
    /// moved), so the copy on the target was deleted again: a miss there,
    /// never a stale value.
    Changed,
}

/// What deleting a moved key's old copy did.
pub(crate) enum Deletion {
    /// Deleted from the source (or already gone there).
    Deleted,
    /// Left on the source: the target does not hold the key.
    Missing,
}

/// Which server of a copy failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    Source,
    Target,
}

/// A server that failed (unreachable, or an error answer), and the message
/// naming its address.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) side: Side,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn source(message: impl Into<String>) -> Failure {
        Failure { side: Side::Source, message: message.into() }
    }

    pub(crate) fn target(message: impl Into<String>) -> Failure {
        Failure { side: Side::Target, message: message.into() }
    }
}

/// A key-value store the rebalancer copies between; servers are named by
/// their addresses (`host:port`).
pub(crate) trait Backend {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// What identifies the server process at `server` whatever address
    /// reaches it (Redis's `run_id`), or `None` when the backend has no
    /// such thing (memcached).
    fn identity(&mut self, server: &str) -> Result<Option<String>, Failure>;
    /// Every key `server` holds (a failure is the source's).
    fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure>;
    /// Copies `keys` from `source` to `target`, never overwriting a value
    /// there; one outcome per key, in order.
    fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure>;
    /// Which of `keys` `server` holds, one answer per key in order, read
    /// without their values (Redis pipelined `EXISTS`, memcached pipelined
    /// `mg`); a failure is the target's (a resumed run asks a key's new
    /// owner).
    fn held(&mut self, server: &str, keys: &[&Key]) -> Result<Vec<bool>, Failure>;
    /// Deletes each of `keys` from `source` once `target` is seen to hold it
    /// (a move); one outcome per key, in order.
    fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure>;
    /// Moves `keys` from `source` to `target` atomically per key (the
    /// handoff protocol's mover, `--migrate`): a key leaves the source as it
    /// lands on the target, replacing what the target holds (a leftover of
    /// an interrupted move: clients of the protocol write a key's new owner
    /// only once its old owner lacks it). The source's `mark` holds the keys
    /// in doubt while the move runs, and keeps them when it fails
    /// ([`Backend::doubts`]). One outcome per key, in order:
    /// [`Outcome::Copied`] moved, [`Outcome::Gone`] not on the source.
    fn migrate(&mut self, source: &str, target: &str, mark: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
        let _ = (target, mark, keys);
        Err(Failure::source(format!("{source}: the {} backend cannot migrate keys atomically", self.name())))
    }
    /// One page of `server`'s keys from `cursor` (0 starts a listing): the
    /// next cursor (0 when the listing is complete) and the keys. A key
    /// present for the whole listing is in some page (Redis `SCAN`). Handoff
    /// marks are not keys; with `mark` (a move under the handoff protocol,
    /// whose mark it is), the marks of other transitions the page holds are
    /// deleted. By default the whole listing is one page.
    fn page(&mut self, server: &str, cursor: u64, mark: Option<&str>) -> Result<(u64, Vec<Key>), Failure> {
        let _ = mark;
        if cursor != 0 {
            return Err(Failure::source(format!("{server}: the {} backend lists keys in one piece", self.name())));
        }
        Ok((0, self.keys(server)?))
    }
    /// Sets the handoff mark `mark` on `server` (the handoff protocol's
    /// first step of a move; the move's listings delete the marks of other
    /// transitions, [`Backend::page`]).
    fn mark(&mut self, server: &str, mark: &str) -> Result<(), Failure> {
        let _ = mark;
        Err(Failure::source(format!("{server}: the {} backend has no handoff mark", self.name())))
    }
    /// Of the keys `mark` on `source` holds in doubt (a [`Backend::migrate`]
    /// that failed: the target may hold a copy), those a client deleted on
    /// `source` since, so a copy on the target is stale; clients' guards
    /// hold them back until [`Backend::drop_doubts`]. The doubt of a key
    /// the source no longer holds otherwise (moved, or expired) ends here,
    /// except on a source that evicts keys, where it is returned too
    /// (evicted and moved look alike: a miss beats a stale value).
    fn doubts(&mut self, source: &str, mark: &str) -> Result<Vec<Key>, Failure> {
        let _ = mark;
        Err(Failure::source(format!("{source}: the {} backend has no handoff mark", self.name())))
    }
    /// Deletes `keys` (from [`Backend::doubts`]) on `target`, then ends their
    /// doubt in `source`'s `mark`: the guard sends them to `target` again.
    /// `None`: keys this transition does not move (no `MIGRATE` of this
    /// mover's put them in doubt): only their doubt ends, and nothing is
    /// deleted anywhere.
    fn drop_doubts(&mut self, source: &str, target: Option<&str>, mark: &str, keys: &[&Key]) -> Result<(), Failure> {
        let _ = (target, mark, keys);
        Err(Failure::source(format!("{source}: the {} backend has no handoff mark", self.name())))
    }
}
