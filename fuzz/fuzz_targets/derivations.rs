//! Fuzz target `derivations`: derived rings against a deliberately simple model.
//!
//! For one algorithm of `Algorithm::ALL` (chosen by the input), a starting
//! node set and a sequence of operations (add a node, remove one, re-weight
//! one) are applied with `Ring::with_node` / `without_node` / `with_weight`.
//! The model is the list of nodes the harness thinks are present, in order.
//! After every step it checks:
//!
//! - **Errors** happen exactly when the rules of `core/SPEC.md` say so:
//!   `DuplicateId` for an id already present, `UnknownNode` for removing or
//!   re-weighting an absent id, `EmptyId`, `EmptyZone`, `InvalidWeight`
//!   (not finite and >= 0; weights not summing to a finite number; not a
//!   whole number for ketama/nginx, above 2^32 - 1 for the ketama modes, not 1
//!   for jump), `TooManyPoints` (over 2^24 points for `ring` and `nginx`) and
//!   `InvalidTableSize` (more nodes than Maglev slots). When one operation
//!   breaks several rules the library may report any one of them: the spec
//!   gives no precedence.
//! - **Nodes**: the ring's ids, weights (bit for bit) and zones equal the
//!   model's, in order; parameters are unchanged.
//! - **Lookups** against naive references written from the spec
//!   (`shardring_fuzz::reference`): for the continuum algorithms (ring,
//!   ketama, ketama-spy, libketama, nginx) the owner of a hash is found by a
//!   linear search over `ring.points()` and the preference list by walking
//!   them; jump, jumpback, rendezvous and maglev are recomputed from their
//!   formulas; memento from a plain model of its buckets and history that the
//!   harness updates with every derivation;
//!   slots from `slot_ranges()` and a bit-by-bit CRC16. `get`, `get_by_hash`,
//!   `get_n` and `get_n_indices_by_hash` must all agree with them, zones
//!   rule included; `get_n` lists distinct nodes of weight > 0, starting with
//!   `get`.
//! - **Rebuilds**: the ring rebuilt from `to_config()` (directly and through
//!   JSON) has the same fingerprint and places every probe the same; so does
//!   a fresh build of the model's nodes, except under `slots`, where a derived
//!   assignment is a rebalance and only its config (which lists the ranges)
//!   must rebuild it, and `memento`, whose config carries its history.
//! - **Movement** promised by the docs: on `ring` and `rendezvous` (and
//!   `slots` when adding or re-weighting; jump and jumpback when appending
//!   or removing the last node; memento when adding or removing any node)
//!   keys move only to or from the node that changed. Exact
//!   diffs (`Ring::diff`) report arcs whose endpoints really changed owner.
//! - **Ownership** equals the share recomputed from the points or the table.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shardring::{Algorithm, Node, Ring, RingBuilder, RingError};
use shardring_fuzz::reference;

/// Most operations per input: enough for interesting histories, few enough
/// that each input runs in about a millisecond.
const MAX_OPS: usize = 16;
/// `2^24`, the most points (and Maglev slots) a ring may have.
const MAX_POINTS: f64 = 16_777_216.0;

/// Ids for the algorithms that take any string. Includes ids that differ
/// only in a byte, a Unicode normalisation, a trailing space, and the empty
/// (invalid) id.
const IDS: [&str; 12] = ["a", "b", "c", "ab", "a\0", "é", "e\u{301}", "node-1", "node-10", "zz", "b ", ""];

/// Zones: mostly none, three names, and the empty (invalid) zone.
const ZONES: [Option<&str>; 16] = [
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    Some("z1"),
    Some("z1"),
    Some("z2"),
    Some("z2"),
    Some("z3"),
    Some("z3"),
    Some(""),
];

/// Weights that break some algorithm's rule (or are edge cases of one).
const ODD_WEIGHTS: [f64; 14] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    -1e-300,
    -0.0,
    0.5,
    2.5,
    2.0,
    0.0,
    4_294_967_296.0,
    1e308,
    f64::MAX,
    1e-300,
];

/// The fuzzer's input: a fixed header, then the steps as 6-byte records
/// (decoded by hand: `arbitrary` would end a `Vec` after about one element).
#[derive(Arbitrary, Debug)]
struct Input<'a> {
    algorithm: u8,
    vnodes: u8,
    seed: u64,
    table: u8,
    /// `start % 13` leading steps form the starting node set (each one's
    /// node, built at once); below 208 its empty ids and zones are left out.
    start: u8,
    /// Two extra keys: bytes 0..3 and 3..8.
    key_bytes: [u8; 8],
    /// Hashes to probe (each also mixed into a second one).
    hashes: [u64; 2],
    steps: &'a [u8],
}

