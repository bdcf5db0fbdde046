//! The ketama family: one continuum builder (`Member`) parameterised by
//! label form, points per server, point hash, key hash, tie rule and
//! weight-0 rule, which every ketama-like peer mode declares in its own file
//! (`libmemcached.rs`, `twemproxy.rs`, `uhashring.rs`, `hashring_js.rs`);
//! and the three fixed modes here, bit-exact with their peers: `ketama` and
//! `ketama-spy` (libmemcached's weighted ketama, weight 0 draining) and
//! `libketama` (last.fm). Sources: awesomized/libmemcached
//! `src/libmemcached/hosts.cc` (`update_continuum`), RJ/ketama
//! `libketama/ketama.c`; rules in `core/SPEC.md` and
//! `docs/algorithms.md` (sources and versions).
//!
//! A weighted server gets `4 * digests` points: words 0..3 (little-endian)
//! of MD5 of each label `base-i`, `i < digests`, with `digests` computed in
//! float32 as each C library does (weights 6, 5, 1, 3, 10: the weight-6
//! server gets 48 digests from libketama and 47 from libmemcached). An
//! unweighted libmemcached server gets 100 points, one per label, each the
//! key hash of its label. Keys belong to the first point `>=` their hash.

use std::fmt::Write;

use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule, md5_high64, md5_words};
use crate::node::Node;
pub use crate::params::Distribution;
use crate::params::{Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{Continuum, MAX_POINTS, too_many};

/// A ketama key hash: the first 4 bytes of MD5(key), little-endian.
#[inline]
pub fn md5_key_hash(key: &[u8]) -> u32 {
    KeyHash::Md5.hash(key)
}

/// Port libmemcached leaves out of point strings (`MEMCACHED_DEFAULT_PORT`).
pub const DEFAULT_MEMCACHED_PORT: u16 = 11211;

/// libmemcached's points per unweighted server (`MEMCACHED_POINTS_PER_SERVER`).
pub const LIBMEMCACHED_POINTS_PER_SERVER: u32 = 100;

pub(crate) const WEIGHT_RULE: &str =
    "ketama weights are whole numbers from 0 to 4294967295 (libmemcached's uint32_t weight); 0 drains the server";

pub(crate) const UHASHRING_WEIGHT_RULE: &str =
    "uhashring weights are whole numbers (Python ints) from 0 to 4294967295; 0 keeps a node with no points";

pub(crate) const TWEMPROXY_WEIGHT_RULE: &str =
    "twemproxy weights are whole numbers from 1 to 4294967295 (a weight of 0 is a twemproxy configuration error)";

pub(crate) const LIBMEMCACHED_WEIGHT_RULE: &str =
    "libmemcached weights are whole numbers from 0 to 4294967295 (its uint32_t weight; 0 is read as 1)";

/// `ketama`, `ketama-spy` and `libketama`: one family member each, no
/// parameters, keys hashed by the first 4 bytes of MD5, little-endian.
pub(crate) struct Fixed {
    member: Member,
    facts: Facts,
}

/// libmemcached's weighted ketama (`CONSISTENT_KETAMA` with
/// `KETAMA_WEIGHTED` and MD5), weight 0 draining the server.
pub(crate) static KETAMA: Fixed = Fixed { member: Member::KETAMA, facts: FIXED_FACTS };

/// As [`KETAMA`], with spy labels `/host:port-i`.
pub(crate) static KETAMA_SPY: Fixed = Fixed { member: Member::KETAMA_SPY, facts: FIXED_FACTS };

/// last.fm libketama.
pub(crate) static LIBKETAMA: Fixed = Fixed { member: Member::LIBKETAMA, facts: FIXED_FACTS };

/// Facts of the three fixed modes: equal points go to the server listed
/// earlier in all three, so node order enters the fingerprint.
const FIXED_FACTS: Facts = Facts { hash_bits: 32, order_places_keys: true, ..Facts::DEFAULT };

impl Scheme for Fixed {
    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Named(KeyHash::Md5))
    }

    /// Errors: those of [`Member::build`].
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        self.member.build(nodes).map(Placement::Continuum)
    }
}

/// How the part of a point label before `-i` is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum LabelForm {
    /// The id as written (libketama).
    AsWritten,
    /// `host` when the port is 11211, else `host:port` (libmemcached).
    HostPort,
    /// `/host:port` (libmemcached's spy distribution).
    Spy,
    /// twemproxy's unnamed servers: `host` when the port is 11211, else
    /// `host:port`; a Unix socket `/path` is `/path:`.
    Twemproxy,
    /// npm hashring: the id as written, or the part before its first `:`
    /// when the part after it, read as a JavaScript number, equals this
    /// `default port`.
    HashringJs(Option<u16>),
}

