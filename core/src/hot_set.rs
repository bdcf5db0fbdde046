//! [`HotSet`]: the hot keys a fleet agrees to spread, and how each client
//! reads and writes them ([`SpreadPlan`]).
//!
//! A key the [`crate::HotKeys`] sketches find hot is kept on the first `R`
//! nodes of its preference list: its owner under the key itself, the other
//! `R - 1` under a *copy key* (the key, `#hot` and the generation). Readers
//! take one of the `R` in turn; writers write all of them. Every reader and
//! writer must use the same set, so one publisher decides it
//! (`shardring hot publish`, from the clients' reports) and the fleet
//! follows it (`P/hot`, `core/SPEC.md` *Hot keys*). A key moves through
//! three phases, one publication apart, so that a client one publication
//! behind never reads a copy that a writer stopped updating:
//!
//! | phase     | reads            | writes              |
//! |-----------|------------------|---------------------|
//! | `writing` | owner            | owner and copies    |
//! | `spread`  | any of the `R`   | owner and copies    |
//! | `leaving` | owner            | owner and copies    |
//! | (absent)  | owner            | owner               |
//!
//! A key that enters again gets a new generation, hence new copy keys:
//! copies left from an earlier time are never read.

use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::RingError;
use crate::json::from_json_strict;
use crate::ring::Ring;

/// Where a hot key is in its life (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HotPhase {
    /// Writers write the copies; readers still read the owner only.
    Writing,
    /// Readers take any of the `R` nodes; writers write them all.
    Spread,
    /// Readers read the owner only again; writers still write the copies.
    Leaving,
}

/// One key of a [`HotSet`]. In JSON the key is `key` (UTF-8 text) or,
/// when its bytes are not UTF-8, `key_hex` (lowercase hex).
#[derive(Debug, Serialize, Deserialize)]
#[serde(try_from = "EntryFields", into = "EntryFields")]
pub struct HotEntry {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// How many nodes hold it: its owner and `replicas - 1` copies on the
    /// next nodes of its preference list (2 to 64).
    pub replicas: u32,
    /// Its phase.
    pub phase: HotPhase,
    /// The set's epoch when the key entered; part of its copy key.
    pub generation: u64,
    /// The request rate (per second, over the fleet) it was last seen at.
    pub rate: f64,
    /// Which of the `R` nodes the next spread read takes.
    turn: AtomicU32,
}

/// [`HotEntry`] as JSON writes it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFields {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    key_hex: Option<String>,
    replicas: u32,
    phase: HotPhase,
    generation: u64,
    #[serde(default)]
    rate: f64,
}

impl TryFrom<EntryFields> for HotEntry {
    type Error = String;

    fn try_from(fields: EntryFields) -> Result<HotEntry, String> {
        let key = match (fields.key, fields.key_hex) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(hex)) => {
                let digits = hex.as_bytes();
                if digits.len() % 2 != 0 || !digits.iter().all(u8::is_ascii_hexdigit) {
                    return Err(format!("key_hex {hex:?} is not an even number of hex digits"));
                }
                let value = |c: u8| (c as char).to_digit(16).expect("checked") as u8;
                digits.chunks(2).map(|p| (value(p[0]) << 4) | value(p[1])).collect()
            }
            _ => return Err("a hot key needs exactly one of key and key_hex".to_owned()),
        };
        Ok(HotEntry::new(key, fields.replicas, fields.phase, fields.generation, fields.rate))
    }
}

impl From<HotEntry> for EntryFields {
    fn from(entry: HotEntry) -> EntryFields {
        let (key, key_hex) = match String::from_utf8(entry.key) {
            Ok(text) => (Some(text), None),
            Err(e) => (None, Some(e.into_bytes().iter().map(|b| format!("{b:02x}")).collect())),
        };
        EntryFields {
            key,
            key_hex,
            replicas: entry.replicas,
            phase: entry.phase,
            generation: entry.generation,
            rate: entry.rate,
        }
    }
}

impl Clone for HotEntry {
    fn clone(&self) -> HotEntry {
        HotEntry::new(self.key.clone(), self.replicas, self.phase, self.generation, self.rate)
    }
}

impl PartialEq for HotEntry {
    fn eq(&self, other: &HotEntry) -> bool {
        (&self.key, self.replicas, self.phase, self.generation, self.rate.to_bits())
            == (&other.key, other.replicas, other.phase, other.generation, other.rate.to_bits())
    }
}

