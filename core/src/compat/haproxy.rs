//! HAProxy's `hash-type consistent` (`haproxy`), bit-exact with HAProxy
//! 2.6's `src/lb_chash.c`, `src/hash.c` and `include/haproxy/intops.h` (and
//! the later server keys, named after the versions that have them); rules
//! in `core/SPEC.md` (*haproxy*), sources in `docs/algorithms.md`. Checked
//! against a real HAProxy in `py/tests/test_peer_haproxy.py`.
//!
//! Node ids are server names, in declaration order; a server's `id` (its
//! puid) is given per node or assigned as HAProxy assigns them. A server of
//! weight `w` (0 to 256) has `16 * w` nodes, node `j` at
//! `full_hash(server_key + j)`, with `server_key = puid * 4096` (HAProxy 2.6,
//! `hash-key id`). A request hash is the request hash function of the key
//! bytes (`sdbm`, `djb2`, `wt6`, `crc32`), then `full_hash` with
//! `avalanche`; it goes to the CLOSEST node, not the next one: between the
//! node before it and the first node at or after it, the nearer in u32
//! distance, a tie going to the one before. The preference list walks on
//! from that node in key order, as HAProxy steps past a server it avoids.

use crate::error::RingError;
use crate::hash::{HashFunction, KeyRule, full_hash};
use crate::node::Node;
use crate::params::{Param, Params, RingParams, ServerKey};
use crate::scheme::{Change, Facts, Lookup, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{MAX_POINTS, too_many};

/// HAProxy's nodes per unit of weight (`BE_WEIGHT_SCALE`).
pub const NODES_PER_WEIGHT: u32 = 16;

/// HAProxy's largest server weight (`SRV_UWGHT_MAX`).
pub const MAX_WEIGHT: u32 = 256;

/// The `haproxy` algorithm.
pub(crate) struct Haproxy;

static FACTS: Facts = Facts {
    hash_bits: 32,
    // Auto-assigned ids are positions, and equal node keys keep declaration order.
    order_places_keys: true,
    takes: &[Param::HashFunction, Param::Avalanche, Param::ServerKey, Param::ServerPuids],
    ..Facts::DEFAULT
};

const WEIGHT_RULE: &str = "HAProxy server weights are whole numbers from 0 to 256; 0 drains the server";

const SET_WEIGHT_RULE: &str = "HAProxy's `set weight` would put this server's re-inserted nodes after the equal node \
     keys of a server declared after it (under server_key id, a server whose id is equal modulo 2^20), which a ring \
     of this configuration orders the other way; reload HAProxy's configuration and build the ring afresh instead";

impl Scheme for Haproxy {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    /// `hash-type consistent` alone is `sdbm` with `avalanche`; a function
    /// given without `avalanche` is used raw.
    ///
    /// Errors: [`RingError::InvalidConfig`] for a hash function HAProxy's
    /// request hashing does not have (`xx_hash`, `murmur_hash_2`).
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let function = given.hash_function.unwrap_or(HashFunction::Sdbm);
        if matches!(function, HashFunction::XxHash | HashFunction::MurmurHash2) {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "hash_function {:?} does not apply to algorithm \"haproxy\": HAProxy's are sdbm, djb2, wt6 and crc32",
                    function.name()
                ),
            });
        }
        let avalanche = given.avalanche.unwrap_or(given.hash_function.is_none());
        Ok(Params {
            server_key: Some(given.server_key.unwrap_or_default()),
            ..Params::base(given, None, KeyRule::Haproxy(function, avalanche))?
        })
    }

    /// Errors: [`RingError::InvalidWeight`] (see the weight rule),
    /// [`RingError::InvalidConfig`] for an explicit id of 0, or one given
    /// twice (HAProxy's "uses same ID"), [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, extra: PerNode) -> Result<Placement, RingError> {
        let explicit = extra.puids.unwrap_or_else(|| vec![0; nodes.len()]);
        build(params.server_key.expect("haproxy has a server key"), nodes, explicit)
    }

    /// Rebuilds with the parent's explicit ids, a new node's assigned
    /// (HAProxy's ids are fixed when its configuration is read, so an added
    /// or removed server is a reload: auto-assigned ids after a removed
    /// server shift). A new weight is HAProxy's `set weight` on a running
    /// HAProxy, which re-inserts nodes into its tree after the nodes of equal
    /// key already there (`chash_queue_dequeue_srv`, HAProxy 2.6): raising a
    /// weight within the nodes allocated so far (the largest weight the
    /// server has had since the configuration was read) re-inserts the new
    /// nodes, raising it beyond re-inserts them all. Where a re-inserted
    /// node ties with a node of a server declared later, HAProxy's order of
    /// equal keys is no longer the configuration's, which no ring of it
    /// places: [`RingError::InvalidWeight`] says so.
    fn derive(
        &self,
        params: &Params,
        parent: &Placement,
        nodes: &[Node],
        change: Change,
        _: PointHash,
    ) -> Result<Placement, RingError> {
        let parent = parent.lookup();
        let mut explicit = parent.puids().expect("a haproxy ring has ids").to_vec();
        let server_key = params.server_key.expect("haproxy has a server key");
        match change {
            Change::Added => explicit.push(0),
            Change::Removed(index) => {
                explicit.remove(index as usize);
            }
            Change::Reweighted(index, old) => {
                let allocated = parent.allocated_nodes().expect("a haproxy ring records its allocations");
                return set_weight(server_key, nodes, explicit, allocated, index, old);
            }
        }
        build(server_key, nodes, explicit)
    }
}