/// How many digests (weighted) or points (per server) a server gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Share {
    /// libketama: `floorf(pct * 40.0 * (float)N)`, product in double.
    LibketamaDigests,
    /// libmemcached: `floorf((float)(pct * 160 / 4 * (float)N + 1e-10))`.
    LibmemcachedDigests,
    /// libmemcached unweighted: a fixed number of points, one per label,
    /// each the key hash of its label.
    PerServer(u32),
    /// uhashring's ketama: `(vnodes * N * w) // total` digests in exact
    /// integers, `N` counting every node (weight 0 too).
    UhashringKetama(u32),
    /// uhashring's default: `vnodes * w` labels, one 128-bit MD5 point each.
    UhashringPlain(u32),
    /// npm hashring: `Math.floor(w / total * vnodes * N)` digests in binary64,
    /// `replicas` MD5 words each.
    HashringJs { vnodes: u32, replicas: u32 },
}

impl Share {
    /// Points per label.
    fn per_label(self) -> u32 {
        match self {
            Share::PerServer(_) | Share::UhashringPlain(_) => 1,
            Share::HashringJs { replicas, .. } => replicas,
            _ => 4,
        }
    }
}

/// Whether equal points keep server order or id-byte order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Ties {
    /// Sorted by (value, server index): the earlier server wins
    /// (libmemcached sorts so; libketama `qsort`s by value alone, which
    /// glibc does with a stable merge sort, and takes the first of equal
    /// points).
    ServerOrder,
    /// Sorted by (value, label base length, label base bytes): twemproxy
    /// sorts its servers that way and `qsort`s points by value only.
    ShortLabelFirst,
    /// The later server first: uhashring keeps one owner per point value in
    /// a dict, the last node written.
    LaterServer,
}

/// What a weight of 0 means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ZeroWeight {
    /// The server is drained: left out.
    Drains,
    /// Stored as 1 (libmemcached).
    ReadsAsOne,
    /// A configuration error (twemproxy).
    Refused,
}

/// One member of the ketama family, fully resolved for a node list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Member {
    pub(crate) label: LabelForm,
    pub(crate) share: Share,
    pub(crate) key_hash: KeyHash,
    pub(crate) ties: Ties,
    pub(crate) zero: ZeroWeight,
    /// Ids starting with `/` are Unix sockets (libmemcached: port 0).
    pub(crate) unix_sockets: bool,
    /// Weights must be whole numbers (all but npm hashring).
    pub(crate) whole: bool,
    /// A key belongs to the first point strictly above its hash (uhashring's
    /// `bisect_right`), not at or above it.
    pub(crate) strictly_above: bool,
}

impl Member {
    /// libmemcached's weighted ketama, weight 0 draining the server.
    pub(crate) const KETAMA: Member = Member {
        label: LabelForm::HostPort,
        share: Share::LibmemcachedDigests,
        key_hash: KeyHash::Md5,
        ties: Ties::ServerOrder,
        zero: ZeroWeight::Drains,
        unix_sockets: false,
        whole: true,
        strictly_above: false,
    };
    /// libmemcached's weighted ketama with spy labels, weight 0 draining.
    const KETAMA_SPY: Member = Member { label: LabelForm::Spy, ..Member::KETAMA };
    /// last.fm libketama.
    const LIBKETAMA: Member = Member { label: LabelForm::AsWritten, share: Share::LibketamaDigests, ..Member::KETAMA };

    /// Checks weights and addresses as [`Member::build`] does, building
    /// nothing; returns each node's label base, in node order.
    pub(crate) fn check(self, nodes: &[Node]) -> Result<Vec<String>, RingError> {
        self.validate(nodes).map(|(bases, _)| bases)
    }

