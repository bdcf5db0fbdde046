//! Member states and the read and write sets of a transition between two
//! rings: how a cluster adds or removes a node without a cold cache and
//! without losing writes (`core/SPEC.md`, *Transitions*).
//!
//! A member is **active**, **warming** (joining: it takes writes for the
//! keys it will own while a rebalancer copies them to it, but no reads yet)
//! or **draining** (leaving: it takes no writes, and serves reads as a
//! fallback until its keys are copied away). Three rings follow from the
//! states: the *read ring* of the active members, the *old ring* (active and
//! draining: where keys are now) and the *new ring* (active and warming:
//! where keys go). The handoff protocol of a moving key is in `handoff`.

pub mod handoff;

use std::collections::HashMap;
use std::sync::Arc;

use crate::analysis::RingDiff;
use crate::config::RingConfig;
use crate::error::RingError;
use crate::node::{Node, NodeState};
use crate::ring::Ring;
use handoff::Route;

/// A ring in transition: the read, old and new rings of its members'
/// states, and per key the nodes to read from and to write to.
///
/// - `read_nodes(key)`: the owner under the active members, then, when it
///   differs, the owner under the old ring (a draining member, or the owner
///   before a weight change) as a fallback.
/// - `write_nodes(key)`: the owner under the active members, then, when it
///   differs, the owner under the new ring (a warming member that will own
///   the key).
///
/// With every member active the three rings are one and both lists hold the
/// key's owner alone. `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Transition {
    /// Shared: with every member active, the three are one ring.
    read: Arc<Ring>,
    old: Arc<Ring>,
    new: Arc<Ring>,
    states: HashMap<String, NodeState>,
    fingerprint: u64,
}

impl Transition {
    /// The transition a config describes: each node's `state` (absent means
    /// active) decides which of the three rings it belongs to.
    ///
    /// Under `memento`, whose placement depends on the order of removals,
    /// the config is the ring holding every member, and the others follow
    /// by removals in Memento's own rule: the old ring removes the warming
    /// members, last listed first (undoing their joins), the new ring the
    /// draining ones in list order, and the read ring both (`core/SPEC.md`,
    /// *Transitions*).
    ///
    /// Errors: those of [`RingConfig::build`] for any of the three rings.
    pub fn from_config(config: &RingConfig) -> Result<Transition, RingError> {
        let states: HashMap<String, NodeState> =
            config.nodes.iter().map(|n| (n.id.clone(), n.state.unwrap_or_default())).collect();
        if config.params.algorithm.placement_has_history() {
            return Transition::by_removals(config, states);
        }
        let with = |keep: &dyn Fn(NodeState) -> bool| {
            let mut part = config.clone();
            part.nodes.retain(|n| keep(n.state.unwrap_or_default()));
            part.nodes.iter_mut().for_each(|n| n.state = None);
            part.build().map(Arc::new)
        };
        let read = with(&|s| s == NodeState::Active)?;
        let warming = states.values().any(|&s| s == NodeState::Warming);
        let draining = states.values().any(|&s| s == NodeState::Draining);
        let old = if draining { with(&|s| s != NodeState::Warming)? } else { Arc::clone(&read) };
        let new = if warming { with(&|s| s != NodeState::Draining)? } else { Arc::clone(&read) };
        Ok(Transition { read, old, new, states, fingerprint: config.fingerprint() })
    }

    /// The steady transition of a ring: every member active.
    pub fn steady(ring: Arc<Ring>) -> Transition {
        let states = ring.nodes().iter().map(|n| (n.id().to_owned(), NodeState::Active)).collect();
        let fingerprint = ring.fingerprint();
        Transition { read: Arc::clone(&ring), old: Arc::clone(&ring), new: ring, states, fingerprint }
    }

