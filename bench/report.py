#!/usr/bin/env python3
"""Prints one table of shardring against its peers: the Rust rows from the
criterion results of `cargo bench -p shardring-bench --bench peers`
(target/criterion/*/*/new/*.json), each with its goal where the issues set
one, then, when their outputs are given, the C benchmark against the same
loop in Rust, the Python and Node scripts against uhashring and npm
hashring, and the removals report (memory per bucket, share moved per
removal).
Usage: python3 bench/report.py [--criterion DIR] [--c FILE --rust FILE]
       [--python FILE] [--node FILE] [--removals FILE]"""

import argparse
import json
import pathlib
import re
import sys

# (group, shardring function, peer function, goal: the least speed-up wanted, or None)
PAIRS = [
    ("ring, 100 nodes x 160 points", "shardring ring", "pingora-ketama", None),
    ("ring, 100 nodes x 160 points", "shardring nginx", "pingora-ketama", None),
    ("ring, 100 nodes x 160 points", "shardring ring", "hashring", None),
    ("ring, 100 nodes x 160 points, 1,000 keys", "shardring ring", "pingora-ketama", None),
    ("ring, 100 nodes x 160 points, 1,000 keys", "shardring ring", "hashring", None),
    ("jump, 100 buckets", "shardring jump", "jumphash", None),
    ("maglev, 100 nodes, 65537 slots", "shardring maglev", "maglev", None),
    ("rendezvous, 100 nodes", "shardring rendezvous", "hrw-hash", None),
    # Issue 22: jumpback at least 3x the jumphash crate at 1,000 buckets.
    ("jumpback, 10 buckets", "shardring jumpback", "jumphash", None),
    ("jumpback, 10 buckets", "shardring jumpback", "shardring jump", None),
    ("jumpback, 1,000 buckets", "shardring jumpback", "jumphash", 3.0),
    ("jumpback, 1,000 buckets", "shardring jumpback", "shardring jump", None),
    ("jumpback, 1,000,000 buckets", "shardring jumpback", "jumphash", None),
    ("jumpback, 1,000,000 buckets", "shardring jumpback", "shardring jump", None),
    ("memento, 1,000 nodes, 0% removed", "shardring memento", "anchorhash", None),
    ("memento, 1,000 nodes, 0% removed", "shardring memento", "shardring ring", None),
    ("memento, 1,000 nodes, 10% removed", "shardring memento", "anchorhash", None),
    ("memento, 1,000 nodes, 10% removed", "shardring memento", "shardring ring", None),
    ("memento, 1,000 nodes, 50% removed", "shardring memento", "anchorhash", None),
    ("memento, 1,000 nodes, 50% removed", "shardring memento", "shardring ring", None),
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


def ns_in(text, label):
    """The `N ns` figure on the line starting with `label`."""
    match = re.search(re.escape(label) + r"\s+([0-9.]+) ns", text)
    if not match:
        sys.exit(f"no {label!r} figure in the benchmark output")
    return float(match.group(1))


def script_rows(text, language, peer):
    """Rows of the Python or Node script's table: | call | ours | peer | x |."""
    for call, ours, theirs in re.findall(r"^\| ([^|]+) \| ([0-9.]+) ns \| ([0-9.]+) ns \|", text, re.M):
        ours, theirs = float(ours), float(theirs)
        yield f"| {language} | {call} | {ns(ours)} | {peer}: {ns(theirs)} | {theirs / ours:.1f}x | |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/criterion", type=pathlib.Path)
    parser.add_argument("--c", type=pathlib.Path, help="output of ffi-c/bench/get_node.c")
    parser.add_argument("--rust", type=pathlib.Path, help="output of the rust_get example")
    parser.add_argument("--python", type=pathlib.Path, help="output of py/bench/bench_vs_uhashring.py")
    parser.add_argument("--node", type=pathlib.Path, help="output of node/bench/bench_vs_hashring.mjs")
    parser.add_argument("--removals", type=pathlib.Path, help="output of cargo bench --bench removals")
    args = parser.parse_args()
    found = medians(args.criterion)
    print("| language | call | shardring | peer | speed-up | goal |")
    print("|---|---|---:|---:|---:|---|")
    missing = []
    for group, ours, peer, goal in PAIRS:
        if (group, ours) not in found or (group, peer) not in found:
            missing.append(f"{group}: {ours} / {peer}")
            continue
        a, b = found[(group, ours)], found[(group, peer)]
        status = "" if goal is None else f">= {goal:g}x: {'met' if b / a >= goal else 'NOT MET'}"
        print(f"| Rust | {group}: `{ours}` | {ns(a)} | {peer}: {ns(b)} | {b / a:.1f}x | {status} |")
    if missing:
        sys.exit("no criterion results for " + "; ".join(missing) + " (run `cargo bench -p shardring-bench` first)")
    if args.c and args.rust:
        c, rust = args.c.read_text(), args.rust.read_text()
        same_loop = ns_in(rust, "Rust Ring::get_index:")
        for label in ("C ring_get_node:", "C ring_get_node_batch:"):
            ours = ns_in(c, label)
            print(f"| C | `{label[2:-1]}`, 1,000,000 keys | {ns(ours)} | Rust `get_index`: {ns(same_loop)} | {same_loop / ours:.2f}x | |")
    if args.python:
        for row in script_rows(args.python.read_text(), "Python", "uhashring"):
            print(row)
    if args.node:
        for row in script_rows(args.node.read_text(), "Node", "npm hashring"):
            print(row)
    if args.removals:
        text = args.removals.read_text()
        print(text[text.index("\nMemory per bucket"):].rstrip())


if __name__ == "__main__":
    main()