    /// The continuum of this member over `nodes`.
    ///
    /// Errors: [`RingError::InvalidWeight`] (not a whole number in u32),
    /// [`RingError::InvalidAddress`] (a bad port, or two ids naming one
    /// server), [`RingError::TooManyPoints`].
    pub(crate) fn build(self, nodes: &[Node]) -> Result<Continuum, RingError> {
        let (bases, weights) = self.validate(nodes)?;
        let counts = self.counts(&weights);
        let mut total = 0u64;
        for (node, &count) in nodes.iter().zip(&counts) {
            total += u64::from(count);
            if total > MAX_POINTS {
                return Err(too_many(node.id(), total));
            }
        }
        let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        let mut label = String::new();
        let per_label = self.share.per_label();
        for (index, (base, &count)) in bases.iter().zip(&counts).enumerate() {
            for i in 0..count / per_label {
                label.clear();
                write!(label, "{base}-{i}").expect("writing to a String cannot fail");
                let owner = index as u32;
                match self.share {
                    Share::PerServer(_) => tagged.push((u64::from(self.key_hash.hash(label.as_bytes())), owner)),
                    Share::UhashringPlain(_) => tagged.push((md5_high64(label.as_bytes()), owner)),
                    _ => tagged.extend(
                        md5_words(label.as_bytes())[..per_label as usize].iter().map(|&p| (u64::from(p), owner)),
                    ),
                }
            }
        }
        match self.ties {
            Ties::ServerOrder => tagged.sort_unstable(),
            Ties::LaterServer => tagged.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1))),
            Ties::ShortLabelFirst => tagged.sort_unstable_by(|a, b| {
                let (x, y) = (&bases[a.1 as usize], &bases[b.1 as usize]);
                a.0.cmp(&b.0).then(x.len().cmp(&y.len())).then(x.as_bytes().cmp(y.as_bytes()))
            }),
        }
        let (points, owners) = tagged.into_iter().unzip();
        let bits = if matches!(self.share, Share::UhashringPlain(_)) { 64 } else { 32 };
        let continuum = Continuum::new(points, owners, bits);
        Ok(if self.strictly_above { continuum.strictly_above() } else { continuum })
    }

    /// Checks every weight and address; returns each node's label base and
    /// whole-number weight (after the weight-0 rule).
    ///
    /// Two ids whose point strings are the same would share every point, and
    /// one of them would silently own nothing: `h` and `h:11211` (the default
    /// port is left out), or `[::1]:2` and the bare IPv6 host `::1:2` (both
    /// `::1:2-i`). Such a pair is an [`RingError::InvalidAddress`] naming both.
    pub(crate) fn validate(self, nodes: &[Node]) -> Result<(Vec<String>, Vec<f64>), RingError> {
        let rule = match (self.zero, self.label) {
            (_, LabelForm::AsWritten) if self.strictly_above => UHASHRING_WEIGHT_RULE,
            (ZeroWeight::Drains, _) => WEIGHT_RULE,
            (ZeroWeight::ReadsAsOne, _) => LIBMEMCACHED_WEIGHT_RULE,
            (ZeroWeight::Refused, _) => TWEMPROXY_WEIGHT_RULE,
        };
        let mut seen = std::collections::HashMap::new();
        let mut bases = Vec::with_capacity(nodes.len());
        let mut weights = Vec::with_capacity(nodes.len());
        for node in nodes {
            let weight = node.weight();
            let whole_breach = self.whole && (weight.fract() != 0.0 || weight > f64::from(u32::MAX));
            if whole_breach || (weight == 0.0 && self.zero == ZeroWeight::Refused) {
                return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule });
            }
            weights.push(if weight == 0.0 && self.zero == ZeroWeight::ReadsAsOne { 1.0 } else { weight });
            let base = self.label_base(node.id())?;
            // libketama's point strings are the ids as written, and ids are
            // unique; npm hashring lets two servers share labels (the earlier
            // one then owns their points), and so does this.
            if !matches!(self.label, LabelForm::AsWritten | LabelForm::HashringJs(_))
                && let Some(first) = seen.insert(base.clone(), node.id())
            {
                return Err(RingError::InvalidAddress {
                    id: node.id().to_owned(),
                    reason: format!("names the same server as {first:?}: both hash the point strings of one server"),
                });
            }
            bases.push(base);
        }
        Ok((bases, weights))
    }

    /// Points per server, in node order (0 for a drained server).
    pub(crate) fn counts(self, weights: &[f64]) -> Vec<u32> {
        let live = weights.iter().filter(|&&w| w > 0.0).count() as f32;
        let exact_total: f64 = weights.iter().sum();
        let total = exact_total as f32;
        let every = weights.len() as u128;
        let whole_total: u128 = weights.iter().map(|&w| w as u128).sum();
        weights
            .iter()
            .map(|&weight| {
                if weight == 0.0 {
                    return 0;
                }
                let pct = weight as f32 / total;
                let cap = |points: u128| points.min(u128::from(u32::MAX)) as u32;
                match self.share {
                    Share::UhashringKetama(vnodes) => {
                        cap(4 * (u128::from(vnodes) * every * weight as u128 / whole_total))
                    }
                    Share::UhashringPlain(vnodes) => cap(u128::from(vnodes) * weight as u128),
                    Share::HashringJs { vnodes, replicas } => {
                        let digests = (weight / exact_total * f64::from(vnodes) * weights.len() as f64).floor();
                        cap(u128::from(replicas) * digests.max(0.0) as u128)
                    }
                    Share::PerServer(points) => points,
                    // floorf(pct * 40.0 * (float)numservers), the product
                    // taken in double and rounded to float by floorf.
                    Share::LibketamaDigests => 4 * ((f64::from(pct) * 40.0 * f64::from(live)) as f32).floor() as u32,
                    // floor((float)(pct * 160 / 4 * (float)live + 1e-10)).
                    Share::LibmemcachedDigests => {
                        let product = pct * 160.0 / 4.0 * live;
                        4 * ((f64::from(product) + 0.000_000_000_1) as f32).floor() as u32
                    }
                }
            })
            .collect()
    }

    /// The part of a server's point strings before `-i`.
    pub(crate) fn label_base(self, id: &str) -> Result<String, RingError> {
        if self.label == LabelForm::AsWritten {
            return Ok(id.to_owned());
        }
        if self.label == LabelForm::Twemproxy && id.starts_with('/') {
            return Ok(format!("{id}:"));
        }
        if let LabelForm::HashringJs(default_port) = self.label {
            let (host, port) = id.split_once(':').unwrap_or((id, ""));
            let port = port.split(':').next().unwrap_or("");
            return Ok(match default_port {
                Some(wanted) if js_number(port) == f64::from(wanted) => host.to_owned(),
                _ => id.to_owned(),
            });
        }
        let (host, port) = if self.unix_sockets && id.starts_with('/') { (id, 0) } else { host_port(id)? };
        Ok(match (self.label, port) {
            (LabelForm::Spy, _) => format!("/{host}:{port}"),
            (_, DEFAULT_MEMCACHED_PORT) => host.to_owned(),
            _ => format!("{host}:{port}"),
        })
    }
}