impl Input<'_> {
    fn steps(&self) -> Vec<Step> {
        self.steps
            .chunks_exact(6)
            .map(|b| Step {
                kind: b[0],
                node: NodeSpec {
                    id: b[1],
                    weight: WeightSpec { kind: b[2], value: u16::from_le_bytes([b[3], b[4]]) },
                    zone: b[5],
                },
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy)]
struct NodeSpec {
    id: u8,
    weight: WeightSpec,
    zone: u8,
}

/// A weight: `kind` picks the family (usual 62%, fraction 33%, odd 5%), `value` the weight.
#[derive(Debug, Clone, Copy)]
struct WeightSpec {
    kind: u8,
    value: u16,
}

/// One operation: `kind` picks add (50%), remove (25%) or re-weight (25%)
/// of the node `node` describes (only its id, for a removal).
#[derive(Debug, Clone, Copy)]
struct Step {
    kind: u8,
    node: NodeSpec,
}

/// A node as the model sees it.
#[derive(Debug, Clone)]
struct ModelNode {
    id: String,
    weight: f64,
    zone: Option<String>,
}

impl ModelNode {
    fn to_node(&self) -> Node {
        let node = Node::new(self.id.clone(), self.weight);
        match &self.zone {
            Some(zone) => node.with_zone(zone.clone()),
            None => node,
        }
    }
}

/// The algorithm and parameters of the run.
struct Setup {
    algorithm: Algorithm,
    vnodes: u32,
    seed: u64,
    table_size: u32,
}

impl Setup {
    fn from_input(input: &Input<'_>) -> Setup {
        // The peer modes are left out: their oracles are the real peers
        // (libmemcached, nutcracker, uhashring, npm hashring, HAProxy;
        // py/tests/test_peer_*.py and node/__test__/peer.test.mjs) and Envoy's
        // published vectors, not a model here.
        let modelled: Vec<Algorithm> = Algorithm::ALL
            .into_iter()
            .filter(|&a| {
                !matches!(
                    a,
                    Algorithm::Libmemcached
                        | Algorithm::Twemproxy
                        | Algorithm::Uhashring
                        | Algorithm::UhashringKetama
                        | Algorithm::HashringJs
                        | Algorithm::EnvoyRingHash
                        | Algorithm::EnvoyMaglev
                        | Algorithm::GrpcRingHash
                        | Algorithm::Haproxy
                )
            })
            .collect();
        let algorithm = modelled[usize::from(input.algorithm) % modelled.len()];
        // Small primes keep Maglev tables cheap; 7 is below the node count
        // from 8 nodes on (InvalidTableSize); 65,537 is the default.
        let table_size = match input.table % 16 {
            13 | 14 => 7,
            15 => 65_537,
            _ => 251,
        };
        Setup { algorithm, vnodes: u32::from(input.vnodes % 20) + 1, seed: input.seed, table_size }
    }

    fn bits(&self) -> u32 {
        self.algorithm.hash_bits()
    }

    fn is_continuum(&self) -> bool {
        matches!(
            self.algorithm,
            Algorithm::Ring | Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama | Algorithm::Nginx
        )
    }

    fn is_ketama(&self) -> bool {
        matches!(self.algorithm, Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama)
    }

    /// Each parameter is given only to the algorithms that take it.
    fn builder(&self) -> RingBuilder {
        let mut builder = Ring::builder().algorithm(self.algorithm);
        if self.algorithm.uses_vnodes() {
            builder = builder.vnodes(self.vnodes);
        }
        if self.algorithm.uses_seed() {
            builder = builder.seed(self.seed);
        }
        if self.algorithm == Algorithm::Maglev {
            builder = builder.table_size(self.table_size);
        }
        builder
    }

    fn build(&self, nodes: &[ModelNode]) -> Result<Ring, RingError> {
        self.builder().nodes(nodes.iter().map(ModelNode::to_node)).build()
    }

    fn id(&self, choice: u8) -> String {
        let i = usize::from(choice) % IDS.len();
        if self.is_ketama() || self.algorithm == Algorithm::Nginx {
            format!("10.0.0.{i}:11211")
        } else {
            IDS[i].to_owned()
        }
    }

    /// For a removal or re-weighting: mostly a node of the model, sometimes any id.
    fn present_id(&self, choice: u8, model: &[ModelNode]) -> String {
        if choice < 192 && !model.is_empty() {
            model[usize::from(choice) % model.len()].id.clone()
        } else {
            self.id(choice)
        }
    }

    fn weight(&self, spec: &WeightSpec) -> f64 {
        let pick = |list: &[f64]| list[usize::from(spec.value) % list.len()];
        let whole = self.is_ketama() || self.algorithm == Algorithm::Nginx;
        match spec.kind {
            // Usual weights of the algorithm's family.
            0..160 => match self.algorithm {
                a if a.unit_weights() => 1.0,
                Algorithm::Nginx => pick(&[1.0, 1.0, 1.0, 2.0, 3.0, 0.0, 10.0, 1e6]),
                _ if whole => pick(&[1.0, 1.0, 1.0, 2.0, 3.0, 0.0, 10.0, 4_294_967_295.0]),
                // 2e7 and 1e300 are too many points for `ring` (2e7 x vnodes >= 1 > 2^24), fine elsewhere.
                _ => pick(&[1.0, 1.0, 1.0, 2.0, 0.5, 0.0, -0.0, 3.75, 1e-300, 2e7, 1e300, 0.1, 1.0 / 3.0]),
            },
            // Small weights with arbitrary low bits (whole numbers where required).
            160..244 => match self.algorithm {
                a if a.unit_weights() => 1.0,
                _ if whole => f64::from(spec.value % 8),
                _ => f64::from(spec.value) / 4096.0,
            },
            _ => pick(&ODD_WEIGHTS),
        }
    }

    fn model_node(&self, spec: &NodeSpec) -> ModelNode {
        ModelNode {
            id: self.id(spec.id),
            weight: self.weight(&spec.weight),
            zone: ZONES[usize::from(spec.zone) % ZONES.len()].map(str::to_owned),
        }
    }

    /// The error codes (`RingError::code`) that building `nodes` may fail
    /// with, one per rule of `core/SPEC.md` they break; empty when it must succeed.
    fn violations(&self, nodes: &[ModelNode]) -> Vec<&'static str> {
        let mut broken = Vec::new();
        for node in nodes {
            if node.id.is_empty() {
                broken.push("RING_EMPTY_ID");
            }
            if !(node.weight.is_finite() && node.weight >= 0.0) {
                broken.push("RING_INVALID_WEIGHT");
            }
            if node.zone.as_deref() == Some("") {
                broken.push("RING_EMPTY_ZONE");
            }
        }
        let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            broken.push("RING_DUPLICATE_ID");
        }
        if !nodes.iter().map(|n| n.weight).sum::<f64>().is_finite() {
            broken.push("RING_INVALID_WEIGHT");
        }
        match self.algorithm {
            Algorithm::Ring => {
                let total: f64 = nodes.iter().map(|n| points_of(n.weight, self.vnodes)).sum();
                if total > MAX_POINTS {
                    broken.push("RING_TOO_MANY_POINTS");
                }
            }
            Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama => {
                if nodes.iter().any(|n| n.weight.fract() != 0.0 || n.weight > 4_294_967_295.0) {
                    broken.push("RING_INVALID_WEIGHT");
                }
            }
            Algorithm::Nginx => {
                if nodes.iter().any(|n| n.weight.fract() != 0.0) {
                    broken.push("RING_INVALID_WEIGHT");
                }
                if nodes.iter().map(|n| n.weight * 160.0).sum::<f64>() > MAX_POINTS {
                    broken.push("RING_TOO_MANY_POINTS");
                }
            }
            a if a.unit_weights() => {
                if nodes.iter().any(|n| n.weight != 1.0) {
                    broken.push("RING_INVALID_WEIGHT");
                }
            }
            Algorithm::Maglev => {
                if nodes.len() > self.table_size as usize {
                    broken.push("RING_INVALID_TABLE_SIZE");
                }
            }
            _ => {}
        }
        broken
    }
}

