//! Dispatch of one decoded [`Call`] to the method that drives its C
//! function; the calls that need no more than a few lines (`ring_clone`,
//! `ring_free`, `ring_hash_key`, `ring_diff_free`, `ring_tracker_free`,
//! `ring_result_str`) are made here.

use std::ffi::CStr;
use std::ptr;

use crate::input::Call;
use crate::rings::{KNOWN_OPTION_BITS, NewOptions};
use crate::strings::{key_of, pointer};
use crate::world::{RingHandle, World};

impl World {
    pub(crate) fn call(&mut self, call: Call) {
        match call {
            Call::New { nodes, vnodes, seed, no_zones, nulls } => {
                self.new_ring(nodes.get(), None, vnodes % 64, seed, 0, no_zones, nulls)
            }
            Call::NewWithOptions {
                nodes,
                algorithm,
                fields,
                vnodes,
                seed,
                table_size,
                small,
                stray,
                legacy,
                nulls,
            } => {
                // Small parameters and only the defined bits most of the time, so that rings build.
                let (vnodes, table_size) =
                    if small { (vnodes % 41, [0, 251, 11, 4][table_size as usize % 4]) } else { (vnodes, table_size) };
                let seed = if small { seed % 2 } else { seed };
                let fields = if small { fields & KNOWN_OPTION_BITS } else { fields };
                let options = NewOptions { algorithm, fields, stray, legacy };
                self.new_ring(nodes.get(), Some(options), vnodes, seed, table_size, false, nulls)
            }
            Call::FromJson { json, nulls } => self.from_json(&json.bytes(), nulls),
            Call::ToJson { ring, keep, nulls } => self.to_json(ring, keep, nulls),
            Call::Clone { ring } => {
                let (ptr, shadow) = self.ring(ring);
                // SAFETY: NULL or a live handle.
                let clone = unsafe { ring::ring_clone(ptr) };
                assert_eq!(clone, ptr, "ring_clone returns the same handle");
                if let Some(shadow) = shadow {
                    self.rings.push(RingHandle { ptr: clone, shadow });
                }
            }
            Call::Free { ring } => match ring.index(self.rings.len()) {
                // SAFETY: one reference of a live handle, dropped once.
                Some(i) => unsafe { ring::ring_free(self.rings.swap_remove(i).ptr) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_free(ptr::null_mut()) },
            },
            Call::NodeInfo { ring, index, nulls } => self.node_info(ring, index, nulls),
            Call::GetNode { ring, key, nulls } => self.get_node(ring, &key, nulls),
            Call::GetNodeByHash { ring, hash, narrow, nulls } => self.get_node_by_hash(ring, hash, narrow, nulls),
            Call::GetNodes { ring, key, len, nulls } => self.get_nodes(ring, &key, usize::from(len % 16), nulls),
            Call::Batch { ring, keys, extra, nulls } => {
                self.batch(ring, &keys.keys[..usize::from(keys.count) % 7], extra, nulls)
            }
            Call::HashKey { ring, key } => {
                let (ptr, shadow) = self.ring(ring);
                let (bytes, len) = key.get();
                // SAFETY: NULL or live; the key is valid for `len` bytes or NULL.
                let hash = unsafe { ring::ring_hash_key(ptr, pointer(&bytes).cast(), len) };
                let expected = match (shadow, key_of(&bytes, len)) {
                    (Some(shadow), Some(key)) => shadow.hash_key(key),
                    _ => 0,
                };
                assert_eq!(hash, expected, "ring_hash_key");
                // SAFETY: NULL is allowed for these.
                unsafe {
                    assert_eq!(ring::ring_fingerprint(ptr::null()), 0);
                    assert_eq!(ring::ring_node_count(ptr::null()), 0);
                    assert!(ring::ring_algorithm(ptr::null()).is_null());
                }
            }
            Call::WithNode { ring, node, nulls } => self.with_node(ring, &node, nulls),
            Call::WithoutNode { ring, id, nulls } => self.without_node(ring, &id, nulls),
            Call::WithWeight { ring, id, weight, nulls } => self.with_weight(ring, &id, weight.get(), nulls),
            Call::Ownership { ring, len, nulls } => self.ownership(ring, usize::from(len % 16), nulls),
            Call::Diff { old, new, keep, sampled, nulls } => self.diff(old, new, keep, sampled % 4 == 0, nulls),
            Call::DiffRead { diff, arc, flow, nulls } => self.diff_read(diff, arc, flow, nulls),
            Call::DiffFree { diff } => match diff.index(self.diffs.len()) {
                // SAFETY: a live diff, freed once.
                Some(i) => unsafe { ring::ring_diff_free(self.diffs.swap_remove(i).0) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_diff_free(ptr::null_mut()) },
            },
            Call::TrackerNew { ring, epsilon, nulls } => self.tracker_new(ring, epsilon.get(), nulls),
            Call::TrackerAcquire { tracker, key, times, nulls } => {
                // Many acquires in a row reach the capacity limits.
                let times = if self.tracker(tracker).is_some() { usize::from(times % 128) + 1 } else { 1 };
                for _ in 0..times {
                    self.tracker_acquire(tracker, &key, nulls);
                }
            }
            Call::TrackerRelease { tracker, id } => self.tracker_release(tracker, &id),
            Call::TrackerSwap { tracker, ring } => self.tracker_swap(tracker, ring),
            Call::TrackerLoad { tracker, index, nulls } => self.tracker_load(tracker, index, nulls),
            Call::TrackerFree { tracker } => match tracker.index(self.trackers.len()) {
                // SAFETY: a live tracker, freed once.
                Some(i) => unsafe { ring::ring_tracker_free(self.trackers.swap_remove(i).ptr) },
                // SAFETY: NULL is a no-op.
                None => unsafe { ring::ring_tracker_free(ptr::null_mut()) },
            },
            Call::ResultText { code } => {
                // SAFETY: static NUL-terminated strings, never NULL.
                let text = unsafe { CStr::from_ptr(ring::ring_result_str(code)) };
                assert!(!text.to_str().expect("UTF-8").is_empty());
            }
        }
    }
}
