//! Derived rings: `ring_with_node`, `ring_without_node` and
//! `ring_with_weight`, each checked against the shadow's `Ring::with_node`,
//! `without_node` and `with_weight`.

use std::ptr;

use ring::ring_result::{self, *};
use ring::ring_t;
use shardring::{Node, NodeConfig, Ring, RingConfig, RingError};
use shardring_fuzz::budget;

use crate::codes::{Expect, check_code};
use crate::input::{Bytes, NodeArg, Nulls, Pick};
use crate::strings::{pointer, text_of};
use crate::world::World;

impl World {
    /// The budget check for a derived ring: skip it when too slow to build.
    fn derived_too_costly(shadow: &Ring, change: impl FnOnce(&mut RingConfig)) -> bool {
        let mut config = shadow.to_config();
        change(&mut config);
        budget::too_costly(&config)
    }

    pub(crate) fn with_node(&mut self, pick: Pick, node: &NodeArg, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (id_bytes, id_len) = node.id.get();
        let zone = node.zone.as_ref().map(Bytes::get);
        let weight = node.weight.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&id_bytes, id_len).map_err(|p| expect.problems.push(p)).ok();
        // A NULL zone pointer means no zone, whatever the length.
        let zone_text = match &zone {
            Some((Some(bytes), len)) => {
                text_of(&Some(bytes.clone()), *len).map(Some).map_err(|p| expect.problems.push(p)).ok()
            }
            _ => Some(None),
        };
        let mut core = None;
        if let (Some(shadow), Some(id), Some(zone_text)) = (&shadow, &id, &zone_text) {
            if Self::derived_too_costly(shadow, |c| {
                c.nodes.push(NodeConfig::new(id.clone(), weight));
            }) {
                return;
            }
            let mut new = Node::new(id.clone(), weight);
            if let Some(zone) = zone_text {
                new = new.with_zone(zone.clone());
            }
            core = Some(shadow.with_node(new));
        }
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let (zone_ptr, zone_len) = match &zone {
            Some((bytes, len)) => (pointer(bytes), *len),
            None => (ptr::null(), 0),
        };
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id and zone valid for their lengths or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_with_node(
                ptr,
                pointer(&id_bytes),
                id_len,
                weight,
                zone_ptr,
                zone_len,
                if out_null { ptr::null_mut() } else { &mut out },
            )
        };
        check_code("ring_with_node", code, &expect);
        self.finish_derivation("ring_with_node", code, out, core);
    }

    pub(crate) fn without_node(&mut self, pick: Pick, id: &Bytes, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = id.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let core = match (&shadow, &id) {
            (Some(shadow), Some(id)) => Some(shadow.without_node(id)),
            _ => None,
        };
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id valid for `len` bytes or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_without_node(ptr, pointer(&bytes), len, if out_null { ptr::null_mut() } else { &mut out })
        };
        check_code("ring_without_node", code, &expect);
        self.finish_derivation("ring_without_node", code, out, core);
    }

    pub(crate) fn with_weight(&mut self, pick: Pick, id: &Bytes, weight: f64, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = id.get();
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let id = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let mut core = None;
        if let (Some(shadow), Some(id)) = (&shadow, &id) {
            if Self::derived_too_costly(shadow, |c| {
                c.nodes.iter_mut().filter(|n| &n.id == id).for_each(|n| n.weight = weight)
            }) {
                return;
            }
            core = Some(shadow.with_weight(id, weight));
        }
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_t = ptr::null_mut();
        // SAFETY: id valid for `len` bytes or NULL; out NULL or writable.
        let code = unsafe {
            ring::ring_with_weight(ptr, pointer(&bytes), len, weight, if out_null { ptr::null_mut() } else { &mut out })
        };
        check_code("ring_with_weight", code, &expect);
        self.finish_derivation("ring_with_weight", code, out, core);
    }

    fn finish_derivation(
        &mut self,
        function: &str,
        code: ring_result,
        out: *mut ring_t,
        core: Option<Result<Ring, RingError>>,
    ) {
        if code == RING_OK {
            self.adopt(out, core.unwrap().unwrap());
        } else {
            assert!(out.is_null(), "{function} wrote a ring on failure");
        }
    }
}
