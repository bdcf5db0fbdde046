#!/usr/bin/env python3
"""Prints shardring against its peers from the criterion results of
`cargo bench -p shardring-bench` (target/criterion/*/*/new/*.json): one row
per peer, with shardring's time in the same group, the peer's, and the ratio.
Usage: python3 bench/report.py [target/criterion]"""

import json
import pathlib
import sys

# (group, shardring function, peer function)
PAIRS = [
    ("ring, 100 nodes x 160 points", "shardring ring", "pingora-ketama"),
    ("ring, 100 nodes x 160 points", "shardring nginx", "pingora-ketama"),
    ("ring, 100 nodes x 160 points", "shardring ring", "hashring"),
    ("jump, 100 buckets", "shardring jump", "jumphash"),
    ("maglev, 100 nodes, 65537 slots", "shardring maglev", "maglev"),
    ("rendezvous, 100 nodes", "shardring rendezvous", "hrw-hash"),
]


def medians(root):
    found = {}
    for estimates in root.glob("*/*/new/estimates.json"):
        meta = json.loads((estimates.parent / "benchmark.json").read_text())
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        found[(meta["group_id"], meta["function_id"])] = median
    return found


def ns(value):
    return f"{value:,.0f} ns" if value >= 100 else f"{value:.1f} ns"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
    found = medians(root)
    print("| Rust (criterion medians) | shardring | peer | speed-up |")
    print("|---|---:|---:|---:|")
    missing = []
    for group, ours, peer in PAIRS:
        if (group, ours) not in found or (group, peer) not in found:
            missing.append(f"{group}: {ours} / {peer}")
            continue
        a, b = found[(group, ours)], found[(group, peer)]
        print(f"| {group}: `{ours}` vs `{peer}` | {ns(a)} | {ns(b)} | {b / a:.1f}x |")
    if missing:
        sys.exit("no criterion results for " + "; ".join(missing) + " (run `cargo bench -p shardring-bench` first)")


if __name__ == "__main__":
    main()