/// The ring after HAProxy's `set weight` of node `index` from weight `old`
/// to its weight in `nodes`, given the nodes allocated per server so far.
fn set_weight(
    server_key: ServerKey,
    nodes: &[Node],
    explicit: Vec<u32>,
    allocated: &[u32],
    index: usize,
    old: f64,
) -> Result<Placement, RingError> {
    let fresh = build_tree(server_key, nodes, explicit)?;
    let node = &nodes[index];
    let (was, now) = (old as u32 * NODES_PER_WEIGHT, node.weight() as u32 * NODES_PER_WEIGHT);
    let mut allocated = allocated.to_vec();
    // The nodes HAProxy re-inserts, each after the nodes of equal key.
    let reinserted = if now <= was {
        0..0
    } else if now > allocated[index] {
        allocated[index] = now;
        0..now
    } else {
        was..now
    };
    let key = server_key_of(server_key, fresh.assigned[index]);
    for j in reinserted {
        let at = full_hash(key.wrapping_add(j));
        // Equal keys are ordered by declaration in the fresh tree, so the
        // re-inserted node is last among them exactly when no server
        // declared after it shares the key.
        let end = fresh.keys.partition_point(|&k| k <= at);
        if fresh.owners[end - 1] as usize != index {
            return Err(RingError::InvalidWeight {
                id: node.id().to_owned(),
                weight: node.weight(),
                rule: SET_WEIGHT_RULE,
            });
        }
    }
    Ok(Placement::other(Tree { allocated, ..fresh }))
}

/// A server's key, the base of its node keys.
fn server_key_of(server_key: ServerKey, puid: u32) -> u32 {
    match server_key {
        ServerKey::Id => puid.wrapping_mul(MAX_WEIGHT * NODES_PER_WEIGHT),
        ServerKey::IdFullHash => full_hash(puid),
        ServerKey::Id32 => full_hash(puid.swap_bytes()),
    }
}

/// HAProxy 2.6's id assignment (`src/cfgparse.c`): `next` starts at 1 and
/// grows by one per server; a server without an id takes the smallest value
/// `>= next` no explicit id uses, and `next` continues from there.
pub(crate) fn assign(explicit: &[u32]) -> Vec<u32> {
    let used: std::collections::HashSet<u32> = explicit.iter().copied().filter(|&p| p != 0).collect();
    let mut next = 1u32;
    explicit
        .iter()
        .map(|&given| {
            let puid = if given != 0 {
                given
            } else {
                while used.contains(&next) {
                    next += 1;
                }
                next
            };
            next = if given != 0 { next + 1 } else { puid + 1 };
            puid
        })
        .collect()
}

