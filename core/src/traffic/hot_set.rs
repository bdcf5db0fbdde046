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

impl HotPhase {
    /// Its name in JSON: `writing`, `spread` or `leaving`.
    pub fn name(self) -> &'static str {
        match self {
            HotPhase::Writing => "writing",
            HotPhase::Spread => "spread",
            HotPhase::Leaving => "leaving",
        }
    }
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

/// A key from its JSON fields: exactly one of `key` (text) and `key_hex`.
fn key_from_fields(key: Option<String>, key_hex: Option<String>) -> Result<Vec<u8>, String> {
    match (key, key_hex) {
        (Some(text), None) => Ok(text.into_bytes()),
        (None, Some(hex)) => {
            let digits = hex.as_bytes();
            if digits.len() % 2 != 0 || !digits.iter().all(u8::is_ascii_hexdigit) {
                return Err(format!("key_hex {hex:?} is not an even number of hex digits"));
            }
            let value = |c: u8| (c as char).to_digit(16).expect("checked") as u8;
            Ok(digits.chunks(2).map(|p| (value(p[0]) << 4) | value(p[1])).collect())
        }
        _ => Err("a hot key needs exactly one of key and key_hex".to_owned()),
    }
}

/// A key's JSON fields: `key` when it is UTF-8, else `key_hex`.
fn key_to_fields(key: Vec<u8>) -> (Option<String>, Option<String>) {
    match String::from_utf8(key) {
        Ok(text) => (Some(text), None),
        Err(e) => (None, Some(e.into_bytes().iter().map(|b| format!("{b:02x}")).collect())),
    }
}

impl TryFrom<EntryFields> for HotEntry {
    type Error = String;

    fn try_from(fields: EntryFields) -> Result<HotEntry, String> {
        let key = key_from_fields(fields.key, fields.key_hex)?;
        Ok(HotEntry::new(key, fields.replicas, fields.phase, fields.generation, fields.rate))
    }
}

