//! The ketama family: one continuum builder parameterised by label form,
//! points per server, point hash, key hash, tie rule and weight-0 rule,
//! which gives libmemcached's every consistent distribution (`ketama`,
//! `ketama-spy`, `libmemcached`) and the original last.fm libketama
//! (`libketama`), bit-exact with each. Sources: awesomized/libmemcached
//! `src/libmemcached/hosts.cc` (`update_continuum`), RJ/ketama
//! `libketama/ketama.c`; rules in `core/SPEC.md` and
//! `shared/specs/ketama-family.md`.
//!
//! A weighted server gets `4 * digests` points: words 0..3 (little-endian)
//! of MD5 of each label `base-i`, `i < digests`, with `digests` computed in
//! float32 as each C library does (weights 6, 5, 1, 3, 10: the weight-6
//! server gets 48 digests from libketama and 47 from libmemcached). An
//! unweighted libmemcached server gets 100 points, one per label, each the
//! key hash of its label. Keys belong to the first point `>=` their hash.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::continuum::{Continuum, MAX_POINTS, sort_by_point_then_id, too_many};
use crate::error::RingError;
use crate::hash::{KeyHash, md5_high64, md5_words};
use crate::node::Node;

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

const UHASHRING_WEIGHT_RULE: &str =
    "uhashring weights are whole numbers (Python ints) from 0 to 4294967295; 0 keeps a node with no points";

const TWEMPROXY_WEIGHT_RULE: &str =
    "twemproxy weights are whole numbers from 1 to 4294967295 (a weight of 0 is a twemproxy configuration error)";

const LIBMEMCACHED_WEIGHT_RULE: &str =
    "libmemcached weights are whole numbers from 0 to 4294967295 (its uint32_t weight; 0 is read as 1)";

/// A libmemcached distribution, as `MEMCACHED_BEHAVIOR_DISTRIBUTION` and the
/// ketama behaviours leave it when the servers are added (the `libmemcached`
/// algorithm's `distribution` parameter). pylibmc equivalents are given in
/// pylibmc's own order of applying behaviours (`hash`, `ketama`,
/// `ketama_weighted`, `distribution`), whatever order its dict lists them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Distribution {
    /// libmemcached: `h mod server_count`, weights ignored (libmemcached's
    /// and pylibmc's default, no behaviours). twemproxy: `weight` entries per
    /// server in server order, entry `h mod total_weight`.
    Modula,
    /// twemproxy's `distribution: ketama` (its default); npm hashring's
    /// `ketama` compatibility (4 points per digest, its default).
    Ketama,
    /// npm hashring's `hash_ring` compatibility: 3 points per digest.
    HashRing,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA` (`BEHAVIOR_KETAMA=1`;
    /// pylibmc `{"ketama": True}` or `{"distribution": "consistent ketama"}`):
    /// 100 points per server hashed with the key hash while every weight is
    /// at most 1; a weight above 1 switches on weighted MD5 points, while
    /// keys keep the key hash. Key hash default `one_at_a_time`.
    ConsistentKetama,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED`
    /// (`BEHAVIOR_KETAMA_WEIGHTED=1`; pylibmc `{"ketama_weighted": True}`):
    /// weighted MD5 points always. Key hash default `md5`, which the
    /// behaviour sets (pylibmc always ends with MD5 here).
    ConsistentWeighted,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY` (pylibmc
    /// `{"distribution": "consistent ketama spy"}`): labels `/host:port-i`,
    /// otherwise as `consistent_ketama`. Key hash default `one_at_a_time`.
    ConsistentKetamaSpy,
    /// `BEHAVIOR_KETAMA_WEIGHTED=1` and then `DISTRIBUTION=CONSISTENT_KETAMA_SPY`
    /// (pylibmc `{"ketama_weighted": True, "distribution": "consistent ketama
    /// spy"}`): spy labels, weighted MD5 points always. Key hash default `md5`.
    ConsistentKetamaSpyWeighted,
}

impl Distribution {
    /// Every distribution.
    pub const ALL: [Distribution; 7] = [
        Distribution::Modula,
        Distribution::Ketama,
        Distribution::HashRing,
        Distribution::ConsistentKetama,
        Distribution::ConsistentWeighted,
        Distribution::ConsistentKetamaSpy,
        Distribution::ConsistentKetamaSpyWeighted,
    ];