    /// The transition from `from` to `to` (one algorithm and seed): nodes
    /// only in `from` are draining, nodes only in `to` warming, nodes in
    /// both active with their weight and zone in `to`.
    ///
    /// Errors: [`RingError::AlgorithmMismatch`], [`RingError::SeedMismatch`],
    /// and those of [`RingConfig::build`].
    pub fn between(from: &Ring, to: &Ring) -> Result<Transition, RingError> {
        if from.algorithm() != to.algorithm() {
            return Err(RingError::AlgorithmMismatch { left: from.algorithm().name(), right: to.algorithm().name() });
        }
        if from.seed() != to.seed() {
            return Err(RingError::SeedMismatch { left: from.seed(), right: to.seed() });
        }
        if from.algorithm().placement_has_history() {
            return Ok(Transition::between_histories(from, to));
        }
        let mut config = to.to_config();
        for node in &mut config.nodes {
            if from.position(&node.id).is_none() {
                node.state = Some(NodeState::Warming);
            }
        }
        let before = from.to_config();
        for node in before.nodes {
            if to.position(&node.id).is_none() {
                config.nodes.push(crate::NodeConfig { state: Some(NodeState::Draining), ..node });
            }
        }
        let mut transition = Transition::from_config(&config)?;
        // The old ring is `from` itself: weights before the change, its
        // slots, nginx's down marks. Where that is another ring than the
        // config's own old ring, the config alone does not say how the
        // transition answers, so its fingerprint takes in `from`'s.
        if from.fingerprint() != transition.old.fingerprint() {
            transition.fingerprint = combined(from.fingerprint(), transition.fingerprint);
        }
        transition.old = Arc::new(from.clone());
        Ok(transition)
    }

    /// [`Transition::between`] for an algorithm whose placement depends on
    /// the order of removals: the old ring is `from`, the new ring `to`, and
    /// the read ring `from` without the leaving members, in its order. The
    /// fingerprint is XXH3-64 of `shardring-transition` and both rings'
    /// fingerprints (u64 little-endian each); between two equal rings it
    /// is the steady transition of `to`, with the ring's fingerprint.
    fn between_histories(from: &Ring, to: &Ring) -> Transition {
        if from.fingerprint() == to.fingerprint() {
            return Transition::steady(Arc::new(to.clone()));
        }
        let leaving: Vec<&str> = from.nodes().iter().map(|n| n.id()).filter(|id| to.position(id).is_none()).collect();
        let mut states: HashMap<String, NodeState> =
            to.nodes().iter().map(|n| (n.id().to_owned(), NodeState::Active)).collect();
        for node in to.nodes().iter().filter(|n| from.position(n.id()).is_none()) {
            states.insert(node.id().to_owned(), NodeState::Warming);
        }
        leaving.iter().for_each(|&id| _ = states.insert(id.to_owned(), NodeState::Draining));
        let read = Arc::new(without(from, &leaving).expect("every leaving member is in `from`"));
        Transition {
            read,
            old: Arc::new(from.clone()),
            new: Arc::new(to.clone()),
            states,
            fingerprint: combined(from.fingerprint(), to.fingerprint()),
        }
    }

    /// [`Transition::from_config`] for an algorithm whose placement depends
    /// on the order of removals.
    fn by_removals(config: &RingConfig, states: HashMap<String, NodeState>) -> Result<Transition, RingError> {
        let mut all = config.clone();
        all.nodes.iter_mut().for_each(|n| n.state = None);
        let all = all.build()?;
        let members = |state: NodeState| -> Vec<&str> {
            config.nodes.iter().filter(|n| n.state.unwrap_or_default() == state).map(|n| n.id.as_str()).collect()
        };
        let mut warming = members(NodeState::Warming);
        warming.reverse();
        let draining = members(NodeState::Draining);
        let old = without(&all, &warming)?;
        let read = Arc::new(without(&old, &draining)?);
        // With no one leaving the old ring is the read ring; with no one joining, the new one is.
        let old = if draining.is_empty() { Arc::clone(&read) } else { Arc::new(old) };
        let new = if warming.is_empty() { Arc::clone(&read) } else { Arc::new(without(&all, &draining)?) };
        Ok(Transition { read, old, new, states, fingerprint: config.fingerprint() })
    }

