//! Decoding of the fuzzer's input: the calls ([`Call`]) and their random
//! arguments (ids and keys as bytes, weights, indices, handle picks, which
//! pointer is NULL, JSON configs), as `arbitrary` reads them from the bytes.

use arbitrary::Arbitrary;

const IDS: [&str; 14] = [
    "a",
    "b",
    "c",
    "é",
    "",
    "10.0.0.1:11211",
    "10.0.0.2:11211",
    "10.0.0.2",
    "[::1]:11211",
    "unix:/s",
    "UNIX:/s",
    "h:0",
    "a\0",
    "e\u{301}",
];

const WEIGHTS: [f64; 20] = [
    1.0,
    1.0,
    1.0,
    2.0,
    0.0,
    -0.0,
    0.5,
    3.0,
    0.25,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    1e300,
    f64::MAX,
    4_294_967_295.0,
    4_294_967_296.0,
    1e-300,
    1e7,
    100.0,
];

pub(crate) const ALGORITHMS: [&str; 22] = [
    "ring",
    "ketama",
    "ketama-spy",
    "libketama",
    "nginx",
    "jump",
    "rendezvous",
    "maglev",
    "slots",
    "libmemcached",
    "twemproxy",
    "uhashring",
    "uhashring-ketama",
    "hashring-js",
    "envoy-ring-hash",
    "envoy-maglev",
    "grpc-ring-hash",
    "haproxy",
    "jumpback",
    "memento",
    "Ring",
    "",
];

/// Which pointer argument (numbered per call) to pass as NULL, if any: one
/// call in eight passes one NULL.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct Nulls(pub(crate) u8);

impl Nulls {
    pub(crate) fn null(self, slot: u8) -> bool {
        self.0 >= 224 && self.0 & 7 == slot
    }
}

/// A handle from one of the run's lists; one pick in sixteen is NULL.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct Pick(u8);

impl Pick {
    pub(crate) fn index(self, len: usize) -> Option<usize> {
        (len > 0 && self.0 % 16 != 15).then(|| usize::from(self.0) % len)
    }
}

/// Bytes for an id, zone or key: `kind` picks one of [`IDS`] (78%),
/// arbitrary bytes, often not UTF-8 (16%), or a NULL pointer with length
/// `listed % 3` (6%; NULL is allowed only with length 0).
#[derive(Arbitrary, Debug, Clone)]
pub(crate) struct Bytes {
    kind: u8,
    listed: u8,
    raw: Vec<u8>,
}

impl Bytes {
    /// The bytes, or `None` for a NULL pointer, and the length passed.
    pub(crate) fn get(&self) -> (Option<Vec<u8>>, usize) {
        match self.kind {
            0..200 => {
                let id = IDS[usize::from(self.listed) % IDS.len()].as_bytes().to_vec();
                let len = id.len();
                (Some(id), len)
            }
            200..240 => {
                let raw = self.raw[..self.raw.len().min(40)].to_vec();
                let len = raw.len();
                (Some(raw), len)
            }
            _ => (None, usize::from(self.listed % 3)),
        }
    }
}

/// A weight or epsilon: one of [`WEIGHTS`] (86%) or any double (14%).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) struct Weight {
    kind: u8,
    listed: u8,
    bits: u64,
}

