//! Ketama compatibility: libmemcached's weighted ketama (and its "spy"
//! variant) and the original last.fm libketama, bit-exact with both.
//!
//! Both hash point strings with MD5 and take four 32-bit points from each
//! digest (bytes `4h..4h+4`, little-endian, `h = 0..4`); keys hash to the
//! first four bytes of their MD5, little-endian. They differ in the point
//! strings and in how many digests a server gets, computed in float32 as the
//! C code does (weights 6, 5, 1, 3, 10: the weight-6 server gets 48 digests
//! from libketama and 47 from libmemcached).

use md5::{Digest, Md5};

use crate::algorithm::Algorithm;
use crate::continuum::{Continuum, sort_by_point_then_id};
use crate::error::RingError;
use crate::node::Node;
use crate::ring::{MAX_POINTS, too_many};

/// Port libmemcached leaves out of point strings (`MEMCACHED_DEFAULT_PORT`).
pub const DEFAULT_MEMCACHED_PORT: u16 = 11211;

pub(crate) const WEIGHT_RULE: &str =
    "ketama weights are whole numbers from 0 to 4294967295 (libmemcached's uint32_t weight); 0 drains the server";

/// A ketama key hash: the first 4 bytes of MD5(key), little-endian.
#[inline]
pub fn md5_key_hash(key: &[u8]) -> u32 {
    let digest = Md5::digest(key);
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// Host and port of a libmemcached server id: `host:port`, `[ipv6]:port`,
/// or a bare host (port 11211). A bare IPv6 address (more than one `:`, no
/// brackets) is a host with the default port.
///
/// Errors: [`RingError::InvalidAddress`] for a port above 65535 or 0, or an
/// unclosed `[`.
pub(crate) fn host_port(id: &str) -> Result<(&str, u16), RingError> {
    let invalid = |reason: String| RingError::InvalidAddress { id: id.to_owned(), reason };
    let (host, port) = if let Some(rest) = id.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(invalid("'[' without a closing ']'".to_owned()));
        };
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(invalid(format!("unexpected {after:?} after ']'"))),
        }
    } else if id.matches(':').count() == 1 {
        let (host, port) = id.split_once(':').expect("one ':'");
        (host, Some(port))
    } else {
        (id, None)
    };
    let port = match port {
        None => DEFAULT_MEMCACHED_PORT,
        Some(text) => match text.parse::<u16>() {
            Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => port,
            _ => return Err(invalid(format!("port {text:?} is not a number from 1 to 65535"))),
        },
    };
    if host.is_empty() {
        return Err(invalid("the host is empty".to_owned()));
    }
    Ok((host, port))
}

/// Whole-number weight of a node for the ketama modes.
fn whole_weight(node: &Node) -> Result<u64, RingError> {
    let weight = node.weight();
    if weight.fract() == 0.0 && weight <= f64::from(u32::MAX) {
        Ok(weight as u64)
    } else {
        Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule: WEIGHT_RULE })
    }
}

/// Checks every address and returns the whole-number weights; nodes with
/// weight 0 are left out of the continuum and of the server count, as if absent.
///
/// Two ids whose point strings are the same would share every point, and
/// one of them would silently own nothing: `h` and `h:11211` (the default
/// port is left out), or `[::1]:2` and the bare IPv6 host `::1:2` (both
/// `::1:2-i`). Such a pair is an [`RingError::InvalidAddress`] naming both.
fn validate(algorithm: Algorithm, nodes: &[Node]) -> Result<Vec<u64>, RingError> {
    let mut bases = std::collections::HashMap::new();
    let mut weights = Vec::with_capacity(nodes.len());
    for node in nodes {
        weights.push(whole_weight(node)?);
        // libketama's point strings are the ids as written, and ids are unique.
        if algorithm != Algorithm::Libketama
            && let Some(first) = bases.insert(label_base(algorithm, node.id())?, node.id())
        {
            return Err(RingError::InvalidAddress {
                id: node.id().to_owned(),
                reason: format!("names the same server as {first:?}: both hash the point strings of one server"),
            });
        }
    }
    Ok(weights)
}

/// Digests (groups of four points) per live server, in node order.
fn digests(algorithm: Algorithm, weights: &[u64]) -> Vec<u32> {
    let live = weights.iter().filter(|&&w| w > 0).count() as f32;
    let total = weights.iter().sum::<u64>() as f32;
    weights
        .iter()
        .map(|&weight| {
            if weight == 0 {
                return 0;
            }
            let pct = weight as f32 / total;
            match algorithm {
                // libketama: floorf(pct * 40.0 * (float)numservers), the
                // product taken in double and rounded to float by floorf.
                Algorithm::Libketama => ((f64::from(pct) * 40.0 * f64::from(live)) as f32).floor() as u32,
                // libmemcached: floor((float)(pct * 160 / 4 * (float)live + 1e-10)).
                _ => {
                    let product = pct * 160.0 / 4.0 * live;
                    ((f64::from(product) + 0.000_000_000_1) as f32).floor() as u32
                }
            }
        })
        .collect()
}

