//! Where a ring lives in etcd, the records kept there, and the ring they
//! describe.
//!
//! Layout under a prefix `P` (`core/SPEC.md`, *Membership in etcd*):
//!
//! - `P/config`: the ring parameters, a JSON [`ParamsRecord`]
//!   (`{"format_version": 1, "algorithm": "ring", "vnodes": 160}`); absent
//!   means the defaults.
//! - `P/members/<id>`: one JSON [`MemberRecord`] per member
//!   (`{"weight": 1.0, "zone": "us-east-1a", "state": "active"}`), written
//!   under the member's lease, so it disappears when the member dies.
//!
//! The ring at a revision is a pure function of the records at that
//! revision ([`Records::rebuild`]): members in ascending order of id bytes,
//! each with its record's weight and zone, under the parameters. Two
//! followers at the same revision so hold the same fingerprint.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use shardring::{
    Algorithm, Node, NodeConfig, NodeState, PLACEMENT_FORMAT, Ring, RingConfig, RingError, RingParams, Transition,
};
use std::sync::Arc;

use crate::error::MembershipError;

/// The keys of one ring in etcd, under a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    prefix: String,
}

/// What a key under a [`Layout`]'s prefix holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyKind {
    /// `P/config`.
    Config,
    /// `P/members/<id>`, with the id.
    Member(String),
    /// A member key whose id is empty or not UTF-8.
    BadMember,
    /// Anything else under the prefix (ignored).
    Other,
}

impl Layout {
    /// The layout under `prefix`, a non-empty UTF-8 string such as
    /// `/shardring/cache` (a trailing `/` is dropped).
    ///
    /// Errors: [`MembershipError::InvalidPrefix`] for an empty prefix.
    pub fn new(prefix: &str) -> Result<Layout, MembershipError> {
        let trimmed = prefix.trim_end_matches('/');
        if trimmed.is_empty() {
            return Err(MembershipError::InvalidPrefix { prefix: prefix.to_owned() });
        }
        Ok(Layout { prefix: trimmed.to_owned() })
    }

    /// The prefix, without a trailing `/`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `P/`: every key of this ring starts with it (the range and watch key).
    pub fn root(&self) -> String {
        format!("{}/", self.prefix)
    }

    /// `P/config`.
    pub fn config_key(&self) -> String {
        format!("{}/config", self.prefix)
    }

    /// `P/clients/`: the followers' reports ([`crate::ClientRecord`]).
    pub fn clients_prefix(&self) -> String {
        format!("{}/clients/", self.prefix)
    }

    /// `P/clients/<id>`.
    pub fn client_key(&self, id: &str) -> String {
        format!("{}/clients/{id}", self.prefix)
    }

    /// `P/rebalance`: a running rebalance's progress (JSON, under a lease).
    pub fn rebalance_key(&self) -> String {
        format!("{}/rebalance", self.prefix)
    }

    /// `P/move`: the record of a move of a transition's keys
    /// ([`crate::MoveLock`], no lease), from before its first key moves
    /// until its members change state or an operator abandons it; while it
    /// exists no membership write is accepted.
    pub fn move_key(&self) -> String {
        format!("{}/move", self.prefix)
    }

    /// `P/mover`: the live mover of the move `P/move` records, under the
    /// mover's lease (gone within 10 s of its end).
    pub fn mover_key(&self) -> String {
        format!("{}/mover", self.prefix)
    }

    /// `P/hot`: the hot set every client spreads by (a
    /// [`shardring::HotSet`] as JSON, written by `shardring hot publish`).
    pub fn hot_key(&self) -> String {
        format!("{}/hot", self.prefix)
    }

    /// Whether `key` holds a report (a client's, or the rebalance's
    /// progress), the move record, its mover or the hot set rather than ring
    /// state: a change to it alone makes no epoch.
    pub fn is_report(&self, key: &[u8]) -> bool {
        key.starts_with(self.clients_prefix().as_bytes())
            || key == self.rebalance_key().as_bytes()
            || key == self.move_key().as_bytes()
            || key == self.mover_key().as_bytes()
            || key == self.hot_key().as_bytes()
    }

    /// `P/members/`.
    pub fn members_prefix(&self) -> String {
        format!("{}/members/", self.prefix)
    }

    /// `P/members/<id>`.
    pub fn member_key(&self, id: &str) -> String {
        format!("{}/members/{id}", self.prefix)
    }

    /// What `key` (raw etcd key bytes) holds.
    pub fn classify(&self, key: &[u8]) -> KeyKind {
        if key == self.config_key().as_bytes() {
            return KeyKind::Config;
        }
        match key.strip_prefix(self.members_prefix().as_bytes()) {
            Some(id) => match std::str::from_utf8(id) {
                Ok(id) if !id.is_empty() => KeyKind::Member(id.to_owned()),
                _ => KeyKind::BadMember,
            },
            None => KeyKind::Other,
        }
    }
}

