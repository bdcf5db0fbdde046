//! nginx compatibility: `hash $key consistent;` in
//! `ngx_http_upstream_hash_module` (the scheme of Cache::Memcached::Fast).
//!
//! A server of weight `w` gets `160 * w` points. Its id (nginx's server
//! string as written) is split at the last `:` when only digits follow it
//! (`unix:` sockets have no port); point `j` is
//! `crc32(host || 0x00 || port || previous point as 4 bytes little-endian)`,
//! the previous point starting at 0. Points are added server by server in
//! declaration order, sorted by value with glibc's `qsort` (a stable merge
//! sort), and of equal points the first is kept: the server listed earlier
//! wins a tie (checked against nginx 1.22 on Debian by
//! `py/tests/test_peer_nginx.py`). A key hashes to `crc32(key)` and belongs
//! to the first point `>=` its hash, wrapping.
//!
//! A server marked `down` keeps its points through the sort and the dedup
//! (so it still wins ties), and a key whose point is its own goes on to the
//! next point, as `ngx_http_upstream_get_chash_peer` steps past a server it
//! may not use; nginx gives up after 20 such steps and picks a server round
//! robin, so a ring whose down servers hold 21 consecutive points is
//! refused.

use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
use crate::params::{Param, Params, RingParams};
use crate::scheme::{Change, Facts, Lookup, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{Continuum, MAX_POINTS, too_many};

/// Points per unit of weight, fixed by nginx.
pub const NGINX_POINTS_PER_WEIGHT: u64 = 160;

pub(crate) const WEIGHT_RULE: &str = "nginx weights are whole numbers >= 0 (nginx's weight=N); 0 drains the server";

/// An nginx key hash: CRC-32 (IEEE) of the key bytes.
#[inline]
pub fn crc32_key_hash(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

/// Host and port bytes as nginx splits a server string.
fn host_port(server: &[u8]) -> (&[u8], &[u8]) {
    if server.len() >= 5 && server[..5].eq_ignore_ascii_case(b"unix:") {
        return (&server[5..], b"");
    }
    for (j, &c) in server.iter().rev().enumerate() {
        if c == b':' {
            let colon = server.len() - j - 1;
            return (&server[..colon], &server[colon + 1..]);
        }
        if !c.is_ascii_digit() {
            break;
        }
    }
    (server, b"")
}

/// Points of a node of this weight, checked against [`MAX_POINTS`].
fn point_count(node: &Node) -> Result<u64, RingError> {
    let weight = node.weight();
    if weight.fract() != 0.0 {
        return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule: WEIGHT_RULE });
    }
    let count = weight * NGINX_POINTS_PER_WEIGHT as f64;
    if count > MAX_POINTS as f64 {
        return Err(too_many(node.id(), count as u64));
    }
    Ok(count as u64)
}

/// Checks weights and the total point count.
fn validate(nodes: &[Node]) -> Result<(), RingError> {
    let mut total = 0u64;
    let mut servers = std::collections::HashMap::new();
    for node in nodes {
        // Two ids nginx hashes alike ("unix:/s" and "UNIX:/s") would share every point.
        if let Some(first) = servers.insert(host_port(node.id().as_bytes()), node.id()) {
            return Err(RingError::InvalidAddress {
                id: node.id().to_owned(),
                reason: format!("hashes as the same server as {first:?}"),
            });
        }
        total += point_count(node)?;
        if total > MAX_POINTS {
            return Err(too_many(node.id(), total));
        }
    }
    Ok(())
}

/// The `nginx` algorithm.
pub(crate) struct Nginx;

static FACTS: Facts = Facts {
    hash_bits: 32,
    // Equal points go to the server listed earlier.
    order_places_keys: true,
    takes: &[Param::Down],
    ..Facts::DEFAULT
};

/// Points nginx tries for a key before it gives up on hashing: the key's
/// own and the next 20 (`hp->tries > 20` in `ngx_http_upstream_get_chash_peer`).
pub const TRIED_POINTS: usize = 21;

impl Scheme for Nginx {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Named(KeyHash::Crc32a))
    }

    /// Errors: [`RingError::InvalidWeight`] (not a whole number),
    /// [`RingError::InvalidAddress`] (two ids nginx hashes alike),
    /// [`RingError::TooManyPoints`], [`RingError::InvalidConfig`] when
    /// servers marked down hold [`TRIED_POINTS`] consecutive points.
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, extra: PerNode) -> Result<Placement, RingError> {
        build(nodes, extra.down)
    }

    /// Rebuilds, nodes keeping their `down` marks (an added node is not down).
    fn derive(
        &self,
        _: &Params,
        parent: &Placement,
        nodes: &[Node],
        change: Change,
        _: PointHash,
    ) -> Result<Placement, RingError> {
        let down = parent.lookup().down().map(|marks| {
            let mut marks = marks.to_vec();
            match change {
                Change::Added => marks.push(false),
                Change::Removed(index) => {
                    marks.remove(index as usize);
                }
                Change::Reweighted(..) => {}
            }
            marks
        });
        build(nodes, down)
    }
}

