//! Envoy's `RING_HASH` load balancer (`envoy-ring-hash`) and gRPC's
//! `ring_hash` policy (`grpc-ring-hash`, gRFCs A42, A61, A76): one ring
//! math, bit-exact with Envoy's `ring_hash_lb.cc` and grpc-go's
//! `balancer/ringhash/ring.go` / gRPC C-core's `ring_hash.cc`. Rules in
//! `core/SPEC.md` (*envoy-ring-hash and grpc-ring-hash*); sources and vectors: `docs/algorithms.md`.
//!
//! A node's id is its host key as the balancer forms it: the address
//! `ip:port` (`[v6]:port`), the hostname with `use_hostname_for_hashing`, or
//! the endpoint's `envoy.lb` `hash_key`. With weights normalised to
//! `w_i = weight_i / sum` (binary64), the ring has
//! `scale = min(ceil(min_w * min_ring_size) / min_w, max_ring_size)` points
//! in all: walking the hosts in order, `target += scale * w_i`, and host `i`
//! adds points `key_0, key_1, ...` while the running count is below the
//! target, so a fractional share goes to whichever host reaches it first.
//! Point `key_j` is the host hash of the label `"{key}_{j}"` (XXH64 seed 0,
//! or 64-bit MurmurHash2 in Envoy). A request hash (XXH64 of the header
//! value, seed 0) belongs to the first point at or above it, wrapping; the
//! preference list follows Envoy's retries, `(index + k) mod ring size`,
//! distinct hosts only.