/// `ring` points of a node: `round(vnodes * w)` half away from zero, at
/// least 1 when `w > 0`, 0 when `w = 0`. Non-finite or negative weights
/// count as their product (they are rejected anyway).
fn points_of(weight: f64, vnodes: u32) -> f64 {
    if weight == 0.0 || weight.is_nan() {
        return 0.0;
    }
    (weight * f64::from(vnodes)).round().max(1.0)
}

/// Asserts that `result` is an error whose code is one of `allowed`, or a
/// success when `allowed` is empty.
fn expect_outcome<T>(what: &str, result: &Result<T, RingError>, allowed: &[&str]) {
    match result {
        Ok(_) => {
            assert!(allowed.is_empty(), "{what}: succeeded, but the spec says it must fail with one of {allowed:?}")
        }
        Err(e) => assert!(allowed.contains(&e.code()), "{what}: failed with {e:?}, expected {allowed:?}"),
    }
}

/// What the last operation changed, for the movement promises.
enum Change {
    Added(String),
    Removed { id: String, was_last: bool },
    Reweighted { id: String, from: f64, to: f64 },
}

fuzz_target!(|input: Input<'_>| {
    let setup = Setup::from_input(&input);
    let mut keys: Vec<Vec<u8>> =
        [&b""[..], b"a", b"user:42", b"{user}:42", b"\xff\xfe", b"10.0.0.1:11211"].iter().map(|k| k.to_vec()).collect();
    keys.extend([input.key_bytes[..3].to_vec(), input.key_bytes[3..].to_vec()]);
    let [a, b] = input.hashes;
    let input_hashes = [a, b, reference::fmix64(a), reference::fmix64(!b)];

    let all_steps = input.steps();
    let start_steps = (usize::from(input.start) % 13).min(all_steps.len());
    let (start_steps, steps) = all_steps.split_at(start_steps);
    // A set: the first node of each id (duplicates are exercised by the steps).
    let mut start: Vec<ModelNode> = Vec::new();
    for step in start_steps {
        let node = setup.model_node(&step.node);
        let invalid = node.id.is_empty() || node.zone.as_deref() == Some("");
        if !start.iter().any(|n| n.id == node.id) && (input.start >= 208 || !invalid) {
            start.push(node);
        }
    }
    let built = setup.build(&start);
    expect_outcome("initial build", &built, &setup.violations(&start));
    let (mut ring, mut model) = match built {
        Ok(ring) => (ring, start),
        Err(_) => (setup.build(&[]).expect("a ring without nodes builds"), Vec::new()),
    };
    // Memento's buckets and history, which the node list alone does not give.
    let mut buckets = reference::Memento::new(model.len());
    check_ring(&ring, &model, &setup, &buckets, &keys, &input_hashes);

    for step in steps.iter().take(MAX_OPS) {
        let mut next_buckets = buckets.clone();
        let (what, result, next, change) = match step.kind {
            0..128 => {
                let node = setup.model_node(&step.node);
                let mut next = model.clone();
                next.push(node.clone());
                next_buckets.add();
                let result = ring.with_node(node.to_node());
                (format!("with_node({node:?})"), result, next, Change::Added(node.id))
            }
            128..192 => {
                let id = setup.present_id(step.node.id, &model);
                let position = model.iter().position(|n| n.id == id);
                let mut next = model.clone();
                let was_last = position == Some(model.len().wrapping_sub(1));
                if let Some(position) = position {
                    next.remove(position);
                    next_buckets.remove(position);
                }
                let result = ring.without_node(&id);
                (format!("without_node({id:?})"), result, next, Change::Removed { id, was_last })
            }
            _ => {
                let id = setup.present_id(step.node.id, &model);
                let weight = setup.weight(&step.node.weight);
                let mut next = model.clone();
                let mut from = f64::NAN;
                if let Some(node) = next.iter_mut().find(|n| n.id == id) {
                    from = node.weight;
                    node.weight = weight;
                }
                let result = ring.with_weight(&id, weight);
                (format!("with_weight({id:?}, {weight:?})"), result, next, Change::Reweighted { id, from, to: weight })
            }
        };
        let mut allowed = setup.violations(&next);
        match &change {
            Change::Removed { id, .. } | Change::Reweighted { id, .. } if !model.iter().any(|n| &n.id == id) => {
                allowed.push("RING_UNKNOWN_NODE");
            }
            _ => {}
        }
        expect_outcome(&what, &result, &allowed);
        let Ok(next_ring) = result else {
            continue;
        };
        check_ring(&next_ring, &next, &setup, &next_buckets, &keys, &input_hashes);
        check_movement(&ring, &next_ring, &setup, &change, &keys, &input_hashes);
        ring = next_ring;
        model = next;
        buckets = next_buckets;
    }
});

