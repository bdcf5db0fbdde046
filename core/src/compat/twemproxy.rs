//! twemproxy (nutcracker 0.5) compatibility: `distribution: ketama` and
//! `modula` with every `hash:`, servers named or not, and `hash_tag`.
//! Sources: twitter/twemproxy `src/nc_conf.c`, `src/nc_server.c`,
//! `src/hashkit/nc_ketama.c`, `src/hashkit/nc_modula.c`; rules in
//! `core/SPEC.md` (*twemproxy*). The ketama continuum itself is the ketama
//! family's ([`crate::compat::ketama`]).
//!
//! A server's label base is its `name` when the config gives one, used
//! literally (`mc:11211` is not an address there), else `host` when its
//! port is 11211 and `host:port` otherwise (a Unix socket `/path` gives
//! `/path:`). twemproxy sorts a pool's servers by that base, shorter first,
//! then bytewise: that order breaks ties between equal points and lays out
//! the modula table, so the order servers are listed in never places keys.

use crate::compat::ketama::{LabelForm, Member, Share, Ties, ZeroWeight};
use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
pub use crate::params::ServerIds;
use crate::params::{Distribution, Param, Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{MAX_POINTS, too_many};
use crate::structures::modula::Modula;

/// The `twemproxy` algorithm.
pub(crate) struct Twemproxy;

static FACTS: Facts = Facts {
    hash_bits: 32,
    weight_zero_drains: false,
    takes: &[Param::Distribution, Param::KeyHash, Param::ServerIds, Param::HashTag],
    ..Facts::DEFAULT
};

impl Scheme for Twemproxy {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    /// `ketama`, twemproxy's default.
    fn default_distribution(&self) -> Option<Distribution> {
        Some(Distribution::Ketama)
    }

    /// `fnv1a_64`, whatever the distribution.
    fn default_key_hash(&self, _: Distribution) -> Option<KeyHash> {
        Some(KeyHash::Fnv1a_64)
    }

    /// Errors: [`RingError::InvalidConfig`] for a distribution other than
    /// `ketama` and `modula` (`random` places no key predictably), for
    /// `murmur3` (twemproxy has no such hash), or a `hash_tag` that is not
    /// two bytes (twemproxy's own rule).
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let invalid = |message: String| RingError::InvalidConfig { message };
        let distribution = given.distribution.unwrap_or(Distribution::Ketama);
        if !matches!(distribution, Distribution::Ketama | Distribution::Modula) {
            return Err(invalid(format!(
                "distribution {:?} does not apply to algorithm \"twemproxy\": it takes \"ketama\" or \"modula\"",
                distribution.name()
            )));
        }
        let key_hash = given.key_hash.unwrap_or(KeyHash::Fnv1a_64);
        if key_hash == KeyHash::Murmur3 {
            return Err(invalid(
                "key_hash \"murmur3\" does not apply to algorithm \"twemproxy\": twemproxy has no such hash".into(),
            ));
        }
        let hash_tag = match given.hash_tag.as_deref() {
            None => None,
            Some(tag) => match tag.as_bytes() {
                &[open, close] => Some([open, close]),
                _ => {
                    return Err(invalid(format!(
                        "hash_tag {tag:?} is not two bytes (twemproxy takes a hash_tag of exactly two characters, such as \"{{}}\")"
                    )));
                }
            },
        };
        Ok(Params {
            distribution: Some(distribution),
            server_ids: Some(given.server_ids.unwrap_or_default()),
            ..Params::base(given, None, KeyRule::Tagged(key_hash, hash_tag))?
        })
    }

    /// Errors: [`RingError::InvalidWeight`] (0, or not a whole number in
    /// u32), [`RingError::InvalidAddress`] (a bad address, or two ids with
    /// one label base), [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        let key_hash = params.key.named().expect("twemproxy hashes are named");
        let member = member(key_hash, params.server_ids == Some(ServerIds::Label));
        match params.distribution.expect("twemproxy has a distribution") {
            Distribution::Modula => Ok(Placement::other(Modula(modula_table(member, nodes)?))),
            _ => member.build(nodes).map(Placement::Continuum),
        }
    }
}

/// twemproxy's `distribution: ketama`: ids are label bases as written
/// (server `name`s) when `literal`, else addresses; MD5 points always,
/// weights whole and above 0.
fn member(key_hash: KeyHash, literal: bool) -> Member {
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

/// Node indices in twemproxy's server order: by label base, shorter first,
/// then bytewise. Errors as [`Member::check`] (a weight of 0 is refused, two
/// ids with one label base are an alias).
fn server_order(member: Member, nodes: &[Node]) -> Result<Vec<usize>, RingError> {
    let bases = member.check(nodes)?;
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| bases[a].len().cmp(&bases[b].len()).then(bases[a].as_bytes().cmp(bases[b].as_bytes())));
    Ok(order)
}

/// The modula table: `weight` consecutive entries per server in server
/// order; a key belongs to entry `hash mod len`.
///
/// Errors: those of [`server_order`], [`RingError::TooManyPoints`] for more
/// than 2^24 entries.
fn modula_table(member: Member, nodes: &[Node]) -> Result<Vec<u32>, RingError> {
    let order = server_order(member, nodes)?;
    let mut total = 0u64;
    for node in nodes {
        total += node.weight() as u64;
        if total > MAX_POINTS {
            return Err(too_many(node.id(), total));
        }
    }
    let mut table = Vec::with_capacity(total as usize);
    for i in order {
        table.extend(std::iter::repeat_n(i as u32, nodes[i].weight() as usize));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_sort_shorter_first_then_bytewise() {
        let addressed = member(KeyHash::Md5, false);
        let nodes = ["10.0.0.10:11211", "10.0.0.9:11211", "10.0.0.1:11212", "/tmp/s"].map(|id| Node::new(id, 1.0));
        assert_eq!(server_order(addressed, &nodes).unwrap(), [3, 1, 0, 2]);
        assert_eq!(addressed.label_base("/tmp/s").unwrap(), "/tmp/s:");
        assert_eq!(addressed.label_base("[::1]:22122").unwrap(), "::1:22122");
        let named = member(KeyHash::Md5, true);
        assert_eq!(named.label_base("alpha:11211").unwrap(), "alpha:11211");
    }

    #[test]
    fn parameters_are_checked() {
        let given = |distribution, key_hash, hash_tag: Option<&str>| RingParams {
            distribution,
            key_hash,
            hash_tag: hash_tag.map(str::to_owned),
            ..RingParams::default()
        };
        assert!(Twemproxy.resolve(&given(Some(Distribution::ConsistentKetama), None, None)).is_err());
        assert!(Twemproxy.resolve(&given(None, Some(KeyHash::Murmur3), None)).is_err());
        assert!(Twemproxy.resolve(&given(None, None, Some("{"))).is_err());
        let params = Twemproxy.resolve(&given(None, None, Some("{}"))).unwrap();
        assert_eq!(
            (params.distribution, params.key, params.server_ids),
            (Some(Distribution::Ketama), KeyRule::Tagged(KeyHash::Fnv1a_64, Some(*b"{}")), Some(ServerIds::Address))
        );
    }
}