    /// The ring of the active members: where keys are read first.
    pub fn read_ring(&self) -> &Arc<Ring> {
        &self.read
    }

    /// The ring of the active and draining members: where keys are now.
    pub fn old_ring(&self) -> &Arc<Ring> {
        &self.old
    }

    /// The ring of the active and warming members: where keys go.
    pub fn new_ring(&self) -> &Arc<Ring> {
        &self.new
    }

    /// A member's state; `None` for an id not in the transition.
    pub fn state(&self, id: &str) -> Option<NodeState> {
        self.states.get(id).copied()
    }

    /// Whether every member is active and keys read from where they are:
    /// the three rings are one (a transition between rings that differ only
    /// in weights, or in nginx's down marks, is not steady: its keys move).
    pub fn is_steady(&self) -> bool {
        self.states.values().all(|&s| s == NodeState::Active) && self.old.fingerprint() == self.read.fingerprint()
    }

    /// The fingerprint of the config with its states (see
    /// [`RingConfig::fingerprint`]): equal for two transitions that answer
    /// every key alike.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The nodes to read `key` from, in order: its owner under the active
    /// members, then the owner under the old ring when that differs.
    ///
    /// Errors: [`RingError::EmptyRing`] when no active member can own keys.
    pub fn read_nodes(&self, key: impl AsRef<[u8]>) -> Result<Vec<&Node>, RingError> {
        Self::pair(&self.read, &self.old, key.as_ref())
    }

    /// The nodes to write `key` to: its owner under the active members, then
    /// the owner under the new ring when that differs.
    ///
    /// Errors: [`RingError::EmptyRing`] when no active member can own keys.
    pub fn write_nodes(&self, key: impl AsRef<[u8]>) -> Result<Vec<&Node>, RingError> {
        Self::pair(&self.read, &self.new, key.as_ref())
    }

    fn pair<'r>(first: &'r Ring, second: &'r Ring, key: &[u8]) -> Result<Vec<&'r Node>, RingError> {
        let owner = first.get(key)?;
        let mut nodes = vec![owner];
        if let Ok(other) = second.get_uncounted(key)
            && other.id() != owner.id()
        {
            nodes.push(other);
        }
        Ok(nodes)
    }