/// Every check of one ring state against the model (`buckets`: memento's, read under memento only).
fn check_ring(
    ring: &Ring,
    model: &[ModelNode],
    setup: &Setup,
    buckets: &reference::Memento,
    keys: &[Vec<u8>],
    input_hashes: &[u64],
) {
    // Nodes and parameters.
    assert_eq!(ring.nodes().len(), model.len(), "node count");
    for (node, expected) in ring.nodes().iter().zip(model) {
        assert_eq!(node.id(), expected.id);
        assert_eq!(node.weight().to_bits(), expected.weight.to_bits(), "weight of {:?}", expected.id);
        assert_eq!(node.zone(), expected.zone.as_deref(), "zone of {:?}", expected.id);
    }
    assert_eq!(ring.algorithm(), setup.algorithm);
    assert_eq!(ring.vnodes(), setup.algorithm.uses_vnodes().then_some(setup.vnodes));
    assert_eq!(ring.seed(), if setup.algorithm.uses_seed() { setup.seed } else { 0 });
    assert_eq!(ring.table_size(), (setup.algorithm == Algorithm::Maglev).then_some(setup.table_size));

    let n = model.len();
    let positive = model.iter().filter(|node| node.weight > 0.0).count();
    let live = ring.live_node_count();
    match setup.algorithm {
        Algorithm::Ring | Algorithm::Rendezvous => assert_eq!(live, positive, "live nodes"),
        a if a.unit_weights() => assert_eq!(live, n, "live nodes"),
        // A tiny weight can earn no Maglev slot or ketama digest.
        _ => assert!(live <= positive, "{live} live nodes but only {positive} of weight > 0"),
    }

    let zones: Vec<Option<&str>> = model.iter().map(|node| node.zone.as_deref()).collect();
    let pairs: Vec<(&str, f64)> = model.iter().map(|node| (node.id.as_str(), node.weight)).collect();
    let bits = setup.bits();
    let top = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };

    // The reference preference order of a hash, and the reference ownership.
    let points: Vec<(u64, usize)> = ring.points().collect();
    let table: Vec<usize> = match setup.algorithm {
        Algorithm::Maglev => reference::maglev_table(&pairs, setup.seed, u64::from(setup.table_size)),
        Algorithm::Slots => slot_table(ring, model),
        _ => Vec::new(),
    };
    let order_of: Box<dyn Fn(u64) -> Vec<usize> + '_>;
    let shares: Option<Vec<f64>>;
    let mut hashes: Vec<u64> = input_hashes.iter().map(|&h| h & top).collect();
    hashes.extend([0, top, top / 2]);
    match setup.algorithm {
        _ if setup.is_continuum() => {
            check_points(ring, model, setup, &points);
            // A few points' own positions and their neighbours.
            for &h in input_hashes.iter().take(4) {
                if let Some(&(position, _)) = points.get(h as usize % points.len().max(1)) {
                    hashes.extend([position, position.saturating_sub(1), (position + 1).min(top)]);
                }
            }
            let owners = reference::distinct_count(points.iter().map(|&(_, owner)| owner));
            let ring_points = &points;
            order_of = Box::new(move |h| reference::continuum_order(ring_points, h, owners));
            shares = Some(continuum_shares(&points, n, bits));
        }
        Algorithm::Jump => {
            order_of = Box::new(move |h| reference::jump_order(h, n));
            shares = None;
        }
        Algorithm::Jumpback => {
            order_of = Box::new(move |h| reference::jump_back_order(h, n));
            shares = None;
        }
        Algorithm::Memento => {
            let held: Vec<u32> = buckets.bucket_of.iter().map(|&b| b as u32).collect();
            assert_eq!(ring.buckets(), Some(&held[..]), "buckets");
            let removed: Vec<u32> = buckets.history.iter().map(|&(b, _)| b as u32).collect();
            assert_eq!(ring.removed_buckets(), Some(&removed[..]), "removed buckets");
            order_of = Box::new(|h| if n == 0 { Vec::new() } else { buckets.order(h) });
            shares = None;
        }
        Algorithm::Rendezvous => {
            order_of = Box::new(|h| reference::rendezvous_order(&pairs, setup.seed, h));
            shares = None;
        }
        Algorithm::Maglev => {
            let (size, slots) = (u64::from(setup.table_size), &table);
            let owners = reference::distinct_count(table.iter().copied());
            order_of = Box::new(move |h| {
                if slots.is_empty() {
                    Vec::new()
                } else {
                    reference::table_order(slots, reference::maglev_slot(h, size), owners)
                }
            });
            shares = Some(table_shares(&table, n));
        }
        Algorithm::Slots => {
            let slots = &table;
            let owners = reference::distinct_count(table.iter().copied());
            order_of =
                Box::new(
                    move |h| {
                        if slots.is_empty() { Vec::new() } else { reference::table_order(slots, h as usize, owners) }
                    },
                );
            shares = Some(table_shares(&table, n));
        }
        other => panic!("algorithm {other:?} has no reference"),
    }

    // Ownership.
    let ownership = ring.ownership();
    assert_eq!(ownership.len(), n);
    let sum: f64 = ownership.iter().map(|(_, share)| share).sum();
    for (i, (node, share)) in ownership.iter().enumerate() {
        assert_eq!(node.id(), model[i].id);
        assert!((0.0..=1.0).contains(share), "share {share} of {:?}", model[i].id);
        if model[i].weight == 0.0 {
            assert_eq!(*share, 0.0, "drained node {:?} owns a share", model[i].id);
        }
        if let Some(shares) = &shares {
            assert!((share - shares[i]).abs() < 1e-9, "share of {:?}: {share}, reference {}", model[i].id, shares[i]);
        }
    }
    if live > 0 {
        assert!((sum - 1.0).abs() < 1e-9, "shares sum to {sum}");
    } else {
        assert_eq!(sum, 0.0, "a ring that places no keys owns {sum}");
    }

    // Lookups by hash.
    for &h in &hashes {
        let order = order_of(h);
        assert_eq!(
            order.len(),
            live,
            "hash {h:#x}: the reference order has {} nodes, live_node_count {live}",
            order.len()
        );
        if live == 0 {
            assert_eq!(ring.index_by_hash(h), Err(RingError::EmptyRing));
            assert_eq!(ring.get_n_indices_by_hash(h, &mut [0; 3]), Err(RingError::EmptyRing));
            continue;
        }
        assert_eq!(ring.index_by_hash(h), Ok(order[0]), "owner of hash {h:#x}");
        assert_eq!(ring.get_by_hash(h).map(Node::id), Ok(model[order[0]].id.as_str()));
        for want in [0, 1, 2, live + 2] {
            let mut out = vec![usize::MAX; want];
            let found = ring.get_n_indices_by_hash(h, &mut out).expect("non-empty ring");
            let expected = reference::with_zones(&order, &zones, want);
            assert_eq!(&out[..found], &expected[..], "preference list of hash {h:#x}, n = {want}");
            assert!(out[found..].iter().all(|&i| i == usize::MAX), "wrote past the list");
        }
    }
    if bits < 64 {
        let wide = top + 1 + (input_hashes.first().copied().unwrap_or(0) >> bits);
        assert!(matches!(ring.index_by_hash(wide), Err(RingError::HashOutOfRange { .. })), "hash {wide:#x} accepted");
        assert!(matches!(ring.get_n_indices_by_hash(wide, &mut [0; 2]), Err(RingError::HashOutOfRange { .. })));
    }

    // Lookups by key.
    for key in keys {
        let h = ring.hash_key(key);
        assert!(h <= top, "key hash {h:#x} wider than {bits} bits");
        match setup.algorithm {
            Algorithm::Slots => assert_eq!(h, reference::redis_slot(key), "slot of {key:?}"),
            Algorithm::Ring
            | Algorithm::Jump
            | Algorithm::Jumpback
            | Algorithm::Memento
            | Algorithm::Rendezvous
            | Algorithm::Maglev => {
                assert_eq!(h, shardring::hash_key(key, setup.seed));
            }
            _ => {}
        }
        let order = order_of(h);
        if live == 0 {
            assert_eq!(ring.get(key).map(Node::id), Err(RingError::EmptyRing));
            assert_eq!(ring.get_n(key, 0).map(|l| l.len()), Err(RingError::EmptyRing));
            continue;
        }
        let owner = ring.get_index(key).expect("non-empty ring");
        assert_eq!(owner, order[0], "owner of {key:?}");
        assert_eq!(ring.get(key).map(Node::id), Ok(model[owner].id.as_str()));
        for want in [1, 3, usize::MAX] {
            let listed = ring.get_n(key, want).expect("non-empty ring");
            let ids: Vec<&str> = listed.iter().map(|node| node.id()).collect();
            assert_eq!(listed.len(), want.min(live), "get_n({key:?}, {want}) length");
            if want > 0 {
                assert_eq!(ids[0], model[owner].id, "get_n({key:?}, {want}) does not start with get");
            }
            for (i, node) in listed.iter().enumerate() {
                assert!(node.weight() > 0.0, "get_n({key:?}) lists drained {:?}", node.id());
                assert!(!ids[..i].contains(&node.id()), "get_n({key:?}) lists {:?} twice", node.id());
            }
            let expected: Vec<&str> =
                reference::with_zones(&order, &zones, want).iter().map(|&i| model[i].id.as_str()).collect();
            assert_eq!(ids, expected, "get_n({key:?}, {want})");
        }
    }

    check_rebuilds(ring, model, setup, keys, &hashes);
}