use crate::error::RingError;
use crate::hash::{HashFunction, KeyRule};
use crate::node::Node;
use crate::params::{EndpointOrder, Param, Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{Continuum, MAX_POINTS, too_many};

/// Envoy's and gRPC's largest `minimum_ring_size` / `maximum_ring_size`: 8,388,608.
pub const LARGEST_RING_SIZE: u64 = 8 * 1024 * 1024;

/// gRPC's cap on both ring sizes (`GRPC_RING_HASH_CAP` in grpc-go,
/// `kRingSizeCapDefault` in C-core): 4,096.
pub const GRPC_RING_SIZE_CAP: u64 = 4096;

/// `envoy-ring-hash` or `grpc-ring-hash`.
pub(crate) struct RingHash {
    grpc: bool,
    facts: Facts,
}

/// Envoy's ring hash: minimum 1,024 and maximum 8,388,608 points, XXH64 or MurmurHash2.
pub(crate) static ENVOY: RingHash =
    RingHash { grpc: false, facts: facts(&[Param::MinRingSize, Param::MaxRingSize, Param::HashFunction]) };

/// gRPC's ring hash: minimum 1,024 and maximum 4,096 points, both capped at
/// 4,096; XXH64 only (`hash_function` may say `xx_hash`); endpoints in
/// resolver order (C-core) or sorted (Go).
pub(crate) static GRPC: RingHash = RingHash {
    grpc: true,
    facts: facts(&[Param::MinRingSize, Param::MaxRingSize, Param::HashFunction, Param::EndpointOrder]),
};

/// Both take no seed or vnodes; host order places keys (fractional shares
/// go to the host reached first); weight 0 never drains (refused or read as 1).
const fn facts(takes: &'static [Param]) -> Facts {
    Facts { order_places_keys: true, weight_zero_drains: false, takes, ..Facts::DEFAULT }
}

const ENVOY_WEIGHT_RULE: &str =
    "Envoy host weights are whole numbers from 1 (load_balancing_weight is at least 1), summing to at most 4294967295";
const GRPC_WEIGHT_RULE: &str =
    "gRPC endpoint weights are whole numbers, 0 read as 1 (C-core), summing to at most 4294967295";

impl Scheme for RingHash {
    fn facts(&self) -> &Facts {
        &self.facts
    }

    /// Errors: [`RingError::InvalidConfig`] for a ring size of 0 or above
    /// 8,388,608, a minimum above the maximum (Envoy's and gRPC's own
    /// checks), and for a hash function the peer does not have.
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let invalid = |message: String| Err(RingError::InvalidConfig { message });
        let name = if self.grpc { "grpc-ring-hash" } else { "envoy-ring-hash" };
        let min = given.min_ring_size.unwrap_or(1024);
        let max = given.max_ring_size.unwrap_or(if self.grpc { 4096 } else { LARGEST_RING_SIZE });
        for (what, size) in [("min_ring_size", min), ("max_ring_size", max)] {
            if size == 0 || size > LARGEST_RING_SIZE {
                return invalid(format!("{what} {size} is not from 1 to {LARGEST_RING_SIZE}"));
            }
        }
        if min > max {
            return invalid(format!("ring hash: minimum_ring_size ({min}) > maximum_ring_size ({max})"));
        }
        let hash_function = given.hash_function.unwrap_or(HashFunction::XxHash);
        if !matches!(hash_function, HashFunction::XxHash | HashFunction::MurmurHash2)
            || (self.grpc && hash_function != HashFunction::XxHash)
        {
            let takes =
                if self.grpc { "gRPC hashes with xx_hash only" } else { "Envoy's are xx_hash and murmur_hash_2" };
            return invalid(format!(
                "hash_function {:?} does not apply to algorithm {name:?}: {takes}",
                hash_function.name()
            ));
        }
        let (min, max) =
            if self.grpc { (min.min(GRPC_RING_SIZE_CAP), max.min(GRPC_RING_SIZE_CAP)) } else { (min, max) };
        Ok(Params {
            min_ring_size: min,
            max_ring_size: max,
            hash_function: Some(hash_function),
            endpoint_order: self.grpc.then(|| given.endpoint_order.unwrap_or_default()),
            ..Params::base(given, None, KeyRule::Xxh64)?
        })
    }

    /// Errors: [`RingError::InvalidWeight`] (see the weight rules above),
    /// [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        let rule = if self.grpc { GRPC_WEIGHT_RULE } else { ENVOY_WEIGHT_RULE };
        let mut weights = Vec::with_capacity(nodes.len());
        let mut sum = 0u64;
        for node in nodes {
            let weight = node.weight();
            let refused = weight.fract() != 0.0 || weight > f64::from(u32::MAX) || (weight == 0.0 && !self.grpc);
            if refused {
                return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule });
            }
            let weight = (weight as u64).max(1);
            sum += weight;
            if sum > u64::from(u32::MAX) {
                return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight: node.weight(), rule });
            }
            weights.push(weight);
        }
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        if params.endpoint_order == Some(EndpointOrder::ByKey) {
            order.sort_by(|&a, &b| nodes[a].id().as_bytes().cmp(nodes[b].id().as_bytes()));
        }
        let hash = params.hash_function.expect("ring hash modes have a hash function");
        let (points, owners) = points(nodes, &weights, sum, &order, params, hash)?;
        Ok(Placement::Continuum(Continuum::new(points, owners, 64)))
    }
}

