//! npm `hashring` 3.2.0 (Node), for moving off that package without
//! emptying caches (`algorithm: "hashring-js"`): its `ketama` compatibility
//! (4 points per digest, the default) and `hash_ring` (3), and its `default
//! port`. Source: 3rd-Eden/node-hashring `index.js`; rules in `core/SPEC.md`
//! (*uhashring and hashring-js*).
//!
//! A server of weight `w` gets `Math.floor(w / total * vnodes * N)` digests
//! (binary64), each `replicas` little-endian words of the MD5 of
//! `label-i`; weight 0 is read as 1 and any positive weight is taken. A key
//! takes the first point at or above its MD5 word, equal points going to the
//! server listed earlier.

use crate::compat::ketama::{LabelForm, Member, Share, ZeroWeight};
use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
use crate::params::{Distribution, Param, Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};

/// The `hashring-js` algorithm.
pub(crate) struct HashringJs;

static FACTS: Facts = Facts {
    hash_bits: 32,
    vnodes: Some(40),
    order_places_keys: true,
    weight_zero_drains: false,
    takes: &[Param::Distribution, Param::DefaultPort],
    ..Facts::DEFAULT
};

impl Scheme for HashringJs {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    /// `ketama`, npm hashring's default compatibility.
    fn default_distribution(&self) -> Option<Distribution> {
        Some(Distribution::Ketama)
    }

    /// Errors: [`RingError::InvalidConfig`] for a distribution other than
    /// `ketama` and `hash_ring`, and for `default_port` 0.
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        if given.default_port == Some(0) {
            return Err(RingError::InvalidConfig {
                message: "default_port 0 is no port (npm hashring reads 0 as none); leave default_port out".into(),
            });
        }
        let distribution = given.distribution.unwrap_or(Distribution::Ketama);
        if !matches!(distribution, Distribution::Ketama | Distribution::HashRing) {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "distribution {:?} does not apply to algorithm \"hashring-js\": its compatibility is \"ketama\" (4 points per digest, the default) or \"hash_ring\" (3)",
                    distribution.name()
                ),
            });
        }
        Ok(Params {
            distribution: Some(distribution),
            default_port: given.default_port,
            ..Params::base(given, FACTS.vnodes, KeyRule::Named(KeyHash::Md5))?
        })
    }

    /// Errors: [`RingError::InvalidWeight`], [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        let replicas = if params.distribution == Some(Distribution::HashRing) { 3 } else { 4 };
        member(params.vnodes, replicas, params.default_port).build(nodes).map(Placement::Continuum)
    }
}

/// npm hashring 3.2.0: `replicas` MD5 words per digest (4 for its
/// `ketama` compatibility, 3 for `hash_ring`), weight 0 read as 1, any
/// positive weights; equal points go to the node listed earlier.
fn member(vnodes: u32, replicas: u32, default_port: Option<u16>) -> Member {
    Member {
        label: LabelForm::HashringJs(default_port),
        share: Share::HashringJs { vnodes, replicas },
        zero: ZeroWeight::ReadsAsOne,
        whole: false,
        ..Member::KETAMA
    }
}
