//! The model: nodes as the harness thinks the ring holds them
//! ([`ModelNode`]), and the run's algorithm and parameters ([`Setup`]), which
//! turn input records into model nodes and list the rules of `core/SPEC.md`
//! a node set breaks.

use shardring::{Algorithm, Node, Ring, RingBuilder, RingError};

use crate::input::{Input, NodeSpec, WeightSpec};

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

/// A node as the model sees it.
#[derive(Debug, Clone)]
pub(crate) struct ModelNode {
    pub(crate) id: String,
    pub(crate) weight: f64,
    pub(crate) zone: Option<String>,
}

impl ModelNode {
    pub(crate) fn to_node(&self) -> Node {
        let node = Node::new(self.id.clone(), self.weight);
        match &self.zone {
            Some(zone) => node.with_zone(zone.clone()),
            None => node,
        }
    }
}

/// The algorithm and parameters of the run.
pub(crate) struct Setup {
    pub(crate) algorithm: Algorithm,
    pub(crate) vnodes: u32,
    pub(crate) seed: u64,
    pub(crate) table_size: u32,
}

impl Setup {
    pub(crate) fn from_input(input: &Input<'_>) -> Setup {
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

    pub(crate) fn bits(&self) -> u32 {
        self.algorithm.hash_bits()
    }

    pub(crate) fn is_continuum(&self) -> bool {
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

    pub(crate) fn build(&self, nodes: &[ModelNode]) -> Result<Ring, RingError> {
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
    pub(crate) fn present_id(&self, choice: u8, model: &[ModelNode]) -> String {
        if choice < 192 && !model.is_empty() {
            model[usize::from(choice) % model.len()].id.clone()
        } else {
            self.id(choice)
        }
    }

    pub(crate) fn weight(&self, spec: &WeightSpec) -> f64 {
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

    pub(crate) fn model_node(&self, spec: &NodeSpec) -> ModelNode {
        ModelNode {
            id: self.id(spec.id),
            weight: self.weight(&spec.weight),
            zone: ZONES[usize::from(spec.zone) % ZONES.len()].map(str::to_owned),
        }
    }

    /// The error codes (`RingError::code`) that building `nodes` may fail
    /// with, one per rule of `core/SPEC.md` they break; empty when it must succeed.
    pub(crate) fn violations(&self, nodes: &[ModelNode]) -> Vec<&'static str> {
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
pub(crate) fn points_of(weight: f64, vnodes: u32) -> f64 {
    if weight == 0.0 || weight.is_nan() {
        return 0.0;
    }
    (weight * f64::from(vnodes)).round().max(1.0)
}
