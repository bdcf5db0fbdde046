//! The run's state: every handle it created (rings, diffs, trackers, JSON
//! strings) with its Rust shadow, freed when the world is dropped.

use std::ffi::{CStr, c_char};
use std::ptr;
use std::sync::Arc;

use ring::{ring_diff_t, ring_t, ring_tracker_t};
use shardring::{Ring, RingDiff};

use crate::input::Pick;

/// A `ring_t` reference and the ring it must hold.
pub(crate) struct RingHandle {
    pub(crate) ptr: *mut ring_t,
    pub(crate) shadow: Arc<Ring>,
}

/// A `ring_tracker_t` and what its state must be.
pub(crate) struct TrackerHandle {
    pub(crate) ptr: *mut ring_tracker_t,
    pub(crate) ring: Arc<Ring>,
    pub(crate) loads: Vec<u64>,
    pub(crate) balance: f64,
}

/// Everything the run created, freed at its end.
#[derive(Default)]
pub(crate) struct World {
    pub(crate) rings: Vec<RingHandle>,
    pub(crate) diffs: Vec<(*mut ring_diff_t, RingDiff)>,
    pub(crate) trackers: Vec<TrackerHandle>,
    pub(crate) strings: Vec<*mut c_char>,
}

impl Drop for World {
    fn drop(&mut self) {
        // SAFETY: each pointer is a live handle owned by this world, freed once.
        unsafe {
            for handle in self.rings.drain(..) {
                ring::ring_free(handle.ptr);
            }
            for (diff, _) in self.diffs.drain(..) {
                ring::ring_diff_free(diff);
            }
            for tracker in self.trackers.drain(..) {
                ring::ring_tracker_free(tracker.ptr);
            }
            for string in self.strings.drain(..) {
                ring::ring_string_free(string);
            }
        }
    }
}

impl World {
    pub(crate) fn ring(&self, pick: Pick) -> (*mut ring_t, Option<Arc<Ring>>) {
        match pick.index(self.rings.len()) {
            Some(i) => (self.rings[i].ptr, Some(self.rings[i].shadow.clone())),
            None => (ptr::null_mut(), None),
        }
    }

    /// Takes ownership of a handle a successful call wrote, checking it holds `shadow`.
    pub(crate) fn adopt(&mut self, ptr: *mut ring_t, shadow: Ring) {
        assert!(!ptr.is_null(), "RING_OK with a NULL ring");
        // SAFETY: a live handle just returned by the library.
        unsafe {
            assert_eq!(ring::ring_fingerprint(ptr), shadow.fingerprint(), "fingerprint differs from the shadow ring");
            assert_eq!(ring::ring_node_count(ptr), shadow.nodes().len());
            let name = CStr::from_ptr(ring::ring_algorithm(ptr));
            assert_eq!(name.to_str().unwrap(), shadow.algorithm().name());
        }
        self.rings.push(RingHandle { ptr, shadow: Arc::new(shadow) });
    }

    pub(crate) fn tracker(&self, pick: Pick) -> Option<usize> {
        pick.index(self.trackers.len())
    }
}