/// The continuum of `nodes`, those marked in `down` (parallel to them)
/// keeping their points through the dedup and then losing them.
fn build(nodes: &[Node], down: Option<Vec<bool>>) -> Result<Placement, RingError> {
    validate(nodes)?;
    let mut tagged: Vec<(u64, u32)> = Vec::new();
    for (index, node) in nodes.iter().enumerate() {
        let (host, port) = host_port(node.id().as_bytes());
        let mut base = crc32fast::Hasher::new();
        base.update(host);
        base.update(b"\0");
        base.update(port);
        let mut previous = 0u32;
        for _ in 0..point_count(node)? {
            let mut hasher = base.clone();
            hasher.update(&previous.to_le_bytes());
            previous = hasher.finalize();
            tagged.push((u64::from(previous), index as u32));
        }
    }
    // nginx sorts with glibc's qsort, a merge sort and so stable: equal
    // points keep the order they were added in (servers as declared), and
    // the dedup keeps the first of them. (index, point) pairs are distinct,
    // so sorting them whole gives exactly that order.
    tagged.sort_unstable();
    tagged.dedup_by_key(|&mut (point, _)| point);
    let Some(down) = down.filter(|marks| marks.contains(&true)) else {
        let (points, owners) = tagged.into_iter().unzip();
        return Ok(Placement::Continuum(Continuum::new(points, owners, 32)));
    };
    refuse_round_robin(&tagged, &down, nodes)?;
    tagged.retain(|&(_, owner)| !down[owner as usize]);
    let (points, owners) = tagged.into_iter().unzip();
    Ok(Placement::other(DownSkipped { continuum: Continuum::new(points, owners, 32), down }))
}

/// [`RingError::InvalidConfig`] when servers marked down hold
/// [`TRIED_POINTS`] consecutive points of the deduplicated continuum
/// (wrapping) while some server is not down: nginx would send the keys of
/// the first of them round robin.
fn refuse_round_robin(tagged: &[(u64, u32)], down: &[bool], nodes: &[Node]) -> Result<(), RingError> {
    let is_down = |i: usize| down[tagged[i % tagged.len()].1 as usize];
    let Some(live) = (0..tagged.len()).find(|&i| !is_down(i)) else {
        return Ok(()); // every server is down: no key has an owner
    };
    // Scan one lap starting after a live point, so no run is cut by the wrap.
    let mut run = 0;
    for i in live + 1..=live + tagged.len() {
        if !is_down(i) {
            run = 0;
            continue;
        }
        run += 1;
        if run == TRIED_POINTS {
            let start = tagged[(i + 1 - TRIED_POINTS) % tagged.len()];
            return Err(RingError::InvalidConfig {
                message: format!(
                    "servers marked down hold {TRIED_POINTS} consecutive points from point {} (of {:?}): nginx \
                     tries a key's point and the next {}, then picks a server round robin, which no ring \
                     reproduces",
                    start.0,
                    nodes[start.1 as usize].id(),
                    TRIED_POINTS - 1
                ),
            });
        }
    }
    Ok(())
}

/// An nginx continuum some of whose servers are marked down: the points
/// left after the dedup, without theirs, and the marks.
#[derive(Debug)]
struct DownSkipped {
    continuum: Continuum,
    down: Vec<bool>,
}

impl Lookup for DownSkipped {
    fn owner(&self, hash: u64) -> usize {
        self.continuum.owner(hash)
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        Lookup::walk(&self.continuum, hash, visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        Lookup::mark_live(&self.continuum, live)
    }

    fn heap_bytes(&self) -> usize {
        self.continuum.heap_bytes() + self.down.len()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        Lookup::arc_ends(&self.continuum)
    }

    fn down(&self) -> Option<&[bool]> {
        Some(&self.down)
    }

    fn continuum(&self) -> Option<&Continuum> {
        Some(&self.continuum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_strings_split_like_nginx() {
        let split = |s: &str| {
            let (h, p) = host_port(s.as_bytes());
            (String::from_utf8(h.to_vec()).unwrap(), String::from_utf8(p.to_vec()).unwrap())
        };
        assert_eq!(split("127.0.0.1:11211"), ("127.0.0.1".into(), "11211".into()));
        assert_eq!(split("backend.example.com"), ("backend.example.com".into(), "".into()));
        assert_eq!(split("[::1]:80"), ("[::1]".into(), "80".into()));
        assert_eq!(split("[::1]"), ("[::1]".into(), "".into()));
        assert_eq!(split("unix:/tmp/mc.sock"), ("/tmp/mc.sock".into(), "".into()));
        assert_eq!(split("UNIX:/tmp/a:1"), ("/tmp/a:1".into(), "".into()));
        assert_eq!(split("host:"), ("host".into(), "".into()));
        assert_eq!(split("a:b"), ("a:b".into(), "".into()));
    }

    #[test]
    fn key_hash_is_crc32_ieee() {
        // The CRC-32 check value: crc32("123456789") = 0xCBF43926.
        assert_eq!(crc32_key_hash(b"123456789"), 0xCBF4_3926);
    }
}
