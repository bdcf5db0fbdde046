//! Bounded-load trackers: `ring_tracker_new`, `ring_tracker_acquire` (with
//! the header's capacity bound), `ring_tracker_release`, `ring_tracker_swap`
//! and `ring_tracker_load`, against the loads the shadow counts.

use std::collections::HashMap;
use std::ptr;

use ring::ring_result::*;
use ring::ring_tracker_t;
use shardring::{Node, RingError};

use crate::codes::{Expect, check_code, check_index_code};
use crate::input::{Bytes, Index, Nulls, Pick, ReleaseId};
use crate::strings::{key_of, pointer, returned_bytes, text_of};
use crate::world::{TrackerHandle, World};

impl World {
    pub(crate) fn tracker_new(&mut self, pick: Pick, epsilon: f64, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let valid = epsilon.is_finite() && epsilon > 0.0;
        expect.core = Some(if valid { Ok(()) } else { Err(RingError::InvalidEpsilon { epsilon }) });
        let mut out: *mut ring_tracker_t = ptr::null_mut();
        // SAFETY: NULL or live handle; out NULL or writable.
        let code = unsafe { ring::ring_tracker_new(ptr, epsilon, if out_null { ptr::null_mut() } else { &mut out }) };
        check_code("ring_tracker_new", code, &expect);
        if code == RING_OK {
            assert!(!out.is_null());
            let ring = shadow.unwrap();
            let loads = vec![0; ring.nodes().len()];
            self.trackers.push(TrackerHandle { ptr: out, ring, loads, balance: 1.0 + epsilon });
        } else {
            assert!(out.is_null(), "ring_tracker_new wrote on failure");
        }
    }