/// The continuum of a ketama mode. Ties between equal points go to the
/// earlier server in `ketama` and `ketama-spy`, as libmemcached sorts its
/// continuum by (value, server index); libketama's `qsort` leaves them
/// unspecified, so there the smaller id bytes come first.
pub(crate) fn build(algorithm: Algorithm, nodes: &[Node]) -> Result<Continuum, RingError> {
    let weights = validate(algorithm, nodes)?;
    let digests = digests(algorithm, &weights);
    let mut total = 0u64;
    for (node, &count) in nodes.iter().zip(&digests) {
        total += u64::from(count) * 4;
        if total > MAX_POINTS {
            return Err(too_many(node.id(), total));
        }
    }
    let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(digests.iter().map(|&d| d as usize * 4).sum());
    let mut label = String::new();
    for (index, (node, &count)) in nodes.iter().zip(&digests).enumerate() {
        let base = label_base(algorithm, node.id())?;
        for i in 0..count {
            use std::fmt::Write;
            label.clear();
            write!(label, "{base}-{i}").expect("writing to a String cannot fail");
            let digest = Md5::digest(label.as_bytes());
            for h in 0..4 {
                let point = u32::from_le_bytes(digest[4 * h..4 * h + 4].try_into().expect("4 bytes"));
                tagged.push((u64::from(point), index as u32));
            }
        }
    }
    if algorithm == Algorithm::Libketama {
        sort_by_point_then_id(&mut tagged, nodes);
    } else {
        tagged.sort_unstable();
    }
    let (points, owners) = tagged.into_iter().unzip();
    Ok(Continuum::new(points, owners, 32))
}

/// The part of a server's point strings before `-i`: the id as written
/// (libketama), `/host:port` (spy), `host` when the port is 11211 and
/// `host:port` otherwise (ketama).
fn label_base(algorithm: Algorithm, id: &str) -> Result<String, RingError> {
    Ok(match algorithm {
        Algorithm::Libketama => id.to_owned(),
        Algorithm::KetamaSpy => {
            let (host, port) = host_port(id)?;
            format!("/{host}:{port}")
        }
        _ => match host_port(id)? {
            (host, DEFAULT_MEMCACHED_PORT) => host.to_owned(),
            (host, port) => format!("{host}:{port}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float32_digest_counts_follow_each_library() {
        // Weights 6, 5, 1, 3, 10: libketama gives the weight-6 server 48
        // digests, libmemcached 47 (the products round differently in float32).
        let weights = [6, 5, 1, 3, 10];
        assert_eq!(digests(Algorithm::Libketama, &weights)[0], 48);
        assert_eq!(digests(Algorithm::Ketama, &weights)[0], 47);
        // Two servers 600:400 in libketama: 48 + 32 digests = 320 points.
        assert_eq!(digests(Algorithm::Libketama, &[600, 400]), [48, 32]);
        // Equal weights: 40 digests (160 points) each in both.
        assert_eq!(digests(Algorithm::Ketama, &[1, 1, 1]), [40, 40, 40]);
        assert_eq!(digests(Algorithm::Ketama, &[0, 2, 2]), [0, 40, 40]);
    }

    #[test]
    fn addresses_split_like_libmemcached_servers() {
        assert_eq!(host_port("10.0.1.1").unwrap(), ("10.0.1.1", 11211));
        assert_eq!(host_port("10.0.1.1:11212").unwrap(), ("10.0.1.1", 11212));
        assert_eq!(host_port("[::1]:11311").unwrap(), ("::1", 11311));
        assert_eq!(host_port("[::1]").unwrap(), ("::1", 11211));
        assert_eq!(host_port("fe80::1").unwrap(), ("fe80::1", 11211));
        for bad in ["h:70000", "h:0", "h:", "h:+1", ":11211", "[::1", "[::1]x"] {
            assert!(matches!(host_port(bad), Err(RingError::InvalidAddress { .. })), "{bad}");
        }
    }

    #[test]
    fn aliases_of_one_server_are_rejected_naming_both() {
        for (algorithm, pair) in [
            (Algorithm::Ketama, ["[::1]:2", "::1:2"]),
            (Algorithm::Ketama, ["h", "h:11211"]),
            (Algorithm::KetamaSpy, ["h", "h:11211"]),
            (Algorithm::KetamaSpy, ["[::1]", "::1"]),
        ] {
            let nodes = pair.map(|id| Node::new(id, 1.0));
            match build(algorithm, &nodes) {
                Err(RingError::InvalidAddress { id, reason }) => {
                    assert_eq!(id, pair[1]);
                    assert!(reason.contains(&format!("{:?}", pair[0])), "{reason}");
                }
                other => panic!("{algorithm} {pair:?}: {other:?}"),
            }
        }
        // Distinct servers whose strings merely look alike stay distinct.
        let nodes = ["[::1]:2", "::1:2"].map(|id| Node::new(id, 1.0));
        assert!(build(Algorithm::KetamaSpy, &nodes).is_ok(), "spy writes /::1:2 and /::1:2:11211");
    }

    #[test]
    fn point_strings_match_each_library() {
        let label = |algorithm, id| format!("{}-3", label_base(algorithm, id).unwrap());
        assert_eq!(label(Algorithm::Ketama, "10.0.1.1:11211"), "10.0.1.1-3");
        assert_eq!(label(Algorithm::Ketama, "10.0.1.1:11212"), "10.0.1.1:11212-3");
        assert_eq!(label(Algorithm::KetamaSpy, "10.0.1.1"), "/10.0.1.1:11211-3");
        assert_eq!(label(Algorithm::Libketama, "10.0.1.1:11211"), "10.0.1.1:11211-3");
    }
}