fn build(server_key: ServerKey, nodes: &[Node], explicit: Vec<u32>) -> Result<Placement, RingError> {
    build_tree(server_key, nodes, explicit).map(Placement::other)
}

/// HAProxy's tree as its configuration builds it: servers in declaration
/// order, each with the nodes of its weight, all of them allocated.
fn build_tree(server_key: ServerKey, nodes: &[Node], explicit: Vec<u32>) -> Result<Tree, RingError> {
    let mut seen = std::collections::HashMap::new();
    for (node, &puid) in nodes.iter().zip(&explicit) {
        if puid != 0
            && let Some(first) = seen.insert(puid, node.id())
        {
            return Err(RingError::InvalidConfig {
                message: format!("servers {first:?} and {:?} use the same id {puid} (HAProxy refuses it)", node.id()),
            });
        }
    }
    let assigned = assign(&explicit);
    let mut total = 0u64;
    let mut tagged: Vec<(u32, u32)> = Vec::new();
    for (index, (node, &puid)) in nodes.iter().zip(&assigned).enumerate() {
        let weight = node.weight();
        if weight.fract() != 0.0 || weight > f64::from(MAX_WEIGHT) {
            return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule: WEIGHT_RULE });
        }
        let count = weight as u32 * NODES_PER_WEIGHT;
        total += u64::from(count);
        if total > MAX_POINTS {
            return Err(too_many(node.id(), total));
        }
        let key = server_key_of(server_key, puid);
        tagged.extend((0..count).map(|j| (full_hash(key.wrapping_add(j)), index as u32)));
    }
    // Stable: equal keys stay in insertion order, servers as declared, j ascending.
    tagged.sort_by_key(|&(key, _)| key);
    let (keys, owners) = tagged.into_iter().unzip();
    let allocated = nodes.iter().map(|n| n.weight() as u32 * NODES_PER_WEIGHT).collect();
    Ok(Tree { keys, owners, explicit, assigned, allocated })
}

/// HAProxy's consistent-hash tree as a sorted array: `keys` ascending,
/// equal keys in insertion order, `owners[i]` the node index of `keys[i]`.
#[derive(Debug)]
pub(crate) struct Tree {
    keys: Vec<u32>,
    owners: Vec<u32>,
    /// The ids as given, 0 where HAProxy assigns one.
    explicit: Vec<u32>,
    /// The ids in use, given or assigned.
    assigned: Vec<u32>,
    /// Per server, the nodes HAProxy has allocated (`lb_nodes_tot`): those
    /// of its configured weight, or of the highest weight `set weight` gave it since.
    allocated: Vec<u32>,
}

impl Tree {
    /// Index of the node `chash_get_server_hash` picks for `hash`: `next`
    /// the first node with key `>= hash` (else the first), `prev` the one
    /// before it (else the last); `prev` when `hash - prev <= next - hash`
    /// in u32 arithmetic.
    fn closest(&self, hash: u32) -> usize {
        let n = self.keys.len();
        let first_at_or_above = self.keys.partition_point(|&k| k < hash);
        let next = if first_at_or_above == n { 0 } else { first_at_or_above };
        let prev = if next == 0 { n - 1 } else { next - 1 };
        let (dp, dn) = (hash.wrapping_sub(self.keys[prev]), self.keys[next].wrapping_sub(hash));
        if dp <= dn { prev } else { next }
    }
}

impl Lookup for Tree {
    fn owner(&self, hash: u64) -> usize {
        self.owners[self.closest(hash as u32)] as usize
    }

