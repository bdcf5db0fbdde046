//! Decoding of the fuzzer's input: the fixed header that `arbitrary` reads,
//! then the steps as 6-byte records decoded by hand.

use arbitrary::Arbitrary;

/// The fuzzer's input: a fixed header, then the steps as 6-byte records
/// (decoded by hand: `arbitrary` would end a `Vec` after about one element).
#[derive(Arbitrary, Debug)]
pub(crate) struct Input<'a> {
    pub(crate) algorithm: u8,
    pub(crate) vnodes: u8,
    pub(crate) seed: u64,
    pub(crate) table: u8,
    /// `start % 13` leading steps form the starting node set (each one's
    /// node, built at once); below 208 its empty ids and zones are left out.
    pub(crate) start: u8,
    /// Two extra keys: bytes 0..3 and 3..8.
    pub(crate) key_bytes: [u8; 8],
    /// Hashes to probe (each also mixed into a second one).
    pub(crate) hashes: [u64; 2],
    steps: &'a [u8],
}

impl Input<'_> {
    pub(crate) fn steps(&self) -> Vec<Step> {
        self.steps
            .chunks_exact(6)
            .map(|b| Step {
                kind: b[0],
                node: NodeSpec {
                    id: b[1],
                    weight: WeightSpec { kind: b[2], value: u16::from_le_bytes([b[3], b[4]]) },
                    zone: b[5],
                },
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeSpec {
    pub(crate) id: u8,
    pub(crate) weight: WeightSpec,
    pub(crate) zone: u8,
}

/// A weight: `kind` picks the family (usual 62%, fraction 33%, odd 5%), `value` the weight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WeightSpec {
    pub(crate) kind: u8,
    pub(crate) value: u16,
}

/// One operation: `kind` picks add (50%), remove (25%) or re-weight (25%)
/// of the node `node` describes (only its id, for a removal).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub(crate) kind: u8,
    pub(crate) node: NodeSpec,
}
