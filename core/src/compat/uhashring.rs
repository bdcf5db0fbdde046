//! uhashring 2.x (Python), for moving off that library without emptying
//! caches: its default ring (`algorithm: "uhashring"`) and `hash_fn="ketama"`
//! (`"uhashring-ketama"`). Source: ultrabug/uhashring `uhashring/ring.py`,
//! `ring_meta.py`, `ring_ketama.py`; rules in `core/SPEC.md` (*uhashring and
//! hashring-js*).
//!
//! The default ring gives a node `vnodes * weight` labels `name-i`, each one
//! point: the top 64 bits of its 128-bit MD5, big-endian, as keys hash too.
//! The ketama ring gives `(vnodes * N * w) // total` digests of 4 MD5 words
//! each, in exact integers. Either way a key takes the first point strictly
//! above its hash (`bisect_right`), and equal points go to the node listed
//! later (one dict entry per point value, the last written).

use crate::compat::ketama::{LabelForm, Member, Share, Ties};
use crate::error::RingError;
use crate::hash::{KeyHash, KeyRule};
use crate::node::Node;
use crate::params::{Params, RingParams};
use crate::scheme::{Facts, PerNode, Placement, PointHash, Scheme};

/// `uhashring` or `uhashring-ketama`.
pub(crate) struct Uhashring {
    ketama: bool,
    facts: Facts,
}

/// uhashring's default ring: 160 vnodes per unit of weight.
pub(crate) static UHASHRING: Uhashring = Uhashring { ketama: false, facts: facts(64, 160) };

/// uhashring with `hash_fn="ketama"`: 40 vnodes.
pub(crate) static UHASHRING_KETAMA: Uhashring = Uhashring { ketama: true, facts: facts(32, 40) };

const fn facts(hash_bits: u32, vnodes: u32) -> Facts {
    Facts { hash_bits, vnodes: Some(vnodes), order_places_keys: true, ..Facts::DEFAULT }
}

impl Scheme for Uhashring {
    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let key = if self.ketama { KeyRule::Named(KeyHash::Md5) } else { KeyRule::Md5High64 };
        Params::base(given, self.facts.vnodes, key)
    }

    /// Errors: [`RingError::InvalidWeight`] (not a whole number in u32), [`RingError::TooManyPoints`].
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        member(self.ketama, params.vnodes).build(nodes).map(Placement::Continuum)
    }
}

/// uhashring 2.x with `hash_fn="ketama"` (`ketama`) or its default MD5
/// ring: ids are node names as written; weight 0 keeps a node with no
/// points; equal points go to the node listed later.
fn member(ketama: bool, vnodes: u32) -> Member {
    Member {
        label: LabelForm::AsWritten,
        share: if ketama { Share::UhashringKetama(vnodes) } else { Share::UhashringPlain(vnodes) },
        key_hash: KeyHash::Md5,
        ties: Ties::LaterServer,
        strictly_above: true,
        ..Member::KETAMA
    }
}
