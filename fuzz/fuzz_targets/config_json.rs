//! Fuzz target `config_json`: arbitrary bytes as a JSON ring config.
//!
//! Checks, for every input that is UTF-8:
//! - `RingConfig::from_json` and `Ring::from_json` never panic, and agree:
//!   `Ring::from_json(text)` is exactly `RingConfig::from_json(text)?.build()`.
//! - When a ring builds, its config written back (`to_config().to_json()`)
//!   parses, equals `to_config()` field for field, and rebuilds a ring with
//!   the same `fingerprint()`, algorithm, parameters and nodes; `get` and
//!   `get_n` agree between the two rings on a few keys (fixed ones and ones
//!   taken from the input).
//!
//! Configs that are valid but slow to build (millions of points, see
//! `shardring_fuzz::budget`) are skipped after parsing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardring::{Ring, RingConfig};
use shardring_fuzz::budget;

/// Keys looked up on both rings, besides slices of the input itself.
const KEYS: [&[u8]; 6] = [b"", b"a", b"user:42", b"{user}:42", b"\xff\x00", b"cache-01"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = RingConfig::from_json(text);
    if let Ok(config) = &config {
        if budget::too_costly(config) {
            return;
        }
    }
    let ring = Ring::from_json(text);
    match (&config, &ring) {
        (Err(config_error), Err(ring_error)) => assert_eq!(config_error, ring_error, "parse errors differ"),
        (Err(error), Ok(_)) => panic!("RingConfig::from_json failed ({error}) but Ring::from_json built a ring"),
        (Ok(config), _) => {
            let built = config.build();
            match (&built, &ring) {
                (Ok(a), Ok(b)) => assert_eq!(a.fingerprint(), b.fingerprint()),
                (Err(a), Err(b)) => assert_eq!(a, b, "build errors differ"),
                _ => panic!("config.build() = {built:?} but Ring::from_json = {ring:?}"),
            }
        }
    }
    let Ok(ring) = ring else {
        return;
    };

    let written = ring.to_config();
    let json = written.to_json();
    let reread = RingConfig::from_json(&json).unwrap_or_else(|e| panic!("to_json output does not parse: {e}\n{json}"));
    assert_eq!(reread, written, "config changed through JSON:\n{json}");
    assert_eq!(reread.fingerprint(), written.fingerprint());
    let rebuilt = Ring::from_json(&json).unwrap_or_else(|e| panic!("to_json output does not rebuild: {e}\n{json}"));

    assert_eq!(rebuilt.fingerprint(), ring.fingerprint(), "fingerprint changed through to_config/to_json:\n{json}");
    assert_eq!(rebuilt.algorithm(), ring.algorithm());
    assert_eq!(rebuilt.vnodes(), ring.vnodes());
    assert_eq!(rebuilt.seed(), ring.seed());
    assert_eq!(rebuilt.table_size(), ring.table_size());
    assert_eq!(rebuilt.nodes(), ring.nodes());
    assert_eq!(rebuilt.live_node_count(), ring.live_node_count());
    assert_eq!(rebuilt.point_count(), ring.point_count());
    assert_eq!(rebuilt.slot_ranges(), ring.slot_ranges());

    let from_input = data.chunks(7).take(4);
    for key in KEYS.into_iter().chain(from_input) {
        let (a, b) = (ring.get(key), rebuilt.get(key));
        match (&a, &b) {
            (Ok(a), Ok(b)) => assert_eq!(a.id(), b.id(), "get({key:?}) differs after the round trip"),
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("get({key:?}): {a:?} before the round trip, {b:?} after"),
        }
        for n in [0, 1, 3, usize::MAX] {
            let ids = |r: &Ring| {
                r.get_n(key, n).map(|nodes| nodes.iter().map(|node| node.id().to_owned()).collect::<Vec<_>>())
            };
            assert_eq!(ids(&ring), ids(&rebuilt), "get_n({key:?}, {n}) differs after the round trip");
        }
    }
});