/// The sorted points and their owners: Envoy's `RingHashLoadBalancer::Ring`
/// construction in binary64, equal hashes in host order (Envoy's
/// `std::sort` leaves them unspecified).
fn points(
    nodes: &[Node],
    weights: &[u64],
    sum: u64,
    order: &[usize],
    params: &Params,
    hash: HashFunction,
) -> Result<(Vec<u64>, Vec<u32>), RingError> {
    if nodes.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let normalised: Vec<f64> = weights.iter().map(|&w| (w as f64 * 1.0) / sum as f64).collect();
    let min_weight = normalised.iter().copied().fold(1.0, f64::min);
    let scale = f64::min((min_weight * params.min_ring_size as f64).ceil() / min_weight, params.max_ring_size as f64);
    let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(scale.ceil() as usize);
    let mut label = Vec::new();
    let (mut current, mut target) = (0.0f64, 0.0f64);
    for &index in order {
        target += scale * normalised[index];
        let key = nodes[index].id().as_bytes();
        let mut i = 0u64;
        while current < target {
            if tagged.len() as u64 >= MAX_POINTS {
                return Err(too_many(nodes[index].id(), tagged.len() as u64 + 1));
            }
            label.clear();
            label.extend_from_slice(key);
            label.push(b'_');
            label.extend_from_slice(i.to_string().as_bytes());
            tagged.push((hash.hash64(&label), index as u32));
            i += 1;
            current += 1.0;
        }
    }
    let rank: Vec<u32> = {
        let mut rank = vec![0u32; nodes.len()];
        order.iter().enumerate().for_each(|(r, &i)| rank[i] = r as u32);
        rank
    };
    tagged.sort_by_key(|&(point, owner)| (point, rank[owner as usize]));
    Ok(tagged.into_iter().unzip())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(ids: &[(&str, f64)], min: u64, max: u64) -> Vec<(u64, usize)> {
        let nodes: Vec<Node> = ids.iter().map(|&(id, w)| Node::new(id, w)).collect();
        let given = RingParams { min_ring_size: Some(min), max_ring_size: Some(max), ..RingParams::default() };
        let params = ENVOY.resolve(&given).unwrap();
        match ENVOY.build(&params, &nodes, crate::hash::hash_point, PerNode::default()).unwrap() {
            Placement::Continuum(c) => c.points().collect(),
            Placement::Other(_) => unreachable!(),
        }
    }

    #[test]
    fn envoys_published_rings() {
        // ring_hash_lb_test.cc, Basic: six hosts, minimum_ring_size 12.
        let hosts: Vec<String> = (90..96).map(|p| format!("127.0.0.1:{p}")).collect();
        let ids: Vec<(&str, f64)> = hosts.iter().map(|h| (h.as_str(), 1.0)).collect();
        let expected: [(u64, usize); 12] = [
            (833437586790550860, 4),
            (928266305478181108, 2),
            (1033482794131418490, 0),
            (3551244743356806947, 5),
            (3851675632748031481, 3),
            (5583722120771150861, 1),
            (6311230543546372928, 1),
            (7700377290971790572, 3),
            (13144177310400110813, 5),
            (13444792449719432967, 2),
            (15516499411664133160, 4),
            (16117243373044804889, 0),
        ];
        assert_eq!(ring(&ids, 12, LARGEST_RING_SIZE), expected);
        // HostWeightedTinyRing: weights 1, 2, 3, minimum = maximum = 6.
        let tiny = ring(&[(&hosts[0], 1.0), (&hosts[1], 2.0), (&hosts[2], 3.0)], 6, 6);
        assert_eq!(
            tiny,
            [
                (928266305478181108, 2),
                (4443673547860492590, 2),
                (5583722120771150861, 1),
                (6311230543546372928, 1),
                (13444792449719432967, 2),
                (16117243373044804889, 0),
            ]
        );
    }

    #[test]
    fn ring_sizes_and_hashes_are_checked_as_the_peers_do() {
        let given = |min, max, hash| RingParams {
            min_ring_size: min,
            max_ring_size: max,
            hash_function: hash,
            ..RingParams::default()
        };
        assert!(ENVOY.resolve(&given(Some(10), Some(5), None)).is_err());
        assert!(ENVOY.resolve(&given(Some(0), None, None)).is_err());
        assert!(ENVOY.resolve(&given(None, Some(LARGEST_RING_SIZE + 1), None)).is_err());
        assert!(ENVOY.resolve(&given(None, None, Some(HashFunction::Sdbm))).is_err());
        assert!(GRPC.resolve(&given(None, None, Some(HashFunction::MurmurHash2))).is_err());
        // gRPC caps both sizes at 4,096 after checking them.
        let grpc = GRPC.resolve(&given(Some(100_000), Some(200_000), None)).unwrap();
        assert_eq!((grpc.min_ring_size, grpc.max_ring_size), (4096, 4096));
        let envoy = ENVOY.resolve(&given(None, None, None)).unwrap();
        assert_eq!((envoy.min_ring_size, envoy.max_ring_size), (1024, LARGEST_RING_SIZE));
    }
}