impl HotEntry {
    /// An entry (its read turn at the first node).
    pub fn new(key: impl Into<Vec<u8>>, replicas: u32, phase: HotPhase, generation: u64, rate: f64) -> HotEntry {
        HotEntry { key: key.into(), replicas, phase, generation, rate, turn: AtomicU32::new(0) }
    }

    /// The key its copies are stored under: the key's bytes, `#hot` and the
    /// generation in decimal (`user:42#hot7`).
    pub fn copy_key(&self) -> Vec<u8> {
        let mut copy = self.key.clone();
        copy.extend_from_slice(format!("#hot{}", self.generation).as_bytes());
        copy
    }
}

/// Most nodes a hot key is kept on.
pub const MAX_HOT_REPLICAS: u32 = 64;

/// The agreed hot keys of a fleet at one epoch; JSON as in `P/hot`:
/// `{"epoch": 3, "keys": [{"key": "user:42", "replicas": 4, "phase":
/// "spread", "generation": 2, "rate": 1200.0}]}`. `Send + Sync`: share it
/// behind an `Arc`; each spread key's read turn advances atomically.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotSet {
    /// Publication number, 0 for the empty set; each publication adds one.
    pub epoch: u64,
    /// The keys, sorted by their bytes (no key twice).
    keys: Vec<HotEntry>,
}

/// How one client reads and writes a key under a [`HotSet`]: node indices
/// into the ring's [`Ring::nodes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpreadPlan {
    /// The node to read from.
    pub read: usize,
    /// Whether that node holds a copy (read the copy key; on a miss, read
    /// the owner, then `add` the value under the copy key there).
    pub read_copy: bool,
    /// The key's owner (the fallback of a copy read; the first write).
    pub owner: usize,
    /// The nodes that hold copies, to write under the copy key after the
    /// owner (empty when the key is not in the set).
    pub copies: Vec<usize>,
    /// The copy key (empty when `copies` is).
    pub copy_key: Vec<u8>,
}

impl HotSet {
    /// A set at `epoch` holding `keys`.
    ///
    /// Errors: [`RingError::InvalidConfig`] naming the key when one is
    /// listed twice or its `replicas` is not from 2 to 64.
    pub fn new(epoch: u64, mut keys: Vec<HotEntry>) -> Result<HotSet, RingError> {
        keys.sort_by(|a, b| a.key.cmp(&b.key));
        for entry in &keys {
            if !(2..=MAX_HOT_REPLICAS).contains(&entry.replicas) {
                return Err(RingError::InvalidConfig {
                    message: format!(
                        "hot key {:?}: replicas {} must be from 2 to {MAX_HOT_REPLICAS}",
                        String::from_utf8_lossy(&entry.key),
                        entry.replicas
                    ),
                });
            }
        }
        if let Some(pair) = keys.windows(2).find(|p| p[0].key == p[1].key) {
            return Err(RingError::InvalidConfig {
                message: format!("hot key {:?} is listed twice", String::from_utf8_lossy(&pair[0].key)),
            });
        }
        Ok(HotSet { epoch, keys })
    }

    /// Reads the JSON form (strictly, as ring configs are read).
    ///
    /// Errors: [`RingError::InvalidConfig`] naming the field, or as [`HotSet::new`].
    pub fn from_json(json: &str) -> Result<HotSet, RingError> {
        let read: HotSet = from_json_strict(json)?;
        HotSet::new(read.epoch, read.keys)
    }

