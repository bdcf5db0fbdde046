//! A rough cost model for building a ring, so fuzz targets can skip configs
//! that are valid but expensive (a `ring` of ten million points builds in a
//! second; the fuzzer would find such inputs and then crawl).
//!
//! Configs the library rejects before allocating (over [`MAX_POINTS`], a
//! non-prime table size, an invalid weight) cost next to nothing and are
//! never skipped: those rejections are worth fuzzing.

use shardring::{Algorithm, DEFAULT_VNODES, MAX_POINTS, RingConfig};

/// Inputs needing more work than this (points hashed, table slots filled)
/// are skipped. A million points build in well under 100 ms.
pub const MAX_WORK: u64 = 1 << 20;

/// Default Maglev table size (`core/SPEC.md`).
const DEFAULT_TABLE_SIZE: u64 = 65_537;

/// Whether building `config` would take more than [`MAX_WORK`].
pub fn too_costly(config: &RingConfig) -> bool {
    build_work(config) > MAX_WORK
}

/// Approximate work (points hashed or table slots claimed) to build `config`.
/// Over-estimates rather than under-estimates.
pub fn build_work(config: &RingConfig) -> u64 {
    let n = config.nodes.len() as u64;
    let weights: Vec<f64> = config.nodes.iter().map(|node| node.weight).collect();
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return n; // rejected while validating nodes
    }
    let live = weights.iter().filter(|&&w| w > 0.0).count() as u64;
    match config.params.algorithm {
        Algorithm::Ring => {
            let vnodes = f64::from(config.params.vnodes.unwrap_or(DEFAULT_VNODES));
            let total: f64 = weights.iter().map(|&w| if w > 0.0 { (vnodes * w).round().max(1.0) } else { 0.0 }).sum();
            if total > MAX_POINTS as f64 { n } else { total as u64 + n }
        }
        // At most 40 digests (160 points) per server on average.
        // libmemcached: 100 points per server unweighted, the same average weighted.
        Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama | Algorithm::Libmemcached => 160 * n + n,
        // twemproxy: the continuum as ketama's, or a modula table of `sum of weights` entries.
        Algorithm::Twemproxy => {
            let total: f64 = weights.iter().sum();
            if total > MAX_POINTS as f64 { 160 * n + n } else { total as u64 + 160 * n + n }
        }
        Algorithm::Nginx => {
            let total: f64 = weights.iter().map(|&w| w * 160.0).sum();
            if total > MAX_POINTS as f64 { n } else { total as u64 + n }
        }
        // Envoy's and gRPC's rings: `min(ceil(min_w * min) / min_w, max)` points.
        Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash => {
            let cap = if config.params.algorithm == Algorithm::GrpcRingHash { 4096 } else { 8 << 20 };
            let min = config.params.min_ring_size.unwrap_or(1024).min(cap) as f64;
            let max = config.params.max_ring_size.unwrap_or(cap).min(cap) as f64;
            let sum: f64 = weights.iter().map(|&w| w.max(1.0)).sum();
            let min_w = weights.iter().map(|&w| w.max(1.0) / sum).fold(1.0, f64::min);
            ((min_w * min).ceil() / min_w).min(max) as u64 + n
        }
        // HAProxy: 16 nodes per unit of weight, weights up to 256.
        Algorithm::Haproxy => weights.iter().map(|&w| (16.0 * w.min(256.0)) as u64).sum::<u64>() + n,
        Algorithm::Maglev | Algorithm::EnvoyMaglev => {
            let size = config.params.table_size.map_or(DEFAULT_TABLE_SIZE, u64::from);
            if size > MAX_POINTS || !is_prime(size) || live == 0 {
                return n + 64; // rejected (or an empty table), after a short primality test
            }
            // Rounds until the table is full: size / (sum of w / max w); each round visits every live node.
            let max = weights.iter().copied().fold(0.0, f64::max);
            let rate_sum: f64 = weights.iter().map(|&w| w / max).sum();
            let rounds = (size as f64 / rate_sum).ceil() + 1.0;
            (rounds * live as f64).min(u64::MAX as f64) as u64 + size
        }
        Algorithm::Slots => 16_384 + n,
        // uhashring: vnodes x weight points per node; its ketama and npm hashring: about vnodes x 4 per node.
        Algorithm::Uhashring | Algorithm::UhashringKetama | Algorithm::HashringJs => {
            let vnodes = f64::from(config.params.vnodes.unwrap_or(160));
            let total: f64 = weights.iter().map(|&w| vnodes * w.max(1.0) * 4.0).sum();
            if total > MAX_POINTS as f64 { n } else { total as u64 + n }
        }
        _ => n,
    }
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}