/// The ring parameters at `P/config`: the fields of a ring config without
/// its nodes (`docs/config.schema.json`): `format_version` and the
/// [`RingParams`]. Read strictly: unknown fields, a duplicate key or a
/// `null` make the record invalid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RecordFields")]
pub struct ParamsRecord {
    /// Placement format; must be 1.
    pub format_version: u32,
    /// The algorithm and its parameters, written beside `format_version`.
    #[serde(flatten)]
    pub params: RingParams,
}

/// A `P/config` object as read: `format_version` and the other fields,
/// which make up the [`RingParams`].
#[derive(Deserialize)]
struct RecordFields {
    format_version: u32,
    #[serde(flatten)]
    params: serde_json::Map<String, serde_json::Value>,
}

impl TryFrom<RecordFields> for ParamsRecord {
    type Error = String;

    fn try_from(fields: RecordFields) -> Result<ParamsRecord, String> {
        let params = RingParams::from_fields(fields.params).map_err(|e| e.to_string())?;
        Ok(ParamsRecord { format_version: fields.format_version, params })
    }
}

impl Default for ParamsRecord {
    fn default() -> ParamsRecord {
        ParamsRecord { format_version: PLACEMENT_FORMAT, params: RingParams::default() }
    }
}

impl ParamsRecord {
    /// The record of `params`, at this build's placement format.
    pub fn new(params: RingParams) -> ParamsRecord {
        ParamsRecord { format_version: PLACEMENT_FORMAT, params }
    }

    /// The ring config of these parameters over `nodes`.
    pub fn to_config(&self, nodes: Vec<NodeConfig>) -> RingConfig {
        RingConfig { format_version: self.format_version, params: self.params.clone(), nodes }
    }

    /// Parses a `P/config` value. Errors: [`RingError::InvalidConfig`]
    /// naming the field, or an algorithm a fleet cannot follow in etcd
    /// ([`ParamsRecord::check`]); [`RingError::UnsupportedFormat`].
    pub fn from_json(json: &str) -> Result<ParamsRecord, RingError> {
        let params: ParamsRecord = shardring::from_json_strict(json)?;
        if params.format_version != PLACEMENT_FORMAT {
            return Err(RingError::UnsupportedFormat { found: params.format_version, supported: PLACEMENT_FORMAT });
        }
        params.check()?;
        Ok(params)
    }

    /// Refuses an algorithm whose placement depends on the order in which
    /// members were removed (`memento`): the ring at a revision must be a
    /// function of the records at that revision, and a member that dies
    /// takes its record (and so when it left) with its lease, so followers
    /// that start at different times could not agree on the order
    /// (`core/SPEC.md`, *Membership in etcd*). Such a ring is followed from
    /// a config file that one writer keeps, whose `removed_buckets` carry
    /// the order ([`crate::Follower::file`]).
    ///
    /// Errors: [`RingError::InvalidConfig`] naming the algorithm.
    pub fn check(&self) -> Result<(), RingError> {
        if self.params.algorithm.placement_has_history() {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "algorithm {:?} places keys by the order in which nodes were removed, which etcd member records \
                     (under leases) do not carry: follow it from a config file kept by one writer (its \
                     removed_buckets hold the order), or use ring, rendezvous, maglev, jump or jumpback in etcd",
                    self.params.algorithm.name()
                ),
            });
        }
        Ok(())
    }

    /// The record as the JSON written at `P/config`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a ParamsRecord always serialises")
    }
}

/// The value at `P/members/<id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberRecord {
    /// Relative capacity, finite and `>= 0` (default 1.0; 0 drains).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Failure-domain label (non-empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// The member's state (default `active`): `warming` while it joins (it
    /// takes writes, not reads, while a rebalancer copies its keys to it),
    /// `draining` while it leaves (`core/SPEC.md`, *Transitions*).
    #[serde(default)]
    pub state: NodeState,
}

fn default_weight() -> f64 {
    1.0
}

impl MemberRecord {
    /// A record of `weight`, no zone, active.
    pub fn new(weight: f64) -> MemberRecord {
        MemberRecord { weight, zone: None, state: NodeState::Active }
    }

    /// Parses a member value. Errors: [`RingError::InvalidConfig`] naming the field.
    pub fn from_json(json: &str) -> Result<MemberRecord, RingError> {
        shardring::from_json_strict(json)
    }