/// The continuum is sorted, within the hash range, owned by live nodes,
/// ties ordered as the spec says, and (for `ring`) has `round(vnodes * w)`
/// points per node.
fn check_points(ring: &Ring, model: &[ModelNode], setup: &Setup, points: &[(u64, usize)]) {
    assert_eq!(ring.point_count(), points.len());
    let bits = setup.bits();
    for &(position, owner) in points {
        assert!(owner < model.len(), "point owner {owner} out of range");
        assert!(model[owner].weight > 0.0, "drained node {:?} has a point", model[owner].id);
        assert!(bits == 64 || position >> bits == 0, "point {position:#x} wider than {bits} bits");
    }
    for pair in points.windows(2) {
        let ((a, i), (b, j)) = (pair[0], pair[1]);
        assert!(a <= b, "points out of order: {a:#x} then {b:#x}");
        if a == b {
            match setup.algorithm {
                Algorithm::Ring => {
                    assert!(model[i].id.as_bytes() < model[j].id.as_bytes(), "tie at {a:#x} not by id bytes")
                }
                Algorithm::Nginx => panic!("nginx keeps one of equal points, found two at {a:#x}"),
                _ => assert!(i <= j, "ketama tie at {a:#x}: later server first"),
            }
        }
    }
    if setup.algorithm == Algorithm::Ring {
        for (index, node) in model.iter().enumerate() {
            let count = points.iter().filter(|&&(_, owner)| owner == index).count();
            assert_eq!(count as f64, points_of(node.weight, setup.vnodes), "point count of {:?}", node.id);
        }
    }
}