impl Weight {
    pub(crate) fn get(self) -> f64 {
        if self.kind < 220 { WEIGHTS[usize::from(self.listed) % WEIGHTS.len()] } else { f64::from_bits(self.bits) }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub(crate) struct NodeArg {
    pub(crate) id: Bytes,
    pub(crate) weight: Weight,
    pub(crate) zone: Option<Bytes>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub(crate) enum Index {
    /// An index below the count (when there is one).
    Valid(u8),
    /// Any index at all, mostly out of range.
    Any(usize),
}

impl Index {
    pub(crate) fn get(self, count: usize) -> usize {
        match self {
            Index::Valid(i) if count > 0 => usize::from(i) % count,
            Index::Valid(i) => usize::from(i),
            Index::Any(i) => i,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub(crate) enum AlgorithmName {
    Null,
    Listed(u8),
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug, Clone)]
pub(crate) enum ReleaseId {
    /// The id of node `i` of the tracker's current ring.
    Node(u8),
    Other(Bytes),
}

/// Up to six nodes: `count % 7` of `nodes`. (A `Vec` from `arbitrary`
/// would end after about one element.)
#[derive(Arbitrary, Debug, Clone)]
pub(crate) struct NodeArgs {
    count: u8,
    nodes: [NodeArg; 6],
}

impl NodeArgs {
    pub(crate) fn get(&self) -> &[NodeArg] {
        &self.nodes[..usize::from(self.count) % 7]
    }
}

/// A config for `ring_new_from_json`, written from parts, or raw bytes.
#[derive(Arbitrary, Debug, Clone)]
pub(crate) enum JsonText {
    Template {
        algorithm: u8,
        /// One of [`JSON_PARAMETERS`].
        parameters: u8,
        nodes: NodeArgs,
        /// Spliced in at a random place when not empty (breaking the JSON, or not).
        splice: Vec<u8>,
    },
    Raw(Vec<u8>),
}

impl JsonText {
    pub(crate) fn bytes(&self) -> Vec<u8> {
        match self {
            JsonText::Raw(raw) => raw.clone(),
            JsonText::Template { algorithm, parameters, nodes, splice } => {
                let name = ALGORITHMS[usize::from(*algorithm) % ALGORITHMS.len()];
                let nodes: Vec<String> = nodes
                    .get()
                    .iter()
                    .map(|node| {
                        let id = node.id.get().0.unwrap_or_default();
                        let weight = node.weight.get();
                        // JSON has no NaN or infinity; 1e999 overflows when read.
                        let weight = if weight.is_finite() { format!("{weight:?}") } else { "1e999".to_owned() };
                        let zone = match node.zone.as_ref().map(Bytes::get) {
                            Some((Some(zone), _)) => format!(",\"zone\":{}", json_string(&zone)),
                            _ => String::new(),
                        };
                        format!("{{\"id\":{},\"weight\":{weight}{zone}}}", json_string(&id))
                    })
                    .collect();
                let parameters = JSON_PARAMETERS[usize::from(*parameters) % JSON_PARAMETERS.len()];
                let mut text = format!(
                    "{{\"format_version\":1,\"algorithm\":\"{name}\"{parameters},\"nodes\":[{}]}}",
                    nodes.join(",")
                )
                .into_bytes();
                if let Some((&at, rest)) = splice.split_first() {
                    let at = usize::from(at) % (text.len() + 1);
                    text.splice(at..at, rest.iter().copied());
                }
                text
            }
        }
    }
}

/// Parameters for a templated config (most apply to one algorithm only).
const JSON_PARAMETERS: [&str; 10] = [
    "",
    "",
    "",
    r#","table_size":251"#,
    r#","table_size":3"#,
    r#","table_size":4"#,
    r#","vnodes":8"#,
    r#","vnodes":0"#,
    r#","seed":5"#,
    r#","table_size":16777259"#,
];

/// A JSON string literal of (lossily decoded) bytes.
fn json_string(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Up to six keys for a batch: `count % 7` of `keys`.
#[derive(Arbitrary, Debug, Clone)]
pub(crate) struct Keys {
    pub(crate) count: u8,
    pub(crate) keys: [Bytes; 6],
}

#[derive(Arbitrary, Debug, Clone)]
pub(crate) enum Call {
    New {
        nodes: NodeArgs,
        vnodes: u32,
        seed: u64,
        no_zones: bool,
        nulls: Nulls,
    },
    NewWithOptions {
        nodes: NodeArgs,
        algorithm: AlgorithmName,
        /// `ring_options_t.fields`: which of vnodes, seed and table_size are given.
        fields: u32,
        vnodes: u32,
        seed: u64,
        table_size: u32,
        small: bool,
        /// Write vnodes, seed and table_size even without their bits, as a
        /// caller who forgot a bit does (refused, naming the field).
        stray: bool,
        /// Call `ring_new_with_options`, the entry point of programs built
        /// against the headers before `ring_new_with_options_sized`.
        legacy: bool,
        nulls: Nulls,
    },
    FromJson {
        json: JsonText,
        nulls: Nulls,
    },
    ToJson {
        ring: Pick,
        keep: bool,
        nulls: Nulls,
    },
    Clone {
        ring: Pick,
    },
    Free {
        ring: Pick,
    },
    NodeInfo {
        ring: Pick,
        index: Index,
        nulls: Nulls,
    },
    GetNode {
        ring: Pick,
        key: Bytes,
        nulls: Nulls,
    },
    GetNodeByHash {
        ring: Pick,
        hash: u64,
        narrow: bool,
        nulls: Nulls,
    },
    GetNodes {
        ring: Pick,
        key: Bytes,
        len: u8,
        nulls: Nulls,
    },
    Batch {
        ring: Pick,
        keys: Keys,
        extra: i8,
        nulls: Nulls,
    },
    HashKey {
        ring: Pick,
        key: Bytes,
    },
    WithNode {
        ring: Pick,
        node: NodeArg,
        nulls: Nulls,
    },
    WithoutNode {
        ring: Pick,
        id: Bytes,
        nulls: Nulls,
    },
    WithWeight {
        ring: Pick,
        id: Bytes,
        weight: Weight,
        nulls: Nulls,
    },
    Ownership {
        ring: Pick,
        len: u8,
        nulls: Nulls,
    },
    /// `sampled % 4 == 0` lets a jump or rendezvous diff run (65,536 lookups, twice).
    Diff {
        old: Pick,
        new: Pick,
        keep: bool,
        sampled: u8,
        nulls: Nulls,
    },
    DiffRead {
        diff: Pick,
        arc: Index,
        flow: Index,
        nulls: Nulls,
    },
    DiffFree {
        diff: Pick,
    },
    TrackerNew {
        ring: Pick,
        epsilon: Weight,
        nulls: Nulls,
    },
    TrackerAcquire {
        tracker: Pick,
        key: Bytes,
        times: u8,
        nulls: Nulls,
    },
    TrackerRelease {
        tracker: Pick,
        id: ReleaseId,
    },
    TrackerSwap {
        tracker: Pick,
        ring: Pick,
    },
    TrackerLoad {
        tracker: Pick,
        index: Index,
        nulls: Nulls,
    },
    TrackerFree {
        tracker: Pick,
    },
    ResultText {
        code: u32,
    },
}
