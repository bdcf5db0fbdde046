"""shardring against uhashring, side by side in one process.

100 nodes x 160 vnodes, 100,000 distinct 30-byte str keys. Prints the median
of several passes, in ns per key, and the speed-up. Not a test: run it with
`make bench` or `python py/bench/bench_vs_uhashring.py [--quick]`.
"""

import statistics
import sys
import time

from uhashring import HashRing

import shardring

NODES = [f"cache-{i:04d}.example.internal" for i in range(100)]
QUICK = "--quick" in sys.argv
KEYS = [f"user:session:{i:011d}xxxxxx" for i in range(10_000 if QUICK else 100_000)]
PASSES = 2 if QUICK else 7


def per_key(run) -> float:
    """Median ns per key over PASSES runs of `run()`, which places every key once."""
    samples = []
    for _ in range(PASSES):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / len(KEYS))
    return statistics.median(samples)


def main() -> None:
    ours = shardring.Ring(NODES, vnodes=160)
    peer = HashRing(nodes=NODES, vnodes=160)
    assert len(peer.get_points()) == len(NODES) * 160 == ours.point_count

    get, peer_get = ours.get, peer.get_node

    def ours_get() -> None:
        for key in KEYS:
            get(key)

    def ours_many() -> None:
        ours.get_many(KEYS)

    def peer_single() -> None:
        for key in KEYS:
            peer_get(key)

    def loop_only() -> None:
        for key in KEYS:
            pass

    def copy_keys() -> None:
        # The floor under any batch call: building (and freeing) a list that
        # touches every key object once, as get_many must to read the keys.
        list(KEYS)

    loop = per_key(loop_only)
    rows = [
        ("get(key), per call", per_key(ours_get)),
        ("get_many(keys), per key", per_key(ours_many)),
        ("floor: list(keys), touching each key object once, per key", per_key(copy_keys)),
    ]
    peer_ns = per_key(peer_single)
    print(f"Python {sys.version.split()[0]}, {len(NODES)} nodes x 160 vnodes, {len(KEYS)} distinct keys, "
          f"median of {PASSES} passes (the bare for-loop costs {loop:.0f} ns per key)")
    print("| call | shardring | uhashring get_node | speed-up |")
    print("|---|---:|---:|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns:.1f} ns | {peer_ns:.0f} ns | {peer_ns / ns:.0f}x |")


if __name__ == "__main__":
    main()