/// Shares of a continuum over its `bits`-bit hash space: point `i` owns the
/// positions after point `i - 1` up to its own; the first also owns the wrap.
fn continuum_shares(points: &[(u64, usize)], n: usize, bits: u32) -> Vec<f64> {
    let mut owned = vec![0u128; n];
    let space = 1u128 << bits;
    for (i, &(position, owner)) in points.iter().enumerate() {
        owned[owner] += if i == 0 {
            u128::from(position) + 1 + (space - 1 - u128::from(points[points.len() - 1].0))
        } else {
            u128::from(position - points[i - 1].0)
        };
    }
    owned.into_iter().map(|o| o as f64 / space as f64).collect()
}

/// Shares of a table algorithm: slots held over table size.
fn table_shares(table: &[usize], n: usize) -> Vec<f64> {
    let mut shares = vec![0.0; n];
    for &owner in table {
        shares[owner] += 1.0 / table.len() as f64;
    }
    shares
}

/// The slot table of a `slots` ring from its ranges, checking that every
/// slot is held exactly once and drained nodes hold none. Empty when no
/// node holds slots.
fn slot_table(ring: &Ring, model: &[ModelNode]) -> Vec<usize> {
    let ranges = ring.slot_ranges().expect("a slots ring has slot ranges");
    assert_eq!(ranges.len(), model.len());
    let mut table = vec![usize::MAX; 16_384];
    for (node, node_ranges) in ranges.iter().enumerate() {
        if model[node].weight == 0.0 {
            assert!(node_ranges.is_empty(), "drained {:?} holds slots {node_ranges:?}", model[node].id);
        }
        for range in node_ranges {
            assert!(range.start() <= range.end() && *range.end() < 16_384, "bad range {range:?}");
            for slot in range.clone() {
                assert_eq!(table[usize::from(slot)], usize::MAX, "slot {slot} held twice");
                table[usize::from(slot)] = node;
            }
        }
    }
    if table.iter().all(|&owner| owner == usize::MAX) {
        return Vec::new();
    }
    assert!(table.iter().all(|&owner| owner != usize::MAX), "some slot is held by no node");
    table
}