/// JavaScript's `Number(text)` for the port strings npm hashring compares:
/// surrounding whitespace ignored, the empty string 0, decimal (with
/// fraction and exponent), `0x`/`0o`/`0b` integers and `Infinity`; anything
/// else NaN.
fn js_number(text: &str) -> f64 {
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [("0x", 16), ("0X", 16), ("0o", 8), ("0O", 8), ("0b", 2), ("0B", 2)] {
        if let Some(digits) = text.strip_prefix(prefix) {
            return u64::from_str_radix(digits, radix).map_or(f64::NAN, |v| v as f64);
        }
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned == "Infinity" {
        return if text.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    let decimal =
        unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'+' || b == b'-');
    if !decimal || unsigned.starts_with(['e', 'E']) {
        return f64::NAN;
    }
    text.parse::<f64>().unwrap_or(f64::NAN)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(member: Member, weights: &[u64]) -> Vec<u32> {
        let weights: Vec<f64> = weights.iter().map(|&w| w as f64).collect();
        member.counts(&weights).into_iter().map(|c| c / 4).collect()
    }

    #[test]
    fn float32_digest_counts_follow_each_library() {
        // Weights 6, 5, 1, 3, 10: libketama gives the weight-6 server 48
        // digests, libmemcached 47 (the products round differently in float32).
        let weights = [6, 5, 1, 3, 10];
        assert_eq!(digests(Member::LIBKETAMA, &weights)[0], 48);
        assert_eq!(digests(Member::KETAMA, &weights)[0], 47);
        // Two servers 600:400 in libketama: 48 + 32 digests = 320 points.
        assert_eq!(digests(Member::LIBKETAMA, &[600, 400]), [48, 32]);
        // Equal weights: 40 digests (160 points) each in both.
        assert_eq!(digests(Member::KETAMA, &[1, 1, 1]), [40, 40, 40]);
        assert_eq!(digests(Member::KETAMA, &[0, 2, 2]), [0, 40, 40]);
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
        for (member, pair) in [
            (Member::KETAMA, ["[::1]:2", "::1:2"]),
            (Member::KETAMA, ["h", "h:11211"]),
            (Member::KETAMA_SPY, ["h", "h:11211"]),
            (Member::KETAMA_SPY, ["[::1]", "::1"]),
        ] {
            let nodes = pair.map(|id| Node::new(id, 1.0));
            match member.build(&nodes) {
                Err(RingError::InvalidAddress { id, reason }) => {
                    assert_eq!(id, pair[1]);
                    assert!(reason.contains(&format!("{:?}", pair[0])), "{reason}");
                }
                other => panic!("{member:?} {pair:?}: {other:?}"),
            }
        }
        // Distinct servers whose strings merely look alike stay distinct.
        let nodes = ["[::1]:2", "::1:2"].map(|id| Node::new(id, 1.0));
        assert!(Member::KETAMA_SPY.build(&nodes).is_ok(), "spy writes /::1:2 and /::1:2:11211");
    }

    #[test]
    fn point_strings_match_each_library() {
        let label = |member: Member, id| format!("{}-3", member.label_base(id).unwrap());
        assert_eq!(label(Member::KETAMA, "10.0.1.1:11211"), "10.0.1.1-3");
        assert_eq!(label(Member::KETAMA, "10.0.1.1:11212"), "10.0.1.1:11212-3");
        assert_eq!(label(Member::KETAMA_SPY, "10.0.1.1"), "/10.0.1.1:11211-3");
        assert_eq!(label(Member::LIBKETAMA, "10.0.1.1:11211"), "10.0.1.1:11211-3");
    }
}