    pub(crate) fn tracker_acquire(&mut self, pick: Pick, key: &Bytes, nulls: Nulls) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (bytes, len) = key.get();
        let (index_null, id_null, id_len_null, probes_null) =
            (nulls.null(0), nulls.null(1), nulls.null(2), nulls.null(3));
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || index_null || id_null != id_len_null, RING_NULL_ARGUMENT);
        let key = key_of(&bytes, len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        if let Some(i) = chosen {
            let empty = self.trackers[i].ring.live_node_count() == 0;
            expect.core = Some(if empty { Err(RingError::EmptyRing) } else { Ok(()) });
        }
        let (mut index, mut id, mut id_len, mut probes) = (usize::MAX, ptr::null(), usize::MAX, u32::MAX);
        // SAFETY: NULL or a live tracker; key valid or NULL; outs NULL or writable.
        let code = unsafe {
            ring::ring_tracker_acquire(
                ptr,
                pointer(&bytes).cast(),
                len,
                if index_null { ptr::null_mut() } else { &mut index },
                if id_null { ptr::null_mut() } else { &mut id },
                if id_len_null { ptr::null_mut() } else { &mut id_len },
                if probes_null { ptr::null_mut() } else { &mut probes },
            )
        };
        check_code("ring_tracker_acquire", code, &expect);
        if code != RING_OK {
            assert!(index == usize::MAX && id.is_null() && probes == u32::MAX, "ring_tracker_acquire wrote on failure");
            return;
        }
        let tracker = &mut self.trackers[chosen.unwrap()];
        let ring = &tracker.ring;
        assert!(index < ring.nodes().len(), "acquire index {index} of {} nodes", ring.nodes().len());
        let key = key.unwrap();
        let live: Vec<usize> = {
            let mut all = vec![0; ring.live_node_count()];
            let found = ring.get_n_indices(&key, &mut all).unwrap();
            all[..found].to_vec()
        };
        assert!(live.contains(&index), "acquire chose node {index}, which cannot own keys");
        if !id_null {
            // SAFETY: valid until the next swap or free.
            assert_eq!(unsafe { returned_bytes(id, id_len) }, ring.nodes()[index].id().as_bytes());
        }
        if !probes_null {
            assert!(probes >= 1 && probes as usize <= live.len(), "{probes} probes over {} live nodes", live.len());
            if probes == 1 {
                assert_eq!(index, ring.get_index(&key).unwrap(), "one probe but not the key's owner");
            }
        }
        tracker.loads[index] += 1;
        // The header's capacity: max(1, ceil((1 + epsilon) * (total load + 1) * weight / total weight)),
        // where "total load + 1" is the total including this request and the total weight
        // counts only nodes that can own keys (those some preference list reaches).
        // Either evaluation order.
        let total: u64 = tracker.loads.iter().sum();
        let weight = ring.nodes()[index].weight();
        let mut reachable = vec![0; ring.live_node_count()];
        let found = ring.get_n_indices(&key, &mut reachable).unwrap();
        let total_weight: f64 = reachable[..found].iter().map(|&i| ring.nodes()[i].weight()).sum();
        let share = weight / total_weight;
        let cap_a = ((tracker.balance * total as f64 * share).ceil() as u64).max(1);
        let cap_b = ((tracker.balance * total as f64 * weight / total_weight).ceil() as u64).max(1);
        assert!(
            tracker.loads[index] <= cap_a.max(cap_b),
            "node {index} has load {} over its capacity {cap_a}",
            tracker.loads[index]
        );
        // SAFETY: a live tracker.
        assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, total);
    }

    pub(crate) fn tracker_release(&mut self, pick: Pick, id: &ReleaseId) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (bytes, len) = match (id, chosen) {
            (ReleaseId::Node(i), Some(t)) if !self.trackers[t].ring.nodes().is_empty() => {
                let nodes = self.trackers[t].ring.nodes();
                let id = nodes[usize::from(*i) % nodes.len()].id().as_bytes().to_vec();
                let len = id.len();
                (Some(id), len)
            }
            (ReleaseId::Other(bytes), _) => bytes.get(),
            _ => (Some(b"a".to_vec()), 1),
        };
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        let text = text_of(&bytes, len).map_err(|p| expect.problems.push(p)).ok();
        let mut position = None;
        if let (Some(t), Some(text)) = (chosen, &text) {
            let tracker = &self.trackers[t];
            position = tracker.ring.position(text);
            expect.core = Some(match position {
                None => Err(RingError::UnknownNode { id: text.clone() }),
                Some(p) if tracker.loads[p] == 0 => Err(RingError::NoLoad { id: text.clone() }),
                Some(_) => Ok(()),
            });
        }
        // SAFETY: NULL or a live tracker; id valid for `len` bytes or NULL.
        let code = unsafe { ring::ring_tracker_release(ptr, pointer(&bytes), len) };
        check_code("ring_tracker_release", code, &expect);
        if code == RING_OK {
            let tracker = &mut self.trackers[chosen.unwrap()];
            tracker.loads[position.unwrap()] -= 1;
            // SAFETY: a live tracker.
            assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, tracker.loads.iter().sum::<u64>());
        }
    }

    pub(crate) fn tracker_swap(&mut self, pick: Pick, ring_pick: Pick) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let (ring_ptr, shadow) = self.ring(ring_pick);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || ring_ptr.is_null(), RING_NULL_ARGUMENT);
        expect.core = Some(Ok(()));
        // SAFETY: NULL or live handles.
        let code = unsafe { ring::ring_tracker_swap(ptr, ring_ptr) };
        check_code("ring_tracker_swap", code, &expect);
        if code == RING_OK {
            let tracker = &mut self.trackers[chosen.unwrap()];
            let shadow = shadow.unwrap();
            let by_id: HashMap<&str, u64> =
                tracker.ring.nodes().iter().map(Node::id).zip(tracker.loads.iter().copied()).collect();
            let loads = shadow.nodes().iter().map(|n| by_id.get(n.id()).copied().unwrap_or(0)).collect();
            tracker.loads = loads;
            tracker.ring = shadow;
            // SAFETY: a live tracker.
            assert_eq!(unsafe { ring::ring_tracker_total_load(tracker.ptr) }, tracker.loads.iter().sum::<u64>());
        }
    }

    pub(crate) fn tracker_load(&mut self, pick: Pick, index: Index, nulls: Nulls) {
        let chosen = self.tracker(pick);
        let ptr = chosen.map_or(ptr::null_mut(), |i| self.trackers[i].ptr);
        let count = chosen.map_or(0, |i| self.trackers[i].loads.len());
        let index = index.get(count);
        let out_null = nulls.null(0);
        let in_range = index < count;
        let mut load = u64::MAX;
        // SAFETY: NULL or a live tracker; out NULL or writable.
        let code = unsafe { ring::ring_tracker_load(ptr, index, if out_null { ptr::null_mut() } else { &mut load }) };
        check_index_code("ring_tracker_load", code, ptr.is_null() || out_null, in_range);
        if code == RING_OK {
            assert_eq!(load, self.trackers[chosen.unwrap()].loads[index]);
        } else {
            assert_eq!(load, u64::MAX, "ring_tracker_load wrote on failure");
        }
        // SAFETY: NULL is allowed.
        assert_eq!(unsafe { ring::ring_tracker_total_load(ptr::null()) }, 0);
    }
}