impl From<HotEntry> for EntryFields {
    fn from(entry: HotEntry) -> EntryFields {
        let (key, key_hex) = key_to_fields(entry.key);
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

/// A hot key a client saw and its rate: what a client reports to the
/// fleet (`P/clients/<id>`) and [`HotSet::advance`] reads. JSON as a hot
/// set's keys: `{"key": "user:42", "rate": 812.5}` (or `key_hex`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KeyRateFields", into = "KeyRateFields")]
pub struct KeyRate {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// Requests per second.
    pub rate: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRateFields {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    key_hex: Option<String>,
    rate: f64,
}

impl TryFrom<KeyRateFields> for KeyRate {
    type Error = String;

    fn try_from(fields: KeyRateFields) -> Result<KeyRate, String> {
        Ok(KeyRate { key: key_from_fields(fields.key, fields.key_hex)?, rate: fields.rate })
    }
}

impl From<KeyRate> for KeyRateFields {
    fn from(observed: KeyRate) -> KeyRateFields {
        let (key, key_hex) = key_to_fields(observed.key);
        KeyRateFields { key, key_hex, rate: observed.rate }
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
        copy.extend_from_slice(COPY_MARK);
        copy.extend_from_slice(self.generation.to_string().as_bytes());
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

impl SpreadPlan {
    /// What the copy key adds after the key: `#hot` and the generation in
    /// decimal (`#hot7`); empty when `copy_key` is. For bindings that hand
    /// the key and the suffix apart (C's `ring_spread_plan_t`).
    pub fn copy_suffix(&self) -> &[u8] {
        // The generation's digits hold no `#`, so the suffix starts at the
        // last `#hot`, whatever the key holds.
        let start = self.copy_key.windows(COPY_MARK.len()).rposition(|w| w == COPY_MARK);
        start.map_or(&[], |start| &self.copy_key[start..])
    }
}

/// What separates a key from its copy's generation in a copy key.
const COPY_MARK: &[u8] = b"#hot";

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

    /// Requests per second by node id as [`HotSet::advance`]'s `loads`:
    /// one rate per node of `ring`, in its order, 0 for an id left out.
    ///
    /// Errors: [`RingError::InvalidConfig`] naming an id not in `ring`.
    pub fn loads_by_id<'a>(
        ring: &Ring,
        loads: impl IntoIterator<Item = (&'a str, f64)>,
    ) -> Result<Vec<f64>, RingError> {
        let mut rates = vec![0.0; ring.nodes().len()];
        for (id, rate) in loads {
            let Some(index) = ring.position(id) else {
                return Err(RingError::InvalidConfig {
                    message: format!("hot set: loads name {id:?}, not a node of the ring"),
                });
            };
            rates[index] = rate;
        }
        Ok(rates)
    }

    /// The next publication: the set one epoch on, for `ring`, given the
    /// fleet's hot keys (`(key, requests per second)`, summed over the
    /// clients), the fleet's requests per second on each node of `ring`
    /// (`loads[i]` for [`Ring::nodes`]`[i]`, counted by owner, as
    /// [`crate::LookupCounter`] counts) and `bound` (at least 1).
    ///
    /// Each node's *cap* is `bound` times its weight's share of all
    /// requests. Keys already `writing` or `spread` keep their `R` and
    /// their reads are split evenly over their nodes, as [`HotSet::plan`]
    /// splits them. Then, while the node most over its cap has a key it
    /// reads that may take one more node, the key with the largest share
    /// per node among those takes the next node of its preference list
    /// (at most 64, and only keys of at least a quarter of the mean node's
    /// headroom `(bound - 1) * total / nodes` are spread, and a key takes
    /// one more node only while that takes a sixteenth of the headroom off
    /// each of its nodes). A key given 2 or
    /// more nodes enters as `writing` (its generation is the new epoch);
    /// `writing` becomes `spread`; a `spread` key whose rate fell under an
    /// eighth of that headroom (or that no client reports) becomes
    /// `leaving`; a `writing` or `leaving` one that fell under it leaves.
    ///
    /// Errors: [`RingError::InvalidConfig`] when `loads` does not hold one
    /// finite, non-negative rate per node, or `bound` is not at least 1.
    pub fn advance(
        &self,
        ring: &Ring,
        observed: &[(Vec<u8>, f64)],
        loads: &[f64],
        bound: f64,
    ) -> Result<HotSet, RingError> {
        let invalid = |message: String| RingError::InvalidConfig { message };
        let nodes = ring.nodes();
        if loads.len() != nodes.len() || loads.iter().any(|l| !l.is_finite() || *l < 0.0) {
            return Err(invalid(format!(
                "hot set: loads must hold one finite rate >= 0 per node ({} nodes), got {loads:?}",
                nodes.len()
            )));
        }
        if !(bound >= 1.0 && bound.is_finite()) {
            return Err(invalid(format!("hot set: bound {bound} must be a finite number >= 1")));
        }
        let epoch = self.epoch + 1;
        let total: f64 = loads.iter().sum();
        let weight: f64 = nodes.iter().map(|n| n.weight()).sum();
        let live = nodes.iter().filter(|n| n.weight() > 0.0).count().max(1);
        let headroom = (bound - 1.0) * total / live as f64;
        let cap: Vec<f64> =
            nodes.iter().map(|n| if weight > 0.0 { bound * total * n.weight() / weight } else { 0.0 }).collect();
        let rate_of = |key: &[u8]| observed.iter().filter(|(k, _)| k == key).map(|(_, r)| *r).sum::<f64>();

        // Each candidate: its rate, preference list and nodes taken.
        struct Candidate {
            key: Vec<u8>,
            rate: f64,
            list: Vec<usize>,
            taken: usize,
            kept: Option<(u32, HotPhase, u64)>,
        }
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut kept = Vec::new();
        let mut load = loads.to_vec();
        let mut list = [0usize; MAX_HOT_REPLICAS as usize];
        for entry in &self.keys {
            let rate = rate_of(&entry.key);
            let staying = rate >= headroom / 8.0 && rate > 0.0;
            match (entry.phase, staying) {
                (HotPhase::Writing | HotPhase::Spread, true) => {}
                (HotPhase::Spread, false) => {
                    kept.push(HotEntry::new(
                        entry.key.clone(),
                        entry.replicas,
                        HotPhase::Leaving,
                        entry.generation,
                        rate,
                    ));
                    continue;
                }
                _ => continue,
            }
            let found = ring.preference_uncounted(ring.hash_key(&entry.key), &mut list)?;
            candidates.push(Candidate {
                key: entry.key.clone(),
                rate,
                list: list[..found].to_vec(),
                taken: 1,
                kept: Some((entry.replicas, entry.phase, entry.generation)),
            });
        }
        for (key, _) in observed {
            let rate = rate_of(key);
            if rate < headroom / 4.0
                || rate <= 0.0
                || self.get(key).is_some()
                || candidates.iter().any(|c| &c.key == key)
            {
                continue;
            }
            let found = ring.preference_uncounted(ring.hash_key(key), &mut list)?;
            candidates.push(Candidate { key: key.clone(), rate, list: list[..found].to_vec(), taken: 1, kept: None });
        }
        // Spread the kept keys as they are read now.
        let spread_to = |c: &mut Candidate, load: &mut [f64], taken: usize| {
            let (before, after) = (c.rate / c.taken as f64, c.rate / taken as f64);
            for &node in &c.list[..c.taken] {
                load[node] -= before - after;
            }
            for &node in &c.list[c.taken..taken] {
                load[node] += after;
            }
            c.taken = taken;
        };
        for c in candidates.iter_mut() {
            if let Some((replicas, _, _)) = c.kept {
                let taken = (replicas as usize).min(c.list.len());
                spread_to(c, &mut load, taken);
            }
        }
        // Then relieve the node most over its cap, one node at a time.
        let mut stuck = vec![false; nodes.len()];
        loop {
            let over = (0..nodes.len()).filter(|&n| !stuck[n] && load[n] > cap[n]).max_by(|&a, &b| {
                (load[a] / cap[a].max(f64::MIN_POSITIVE)).total_cmp(&(load[b] / cap[b].max(f64::MIN_POSITIVE)))
            });
            let Some(node) = over else { break };
            let best = candidates
                .iter()
                .enumerate()
                .filter(|(_, c)| c.kept.is_none() && c.taken < c.list.len() && c.list[..c.taken].contains(&node))
                // One more node must take at least 1/16 of the headroom off
                // each: a node loaded by many small keys is left as it is
                // rather than every key on it spread everywhere.
                .filter(|(_, c)| c.rate / (c.taken * (c.taken + 1)) as f64 >= headroom / 16.0)
                .max_by(|(_, a), (_, b)| (a.rate / a.taken as f64).total_cmp(&(b.rate / b.taken as f64)))
                .map(|(i, _)| i);
            match best {
                Some(i) => {
                    let taken = candidates[i].taken + 1;
                    spread_to(&mut candidates[i], &mut load, taken);
                }
                None => stuck[node] = true,
            }
        }
        for c in candidates {
            match c.kept {
                Some((replicas, phase, generation)) => {
                    let phase = if phase == HotPhase::Writing { HotPhase::Spread } else { phase };
                    kept.push(HotEntry::new(c.key, replicas, phase, generation, c.rate));
                }
                None if c.taken >= 2 => {
                    kept.push(HotEntry::new(c.key, c.taken as u32, HotPhase::Writing, epoch, c.rate));
                }
                None => {}
            }
        }
        HotSet::new(epoch, kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Node;

    fn ring(n: usize) -> Ring {
        Ring::builder().nodes((0..n).map(|i| Node::new(format!("n{i}"), 1.0))).build().unwrap()
    }

    /// Loads by owner of `observed` keys plus `rest` spread evenly.
    fn loads(ring: &Ring, observed: &[(Vec<u8>, f64)], rest: f64) -> Vec<f64> {
        let n = ring.nodes().len();
        let mut loads = vec![rest / n as f64; n];
        for (key, rate) in observed {
            loads[ring.get_index(key).unwrap()] += rate;
        }
        loads
    }

    #[test]
    fn a_key_enters_spreads_leaves_and_comes_back_under_new_copy_keys() {
        let ring = ring(12);
        let hot = vec![(b"k".to_vec(), 300.0)];
        let cold = vec![(b"k".to_vec(), 1.0)];
        // 12 nodes, 1,200/s in all: mean 100, cap 125.
        let one = HotSet::default().advance(&ring, &hot, &loads(&ring, &hot, 900.0), 1.25).unwrap();
        // 75 on each node and 300 more on the owner: spread over 6 nodes,
        // each gets 75 + 50 <= 125 (over 5, 75 + 60).
        assert_eq!(one.keys(), [HotEntry::new("k", 6, HotPhase::Writing, 1, 300.0)]);
        let two = one.advance(&ring, &hot, &loads(&ring, &hot, 900.0), 1.25).unwrap();
        assert_eq!(two.keys(), [HotEntry::new("k", 6, HotPhase::Spread, 1, 300.0)]);
        let three = two.advance(&ring, &cold, &loads(&ring, &cold, 1_199.0), 1.25).unwrap();
        assert_eq!(three.keys()[0].phase, HotPhase::Leaving);
        let four = three.advance(&ring, &hot, &loads(&ring, &hot, 900.0), 1.25).unwrap();
        assert!(four.keys().is_empty(), "a leaving key leaves before it enters again");
        let five = four.advance(&ring, &hot, &loads(&ring, &hot, 900.0), 1.25).unwrap();
        assert_eq!(five.keys()[0].generation, 5);
        assert_eq!(five.keys()[0].copy_key(), b"k#hot5");
    }

    #[test]
    fn only_keys_on_nodes_over_their_cap_are_spread_and_loads_are_checked() {
        let ring = ring(12);
        // "a" alone pushes its owner over the cap; "b" (as large) sits on a
        // node that stays under it, and "c" is too small to spread.
        let a_owner = ring.get_index("a").unwrap();
        let b = (0..).map(|i| format!("b{i}")).find(|k| ring.get_index(k).unwrap() != a_owner).unwrap();
        let observed = vec![(b"a".to_vec(), 40.0), (b.as_bytes().to_vec(), 40.0), (b"c".to_vec(), 5.0)];
        let mut loads = vec![95.0; 12];
        loads[a_owner] = 140.0;
        let set = HotSet::default().advance(&ring, &observed, &loads, 1.25).unwrap();
        assert_eq!(set.keys(), [HotEntry::new("a", 2, HotPhase::Writing, 1, 40.0)]);
        for (loads, bound) in [(vec![1.0; 11], 1.25), (vec![f64::NAN; 12], 1.25), (vec![1.0; 12], 0.5)] {
            let error = HotSet::default().advance(&ring, &observed, &loads, bound).unwrap_err().to_string();
            assert!(error.contains("loads") || error.contains("bound 0.5"), "{error}");
        }
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
        assert_eq!(plan.copy_suffix(), b"#hot1");
        let tricky = HotSet::new(1, vec![HotEntry::new("x#hot#hot9", 3, HotPhase::Spread, 12, 1.0)]).unwrap();
        let plan = tricky.plan(&ring, "x#hot#hot9").unwrap();
        assert_eq!((&plan.copy_key[..], plan.copy_suffix()), (&b"x#hot#hot9#hot12"[..], &b"#hot12"[..]));
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