    /// From the chosen node on, in key order, wrapping.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        let (after, before) = self.owners.split_at(self.closest(hash as u32));
        for &owner in before.iter().chain(after) {
            if visit(owner as usize) {
                return;
            }
        }
    }

    fn mark_live(&self, live: &mut [bool]) {
        self.owners.iter().for_each(|&o| live[o as usize] = true);
    }

    fn heap_bytes(&self) -> usize {
        (self.keys.len() + self.owners.len() + self.explicit.len() + self.assigned.len() + self.allocated.len())
            * size_of::<u32>()
    }

    /// The closest-node rule cuts each gap between neighbouring keys `p < q`
    /// (distance `d`) after `p + d / 2`: up to there the last node at `p`
    /// wins, after it the first node at `q`.
    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        let n = self.keys.len();
        if n == 0 {
            return Some(Vec::new());
        }
        // Runs of equal keys: (key, first index, last index).
        let mut runs: Vec<(u32, usize, usize)> = Vec::new();
        for (i, &key) in self.keys.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if run.0 == key => run.2 = i,
                _ => runs.push((key, i, i)),
            }
        }
        let mut ends: Vec<(u32, usize)> = Vec::with_capacity(2 * runs.len());
        if runs.len() == 1 {
            let (key, first, last) = runs[0];
            ends.push((key.wrapping_add(1 << 31), self.owners[last] as usize));
            ends.push((key.wrapping_sub(1), self.owners[first] as usize));
        } else {
            for (r, &(key, first, _)) in runs.iter().enumerate() {
                let (before, _, last_before) = runs[(r + runs.len() - 1) % runs.len()];
                let half = key.wrapping_sub(before) / 2;
                if half > 0 {
                    ends.push((before.wrapping_add(half), self.owners[last_before] as usize));
                }
                ends.push((key, self.owners[first] as usize));
            }
        }
        ends.sort_by_key(|&(end, _)| end);
        let mut arcs: Vec<(u64, usize)> = Vec::with_capacity(ends.len());
        for (end, owner) in ends {
            let end = (u64::from(end) << 32) | 0xffff_ffff;
            match arcs.last_mut() {
                Some(last) if last.1 == owner => last.0 = end,
                _ => arcs.push((end, owner)),
            }
        }
        Some(arcs)
    }

    fn puids(&self) -> Option<&[u32]> {
        Some(&self.explicit)
    }

    fn allocated_nodes(&self) -> Option<&[u32]> {
        Some(&self.allocated)
    }

    fn first_owner(&self) -> Option<usize> {
        self.owners.first().map(|&o| o as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_assigned_as_haproxy_2_6_assigns_them() {
        // `id 10`, auto, auto, `id 2`, auto (docs/algorithms.md, *haproxy*; checked against 2.6.12).
        assert_eq!(assign(&[10, 0, 0, 2, 0]), [10, 3, 4, 2, 6]);
        assert_eq!(assign(&[0, 0, 0]), [1, 2, 3]);
        assert_eq!(assign(&[0, 1, 0]), [2, 1, 4]);
    }

    #[test]
    fn node_keys_match_the_check_values() {
        assert_eq!((full_hash(0), full_hash(1)), (2874071335, 881230262));
        let nodes = [Node::new("a", 1.0), Node::new("b", 1.0)];
        let Placement::Other(tree) = build(ServerKey::Id, &nodes, vec![0, 0]).unwrap() else { unreachable!() };
        // puid 1: full_hash(4096) and full_hash(4097); puid 2: full_hash(8192) and full_hash(8207).
        assert_eq!((full_hash(4096), full_hash(4097)), (1237450891, 2761370759));
        assert_eq!((full_hash(8192), full_hash(8207)), (1079705203, 4061310468));
        for (hash, owner) in [(1237450891u64, 0), (2761370759, 0), (1079705203, 1), (4061310468, 1)] {
            assert_eq!(tree.owner(hash), owner, "{hash}");
        }
    }

    #[test]
    fn arcs_agree_with_the_closest_node_rule() {
        let nodes: Vec<Node> = (0..5).map(|i| Node::new(format!("s{i}"), f64::from(i % 3 + 1))).collect();
        for key in [ServerKey::Id, ServerKey::IdFullHash, ServerKey::Id32] {
            let Placement::Other(tree) = build(key, &nodes, vec![0, 7, 0, 0, 3]).unwrap() else { unreachable!() };
            let arcs = tree.arc_ends().unwrap();
            let by_arc = |hash: u32| {
                let position = (u64::from(hash) << 32) | 0xffff_ffff;
                let i = arcs.partition_point(|&(end, _)| end < position);
                arcs[if i == arcs.len() { 0 } else { i }].1
            };
            let mut probes: Vec<u32> = (0..20_000u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
            probes.extend([0, 1, u32::MAX, 1 << 31]);
            for end in arcs.iter().map(|&(end, _)| (end >> 32) as u32) {
                probes.extend([end, end.wrapping_add(1), end.wrapping_sub(1)]);
            }
            for hash in probes {
                assert_eq!(tree.owner(u64::from(hash)), by_arc(hash), "{key:?} {hash}");
            }
        }
    }

    /// `set weight` on ids 1 and 2^20 + 1, whose node keys all tie: HAProxy
    /// re-inserts the raised server's nodes after the other's, so raising
    /// the server declared first is refused wherever that reorders a tie;
    /// raising the later one, or lowering either, places as a fresh ring.
    #[test]
    fn set_weight_is_refused_exactly_where_haproxy_reorders_ties() {
        let ring = |w1: f64, w2: f64| {
            crate::Ring::builder()
                .algorithm(crate::Algorithm::Haproxy)
                .node("s1", w1)
                .node("s2", w2)
                .haproxy_id("s1", 1)
                .haproxy_id("s2", 1 + (1 << 20))
                .build()
                .unwrap()
        };
        let refused = |r: Result<crate::Ring, RingError>| matches!(r, Err(RingError::InvalidWeight { rule, .. }) if rule == SET_WEIGHT_RULE);
        let fingerprint = |r: Result<crate::Ring, RingError>| r.unwrap().fingerprint();
        // Above the configured weight: every node of s1 re-inserted, after s2's.
        assert!(refused(ring(1.0, 1.0).with_weight("s1", 2.0)));
        assert_eq!(fingerprint(ring(1.0, 1.0).with_weight("s2", 2.0)), ring(1.0, 2.0).fingerprint());
        // Lowered, then raised back: the nodes come back after s2's.
        let lowered = ring(1.0, 1.0).with_weight("s1", 0.0).unwrap();
        assert_eq!(lowered.fingerprint(), ring(0.0, 1.0).fingerprint());
        assert!(refused(lowered.with_weight("s1", 1.0)));
        // Within the allocation: only nodes 16 to 31 come back; s2 has none
        // of them at weight 1, so no tie is reordered.
        let back = ring(2.0, 1.0).with_weight("s1", 1.0).unwrap().with_weight("s1", 2.0).unwrap();
        assert_eq!(back.fingerprint(), ring(2.0, 1.0).fingerprint());
        // ... but at weight 2 it has, and beyond the allocation all come back.
        assert!(refused(ring(2.0, 2.0).with_weight("s1", 1.0).unwrap().with_weight("s1", 2.0)));
        assert!(refused(ring(2.0, 1.0).with_weight("s1", 3.0)));
        // A built ring knows nothing of earlier weights: it is a reload.
        assert!(ring(2.0, 1.0).with_weight("s1", 1.0).unwrap().with_weight("s2", 3.0).is_ok());
    }

    #[test]
    fn duplicate_ids_and_weights_above_256_are_refused() {
        let nodes = [Node::new("a", 1.0), Node::new("b", 1.0)];
        assert!(matches!(build(ServerKey::Id, &nodes, vec![4, 4]), Err(RingError::InvalidConfig { .. })));
        let heavy = [Node::new("a", 257.0)];
        assert!(matches!(build(ServerKey::Id, &heavy, vec![0]), Err(RingError::InvalidWeight { .. })));
    }
}
