//! `Transition`: the read and write sets of a ring whose members are
//! warming up or draining (the core's `Transition`).

use std::sync::Arc;

use napi::{Env, Result, Unknown};
use napi_derive::napi;

use crate::analysis::{RingDiff, ring_diff};
use crate::errors::{Id, text, throw};
use crate::keys::with_key;
use crate::ring::{Ring, fingerprint_hex};

/// A ring in transition (core/SPEC.md, Transitions): members are `active`,
/// `warming` (joining: takes the writes of the keys it will own, no reads,
/// while a rebalancer copies them) or `draining` (leaving: no writes, reads
/// as a fallback). `readNodes(key)` is the owner among the active members,
/// then the old owner when it differs; `writeNodes(key)` the owner among the
/// active members, then the new owner when it differs.
#[napi]
pub struct Transition {
    pub(crate) transition: Arc<shardring::Transition>,
}

fn ids(nodes: Vec<&shardring::Node>) -> Vec<String> {
    nodes.iter().map(|n| n.id().to_owned()).collect()
}

/// A key's route during a transition (`Transition.route`).
#[napi(object)]
pub struct Route {
    /// Its owner under the old ring (active and draining members): where it is.
    pub old: String,
    /// Its owner under the new ring (active and warming members): where it goes.
    pub new: String,
    /// Whether `old` and `new` differ.
    pub moving: bool,
}

#[napi]
impl Transition {
    /// From a JSON ring config whose nodes may carry `state` (`"active"`,
    /// `"warming"`, `"draining"`; absent: active). Throws `RING_INVALID_CONFIG`
    /// and the Ring constructor's errors.
    #[napi(factory, js_name = "fromJSON", ts_args_type = "config: string")]
    pub fn from_json(env: Env, config: Unknown<'_>) -> Result<Transition> {
        let config = text(&env, config, "config")?;
        let config = shardring::RingConfig::from_json(&config).map_err(|e| throw(&env, e))?;
        let transition = shardring::Transition::from_config(&config).map_err(|e| throw(&env, e))?;
        Ok(Transition { transition: Arc::new(transition) })
    }

    /// Members only in `oldRing` drain, members only in `newRing` warm up.
    /// Throws `RING_ALGORITHM_MISMATCH` or `RING_SEED_MISMATCH`.
    #[napi]
    pub fn between(env: Env, old_ring: &Ring, new_ring: &Ring) -> Result<Transition> {
        let transition =
            shardring::Transition::between(&old_ring.current(), &new_ring.current()).map_err(|e| throw(&env, e))?;
        Ok(Transition { transition: Arc::new(transition) })
    }

    /// Where to read `key`, in order (one or two ids). Throws `RING_EMPTY_RING`.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn read_nodes(&self, env: Env, key: Unknown<'_>) -> Result<Vec<String>> {
        let transition = &self.transition;
        with_key(&env, key, |bytes| transition.read_nodes(bytes).map(ids))?.map_err(|e| throw(&env, e))
    }

    /// Where to write `key` (one or two ids; acknowledge a write once all took
    /// it). Throws `RING_EMPTY_RING`.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn write_nodes(&self, env: Env, key: Unknown<'_>) -> Result<Vec<String>> {
        let transition = &self.transition;
        with_key(&env, key, |bytes| transition.write_nodes(bytes).map(ids))?.map_err(|e| throw(&env, e))
    }

    /// Where `key` is (`old`, its owner under the old ring) and where it goes
    /// (`new`, under the new ring), and whether it is `moving` (they differ).
    /// Send a moving key's commands through `REDIS_GUARD` on `old`, then to
    /// `new` when the guard answers `MOVED_REPLY` (core/SPEC.md, Handoff).
    /// Throws `RING_EMPTY_RING` when neither ring can own keys.
    #[napi(ts_args_type = "key: string | Uint8Array")]
    pub fn route(&self, env: Env, key: Unknown<'_>) -> Result<Route> {
        let transition = &self.transition;
        let route = with_key(&env, key, |bytes| {
            transition.route(bytes).map(|r| Route {
                old: r.old.id().to_owned(),
                new: r.new.id().to_owned(),
                moving: r.is_moving(),
            })
        })?;
        route.map_err(|e| throw(&env, e))
    }

    /// The handoff mark: `shardring:handoff:` and the fingerprint in 16 hex
    /// digits, the key the mover sets on each old owner before it moves
    /// keys; the guard's second key (core/SPEC.md, Handoff).
    #[napi(getter)]
    pub fn handoff_mark(&self) -> String {
        self.transition.handoff_mark()
    }

    /// The ring of the active members (where keys are read first).
    #[napi(getter)]
    pub fn read_ring(&self) -> Ring {
        Ring::shared(Arc::clone(self.transition.read_ring()))
    }

    /// The ring of the active and draining members (where keys are now).
    #[napi(getter)]
    pub fn old_ring(&self) -> Ring {
        Ring::shared(Arc::clone(self.transition.old_ring()))
    }

    /// The ring of the active and warming members (where keys go).
    #[napi(getter)]
    pub fn new_ring(&self) -> Ring {
        Ring::shared(Arc::clone(self.transition.new_ring()))
    }

    /// `"active"`, `"warming"` or `"draining"`; `null` for an unknown id.
    #[napi(ts_args_type = "id: string")]
    pub fn state(&self, id: Id) -> Option<&'static str> {
        self.transition.state(&id).map(shardring::NodeState::name)
    }

    /// Whether every member is active.
    #[napi(getter)]
    pub fn is_steady(&self) -> bool {
        self.transition.is_steady()
    }

    /// The fingerprint of the config with its states (bigint).
    #[napi(getter)]
    pub fn fingerprint(&self) -> napi::bindgen_prelude::BigInt {
        napi::bindgen_prelude::BigInt::from(self.transition.fingerprint())
    }

    /// The fingerprint as text, 16 lowercase hex digits, zero-padded (as the
    /// CLI prints it); a steady transition's is its ring's.
    #[napi(getter)]
    pub fn fingerprint_hex(&self) -> String {
        fingerprint_hex(self.transition.fingerprint())
    }

    /// The old ring's difference to the new one: the arcs a rebalancer copies.
    #[napi]
    pub fn moves(&self, env: Env) -> Result<RingDiff> {
        Ok(ring_diff(self.transition.moves().map_err(|e| throw(&env, e))?))
    }
}
