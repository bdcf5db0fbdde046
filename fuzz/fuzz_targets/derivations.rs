//! Fuzz target `derivations`: derived rings against a deliberately simple model.
//!
//! For one algorithm of `Algorithm::ALL` (chosen by the input), a starting
//! node set and a sequence of operations (add a node, remove one, re-weight
//! one) are applied with `Ring::with_node` / `without_node` / `with_weight`.
//! The model is the list of nodes the harness thinks are present, in order.
//! After every step it checks:
//!
//! - **Errors** happen exactly when the rules of `core/SPEC.md` say so:
//!   `DuplicateId` for an id already present, `UnknownNode` for removing or
//!   re-weighting an absent id, `EmptyId`, `EmptyZone`, `InvalidWeight`
//!   (not finite and >= 0; weights not summing to a finite number; not a
//!   whole number for ketama/nginx, above 2^32 - 1 for the ketama modes, not 1
//!   for jump), `TooManyPoints` (over 2^24 points for `ring` and `nginx`) and
//!   `InvalidTableSize` (more nodes than Maglev slots). When one operation
//!   breaks several rules the library may report any one of them: the spec
//!   gives no precedence.
//! - **Nodes**: the ring's ids, weights (bit for bit) and zones equal the
//!   model's, in order; parameters are unchanged.
//! - **Lookups** against naive references written from the spec
//!   (`shardring_fuzz::reference`): for the continuum algorithms (ring,
//!   ketama, ketama-spy, libketama, nginx) the owner of a hash is found by a
//!   linear search over `ring.points()` and the preference list by walking
//!   them; jump, jumpback, rendezvous and maglev are recomputed from their
//!   formulas; memento from a plain model of its buckets and history that the
//!   harness updates with every derivation;
//!   slots from `slot_ranges()` and a bit-by-bit CRC16. `get`, `get_by_hash`,
//!   `get_n` and `get_n_indices_by_hash` must all agree with them, zones
//!   rule included; `get_n` lists distinct nodes of weight > 0, starting with
//!   `get`.
//! - **Rebuilds**: the ring rebuilt from `to_config()` (directly and through
//!   JSON) has the same fingerprint and places every probe the same; so does
//!   a fresh build of the model's nodes, except under `slots`, where a derived
//!   assignment is a rebalance and only its config (which lists the ranges)
//!   must rebuild it, and `memento`, whose config carries its history.
//! - **Movement** promised by the docs: on `ring` and `rendezvous` (and
//!   `slots` when adding or re-weighting; jump and jumpback when appending
//!   or removing the last node; memento when adding or removing any node)
//!   keys move only to or from the node that changed. Exact
//!   diffs (`Ring::diff`) report arcs whose endpoints really changed owner.
//! - **Ownership** equals the share recomputed from the points or the table.
#![no_main]

// A bin root's `mod x;` would look for `fuzz_targets/x.rs`, beside it: each
// module names its file in `derivations/`.
#[path = "derivations/input.rs"]
mod input;
#[path = "derivations/model.rs"]
mod model;
#[path = "derivations/movement.rs"]
mod movement;
#[path = "derivations/rebuilds.rs"]
mod rebuilds;
#[path = "derivations/ring_state.rs"]
mod ring_state;

use libfuzzer_sys::fuzz_target;
use shardring::RingError;
use shardring_fuzz::reference;

use crate::input::Input;
use crate::model::{ModelNode, Setup};
use crate::movement::{Change, check_movement};
use crate::ring_state::check_ring;

/// Most operations per input: enough for interesting histories, few enough
/// that each input runs in about a millisecond.
const MAX_OPS: usize = 16;

/// Asserts that `result` is an error whose code is one of `allowed`, or a
/// success when `allowed` is empty.
fn expect_outcome<T>(what: &str, result: &Result<T, RingError>, allowed: &[&str]) {
    match result {
        Ok(_) => {
            assert!(allowed.is_empty(), "{what}: succeeded, but the spec says it must fail with one of {allowed:?}")
        }
        Err(e) => assert!(allowed.contains(&e.code()), "{what}: failed with {e:?}, expected {allowed:?}"),
    }
}