    /// The JSON form, keys sorted by their bytes.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a hot set serializes")
    }

    /// The keys, sorted by their bytes.
    pub fn keys(&self) -> &[HotEntry] {
        &self.keys
    }

    /// The entry of `key`, if it is in the set.
    pub fn get(&self, key: &[u8]) -> Option<&HotEntry> {
        self.keys.binary_search_by(|e| e.key.as_slice().cmp(key)).ok().map(|i| &self.keys[i])
    }

    /// How to read and write `key` on `ring`: a key not in the set, or
    /// whose ring has fewer than 2 nodes that can own keys, is read from
    /// and written to its owner only. A `spread` key's reads take its `R`
    /// nodes (its preference list, [`Ring::get_n`]) in turn, round robin
    /// over all the calls of this set. Counts one lookup of the owner when
    /// the ring is counted, and shows the key to its sketch.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    pub fn plan(&self, ring: &Ring, key: impl AsRef<[u8]>) -> Result<SpreadPlan, RingError> {
        let key = key.as_ref();
        let Some(entry) = self.get(key) else {
            let owner = ring.get_index(key)?;
            return Ok(SpreadPlan { read: owner, read_copy: false, owner, copies: Vec::new(), copy_key: Vec::new() });
        };
        let mut nodes = [0usize; MAX_HOT_REPLICAS as usize];
        let found = ring.get_n_indices(key, &mut nodes[..entry.replicas as usize])?;
        let owner = nodes[0];
        let read = match entry.phase {
            HotPhase::Spread if found > 1 => nodes[entry.turn.fetch_add(1, Ordering::Relaxed) as usize % found],
            _ => owner,
        };
        let copies = nodes[1..found].to_vec();
        let copy_key = if copies.is_empty() { Vec::new() } else { entry.copy_key() };
        Ok(SpreadPlan { read, read_copy: read != owner, owner, copies, copy_key })
    }

    /// The next publication: the set one epoch on, given the fleet's
    /// observed hot keys (`(key, requests per second)`, summed over the
    /// clients), the fleet's total request rate, the ring's number of nodes
    /// that can own keys and `bound` (at least 1: no node should get more
    /// than `bound` times the mean node's requests).
    ///
    /// A key wants `R = ceil(rate / ((bound - 1) * mean))` nodes, `mean` =
    /// total / nodes, at most `nodes` and 64: enough that its share on
    /// each stays within the headroom the bound leaves. A key wanting 2 or
    /// more that is not in the set enters as `writing` (its generation is
    /// the new epoch); `writing` becomes `spread`; a `spread` key wanting
    /// fewer than 2 becomes `leaving`, and a `writing` or `leaving` one that
    /// no longer wants 2 leaves. `R` stays what it was when the key entered.
    pub fn advance(&self, observed: &[(Vec<u8>, f64)], total_rate: f64, nodes: usize, bound: f64) -> HotSet {
        let epoch = self.epoch + 1;
        let limit = (nodes as u32).min(MAX_HOT_REPLICAS);
        let headroom = (bound - 1.0).max(1e-9) * total_rate / nodes.max(1) as f64;
        let wanted = |rate: f64| -> u32 {
            if limit < 2 || !rate.is_finite() || rate <= 0.0 || headroom <= 0.0 {
                return 1;
            }
            (rate / headroom).ceil().min(f64::from(limit)) as u32
        };
        let rate_of = |key: &[u8]| observed.iter().find(|(k, _)| k == key).map_or(0.0, |(_, r)| *r);
        let mut keys: Vec<HotEntry> = Vec::new();
        for entry in &self.keys {
            let rate = rate_of(&entry.key);
            let hot = wanted(rate) >= 2;
            let phase = match (entry.phase, hot) {
                (HotPhase::Writing, true) | (HotPhase::Spread, true) => HotPhase::Spread,
                (HotPhase::Spread, false) => HotPhase::Leaving,
                // Leaving and hot again: it leaves, and enters anew later.
                (HotPhase::Leaving, _) | (HotPhase::Writing, false) => continue,
            };
            keys.push(HotEntry::new(entry.key.clone(), entry.replicas, phase, entry.generation, rate));
        }
        for (key, rate) in observed {
            let replicas = wanted(*rate);
            if replicas >= 2 && self.get(key).is_none() && !keys.iter().any(|e| &e.key == key) {
                keys.push(HotEntry::new(key.clone(), replicas, HotPhase::Writing, epoch, *rate));
            }
        }
        HotSet::new(epoch, keys).expect("advance keeps replicas in range and keys distinct")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Node;

    fn ring(n: usize) -> Ring {
        Ring::builder().nodes((0..n).map(|i| Node::new(format!("n{i}"), 1.0))).build().unwrap()
    }

    #[test]
    fn a_key_enters_spreads_leaves_and_comes_back_under_new_copy_keys() {
        let set = HotSet::default();
        let hot = vec![(b"k".to_vec(), 300.0)];
        // 12 nodes, 1,200/s in all: mean 100, headroom 25 at bound 1.25.
        let one = set.advance(&hot, 1_200.0, 12, 1.25);
        assert_eq!(one.keys(), [HotEntry::new("k", 12, HotPhase::Writing, 1, 300.0)]);
        let two = one.advance(&[(b"k".to_vec(), 40.0)], 1_200.0, 12, 1.25);
        assert_eq!(two.keys(), [HotEntry::new("k", 12, HotPhase::Spread, 1, 40.0)]);
        let three = two.advance(&[], 1_200.0, 12, 1.25);
        assert_eq!(three.keys()[0].phase, HotPhase::Leaving);
        let four = three.advance(&hot, 1_200.0, 12, 1.25);
        assert!(four.keys().is_empty(), "a leaving key leaves before it enters again");
        let five = four.advance(&hot, 1_200.0, 12, 1.25);
        assert_eq!(five.keys()[0].generation, 5);
        assert_eq!(five.keys()[0].copy_key(), b"k#hot5");
    }

    #[test]
    fn replicas_follow_the_headroom() {
        let set = HotSet::default().advance(
            &[(b"a".to_vec(), 26.0), (b"b".to_vec(), 25.0), (b"c".to_vec(), 60.0)],
            1_200.0,
            12,
            1.25,
        );
        let replicas: Vec<(&[u8], u32)> = set.keys().iter().map(|e| (&e.key[..], e.replicas)).collect();
        assert_eq!(replicas, [(&b"a"[..], 2), (&b"c"[..], 3)]);
    }

    #[test]
    fn spread_reads_take_the_preference_list_in_turn_and_writes_reach_all() {
        let ring = ring(12);
        let set = HotSet::new(1, vec![HotEntry::new("k", 3, HotPhase::Spread, 1, 1.0)]).unwrap();
        let list: Vec<usize> = ring.get_n(b"k", 3).unwrap().iter().map(|n| ring.position(n.id()).unwrap()).collect();
        let reads: Vec<usize> = (0..6).map(|_| set.plan(&ring, "k").unwrap().read).collect();
        assert_eq!(reads, [list[0], list[1], list[2], list[0], list[1], list[2]]);
        let plan = set.plan(&ring, "k").unwrap();
        assert_eq!((plan.owner, &plan.copies[..], &plan.copy_key[..]), (list[0], &list[1..], &b"k#hot1"[..]));
        let cold = set.plan(&ring, "other").unwrap();
        assert_eq!((cold.read, cold.read_copy, cold.copies.len()), (ring.get_index("other").unwrap(), false, 0));
        for phase in [HotPhase::Writing, HotPhase::Leaving] {
            let set = HotSet::new(1, vec![HotEntry::new("k", 3, phase, 1, 1.0)]).unwrap();
            let plans: Vec<SpreadPlan> = (0..3).map(|_| set.plan(&ring, "k").unwrap()).collect();
            assert!(plans.iter().all(|p| p.read == list[0] && !p.read_copy && p.copies == list[1..]), "{phase:?}");
        }
    }

    #[test]
    fn json_round_trips_and_names_bad_values() {
        let set = HotSet::new(
            4,
            vec![
                HotEntry::new(b"\xff\x00".to_vec(), 2, HotPhase::Leaving, 3, 9.5),
                HotEntry::new("a", 4, HotPhase::Spread, 2, 1.0),
            ],
        )
        .unwrap();
        let json = set.to_json();
        assert_eq!(
            json,
            r#"{"epoch":4,"keys":[{"key":"a","replicas":4,"phase":"spread","generation":2,"rate":1.0},{"key_hex":"ff00","replicas":2,"phase":"leaving","generation":3,"rate":9.5}]}"#
        );
        assert_eq!(HotSet::from_json(&json).unwrap(), set);
        for (bad, says) in [
            (r#"{"epoch":1,"keys":[{"key":"a","replicas":1,"phase":"spread","generation":1}]}"#, "replicas 1"),
            (r#"{"epoch":1,"keys":[{"key":"a","replicas":2,"phase":"hot","generation":1}]}"#, "hot"),
            (r#"{"epoch":1,"keys":[{"key_hex":"f","replicas":2,"phase":"spread","generation":1}]}"#, "key_hex"),
            (
                r#"{"epoch":1,"keys":[{"key":"a","replicas":2,"phase":"spread","generation":1},{"key":"a","replicas":2,"phase":"spread","generation":1}]}"#,
                "listed twice",
            ),
        ] {
            let error = HotSet::from_json(bad).unwrap_err().to_string();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