    /// Where `key` is and where it goes: its owner under the old ring and
    /// under the new ring ([`Route::is_moving`] when they differ). The
    /// handoff protocol sends a moving key's commands through
    /// [`crate::transition::handoff::REDIS_GUARD`] on the old owner, then to the new one
    /// (`core/SPEC.md`, *Handoff*). When one of the two rings has no node
    /// that can own keys (every member joining, or every member leaving),
    /// both fields are the other ring's owner and the key does not move.
    ///
    /// Errors: [`RingError::EmptyRing`] when neither ring can own keys.
    pub fn route(&self, key: impl AsRef<[u8]>) -> Result<Route<'_>, RingError> {
        let key = key.as_ref();
        match (self.old.get(key), self.new.get_uncounted(key)) {
            (Ok(old), Ok(new)) => Ok(Route { old, new }),
            (Ok(only), Err(_)) => Ok(Route { old: only, new: only }),
            // No old owner: the call counts the new one.
            (Err(_), Ok(_)) => self.new.get(key).map(|only| Route { old: only, new: only }),
            (Err(error), Err(_)) => Err(error),
        }
    }

    /// The distinct rings: the read ring, then the old and the new ring
    /// where they are other rings.
    pub(crate) fn rings(&self) -> Vec<&Arc<Ring>> {
        let mut rings = vec![&self.read];
        if !Arc::ptr_eq(&self.old, &self.read) {
            rings.push(&self.old);
        }
        if !Arc::ptr_eq(&self.new, &self.read) && !Arc::ptr_eq(&self.new, &self.old) {
            rings.push(&self.new);
        }
        rings
    }

    /// This transition with `change` applied to each of its distinct rings
    /// (in [`Transition::rings`]'s order), sharing them as before; a ring
    /// held elsewhere too is copied first.
    pub(crate) fn map_rings(self, mut change: impl FnMut(&mut Ring)) -> Transition {
        let Transition { read, old, new, states, fingerprint } = self;
        let old_is_read = Arc::ptr_eq(&old, &read);
        let new_is = if Arc::ptr_eq(&new, &read) {
            Some(0)
        } else if Arc::ptr_eq(&new, &old) {
            Some(1)
        } else {
            None
        };
        let mut changed = |ring: Arc<Ring>| {
            let mut ring = Arc::try_unwrap(ring).unwrap_or_else(|shared| (*shared).clone());
            change(&mut ring);
            Arc::new(ring)
        };
        let old = (!old_is_read).then_some(old);
        let new = new_is.is_none().then_some(new);
        let read = changed(read);
        let old = old.map_or_else(|| Arc::clone(&read), &mut changed);
        let new = match new_is {
            Some(0) => Arc::clone(&read),
            Some(_) => Arc::clone(&old),
            None => new.map_or_else(|| Arc::clone(&read), &mut changed),
        };
        Transition { read, old, new, states, fingerprint }
    }

    /// The name of the mark key of this transition's handoff:
    /// `shardring:handoff:` and the fingerprint as 16 lowercase hex digits
    /// (34 bytes). The mover sets it on each old owner before it moves
    /// keys; from then on the guard ([`crate::transition::handoff::REDIS_GUARD`]) counts
    /// a key missing there as moved (`core/SPEC.md`, *Handoff*).
    pub fn handoff_mark(&self) -> String {
        format!("{}{:016x}", crate::transition::handoff::MARK_PREFIX, self.fingerprint)
    }

    /// What the rebalancer copies: the old ring's difference to the new one,
    /// arcs included (see [`Ring::diff`]).
    ///
    /// Errors: those of [`Ring::diff`].
    pub fn moves(&self) -> Result<RingDiff, RingError> {
        self.old.diff(&self.new)
    }
}

/// `ring` with the nodes `ids` removed in turn.
fn without(ring: &Ring, ids: &[&str]) -> Result<Ring, RingError> {
    ids.iter().try_fold(ring.clone(), |ring, id| ring.without_node(id))
}

/// XXH3-64 (seed 0) of `shardring-transition` and two fingerprints (u64
/// little-endian each): the fingerprint of a transition from a ring that its
/// config does not describe.
fn combined(from: u64, to: u64) -> u64 {
    let mut bytes = b"shardring-transition".to_vec();
    bytes.extend_from_slice(&from.to_le_bytes());
    bytes.extend_from_slice(&to.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

impl crate::traffic::counts::LookupCounter {
    /// `transition`, its three rings counting into this counter through one
    /// table (see the type's doc for which lookups count).
    pub fn count_transition(&self, transition: Transition) -> Transition {
        let mut ids: Vec<String> = Vec::new();
        for ring in transition.rings() {
            for node in ring.nodes() {
                if !ids.iter().any(|id| id == node.id()) {
                    ids.push(node.id().to_owned());
                }
            }
        }
        let cells = |ring: &Ring| -> Arc<[u32]> {
            ring.nodes().iter().map(|n| ids.iter().position(|id| id == n.id()).unwrap_or(0) as u32).collect()
        };
        let cell_maps: Vec<Arc<[u32]>> = transition.rings().iter().map(|r| cells(r)).collect();
        let table = self.table(ids);
        let mut maps = cell_maps.into_iter();
        transition.map_rings(|ring| {
            let cell_of = maps.next().unwrap_or_else(|| Arc::from(Vec::new()));
            ring.set_counts(Some(crate::traffic::counts::RingCounts::new(Arc::clone(&table), cell_of)));
        })
    }
}

impl crate::traffic::hot_keys::HotKeys {
    /// `transition`, each of its rings watched by this sketch (see
    /// [`crate::HotKeys::watch`]): each call by key observes the key once.
    pub fn watch_transition(self: &Arc<Self>, transition: Transition) -> Transition {
        transition.map_rings(|ring| ring.set_hot(Some(Arc::clone(self))))
    }
}