    /// A record as etcd stores it (raw value bytes), or why it is none:
    /// not UTF-8, or the error [`MemberRecord::from_json`] gives.
    pub(crate) fn from_stored(value: &[u8]) -> Result<MemberRecord, String> {
        std::str::from_utf8(value)
            .map_err(|e| e.to_string())
            .and_then(|text| MemberRecord::from_json(text).map_err(|e| e.to_string()))
    }

    /// The record as the JSON written at `P/members/<id>`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a MemberRecord always serialises")
    }

    fn node(&self, id: &str) -> Node {
        let node = Node::new(id, self.weight);
        match &self.zone {
            Some(zone) => node.with_zone(zone.clone()),
            None => node,
        }
    }
}

/// A record that could not be used: its key and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The etcd key (or the file path for a file source).
    pub key: String,
    /// What is wrong, naming the value.
    pub message: String,
}

/// One change to the records, from a watch event.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `P/config` was written (its value) or deleted (`None`).
    Config(Option<String>),
    /// A member record was written (its value) or deleted (`None`).
    Member(String, Option<String>),
}

/// The records of one ring at one revision, and the ring they describe.
#[derive(Debug, Clone)]
pub struct Records {
    layout: Layout,
    params: ParamsRecord,
    /// The params record was present but invalid: no ring can be built.
    params_rejected: Option<Rejected>,
    members: BTreeMap<String, MemberRecord>,
    /// Members whose value does not parse.
    malformed: BTreeMap<String, Rejected>,
    /// Members the last build left out (a weight or address the algorithm
    /// rejects, a point limit); rebuilt from scratch while any is.
    excluded: BTreeMap<String, Rejected>,
}

impl Records {
    /// No records: default parameters, no members.
    pub fn new(layout: Layout) -> Records {
        Records {
            layout,
            params: ParamsRecord::default(),
            params_rejected: None,
            members: BTreeMap::new(),
            malformed: BTreeMap::new(),
            excluded: BTreeMap::new(),
        }
    }

    /// The layout the keys follow.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The parameters in force.
    pub fn params(&self) -> &ParamsRecord {
        &self.params
    }

    /// The members with a valid record, by id.
    pub fn members(&self) -> &BTreeMap<String, MemberRecord> {
        &self.members
    }

    /// Every record that is left out of the ring, with why, in key order.
    pub fn rejected(&self) -> Vec<Rejected> {
        let mut all: Vec<Rejected> = self.params_rejected.iter().cloned().collect();
        all.extend(self.malformed.values().cloned());
        all.extend(self.excluded.values().cloned());
        all
    }

    /// Applies one change. Returns the record it rejected, if any.
    pub fn apply(&mut self, change: Change) -> Option<Rejected> {
        match change {
            Change::Config(None) => {
                self.params = ParamsRecord::default();
                self.params_rejected = None;
                None
            }
            Change::Config(Some(json)) => match ParamsRecord::from_json(&json) {
                Ok(params) => {
                    self.params = params;
                    self.params_rejected = None;
                    None
                }
                Err(error) => {
                    let rejected = Rejected { key: self.layout.config_key(), message: error.to_string() };
                    self.params_rejected = Some(rejected.clone());
                    Some(rejected)
                }
            },
            Change::Member(id, value) => {
                self.malformed.remove(&id);
                self.members.remove(&id);
                let json = value?;
                match MemberRecord::from_json(&json) {
                    Ok(record) => {
                        self.members.insert(id, record);
                        None
                    }
                    Err(error) => {
                        let rejected = Rejected { key: self.layout.member_key(&id), message: error.to_string() };
                        self.malformed.insert(id, rejected.clone());
                        Some(rejected)
                    }
                }
            }
        }
    }

    /// The change a raw etcd key and value stand for (`None` for a deletion);
    /// `Err` for a key that cannot be a member (empty or non-UTF-8 id, or a
    /// value that is not UTF-8), `Ok(None)` for keys the layout ignores.
    pub fn change_of(&self, key: &[u8], value: Option<&[u8]>) -> Result<Option<Change>, Rejected> {
        let shown = || String::from_utf8_lossy(key).into_owned();
        let text = match value.map(std::str::from_utf8) {
            None => None,
            Some(Ok(text)) => Some(text.to_owned()),
            Some(Err(_)) => return Err(Rejected { key: shown(), message: "the value is not UTF-8 JSON".into() }),
        };
        Ok(match self.layout.classify(key) {
            KeyKind::Config => Some(Change::Config(text)),
            KeyKind::Member(id) => Some(Change::Member(id, text)),
            KeyKind::BadMember if text.is_some() => {
                return Err(Rejected { key: shown(), message: "a member id must be non-empty UTF-8".into() });
            }
            KeyKind::BadMember | KeyKind::Other => None,
        })
    }

