//! nginx compatibility: `hash $key consistent;` in
//! `ngx_http_upstream_hash_module` (the scheme of Cache::Memcached::Fast).
//!
//! A server of weight `w` gets `160 * w` points. Its id (nginx's server
//! string as written) is split at the last `:` when only digits follow it
//! (`unix:` sockets have no port); point `j` is
//! `crc32(host || 0x00 || port || previous point as 4 bytes little-endian)`,
//! the previous point starting at 0. Points are sorted and duplicates
//! dropped, keeping the point of the server with the smaller id bytes
//! (nginx's qsort leaves that choice unspecified). A key hashes to `crc32(key)` and
//! belongs to the first point `>=` its hash, wrapping.

use crate::continuum::{Continuum, MAX_POINTS, sort_by_point_then_id, too_many};
use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
use crate::params::{Given, Params};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};

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
    vnodes: None,
    seeded: false,
    order_places_keys: false,
    unit_weights: false,
    weight_zero_drains: true,
    takes: &[],
};

impl Scheme for Nginx {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &Given) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Named(KeyHash::Crc32a))
    }

    /// Errors: [`RingError::InvalidWeight`] (not a whole number),
    /// [`RingError::InvalidAddress`] (two ids nginx hashes alike),
    /// [`RingError::TooManyPoints`].
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        build(nodes).map(Placement::Continuum)
    }
}

fn build(nodes: &[Node]) -> Result<Continuum, RingError> {
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
    // nginx sorts with qsort, which leaves the order of equal points
    // unspecified; here the smaller id bytes keep the point, whatever the
    // order the servers were listed in.
    sort_by_point_then_id(&mut tagged, nodes);
    tagged.dedup_by_key(|&mut (point, _)| point);
    let (points, owners) = tagged.into_iter().unzip();
    Ok(Continuum::new(points, owners, 32))
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
