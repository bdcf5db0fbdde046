//! Consistent hashing with bounded loads (Mirrokni, Thorup and
//! Zadimoghaddam, "Consistent Hashing with Bounded Loads", SODA 2018;
//! arXiv 1608.01350, 2016). Used by Vimeo's proxies and, as
//! `hash_balance_factor`, by Envoy's ring hash and Maglev balancers.
//!
//! A [`LoadTracker`] counts live assignments per node over a ring snapshot.
//! With balance factor `c = 1 + epsilon`, a node's capacity is
//! `max(1, ceil(c * (T + 1) * w / W))`, where `T` is the total load before
//! the request, `w` the node's weight and `W` the total weight of the nodes
//! that can own keys (a node that owns none, such as a ketama server whose
//! weight rounds to 0 points, counts as weight 0 and never gets a request). An acquire
//! walks the key's preference order (distinct nodes, as `get_n` lists them
//! but without the zones rule) and takes the first node under capacity.
//! The capacities sum to at least `c * (T + 1) > T`, so some node always
//! has room and the walk ends.
//!
//! [`LoadTracker::haproxy`] bounds loads as HAProxy's `hash-balance-factor F`
//! does on an `haproxy` ring (`src/lb_chash.c`, `chash_server_is_eligible`):
//! `F` percent of the average in integers, `tot = ((T + 1) * F + 99) / 100`
//! slots spread over the servers by their effective weights (`16 * weight`)
//! in declaration order, the remainder by cumulative weight, at least 1
//! each; a server takes the request while its load is below its slots. Both
//! accept below the capacity (Envoy's `hash_balance_factor` accepts at it,
//! and overflows in a pseudo-random order this crate does not reproduce).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use crate::error::RingError;
use crate::ring::Ring;

/// Where [`LoadTracker::acquire`] sent a request: the node now holding one
/// more unit of load, and how many distinct nodes were tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// Id of the node the request went to.
    pub id: Arc<str>,
    /// Index of that node in [`LoadTracker::ring`]`().nodes()` at the time of the acquire.
    pub index: usize,
    /// Distinct nodes tried, including the one taken (1 = the key's own owner).
    pub probes: u32,
}

/// One unit of load held on a node, given back when the lease is dropped or
/// [`Lease::release`]d, so a request that ends (or unwinds) cannot leak
/// load: the RAII form of Python's `with tracker.acquire(key)` and Node's
/// `lease.release()`. A caller that must release later by id (a C handle, a
/// lease kept in a map) calls [`Lease::detach`] and then
/// [`LoadTracker::release`] itself.
#[must_use = "dropping a Lease gives its load back at once; keep it while the request runs"]
#[derive(Debug)]
pub struct Lease<'t> {
    tracker: &'t LoadTracker,
    assignment: Option<Assignment>,
}

impl Lease<'_> {
    fn held(&self) -> &Assignment {
        self.assignment.as_ref().expect("a lease holds its assignment until consumed")
    }

    /// Id of the node the request went to.
    pub fn id(&self) -> &str {
        &self.held().id
    }

    /// Index of that node in [`LoadTracker::ring`]`().nodes()` at the time of the acquire.
    pub fn index(&self) -> usize {
        self.held().index
    }

    /// Distinct nodes tried, including the one taken (1 = the key's own owner).
    pub fn probes(&self) -> u32 {
        self.held().probes
    }

    /// Gives the load back now. Errors: [`RingError::UnknownNode`] when a
    /// [`LoadTracker::swap`] removed the node since (its load left with it).
    /// Dropping the lease does the same and ignores that error.
    pub fn release(mut self) -> Result<(), RingError> {
        let assignment = self.assignment.take().expect("a lease holds its assignment until consumed");
        self.tracker.release(&assignment.id)
    }

    /// Keeps the load held and returns where it is; the caller must call
    /// [`LoadTracker::release`] with its id once, later.
    pub fn detach(mut self) -> Assignment {
        self.assignment.take().expect("a lease holds its assignment until consumed")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(assignment) = self.assignment.take() {
            // UnknownNode: a swap removed the node, and its load with it.
            let _ = self.tracker.release(&assignment.id);
        }
    }
}