/// The ring rebuilt from `to_config()` (and through JSON) equals it; so does
/// a fresh build of the model except under `slots`.
fn check_rebuilds(ring: &Ring, model: &[ModelNode], setup: &Setup, keys: &[Vec<u8>], hashes: &[u64]) {
    let config = ring.to_config();
    let json = config.to_json();
    let mut others: Vec<(&str, Ring)> = vec![
        ("to_config().build()", config.build().unwrap_or_else(|e| panic!("config does not rebuild: {e}\n{json}"))),
        (
            "from_json(to_json())",
            Ring::from_json(&json).unwrap_or_else(|e| panic!("JSON does not rebuild: {e}\n{json}")),
        ),
    ];
    if setup.algorithm != Algorithm::Slots && !setup.algorithm.placement_has_history() {
        others.push(("a fresh build of the model", setup.build(model).expect("the model's nodes build")));
    }
    let (fingerprint, slot_ranges) = (ring.fingerprint(), ring.slot_ranges());
    for (how, other) in &others {
        assert_eq!(other.fingerprint(), fingerprint, "{how}: fingerprint differs\n{json}");
        assert_eq!(other.nodes(), ring.nodes(), "{how}: nodes differ");
        assert_eq!(other.live_node_count(), ring.live_node_count(), "{how}: live nodes differ");
        assert_eq!(other.slot_ranges(), slot_ranges, "{how}: slot ranges differ");
        for &h in hashes {
            assert_eq!(other.index_by_hash(h), ring.index_by_hash(h), "{how}: owner of hash {h:#x} differs");
        }
        for key in keys {
            let ids = |r: &Ring| r.get_n(key, 3).map(|l| l.iter().map(|node| node.id().to_owned()).collect::<Vec<_>>());
            assert_eq!(other.get(key).map(Node::id), ring.get(key).map(Node::id), "{how}: get({key:?}) differs");
            assert_eq!(ids(other), ids(ring), "{how}: get_n({key:?}, 3) differs");
        }
    }
}