    /// The config these records describe: the parameters and every valid,
    /// not excluded member in ascending order of id bytes.
    fn config(&self) -> RingConfig {
        self.params.to_config(
            self.members
                .iter()
                .filter(|(id, _)| !self.excluded.contains_key(*id))
                .map(|(id, r)| NodeConfig {
                    zone: r.zone.clone(),
                    state: (r.state != NodeState::Active).then_some(r.state),
                    ..NodeConfig::new(id.clone(), r.weight)
                })
                .collect(),
        )
    }

    /// Builds the transition (with every member active, just a ring) from
    /// scratch, leaving out (and listing in [`Records::rejected`]) each
    /// member the algorithm rejects, one at a time in id order, so the result
    /// depends on the records alone.
    ///
    /// Errors: the core's error when the parameters themselves cannot build
    /// (an invalid config record, a Maglev table smaller than the members).
    pub fn rebuild(&mut self) -> Result<Transition, RingError> {
        if let Some(rejected) = &self.params_rejected {
            return Err(RingError::InvalidConfig { message: format!("{}: {}", rejected.key, rejected.message) });
        }
        self.excluded.clear();
        loop {
            match Transition::from_config(&self.config()) {
                Ok(transition) => return Ok(transition),
                Err(error) => {
                    let Some(id) = error_id(&error).filter(|id| self.members.contains_key(*id)) else {
                        return Err(error);
                    };
                    let rejected = Rejected { key: self.layout.member_key(id), message: error.to_string() };
                    self.excluded.insert(id.to_owned(), rejected);
                }
            }
        }
    }

    /// The transition after `changes`, derived from `previous` (that of
    /// these records before the changes) when that gives the same ring as
    /// [`Records::rebuild`]: on the algorithms whose placement ignores node
    /// order, with every member active and none excluded, and every
    /// derivation succeeding. Each derivation costs O(P) instead of a
    /// rebuild's O(P log P). Otherwise rebuilds. Returns the transition and
    /// the records `changes` rejected.
    pub fn advance(
        &mut self,
        previous: Option<&Transition>,
        changes: Vec<Change>,
    ) -> (Result<Transition, RingError>, Vec<Rejected>) {
        let before = self.members.clone();
        let params_before = self.params.clone();
        let mut rejected = Vec::new();
        let mut touched = Vec::new();
        let mut config_changed = false;
        for change in changes {
            match &change {
                Change::Config(_) => config_changed = true,
                Change::Member(id, _) => touched.push(id.clone()),
            }
            rejected.extend(self.apply(change));
        }
        touched.sort();
        touched.dedup();
        let steady = |members: &BTreeMap<String, MemberRecord>| members.values().all(|r| r.state == NodeState::Active);
        let previous = previous.filter(|t| t.is_steady()).map(|t| t.read_ring());
        let derivable = previous.is_some()
            && steady(&before)
            && steady(&self.members)
            && !config_changed
            && self.params == params_before
            && self.excluded.is_empty()
            && !self.params.params.algorithm.order_places_keys()
            && self.params.params.algorithm != Algorithm::Slots
            && touched.len() <= 16;
        if derivable {
            let previous = previous.expect("checked");
            let mut derived: Option<Ring> = None;
            let mut failed = false;
            for id in &touched {
                let base = derived.as_ref().unwrap_or(previous);
                let step = match (before.get(id), self.members.get(id)) {
                    (None, None) => continue,
                    (Some(_), None) => base.without_node(id),
                    (None, Some(record)) => base.with_node(record.node(id)),
                    (Some(old), Some(new)) if old.zone == new.zone => base.with_weight(id, new.weight),
                    (Some(_), Some(new)) => base.without_node(id).and_then(|r| r.with_node(new.node(id))),
                };
                match step {
                    Ok(next) => derived = Some(next),
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            if !failed {
                let ring = derived.map_or_else(|| Arc::clone(previous), Arc::new);
                return (Ok(Transition::steady(ring)), rejected);
            }
        }
        let excluded_before = std::mem::take(&mut self.excluded);
        let built = self.rebuild();
        // Report members newly left out (or left out for a new reason), once.
        rejected
            .extend(self.excluded.iter().filter(|(id, r)| excluded_before.get(*id) != Some(r)).map(|(_, r)| r.clone()));
        (built, rejected)
    }
}

/// The node id an error names, when it names one.
fn error_id(error: &RingError) -> Option<&str> {
    match error {
        RingError::InvalidWeight { id, .. }
        | RingError::EmptyZone { id }
        | RingError::InvalidAddress { id, .. }
        | RingError::TooManyPoints { id, .. }
        | RingError::DuplicateId { id } => Some(id),
        _ => None,
    }
}