/// Live load per node over a ring snapshot, with bounded-load placement.
///
/// `Send + Sync`: acquires and releases from many threads only update
/// atomics under a shared read guard, so they never wait for each other;
/// [`LoadTracker::swap`] takes the guard exclusively and waits for calls
/// in flight. Deterministic: the same sequence of calls from one thread
/// gives the same assignments.
#[derive(Debug)]
pub struct LoadTracker {
    balance: f64,
    policy: Policy,
    state: RwLock<State>,
}

/// How capacities are computed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Policy {
    /// Mirrokni et al. with `c = balance`.
    Shares,
    /// HAProxy's `hash-balance-factor`, a percentage above 100.
    Haproxy(u32),
}

#[derive(Debug)]
struct State {
    ring: Arc<Ring>,
    ids: Vec<Arc<str>>,
    positions: HashMap<Arc<str>, usize>,
    /// Load per node, parallel to the ring's nodes.
    loads: Vec<AtomicU64>,
    /// Sum of `loads`, updated before them on acquire and after on release.
    total: AtomicU64,
    /// Per node, `weight / total weight` over the nodes that can own keys
    /// (0 for the others).
    shares: Vec<f64>,
    /// HAProxy's view, for [`LoadTracker::haproxy`]: per node its effective
    /// weight (`16 * weight`) and the sum of those before it, and their total.
    haproxy: Option<(Vec<(u32, u32)>, u32)>,
}

impl State {
    fn new(ring: Arc<Ring>, previous: Option<&State>, policy: Policy) -> State {
        let ids: Vec<Arc<str>> = ring.nodes().iter().map(|n| Arc::from(n.id())).collect();
        let positions = ids.iter().enumerate().map(|(i, id)| (id.clone(), i)).collect();
        let loads: Vec<AtomicU64> = ids
            .iter()
            .map(|id| {
                let carried = previous.and_then(|p| p.positions.get(id).map(|&i| p.loads[i].load(Ordering::Relaxed)));
                AtomicU64::new(carried.unwrap_or(0))
            })
            .collect();
        let total = AtomicU64::new(loads.iter().map(|l| l.load(Ordering::Relaxed)).sum());
        // Shares count only nodes a preference walk can reach: a weighted
        // node can own no keys (a tiny ketama weight rounds to 0 digests), and
        // capacity given to it could never be used, leaving too little for
        // the others (an acquire would then find no room, ever).
        let mut reachable = vec![false; ids.len()];
        if ring.live_node_count() > 0 {
            ring.walk_distinct(0, |node| {
                reachable[node] = true;
                false
            });
        }
        let weight_of = |(node, n): (usize, &crate::Node)| if reachable[node] { n.weight() } else { 0.0 };
        let weight: f64 = ring.nodes().iter().enumerate().map(weight_of).sum();
        let shares =
            ring.nodes().iter().enumerate().map(|n| if weight > 0.0 { weight_of(n) / weight } else { 0.0 }).collect();
        // HAProxy's effective weights (`16 * weight`, u32 as in HAProxy) and
        // their running sums in declaration order; any ring followed later
        // has its weights read the same way.
        let haproxy = matches!(policy, Policy::Haproxy(_)).then(|| {
            let mut cumulative = 0u32;
            let weights = ring
                .nodes()
                .iter()
                .map(|n| {
                    let effective = (n.weight() as u32).wrapping_mul(crate::compat::haproxy::NODES_PER_WEIGHT);
                    cumulative = cumulative.wrapping_add(effective);
                    (effective, cumulative.wrapping_sub(effective))
                })
                .collect();
            (weights, cumulative)
        });
        State { ring, ids, positions, loads, total, shares, haproxy }
    }
}

