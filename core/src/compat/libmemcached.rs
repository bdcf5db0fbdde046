//! libmemcached 1.1 exactly as configured (`algorithm: "libmemcached"`): a
//! [`Distribution`] (`modula`, or one of the consistent ketama ones) and a
//! libhashkit key hash, weight 0 read as 1. Sources: awesomized/libmemcached
//! `src/libmemcached/hosts.cc` (`update_continuum`), `distribution.cc`,
//! `src/libhashkit/`; rules in `core/SPEC.md` (*libmemcached*), which maps
//! each pylibmc `behaviors` form to these parameters.
//!
//! The consistent distributions are ketama family members
//! ([`crate::compat::ketama`]): 100 points per server, one per label `host:port-i`,
//! each the key hash of its label, while every weight is at most 1; a weight
//! above 1 (or a `*_weighted` distribution) switches on weighted MD5 points
//! while keys keep the key hash. `modula` takes `hash mod server_count`
//! ([`crate::structures::modula`]).

use crate::compat::ketama::{LIBMEMCACHED_POINTS_PER_SERVER, LabelForm, Member, Share, Ties, ZeroWeight};
use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
use crate::params::{Distribution, Param, Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};
use crate::structures::modula::Modula;

/// The `libmemcached` algorithm.
pub(crate) struct Libmemcached;

static FACTS: Facts = Facts {
    hash_bits: 32,
    // Equal points go to the earlier server (libmemcached sorts by value,
    // then server index); `modula` takes list positions.
    order_places_keys: true,
    weight_zero_drains: false,
    takes: &[Param::Distribution, Param::KeyHash],
    ..Facts::DEFAULT
};

impl Scheme for Libmemcached {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    /// `consistent_ketama`, as `BEHAVIOR_KETAMA` sets it.
    fn default_distribution(&self) -> Option<Distribution> {
        Some(Distribution::ConsistentKetama)
    }

    /// [`Distribution::default_key_hash`]: MD5 after `KETAMA_WEIGHTED`, else one-at-a-time.
    fn default_key_hash(&self, distribution: Distribution) -> Option<KeyHash> {
        Some(distribution.default_key_hash())
    }

    /// Errors: [`RingError::InvalidConfig`] for a distribution libmemcached
    /// does not have (twemproxy's `ketama`, npm hashring's `hash_ring`) and
    /// for a key hash Debian's libhashkit does not build ([`check_hash`]).
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let distribution = given.distribution.unwrap_or(Distribution::ConsistentKetama);
        let message = match distribution {
            Distribution::Ketama => {
                "distribution \"ketama\" is twemproxy's; libmemcached's is \"consistent_ketama\" (or another consistent_*)"
            }
            Distribution::HashRing => {
                "distribution \"hash_ring\" is npm hashring's; libmemcached's are \"modula\" and the consistent_* ones"
            }
            _ => "",
        };
        if !message.is_empty() {
            return Err(RingError::InvalidConfig { message: message.into() });
        }
        let key_hash = given.key_hash.unwrap_or(distribution.default_key_hash());
        check_hash(key_hash)?;
        Ok(Params { distribution: Some(distribution), ..Params::base(given, None, KeyRule::Named(key_hash))? })
    }

    /// Errors: [`RingError::InvalidWeight`] (not a whole number in u32),
    /// [`RingError::InvalidAddress`] (a bad port, or two ids naming one
    /// server), [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        let key_hash = params.key.named().expect("libmemcached hashes are named");
        match params.distribution.expect("libmemcached has a distribution") {
            Distribution::Modula => {
                member(Distribution::Modula, key_hash, nodes).check(nodes)?;
                Ok(Placement::other(Modula((0..nodes.len() as u32).collect())))
            }
            d => member(d, key_hash, nodes).build(nodes).map(Placement::Continuum),
        }
    }
}

/// libmemcached with a consistent `distribution` and `key_hash`, for
/// these nodes: the weighted flag is on when the distribution sets it or
/// any weight (0 read as 1) is above 1.
fn member(distribution: Distribution, key_hash: KeyHash, nodes: &[Node]) -> Member {
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

/// Checks that libhashkit, as Debian's libmemcached 1.1.4 builds it, has
/// this key hash.
///
/// Errors: [`RingError::InvalidConfig`] for `hsieh` (built only with
/// `ENABLE_HASH_HSIEH`, which neither Debian's 1.1.4 nor the 1.0.16 in
/// pylibmc's wheel has: pylibmc refuses it) and for twemproxy's `crc16` and
/// `crc32a`, which libhashkit does not have.
fn check_hash(hash: KeyHash) -> Result<(), RingError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libmemcached_weights_choose_points_and_zero_reads_as_one() {
        let nodes = |weights: &[f64]| -> Vec<Node> {
            weights.iter().enumerate().map(|(i, &w)| Node::new(format!("10.0.0.{i}"), w)).collect()
        };
        let plain = member(Distribution::ConsistentKetama, KeyHash::OneAtATime, &nodes(&[1.0, 0.0, 1.0]));
        assert_eq!(plain.share, Share::PerServer(100));
        assert_eq!(plain.counts(&plain.validate(&nodes(&[1.0, 0.0, 1.0])).unwrap().1), [100, 100, 100]);
        let heavy = member(Distribution::ConsistentKetama, KeyHash::OneAtATime, &nodes(&[1.0, 2.0]));
        assert_eq!(heavy.share, Share::LibmemcachedDigests);
        assert_eq!(heavy.key_hash, KeyHash::OneAtATime);
        let weighted = member(Distribution::ConsistentWeighted, KeyHash::Md5, &nodes(&[0.0, 1.0]));
        assert_eq!(weighted.counts(&weighted.validate(&nodes(&[0.0, 1.0])).unwrap().1), [160, 160]);
    }

    #[test]
    fn distributions_and_hashes_of_other_peers_are_refused() {
        let given = |distribution, key_hash| RingParams { distribution, key_hash, ..RingParams::default() };
        for (distribution, named) in [(Distribution::Ketama, "\"ketama\""), (Distribution::HashRing, "\"hash_ring\"")] {
            match Libmemcached.resolve(&given(Some(distribution), None)) {
                Err(RingError::InvalidConfig { message }) => assert!(message.contains(named), "{message}"),
                other => panic!("{distribution:?}: {other:?}"),
            }
        }
        for hash in [KeyHash::Hsieh, KeyHash::Crc16, KeyHash::Crc32a] {
            assert!(Libmemcached.resolve(&given(None, Some(hash))).is_err(), "{hash:?}");
        }
        let weighted = Libmemcached.resolve(&given(Some(Distribution::ConsistentWeighted), None)).unwrap();
        assert_eq!(weighted.key, KeyRule::Named(KeyHash::Md5));
        let plain = Libmemcached.resolve(&given(None, None)).unwrap();
        assert_eq!(
            (plain.distribution, plain.key),
            (Some(Distribution::ConsistentKetama), KeyRule::Named(KeyHash::OneAtATime))
        );
    }

    #[test]
    fn unix_sockets_are_port_0() {
        let label = |member: Member, id| format!("{}-3", member.label_base(id).unwrap());
        let memcached = member(Distribution::ConsistentKetama, KeyHash::OneAtATime, &[]);
        assert_eq!(label(memcached, "/tmp/mc.sock"), "/tmp/mc.sock:0-3");
        let spy = member(Distribution::ConsistentKetamaSpy, KeyHash::OneAtATime, &[]);
        assert_eq!(label(spy, "/tmp/mc.sock"), "//tmp/mc.sock:0-3");
        assert_eq!(label(spy, "[::1]:11211"), "/::1:11211-3");
    }
}
