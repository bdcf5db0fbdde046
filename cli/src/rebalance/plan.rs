//! The plan of a `rebalance`: which keys of a server move, and where, read
//! off the diff of the two rings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use shardring::{MovedArc, Ring, Transition};

use crate::error::CliError;

/// Which keys of a server move, and where: the diff's arcs, sorted.
pub(super) struct Plan {
    pub(super) old: Arc<Ring>,
    pub(super) new: Arc<Ring>,
    /// The moved arcs in hash order (empty for jump and rendezvous, which
    /// have none: there the owners are compared).
    arcs: Vec<MovedArc>,
    /// The diff's moved share of the hash space.
    pub(super) predicted: f64,
    /// `--migrate`: the handoff mark the mover sets on each old owner
    /// (`Transition::handoff_mark`), the key clients' guards read.
    pub(super) mark: String,
    /// `--etcd`: set once the move lock is lost (its lease gone, etcd out
    /// of reach past its TTL, or its record deleted by hand:
    /// `MoveLock::lost`); from then on no key moves, since the membership
    /// may change under the move.
    pub(super) halt: Option<Arc<AtomicBool>>,
}

impl Plan {
    pub(super) fn new(old: Arc<Ring>, new: Arc<Ring>) -> Result<Plan, CliError> {
        let diff = old.diff(&new)?;
        let mut arcs = diff.arcs;
        arcs.sort_unstable_by_key(|a| a.start);
        let mark = Transition::between(&old, &new)?.handoff_mark();
        Ok(Plan { old, new, arcs, predicted: diff.moved_share, mark, halt: None })
    }

    /// Where `key`, held by `source`, must go: its new owner when that is
    /// another server. A key inside a moved arc leaving `source` takes the
    /// arc's destination; a key `source` holds without owning it (a stale
    /// copy) goes to its owner, unless `owned_only` (`--migrate`): there it
    /// stays where it is, since its owner's value is the live one and
    /// `MIGRATE ... REPLACE` would overwrite it with the stale copy.
    pub(super) fn target(&self, source: &str, key: &[u8], owned_only: bool) -> Option<String> {
        let hash = self.old.hash_key(key);
        if !self.arcs.is_empty() {
            let i = self.arcs.partition_point(|a| a.end < hash);
            if let Some(arc) = self.arcs.get(i).filter(|a| a.start <= hash && a.from == source) {
                return Some(arc.to.clone());
            }
            // Outside the arcs leaving `source`, a key it owns stays: only a stale copy would move.
            if owned_only {
                return None;
            }
        } else if owned_only && self.old.get(key).ok()?.id() != source {
            return None;
        }
        let owner = self.new.get(key).ok()?.id();
        (owner != source).then(|| owner.to_owned())
    }

    /// Whether the move lock was lost ([`Plan::halt`]).
    pub(super) fn halted(&self) -> bool {
        self.halt.as_ref().is_some_and(|halt| halt.load(Ordering::Acquire))
    }

    /// Every server that holds keys now: the old ring's nodes.
    pub(super) fn sources(&self) -> Vec<String> {
        self.old.nodes().iter().map(|n| n.id().to_owned()).collect()
    }
}
