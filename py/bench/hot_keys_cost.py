"""What finding hot keys adds to a Python lookup: the same 100,000 keys placed
with `Ring.get` (one call per key) and `Ring.get_many` (one batch) on a ring
without a sketch and on one a `HotKeys` sketch watches (`watch_hot_keys`,
default settings: 1 lookup in 4 sampled per thread), alternating the two
rings pass by pass so both see the same machine. Prints the median ns per
key of each and the difference. Not a test: `make bench`, or
`python py/bench/hot_keys_cost.py [--quick]`.
"""

import statistics
import sys
import time

import shardring

QUICK = "--quick" in sys.argv
NODES = [f"cache-{i:04d}.example.internal" for i in range(100)]
KEYS = [f"user:session:{i:011d}xxxxxx" for i in range(10_000 if QUICK else 100_000)]
PASSES = 3 if QUICK else 11


def per_key(run):
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / len(KEYS)


def main():
    plain = shardring.Ring(NODES, vnodes=160)
    watched = shardring.Ring(NODES, vnodes=160)
    sketch = shardring.HotKeys()
    watched.watch_hot_keys(sketch)
    assert watched.get_many(KEYS) == plain.get_many(KEYS)
    print(f"hot keys cost in Python: 100 nodes x 160 points, {len(KEYS):,} keys, median of {PASSES} passes")
    for name, run in [
        ("get", lambda ring: [ring.get(key) for key in KEYS]),
        ("get_many", lambda ring: ring.get_many(KEYS)),
    ]:
        samples = {"plain": [], "watched": []}
        for _ in range(PASSES):
            samples["plain"].append(per_key(lambda: run(plain)))
            samples["watched"].append(per_key(lambda: run(watched)))
        off, on = statistics.median(samples["plain"]), statistics.median(samples["watched"])
        print(f"  {name:9} {off:7.1f} ns/key without a sketch, {on:7.1f} with one: {on - off:+.1f} ns")
    print(f"  the sketch saw the keys: {len(sketch.top())} in its top")


if __name__ == "__main__":
    main()
