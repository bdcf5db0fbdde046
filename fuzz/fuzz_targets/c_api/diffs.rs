//! Diffs: `ring_diff` between two rings, and reading its arcs and flows
//! (`ring_diff_arc`, `ring_diff_flow`) against the shadow `RingDiff`.

use std::ptr;
use std::sync::Arc;

use ring::ring_diff_t;
use ring::ring_result::*;
use shardring::{Algorithm, Ring};

use crate::codes::{Expect, check_code, check_index_code};
use crate::input::{Index, Nulls, Pick};
use crate::strings::returned_bytes;
use crate::world::World;

impl World {
    pub(crate) fn diff(&mut self, old: Pick, new: Pick, keep: bool, sampled: bool, nulls: Nulls) {
        let (old_ptr, old_shadow) = self.ring(old);
        let (new_ptr, new_shadow) = self.ring(new);
        let slow = |ring: &Option<Arc<Ring>>| {
            ring.as_ref().is_some_and(|r| {
                matches!(r.algorithm(), Algorithm::Jump | Algorithm::Rendezvous) && r.live_node_count() > 0
            })
        };
        if slow(&old_shadow)
            && slow(&new_shadow)
            && old_shadow.as_ref().map(|r| r.algorithm()) == new_shadow.as_ref().map(|r| r.algorithm())
            && !sampled
        {
            return;
        }
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(old_ptr.is_null() || new_ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let core = match (&old_shadow, &new_shadow) {
            (Some(a), Some(b)) => Some(a.diff(b)),
            _ => None,
        };
        expect.core = core.as_ref().map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
        let mut out: *mut ring_diff_t = ptr::null_mut();
        // SAFETY: NULL or live handles; out NULL or writable.
        let code = unsafe { ring::ring_diff(old_ptr, new_ptr, if out_null { ptr::null_mut() } else { &mut out }) };
        check_code("ring_diff", code, &expect);
        if code != RING_OK {
            assert!(out.is_null(), "ring_diff wrote on failure");
            return;
        }
        let shadow = core.unwrap().unwrap();
        // SAFETY: a live diff.
        unsafe {
            assert_eq!(ring::ring_diff_moved_share(out).to_bits(), shadow.moved_share.to_bits());
            assert_eq!(ring::ring_diff_arc_count(out), shadow.arcs.len());
            assert_eq!(ring::ring_diff_flow_count(out), shadow.flows.len());
            assert!(ring::ring_diff_moved_share(ptr::null()).is_nan());
            assert_eq!(ring::ring_diff_arc_count(ptr::null()), 0);
            assert_eq!(ring::ring_diff_flow_count(ptr::null()), 0);
        }
        self.diffs.push((out, shadow));
        self.diff_read_at(Some(self.diffs.len() - 1), Index::Valid(0), Index::Valid(0), Nulls(0));
        if !keep {
            let (diff, _) = self.diffs.pop().unwrap();
            // SAFETY: a live diff, freed once.
            unsafe { ring::ring_diff_free(diff) };
        }
    }

    pub(crate) fn diff_read(&mut self, pick: Pick, arc: Index, flow: Index, nulls: Nulls) {
        self.diff_read_at(pick.index(self.diffs.len()), arc, flow, nulls);
    }

    /// `ring_diff_arc` and `ring_diff_flow` on diff `chosen` (NULL for `None`).
    fn diff_read_at(&mut self, chosen: Option<usize>, arc: Index, flow: Index, nulls: Nulls) {
        let (diff, shadow) = match chosen {
            Some(i) => (self.diffs[i].0, Some(&self.diffs[i].1)),
            None => (ptr::null_mut(), None),
        };
        let arc = arc.get(shadow.map_or(0, |s| s.arcs.len()));
        let in_range = shadow.is_some_and(|s| arc < s.arcs.len());
        let (mut start, mut end, mut from, mut from_len, mut to, mut to_len) =
            (7u64, 7u64, ptr::null(), 7usize, ptr::null(), 7usize);
        let out = |slot: u8, p: *mut u64| if nulls.null(slot) { ptr::null_mut() } else { p };
        // SAFETY: NULL or a live diff; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_diff_arc(
                diff,
                arc,
                out(0, &mut start),
                out(1, &mut end),
                if nulls.null(2) { ptr::null_mut() } else { &mut from },
                if nulls.null(3) { ptr::null_mut() } else { &mut from_len },
                if nulls.null(4) { ptr::null_mut() } else { &mut to },
                if nulls.null(5) { ptr::null_mut() } else { &mut to_len },
            )
        };
        check_index_code("ring_diff_arc", code, diff.is_null() || (0..6).any(|slot| nulls.null(slot)), in_range);
        if code == RING_OK {
            let want = &shadow.unwrap().arcs[arc];
            assert_eq!((start, end), (want.start, want.end));
            // SAFETY: ids valid while the diff lives.
            unsafe {
                assert_eq!(returned_bytes(from, from_len), want.from.as_bytes());
                assert_eq!(returned_bytes(to, to_len), want.to.as_bytes());
            }
        } else {
            assert!(
                start == 7 && end == 7 && from.is_null() && to.is_null() && from_len == 7 && to_len == 7,
                "ring_diff_arc wrote on failure"
            );
        }

        let flow = flow.get(shadow.map_or(0, |s| s.flows.len()));
        let in_range = shadow.is_some_and(|s| flow < s.flows.len());
        let (mut share, mut from, mut from_len, mut to, mut to_len) =
            (-7.0f64, ptr::null(), 7usize, ptr::null(), 7usize);
        // SAFETY: as above.
        let code = unsafe {
            ring::ring_diff_flow(
                diff,
                flow,
                if nulls.null(0) { ptr::null_mut() } else { &mut share },
                if nulls.null(2) { ptr::null_mut() } else { &mut from },
                if nulls.null(3) { ptr::null_mut() } else { &mut from_len },
                if nulls.null(4) { ptr::null_mut() } else { &mut to },
                if nulls.null(5) { ptr::null_mut() } else { &mut to_len },
            )
        };
        let null = diff.is_null() || [0, 2, 3, 4, 5].iter().any(|&slot| nulls.null(slot));
        check_index_code("ring_diff_flow", code, null, in_range);
        if code == RING_OK {
            let want = &shadow.unwrap().flows[flow];
            assert_eq!(share.to_bits(), want.share.to_bits());
            // SAFETY: ids valid while the diff lives.
            unsafe {
                assert_eq!(returned_bytes(from, from_len), want.from.as_bytes());
                assert_eq!(returned_bytes(to, to_len), want.to.as_bytes());
            }
        } else {
            assert!(share == -7.0 && from.is_null() && to.is_null(), "ring_diff_flow wrote on failure");
        }
    }
}