impl LoadTracker {
    /// A tracker with every load 0 and balance factor `1 + epsilon`.
    ///
    /// Errors: [`RingError::InvalidEpsilon`] unless `epsilon` is finite and
    /// `> 0` (the paper's `epsilon`; Envoy's `hash_balance_factor` 125 is
    /// epsilon 0.25).
    pub fn new(ring: Arc<Ring>, epsilon: f64) -> Result<LoadTracker, RingError> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(RingError::InvalidEpsilon { epsilon });
        }
        let policy = Policy::Shares;
        Ok(LoadTracker { balance: 1.0 + epsilon, policy, state: RwLock::new(State::new(ring, None, policy)) })
    }

    /// A tracker with every load 0 bounding loads as HAProxy's
    /// `hash-balance-factor` does (see the module docs), over an `haproxy`
    /// ring: the assignments HAProxy makes while that many requests are in
    /// flight on each server.
    ///
    /// Errors: [`RingError::InvalidConfig`] for a factor of 100 or less
    /// (HAProxy's "must be 0 or greater than 100"; 0 turns it off there) or
    /// a ring of another algorithm.
    pub fn haproxy(ring: Arc<Ring>, hash_balance_factor: u32) -> Result<LoadTracker, RingError> {
        if hash_balance_factor <= 100 {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "hash_balance_factor {hash_balance_factor} must be greater than 100 (a percentage of the average load)"
                ),
            });
        }
        if ring.algorithm() != crate::Algorithm::Haproxy {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "HAProxy's hash-balance-factor applies to algorithm \"haproxy\", not {:?}",
                    ring.algorithm().name()
                ),
            });
        }
        let policy = Policy::Haproxy(hash_balance_factor);
        Ok(LoadTracker {
            balance: f64::from(hash_balance_factor) / 100.0,
            policy,
            state: RwLock::new(State::new(ring, None, policy)),
        })
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the guard cannot leave the atomics half-updated.
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The balance factor `c = 1 + epsilon`.
    pub fn balance_factor(&self) -> f64 {
        self.balance
    }

    /// The ring snapshot loads are tracked over.
    pub fn ring(&self) -> Arc<Ring> {
        self.read().ring.clone()
    }

    /// Capacity of node `node` when the total load, this request included,
    /// is `total`: `max(1, ceil(c * total * share))`, or HAProxy's slots.
    fn capacity(&self, state: &State, total: u64, node: usize) -> u64 {
        match (self.policy, &state.haproxy) {
            // `chash_server_is_eligible`, in HAProxy's unsigned (u32) arithmetic.
            (Policy::Haproxy(factor), Some((weights, total_weight))) if *total_weight > 0 => {
                let slots = (total as u32).wrapping_mul(factor).wrapping_add(99) / 100;
                let (per_weight, rest) = (slots / total_weight, slots % total_weight);
                let (weight, before) = weights[node];
                let share = weight
                    .wrapping_mul(per_weight)
                    .wrapping_add(before.wrapping_add(weight).wrapping_mul(rest) / total_weight)
                    .wrapping_sub(before.wrapping_mul(rest) / total_weight);
                u64::from(share.max(1))
            }
            _ => ((self.balance * total as f64 * state.shares[node]).ceil() as u64).max(1),
        }
    }

    /// Assigns a request for `key` (bytes; a string is its UTF-8 bytes) to
    /// the first node in the key's preference order whose load is below its
    /// capacity, and adds one to that node's load until the returned
    /// [`Lease`] is dropped or released.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    pub fn acquire(&self, key: impl AsRef<[u8]>) -> Result<Lease<'_>, RingError> {
        let assignment = self.assign(key)?;
        Ok(Lease { tracker: self, assignment: Some(assignment) })
    }

    fn assign(&self, key: impl AsRef<[u8]>) -> Result<Assignment, RingError> {
        let state = self.read();
        if state.ring.live_node_count() == 0 {
            return Err(RingError::EmptyRing);
        }
        let hash = state.ring.hash_key(key);
        state.total.fetch_add(1, Ordering::AcqRel);
        loop {
            // The total now counts this request; capacities sum to more than
            // the loads already placed, so a pass finds room unless other
            // threads fill it first, and then the next pass sees their load.
            let total = state.total.load(Ordering::Acquire);
            let mut probes = 0u32;
            let mut found = None;
            state.ring.walk_distinct(hash, |node| {
                probes += 1;
                let cap = self.capacity(&state, total, node);
                let taken = state.loads[node]
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |load| (load < cap).then_some(load + 1));
                if taken.is_ok() {
                    found = Some(node);
                }
                found.is_some()
            });
            if let Some(index) = found {
                return Ok(Assignment { id: state.ids[index].clone(), index, probes });
            }
            // HAProxy gives up after a whole lap and takes the first node's
            // server (its slots can fall short once u32 arithmetic wraps).
            if let (Policy::Haproxy(_), Some(index)) = (self.policy, state.ring.first_owner()) {
                state.loads[index].fetch_add(1, Ordering::AcqRel);
                return Ok(Assignment { id: state.ids[index].clone(), index, probes });
            }
        }
    }

    /// Removes one unit of load from node `id`.
    ///
    /// Errors: [`RingError::UnknownNode`] when `id` is not in the current
    /// ring (for example after a swap removed it: its load left with it),
    /// [`RingError::NoLoad`] when its load is already 0.
    pub fn release(&self, id: &str) -> Result<(), RingError> {
        let state = self.read();
        let &index = state.positions.get(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })?;
        state.loads[index]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |load| load.checked_sub(1))
            .map_err(|_| RingError::NoLoad { id: id.to_owned() })?;
        state.total.fetch_sub(1, Ordering::AcqRel);
        Ok(())
    }

    /// Replaces the ring (typically with one derived from it). Nodes in both
    /// keep their load; nodes that left drop theirs; new nodes start at 0. A
    /// tracker built by [`LoadTracker::haproxy`] keeps HAProxy's slots, with
    /// the new ring's weights read as HAProxy weights.
    pub fn swap(&self, ring: Arc<Ring>) {
        let mut state = self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        let next = State::new(ring, Some(&state), self.policy);
        *state = next;
    }

    /// Moves onto `ring` unless it is already the snapshot tracked (the
    /// same `Arc`): [`LoadTracker::swap`] for a caller that holds a ring
    /// which changes in place (the bindings' `Ring`) and calls this before
    /// each use, so a tracker never routes to a node its ring has dropped.
    /// Costs one pointer comparison when nothing changed.
    pub fn follow(&self, ring: &Arc<Ring>) {
        if Arc::ptr_eq(&self.read().ring, ring) {
            return;
        }
        let mut state = self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !Arc::ptr_eq(&state.ring, ring) {
            let next = State::new(ring.clone(), Some(&state), self.policy);
            *state = next;
        }
    }

    /// Current load per node, parallel to [`LoadTracker::ring`]`().nodes()`.
    pub fn loads(&self) -> Vec<u64> {
        self.read().loads.iter().map(|l| l.load(Ordering::Acquire)).collect()
    }

    /// Sum of all loads.
    pub fn total_load(&self) -> u64 {
        self.read().total.load(Ordering::Acquire)
    }

    /// The capacity node `index` would have for the next request:
    /// `max(1, ceil(c * (total + 1) * weight / total weight))`; `None` when
    /// out of range.
    pub fn capacity_of(&self, index: usize) -> Option<u64> {
        let state = self.read();
        let total = state.total.load(Ordering::Acquire) + 1;
        (index < state.shares.len()).then(|| self.capacity(&state, total, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Node;

    fn ring(weights: &[f64]) -> Arc<Ring> {
        let nodes = weights.iter().enumerate().map(|(i, &w)| Node::new(format!("n{i}"), w));
        Arc::new(Ring::builder().nodes(nodes).build().unwrap())
    }

    #[test]
    fn one_hot_key_spills_in_preference_order() {
        let tracker = LoadTracker::new(ring(&[1.0; 4]), 0.25).unwrap();
        let ring = tracker.ring();
        let mut order = vec![0; 4];
        ring.get_n_indices("hot", &mut order).unwrap();
        let leases: Vec<Lease> = (0..100).map(|_| tracker.acquire("hot").unwrap()).collect();
        // Every request went to the first node of the preference list with room.
        assert_eq!(leases[0].index(), order[0]);
        assert_eq!(leases[0].probes(), 1);
        let loads = tracker.loads();
        assert_eq!(loads.iter().sum::<u64>(), 100);
        // ceil(1.25 * 100 / 4) = 32 at most per node.
        assert!(loads.iter().all(|&l| l <= 32), "{loads:?}");
        assert!(leases.iter().any(|l| l.probes() == 4));
        for lease in leases {
            lease.release().unwrap();
        }
        assert_eq!(tracker.total_load(), 0);
        assert!(matches!(tracker.release("n0"), Err(RingError::NoLoad { .. })));
        assert!(matches!(tracker.release("zz"), Err(RingError::UnknownNode { .. })));
    }

    #[test]
    fn haproxy_slots_follow_its_integer_formula() {
        let nodes = [("a", 1.0), ("b", 2.0), ("off", 0.0), ("c", 1.0)].map(|(id, w)| Node::new(id, w));
        let ring = Arc::new(Ring::builder().algorithm(crate::Algorithm::Haproxy).nodes(nodes).build().unwrap());
        let tracker = LoadTracker::haproxy(ring, 125).unwrap();
        assert_eq!(tracker.balance_factor(), 1.25);
        let leases: Vec<Lease> = (0..9).map(|i| tracker.acquire(format!("k{i}")).unwrap()).collect();
        // 9 in flight: ((9 + 1) * 125 + 99) / 100 = 13 slots over effective
        // weights 16, 32, 0, 16 (64): a gets 13 * 16 / 64 = 3, b 9 - 3 = 6, c 13 - 9 = 4.
        let slots: Vec<u64> = (0..4).map(|i| tracker.capacity_of(i).unwrap()).collect();
        assert_eq!(slots, [3, 6, 1, 4]);
        let loads = tracker.loads();
        assert_eq!(loads[2], 0, "weight 0 owns no node");
        assert!(loads.iter().zip(&slots).all(|(l, s)| l <= s), "{loads:?}");
        drop(leases);
        let ring = tracker.ring();
        for factor in [0, 100] {
            assert!(matches!(LoadTracker::haproxy(ring.clone(), factor), Err(RingError::InvalidConfig { .. })));
        }
        let other = Arc::new(Ring::builder().node("a", 1.0).build().unwrap());
        assert!(matches!(LoadTracker::haproxy(other, 125), Err(RingError::InvalidConfig { .. })));
    }

    #[test]
    fn a_lease_gives_its_load_back_when_dropped_released_or_unwound() {
        let tracker = LoadTracker::new(ring(&[1.0, 1.0]), 0.5).unwrap();
        {
            let lease = tracker.acquire("k").unwrap();
            assert_eq!(tracker.loads()[lease.index()], 1);
        }
        assert_eq!(tracker.total_load(), 0, "dropped");
        tracker.acquire("k").unwrap().release().unwrap();
        assert_eq!(tracker.total_load(), 0, "released");
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _lease = tracker.acquire("k").unwrap();
            panic!("the request failed");
        }));
        assert!(unwound.is_err());
        assert_eq!(tracker.total_load(), 0, "unwound");
        let kept = tracker.acquire("k").unwrap().detach();
        assert_eq!(tracker.total_load(), 1, "detached");
        tracker.release(&kept.id).unwrap();
        // A swap that removes the node takes its load; dropping the lease then is fine.
        let lease = tracker.acquire("k").unwrap();
        let without = tracker.ring().without_node(lease.id()).unwrap();
        tracker.swap(Arc::new(without));
        assert!(matches!(lease.release(), Err(RingError::UnknownNode { .. })));
    }

    #[test]
    fn following_a_ring_swaps_once_per_new_snapshot() {
        let first = ring(&[1.0, 1.0, 1.0]);
        let tracker = LoadTracker::new(first.clone(), 1.0).unwrap();
        let kept = (0..6).map(|i| tracker.acquire(format!("k{i}")).unwrap().detach()).collect::<Vec<_>>();
        tracker.follow(&first);
        assert!(Arc::ptr_eq(&tracker.ring(), &first), "the same snapshot is not a change");
        let second = Arc::new(first.without_node("n1").unwrap());
        tracker.follow(&second);
        assert!(Arc::ptr_eq(&tracker.ring(), &second));
        let held_elsewhere = kept.iter().filter(|a| &*a.id != "n1").count() as u64;
        assert_eq!(tracker.total_load(), held_elsewhere, "n1's load left with it");
        for _ in 0..50 {
            assert_ne!(tracker.acquire("k").unwrap().id(), "n1");
        }
    }

    #[test]
    fn epsilon_must_be_positive_and_finite() {
        for epsilon in [0.0, -0.5, f64::NAN, f64::INFINITY] {
            let err = LoadTracker::new(ring(&[1.0]), epsilon).unwrap_err();
            assert!(matches!(err, RingError::InvalidEpsilon { .. }), "{epsilon}");
        }
    }

    #[test]
    fn loads_carry_over_a_swap_by_id() {
        let tracker = LoadTracker::new(ring(&[1.0, 1.0, 1.0]), 1.0).unwrap();
        for i in 0..30 {
            tracker.acquire(format!("k{i}")).unwrap().detach();
        }
        let before = tracker.loads();
        let grown = tracker.ring().without_node("n0").unwrap().with_node(Node::new("n9", 1.0)).unwrap();
        tracker.swap(Arc::new(grown));
        assert_eq!(tracker.loads(), vec![before[1], before[2], 0]);
        assert_eq!(tracker.total_load(), before[1] + before[2]);
        assert!(matches!(tracker.release("n0"), Err(RingError::UnknownNode { .. })));
    }
}