fuzz_target!(|input: Input<'_>| {
    let setup = Setup::from_input(&input);
    let mut keys: Vec<Vec<u8>> =
        [&b""[..], b"a", b"user:42", b"{user}:42", b"\xff\xfe", b"10.0.0.1:11211"].iter().map(|k| k.to_vec()).collect();
    keys.extend([input.key_bytes[..3].to_vec(), input.key_bytes[3..].to_vec()]);
    let [a, b] = input.hashes;
    let input_hashes = [a, b, reference::fmix64(a), reference::fmix64(!b)];

    let all_steps = input.steps();
    let start_steps = (usize::from(input.start) % 13).min(all_steps.len());
    let (start_steps, steps) = all_steps.split_at(start_steps);
    // A set: the first node of each id (duplicates are exercised by the steps).
    let mut start: Vec<ModelNode> = Vec::new();
    for step in start_steps {
        let node = setup.model_node(&step.node);
        let invalid = node.id.is_empty() || node.zone.as_deref() == Some("");
        if !start.iter().any(|n| n.id == node.id) && (input.start >= 208 || !invalid) {
            start.push(node);
        }
    }
    let built = setup.build(&start);
    expect_outcome("initial build", &built, &setup.violations(&start));
    let (mut ring, mut model) = match built {
        Ok(ring) => (ring, start),
        Err(_) => (setup.build(&[]).expect("a ring without nodes builds"), Vec::new()),
    };
    // Memento's buckets and history, which the node list alone does not give.
    let mut buckets = reference::Memento::new(model.len());
    check_ring(&ring, &model, &setup, &buckets, &keys, &input_hashes);

    for step in steps.iter().take(MAX_OPS) {
        let mut next_buckets = buckets.clone();
        let (what, result, next, change) = match step.kind {
            0..128 => {
                let node = setup.model_node(&step.node);
                let mut next = model.clone();
                next.push(node.clone());
                next_buckets.add();
                let result = ring.with_node(node.to_node());
                (format!("with_node({node:?})"), result, next, Change::Added(node.id))
            }
            128..192 => {
                let id = setup.present_id(step.node.id, &model);
                let position = model.iter().position(|n| n.id == id);
                let mut next = model.clone();
                let was_last = position == Some(model.len().wrapping_sub(1));
                if let Some(position) = position {
                    next.remove(position);
                    next_buckets.remove(position);
                }
                let result = ring.without_node(&id);
                (format!("without_node({id:?})"), result, next, Change::Removed { id, was_last })
            }
            _ => {
                let id = setup.present_id(step.node.id, &model);
                let weight = setup.weight(&step.node.weight);
                let mut next = model.clone();
                let mut from = f64::NAN;
                if let Some(node) = next.iter_mut().find(|n| n.id == id) {
                    from = node.weight;
                    node.weight = weight;
                }
                let result = ring.with_weight(&id, weight);
                (format!("with_weight({id:?}, {weight:?})"), result, next, Change::Reweighted { id, from, to: weight })
            }
        };
        let mut allowed = setup.violations(&next);
        match &change {
            Change::Removed { id, .. } | Change::Reweighted { id, .. } if !model.iter().any(|n| &n.id == id) => {
                allowed.push("RING_UNKNOWN_NODE");
            }
            _ => {}
        }
        expect_outcome(&what, &result, &allowed);
        let Ok(next_ring) = result else {
            continue;
        };
        check_ring(&next_ring, &next, &setup, &next_buckets, &keys, &input_hashes);
        check_movement(&ring, &next_ring, &setup, &change, &keys, &input_hashes);
        ring = next_ring;
        model = next;
        buckets = next_buckets;
    }
});