/// The movement each algorithm promises for one derivation, on the probe
/// hashes and keys; and the exact diff's arcs against real lookups.
fn check_movement(old: &Ring, new: &Ring, setup: &Setup, change: &Change, keys: &[Vec<u8>], input_hashes: &[u64]) {
    let top = if setup.bits() == 64 { u64::MAX } else { (1u64 << setup.bits()) - 1 };
    let mut hashes: Vec<u64> = input_hashes.iter().map(|&h| h & top).collect();
    hashes.extend(keys.iter().map(|key| old.hash_key(key)));
    hashes.extend([0, top]);

    // Which (from, to) moves the docs allow; None: no promise.
    type Allowed<'a> = Box<dyn Fn(&str, &str) -> bool + 'a>;
    let promise: Option<Allowed> = match (setup.algorithm, change) {
        // `slots` promises no such thing: it rebalances as redis-cli does, whose
        // rounding fix can move slots between old masters.
        (
            Algorithm::Ring | Algorithm::Rendezvous | Algorithm::Jump | Algorithm::Jumpback | Algorithm::Memento,
            Change::Added(id),
        ) => Some(Box::new(move |_, to| to == id)),
        (Algorithm::Ring | Algorithm::Rendezvous | Algorithm::Memento, Change::Removed { id, .. })
        | (Algorithm::Jump | Algorithm::Jumpback, Change::Removed { id, was_last: true }) => {
            Some(Box::new(move |from, _| from == id))
        }
        (Algorithm::Ring | Algorithm::Rendezvous, Change::Reweighted { id, from, to }) => {
            let (from, to) = (*from, *to);
            Some(Box::new(move |was, now| {
                if to > from {
                    now == id
                } else if to < from {
                    was == id
                } else {
                    false
                }
            }))
        }
        _ => None,
    };
    let live = old.live_node_count() > 0 && new.live_node_count() > 0;
    if let (Some(allowed), true) = (&promise, live) {
        for &h in &hashes {
            let (was, now) = (old.get_by_hash(h).unwrap().id(), new.get_by_hash(h).unwrap().id());
            if was != now {
                assert!(allowed(was, now), "hash {h:#x} moved from {was:?} to {now:?}, against the documented promise");
            }
        }
    }

    // Exact diffs only: the sampled ones of jump and rendezvous cost 65,536
    // lookups each, longer than everything else here.
    if matches!(setup.algorithm, Algorithm::Jump | Algorithm::Jumpback | Algorithm::Memento | Algorithm::Rendezvous) {
        return;
    }
    let diff = old.diff(new);
    if !live {
        assert_eq!(diff, Err(RingError::EmptyRing));
        return;
    }
    let diff = diff.expect("diff of two rings of one algorithm and seed");
    assert!((0.0..=1.0).contains(&diff.moved_share), "moved share {}", diff.moved_share);
    let flow_sum: f64 = diff.flows.iter().map(|flow| flow.share).sum();
    assert!((flow_sum - diff.moved_share).abs() < 1e-9, "flows sum to {flow_sum}, moved share {}", diff.moved_share);
    for flow in &diff.flows {
        assert_ne!(flow.from, flow.to);
        assert!(flow.share > 0.0 && flow.share <= 1.0);
        if let Some(allowed) = &promise {
            assert!(allowed(&flow.from, &flow.to), "diff flow {flow:?} against the documented promise");
        }
    }
    for pair in diff.arcs.windows(2) {
        assert!(pair[0].end < pair[1].start, "arcs overlap or are out of order: {pair:?}");
    }
    for arc in diff.arcs.iter().take(4) {
        assert!(arc.start <= arc.end && arc.end <= top, "arc {arc:?}");
        for h in [arc.start, arc.end] {
            assert_eq!(old.get_by_hash(h).unwrap().id(), arc.from, "arc {arc:?}: old owner of {h:#x}");
            assert_eq!(new.get_by_hash(h).unwrap().id(), arc.to, "arc {arc:?}: new owner of {h:#x}");
        }
    }
    if diff.arcs.is_empty() {
        assert_eq!(diff.moved_share, 0.0, "moved share without arcs");
    }
}
