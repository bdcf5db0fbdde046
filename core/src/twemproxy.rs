//! twemproxy (nutcracker 0.5) compatibility: `distribution: ketama` and
//! `modula` with every `hash:`, servers named or not, and `hash_tag`.
//! Sources: twitter/twemproxy `src/nc_conf.c`, `src/nc_server.c`,
//! `src/hashkit/nc_ketama.c`, `src/hashkit/nc_modula.c`; rules in
//! `core/SPEC.md` (*twemproxy*). The ketama continuum itself is the ketama
//! family's ([`crate::ketama`]).
//!
//! A server's label base is its `name` when the config gives one, used
//! literally (`mc:11211` is not an address there), else `host` when its
//! port is 11211 and `host:port` otherwise (a Unix socket `/path` gives
//! `/path:`). twemproxy sorts a pool's servers by that base, shorter first,
//! then bytewise: that order breaks ties between equal points and lays out
//! the modula table, so the order servers are listed in never places keys.

use serde::{Deserialize, Serialize};

use crate::continuum::{MAX_POINTS, too_many};
use crate::error::RingError;
use crate::hash::KeyHash;
use crate::ketama::{Distribution, Member};
use crate::node::Node;

/// What a twemproxy ring's node ids are (the `server_ids` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerIds {
    /// Server addresses, `host:port` (`[ipv6]:port`, `/socket`), as a
    /// server line without a name: the label base is `host` at port 11211,
    /// else `host:port`.
    #[default]
    Address,
    /// Label bases used literally: a server line's `name` (or, for a server
    /// without one, the base twemproxy would derive, written out).
    Label,
}

impl ServerIds {
    /// The name written in configs: `"address"` or `"label"`.
    pub fn name(self) -> &'static str {
        match self {
            ServerIds::Address => "address",
            ServerIds::Label => "label",
        }
    }
}

impl std::str::FromStr for ServerIds {
    type Err = RingError;

    /// Parses `"address"` or `"label"`. Errors: [`RingError::InvalidConfig`]
    /// naming the value.
    fn from_str(name: &str) -> Result<ServerIds, RingError> {
        [ServerIds::Address, ServerIds::Label].into_iter().find(|i| i.name() == name).ok_or_else(|| {
            RingError::InvalidConfig {
                message: format!("unknown server_ids {name:?}; expected \"address\" or \"label\""),
            }
        })
    }
}

/// twemproxy's parameters, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Params {
    pub(crate) distribution: Distribution,
    pub(crate) key_hash: KeyHash,
    pub(crate) server_ids: ServerIds,
    pub(crate) hash_tag: Option<[u8; 2]>,
}

impl Params {
    /// Errors: [`RingError::InvalidConfig`] for a distribution other than
    /// `ketama` and `modula` (`random` places no key predictably), for
    /// `murmur3` (twemproxy has no such hash), or a `hash_tag` that is not
    /// two bytes (twemproxy's own rule).
    pub(crate) fn resolve(
        distribution: Option<Distribution>,
        key_hash: Option<KeyHash>,
        server_ids: Option<ServerIds>,
        hash_tag: Option<&str>,
    ) -> Result<Params, RingError> {
        let invalid = |message: String| RingError::InvalidConfig { message };
        let algorithm = crate::Algorithm::Twemproxy;
        let distribution = distribution.or(algorithm.default_distribution()).expect("twemproxy has one");
        if !matches!(distribution, Distribution::Ketama | Distribution::Modula) {
            return Err(invalid(format!(
                "distribution {:?} does not apply to algorithm \"twemproxy\": it takes \"ketama\" or \"modula\"",
                distribution.name()
            )));
        }
        let key_hash = key_hash.or(algorithm.default_key_hash(distribution)).expect("twemproxy has one");
        if key_hash == KeyHash::Murmur3 {
            return Err(invalid(
                "key_hash \"murmur3\" does not apply to algorithm \"twemproxy\": twemproxy has no such hash".into(),
            ));
        }
        let hash_tag = match hash_tag {
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
        Ok(Params { distribution, key_hash, server_ids: server_ids.unwrap_or_default(), hash_tag })
    }

    /// The ketama family member of these parameters.
    pub(crate) fn member(self) -> Member {
        Member::twemproxy(self.key_hash, self.server_ids == ServerIds::Label)
    }
}

/// twemproxy's key hash: with a hash tag `ab`, only the bytes between the
/// first `a` and the first `b` after it are hashed, when that `b` exists and
/// is not right after the `a`; otherwise the whole key is. An empty key
/// hashes to 0 (`nc_server.c`, `server_pool_hash`).
pub(crate) fn key_hash(hash: KeyHash, tag: Option<[u8; 2]>, key: &[u8]) -> u32 {
    if key.is_empty() {
        return 0;
    }
    let tagged = tag.and_then(|[open, close]| {
        let start = key.iter().position(|&b| b == open)? + 1;
        let end = start + key[start..].iter().position(|&b| b == close)?;
        (end > start).then(|| &key[start..end])
    });
    hash.hash(tagged.unwrap_or(key))
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
pub(crate) fn modula_table(params: Params, nodes: &[Node]) -> Result<Vec<u32>, RingError> {
    let order = server_order(params.member(), nodes)?;
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
    fn hash_tags_follow_nc_server() {
        let tag = Some(*b"{}");
        let fnv = KeyHash::Fnv1a_64;
        assert_eq!(key_hash(fnv, tag, b"user:{42}:name"), fnv.hash(b"42"));
        // An empty tag, or no closing byte, hashes the whole key.
        assert_eq!(key_hash(fnv, tag, b"a{}b"), fnv.hash(b"a{}b"));
        assert_eq!(key_hash(fnv, tag, b"a{b"), fnv.hash(b"a{b"));
        // A later closing byte is never looked for: `{}x1}y` hashes whole.
        assert_eq!(key_hash(fnv, tag, b"{}x1}y"), fnv.hash(b"{}x1}y"));
        assert_eq!(key_hash(fnv, None, b""), 0);
    }

    #[test]
    fn servers_sort_shorter_first_then_bytewise() {
        let member = Member::twemproxy(KeyHash::Md5, false);
        let nodes = ["10.0.0.10:11211", "10.0.0.9:11211", "10.0.0.1:11212", "/tmp/s"].map(|id| Node::new(id, 1.0));
        assert_eq!(server_order(member, &nodes).unwrap(), [3, 1, 0, 2]);
        assert_eq!(member.label_base("/tmp/s").unwrap(), "/tmp/s:");
        assert_eq!(member.label_base("[::1]:22122").unwrap(), "::1:22122");
        let named = Member::twemproxy(KeyHash::Md5, true);
        assert_eq!(named.label_base("alpha:11211").unwrap(), "alpha:11211");
    }

    #[test]
    fn parameters_are_checked() {
        assert!(Params::resolve(Some(Distribution::ConsistentKetama), None, None, None).is_err());
        assert!(Params::resolve(None, Some(KeyHash::Murmur3), None, None).is_err());
        assert!(Params::resolve(None, None, None, Some("{")).is_err());
        let params = Params::resolve(None, None, None, Some("{}")).unwrap();
        assert_eq!(
            (params.distribution, params.key_hash, params.hash_tag),
            (Distribution::Ketama, KeyHash::Fnv1a_64, Some(*b"{}"))
        );
    }
}