    /// The name written in configs (`"consistent_ketama"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Modula => "modula",
            Distribution::Ketama => "ketama",
            Distribution::HashRing => "hash_ring",
            Distribution::ConsistentKetama => "consistent_ketama",
            Distribution::ConsistentWeighted => "consistent_weighted",
            Distribution::ConsistentKetamaSpy => "consistent_ketama_spy",
            Distribution::ConsistentKetamaSpyWeighted => "consistent_ketama_spy_weighted",
        }
    }

    /// The key hash libmemcached ends with when no `HASH` behaviour follows:
    /// MD5 when `KETAMA_WEIGHTED` was set, else one-at-a-time. (twemproxy's
    /// default, whatever the distribution, is `fnv1a_64`.)
    pub fn default_key_hash(self) -> KeyHash {
        match self {
            Distribution::ConsistentWeighted | Distribution::ConsistentKetamaSpyWeighted => KeyHash::Md5,
            _ => KeyHash::OneAtATime,
        }
    }

    fn weighted(self) -> bool {
        matches!(self, Distribution::ConsistentWeighted | Distribution::ConsistentKetamaSpyWeighted)
    }

    fn spy(self) -> bool {
        matches!(self, Distribution::ConsistentKetamaSpy | Distribution::ConsistentKetamaSpyWeighted)
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Distribution {
    type Err = RingError;

    /// Parses a name as written by [`Distribution::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the unknown value and the known ones.
    fn from_str(name: &str) -> Result<Distribution, RingError> {
        Distribution::ALL.into_iter().find(|d| d.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown distribution {name:?}; expected one of {}",
                Distribution::ALL.map(Distribution::name).join(", ")
            ),
        })
    }
}

/// How the part of a point label before `-i` is written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LabelForm {
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
enum Share {
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
enum Ties {
    /// Sorted by (value, server index): the earlier server wins (libmemcached).
    ServerOrder,
    /// Sorted by (value, id bytes): libketama's `qsort` leaves ties
    /// unspecified, so the order is made independent of the list.
    IdBytes,
    /// Sorted by (value, label base length, label base bytes): twemproxy
    /// sorts its servers that way and `qsort`s points by value only.
    ShortLabelFirst,
    /// The later server first: uhashring keeps one owner per point value in
    /// a dict, the last node written.
    LaterServer,
}

/// What a weight of 0 means.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ZeroWeight {
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
    label: LabelForm,
    share: Share,
    key_hash: KeyHash,
    ties: Ties,
    zero: ZeroWeight,
    /// Ids starting with `/` are Unix sockets (libmemcached: port 0).
    unix_sockets: bool,
    /// Weights must be whole numbers (all but npm hashring).
    whole: bool,
    /// A key belongs to the first point strictly above its hash (uhashring's
    /// `bisect_right`), not at or above it.
    strictly_above: bool,
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
    pub(crate) const KETAMA_SPY: Member = Member { label: LabelForm::Spy, ..Member::KETAMA };
    /// last.fm libketama.
    pub(crate) const LIBKETAMA: Member =
        Member { label: LabelForm::AsWritten, share: Share::LibketamaDigests, ties: Ties::IdBytes, ..Member::KETAMA };

    /// libmemcached with a consistent `distribution` and `key_hash`, for
    /// these nodes: the weighted flag is on when the distribution sets it or
    /// any weight (0 read as 1) is above 1.
    pub(crate) fn libmemcached(distribution: Distribution, key_hash: KeyHash, nodes: &[Node]) -> Member {
        let weighted = distribution.weighted() || nodes.iter().any(|n| n.weight() > 1.0);
        Member {
            label: if distribution.spy() { LabelForm::Spy } else { LabelForm::HostPort },
            share: if weighted { Share::LibmemcachedDigests } else { Share::PerServer(LIBMEMCACHED_POINTS_PER_SERVER) },
            key_hash,
            ties: Ties::ServerOrder,
            zero: ZeroWeight::ReadsAsOne,
            unix_sockets: true,
            ..Member::KETAMA
        }
    }

    /// twemproxy's `distribution: ketama`: ids are label bases as written
    /// (server `name`s) when `literal`, else addresses; MD5 points always,
    /// weights whole and above 0.
    pub(crate) fn twemproxy(key_hash: KeyHash, literal: bool) -> Member {
        Member {
            label: if literal { LabelForm::AsWritten } else { LabelForm::Twemproxy },
            share: Share::LibmemcachedDigests,
            key_hash,
            ties: Ties::ShortLabelFirst,
            zero: ZeroWeight::Refused,
            unix_sockets: true,
            ..Member::KETAMA
        }
    }

