//! Fuzz target `c_api`: the C entry points of `include/ring.h`, called from
//! Rust through the `ring` crate (`ffi-c/`), in random sequences.
//!
//! Every `ring_t`, `ring_diff_t` and `ring_tracker_t` the run creates is
//! kept with a *shadow*: the same ring (or diff, or loads) computed with the
//! Rust API from the same inputs. Each call gets random arguments: ids as
//! arbitrary bytes (invalid UTF-8, empty), weights and epsilons as arbitrary
//! doubles (NaN, infinities, negatives, huge), random counts and buffer
//! lengths (0, shorter than needed, longer), out-of-range indices and
//! hashes, and NULL for one pointer argument now and then. Buffers are
//! always as long as the length passed says: a C caller lying about a length
//! is undefined behaviour no library can detect.
//!
//! Checks:
//! - every result code is in the set the header documents for that
//!   function (plus [`codes::UNDOCUMENTED`], see there), never `RING_PANIC`;
//! - the code is exactly what the shadow predicts: `RING_NULL_ARGUMENT` for
//!   a NULL required pointer, `RING_INVALID_UTF8` for bad text,
//!   `RING_BUFFER_TOO_SMALL` for a short buffer, else the Rust API's error
//!   (when several apply, any of them);
//! - on success the out-values equal the shadow's (indices, ids, weights,
//!   hashes, fingerprints, shares, preference lists, diff arcs and flows,
//!   tracker loads); out-buffers are not written past the result, nor at all
//!   on failure; `ring_last_error()` is a non-empty string after a failure;
//! - bounded-load acquires respect the capacity formula of the header;
//! - everything created is freed (`ring_free`, `ring_diff_free`,
//!   `ring_string_free`, `ring_tracker_free`), so LeakSanitizer sees any leak.
#![no_main]

// A bin root's `mod x;` would look for `fuzz_targets/x.rs`, beside it: each
// module names its file in `c_api/`.
#[path = "c_api/codes.rs"]
mod codes;
#[path = "c_api/derived_rings.rs"]
mod derived_rings;
#[path = "c_api/diffs.rs"]
mod diffs;
#[path = "c_api/dispatch.rs"]
mod dispatch;
#[path = "c_api/input.rs"]
mod input;
#[path = "c_api/queries.rs"]
mod queries;
#[path = "c_api/rings.rs"]
mod rings;
#[path = "c_api/strings.rs"]
mod strings;
#[path = "c_api/trackers.rs"]
mod trackers;
#[path = "c_api/world.rs"]
mod world;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;

use crate::input::{Call, Nulls};
use crate::world::World;

/// Most calls per input.
const MAX_CALLS: usize = 48;

/// Configs for the ring every run starts with, one per algorithm, so that
/// calls have a live handle to work on from the first one.
const STARTING_RINGS: [&str; 9] = [
    r#"{"format_version":1,"vnodes":16,"seed":7,"nodes":[{"id":"a"},{"id":"b","weight":2,"zone":"z"},{"id":"c","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"ketama","nodes":[{"id":"10.0.0.1:11211"},{"id":"10.0.0.2:11211","weight":2}]}"#,
    r#"{"format_version":1,"algorithm":"ketama-spy","nodes":[{"id":"10.0.0.1:11211"},{"id":"10.0.0.3","zone":"z"}]}"#,
    r#"{"format_version":1,"algorithm":"libketama","nodes":[{"id":"10.0.0.1:11211","weight":3},{"id":"a","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"nginx","nodes":[{"id":"10.0.0.1:11211"},{"id":"unix:/s","weight":2}]}"#,
    r#"{"format_version":1,"algorithm":"jump","seed":1,"nodes":[{"id":"a"},{"id":"b"},{"id":"c","zone":"z"}]}"#,
    r#"{"format_version":1,"algorithm":"rendezvous","nodes":[{"id":"a","weight":0.5},{"id":"b"},{"id":"c","weight":0}]}"#,
    r#"{"format_version":1,"algorithm":"maglev","table_size":251,"nodes":[{"id":"a"},{"id":"b","weight":3}]}"#,
    r#"{"format_version":1,"algorithm":"slots","nodes":[{"id":"a"},{"id":"b","weight":2},{"id":"c","weight":0}]}"#,
];

fuzz_target!(|data: &[u8]| {
    let mut world = World::default();
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    world.from_json(STARTING_RINGS[usize::from(first) % STARTING_RINGS.len()].as_bytes(), Nulls(0));
    assert_eq!(world.rings.len(), 1, "the starting ring builds");
    // Calls decoded one after the other until the bytes run out.
    let mut bytes = Unstructured::new(data);
    for _ in 0..MAX_CALLS {
        if bytes.is_empty() {
            break;
        }
        match Call::arbitrary(&mut bytes) {
            Ok(call) => world.call(call),
            Err(_) => break,
        }
    }
    // Dropping the world frees every handle; LeakSanitizer reports leaks.
});