    /// uhashring 2.x with `hash_fn="ketama"` (`ketama`) or its default MD5
    /// ring: ids are node names as written; weight 0 keeps a node with no
    /// points; equal points go to the node listed later.
    pub(crate) fn uhashring(ketama: bool, vnodes: u32) -> Member {
        Member {
            label: LabelForm::AsWritten,
            share: if ketama { Share::UhashringKetama(vnodes) } else { Share::UhashringPlain(vnodes) },
            key_hash: KeyHash::Md5,
            ties: Ties::LaterServer,
            strictly_above: true,
            ..Member::KETAMA
        }
    }

    /// npm hashring 3.2.0: `replicas` MD5 words per digest (4 for its
    /// `ketama` compatibility, 3 for `hash_ring`), weight 0 read as 1, any
    /// positive weights; equal points go to the node listed earlier.
    pub(crate) fn hashring_js(vnodes: u32, replicas: u32, default_port: Option<u16>) -> Member {
        Member {
            label: LabelForm::HashringJs(default_port),
            share: Share::HashringJs { vnodes, replicas },
            zero: ZeroWeight::ReadsAsOne,
            whole: false,
            ..Member::KETAMA
        }
    }

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
            Ties::IdBytes => sort_by_point_then_id(&mut tagged, nodes),
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
    fn validate(self, nodes: &[Node]) -> Result<(Vec<String>, Vec<f64>), RingError> {
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
    fn counts(self, weights: &[f64]) -> Vec<u32> {
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

/// Checks that libhashkit, as Debian's libmemcached 1.1.4 builds it, has
/// this key hash.
///
/// Errors: [`RingError::InvalidConfig`] for `hsieh` (built only with
/// `ENABLE_HASH_HSIEH`, which neither Debian's 1.1.4 nor the 1.0.16 in
/// pylibmc's wheel has: pylibmc refuses it) and for twemproxy's `crc16` and
/// `crc32a`, which libhashkit does not have.
pub(crate) fn check_libmemcached_hash(hash: KeyHash) -> Result<(), RingError> {
    let why = match hash {
        KeyHash::Hsieh => {
            "libmemcached is built without it (ENABLE_HASH_HSIEH is off in Debian's 1.1.4 and in the 1.0.16 of pylibmc's wheel, which refuses it)"
        }
        KeyHash::Crc16 | KeyHash::Crc32a => "it is twemproxy's; libhashkit has no such hash (its \"crc\" is crc32)",
        _ => return Ok(()),
    };
    Err(RingError::InvalidConfig {
        message: format!("key_hash {:?} does not apply to algorithm \"libmemcached\": {why}", hash.name()),
    })
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
    fn libmemcached_weights_choose_points_and_zero_reads_as_one() {
        let nodes = |weights: &[f64]| -> Vec<Node> {
            weights.iter().enumerate().map(|(i, &w)| Node::new(format!("10.0.0.{i}"), w)).collect()
        };
        let plain = Member::libmemcached(Distribution::ConsistentKetama, KeyHash::OneAtATime, &nodes(&[1.0, 0.0, 1.0]));
        assert_eq!(plain.share, Share::PerServer(100));
        assert_eq!(plain.counts(&plain.validate(&nodes(&[1.0, 0.0, 1.0])).unwrap().1), [100, 100, 100]);
        let heavy = Member::libmemcached(Distribution::ConsistentKetama, KeyHash::OneAtATime, &nodes(&[1.0, 2.0]));
        assert_eq!(heavy.share, Share::LibmemcachedDigests);
        assert_eq!(heavy.key_hash, KeyHash::OneAtATime);
        let weighted = Member::libmemcached(Distribution::ConsistentWeighted, KeyHash::Md5, &nodes(&[0.0, 1.0]));
        assert_eq!(weighted.counts(&weighted.validate(&nodes(&[0.0, 1.0])).unwrap().1), [160, 160]);
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
        let memcached = Member::libmemcached(Distribution::ConsistentKetama, KeyHash::OneAtATime, &[]);
        assert_eq!(label(memcached, "/tmp/mc.sock"), "/tmp/mc.sock:0-3");
        let spy = Member::libmemcached(Distribution::ConsistentKetamaSpy, KeyHash::OneAtATime, &[]);
        assert_eq!(label(spy, "/tmp/mc.sock"), "//tmp/mc.sock:0-3");
        assert_eq!(label(spy, "[::1]:11211"), "/::1:11211-3");
    }
}
