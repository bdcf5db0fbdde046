#!/usr/bin/env python3
"""Prints one table of shardring against its peers: the Rust rows from the
criterion results of `cargo bench -p shardring-bench --bench peers`
(target/criterion/*/*/new/*.json), each with its goal where the issues set
one, then, when their outputs are given, the C benchmark against the same
loop in Rust, the Python and Node scripts against uhashring and npm
hashring, and the removals report (memory per bucket, share moved per
removal). With --write PAGE, the table (not the removals report) also
replaces the lines between `<!-- begin: peers -->` and `<!-- end: peers -->`
of PAGE (`make bench` writes docs/performance.md), headed by the date and
the machine it ran on.
Usage: python3 bench/report.py [--criterion DIR] [--c FILE --rust FILE]
       [--python FILE] [--node FILE] [--removals FILE] [--write PAGE]"""

import argparse
import datetime
import json
import os
import pathlib
import re
import sys

BEGIN, END = "<!-- begin: peers -->", "<!-- end: peers -->"

# (group, shardring function, peer function, goal: the least speed-up wanted, or None)
PAIRS = [
    # Issue 23's goals: ring >= 3x pingora-ketama streamed and >= 5x in cache,
    # nginx mode >= 2x, rendezvous >= 5x hrw-hash; keep Maglev ahead.
    ("ring, 100 nodes x 160 points", "shardring ring", "pingora-ketama", 3.0),
    ("ring, 100 nodes x 160 points", "shardring ring", "pingora-ketama 0.9", 3.0),
    ("ring, 100 nodes x 160 points", "shardring nginx", "pingora-ketama", 2.0),
    ("ring, 100 nodes x 160 points", "shardring nginx", "pingora-ketama 0.9", 2.0),
    ("ring, 100 nodes x 160 points", "shardring ring", "hashring", None),
    ("ring, 100 nodes x 160 points, 1,000 keys", "shardring ring", "pingora-ketama", 5.0),
    ("ring, 100 nodes x 160 points, 1,000 keys", "shardring ring", "pingora-ketama 0.9", 5.0),
    ("ring, 100 nodes x 160 points, 1,000 keys", "shardring ring", "hashring", None),
    ("jump, 100 buckets", "shardring jump", "jumphash", None),
    ("maglev, 100 nodes, 65537 slots", "shardring maglev", "maglev", 3.0),
    ("rendezvous, 100 nodes", "shardring rendezvous", "hrw-hash", 5.0),
    ("rendezvous, 100 nodes", "shardring rendezvous, float score", "hrw-hash", None),
    ("rendezvous, 100 nodes", "shardring rendezvous, weights 1-4", "hrw-hash", None),
    ("rendezvous, 100 nodes", "shardring rendezvous, 100 weights", "hrw-hash", None),
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


def script_rows(text, language, peer, goals):
    """Rows of the Python or Node script's table: | call | ours | peer | x |,
    with the goal set for a call (`goals`: call prefix -> (least speed-up,
    most ns per key or None))."""
    for call, ours, theirs in re.findall(r"^\| ([^|]+) \| ([0-9.]+) ns \| ([0-9.]+) ns \|", text, re.M):
        ours, theirs = float(ours), float(theirs)
        status = ""
        for prefix, (least, most) in goals.items():
            if call.startswith(prefix):
                met = theirs / ours >= least and (most is None or ours <= most)
                wanted = f">= {least:g}x" + (f", <= {most:g} ns" if most else "")
                status = f"{wanted}: {'met' if met else 'NOT MET'}"
        if call.startswith("floor"):
            yield f"| {language} | {call} | {ns(ours)} | | | |"
        else:
            yield f"| {language} | {call} | {ns(ours)} | {peer}: {ns(theirs)} | {theirs / ours:.1f}x | {status} |"


def machine():
    """`N cores, CPU model`, as `make bench` prints it."""
    model = "unknown CPU"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}"


def write(page, rows):
    """Replaces the table between the markers of `page` with `rows`."""
    text = page.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit(f"{page}: expected one {BEGIN} line followed by one {END} line")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    context = f"One run of `make bench` on {datetime.date.today().isoformat()} ({machine()})."
    page.write_text(head + BEGIN + "\n" + context + "\n\n" + "\n".join(rows) + "\n" + END + tail, encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/criterion", type=pathlib.Path)
    parser.add_argument("--c", type=pathlib.Path, help="output of ffi-c/bench/get_node.c")
    parser.add_argument("--rust", type=pathlib.Path, help="output of the rust_get example")
    parser.add_argument("--python", type=pathlib.Path, help="output of py/bench/bench_vs_uhashring.py")
    parser.add_argument("--node", type=pathlib.Path, help="output of node/bench/bench_vs_hashring.mjs")
    parser.add_argument("--removals", type=pathlib.Path, help="output of cargo bench --bench removals")
    parser.add_argument("--write", type=pathlib.Path, metavar="PAGE",
                        help="also write the table between the peers markers of this Markdown page")
    args = parser.parse_args()
    found = medians(args.criterion)
    rows = []

    def emit(row):
        """Prints a table row and keeps it for --write."""
        rows.append(row)
        print(row)

    emit("| language | call | shardring | peer | speed-up | goal |")
    emit("|---|---|---:|---:|---:|---|")
    missing = []
    for group, ours, peer, goal in PAIRS:
        if (group, ours) not in found or (group, peer) not in found:
            missing.append(f"{group}: {ours} / {peer}")
            continue
        a, b = found[(group, ours)], found[(group, peer)]
        status = "" if goal is None else f">= {goal:g}x: {'met' if b / a >= goal else 'NOT MET'}"
        shown = "pingora-ketama 0.6" if peer == "pingora-ketama" else peer
        emit(f"| Rust | {group}: `{ours}` | {ns(a)} | {shown}: {ns(b)} | {b / a:.1f}x | {status} |")
    for group in ("ring, 100 nodes x 160 points", "ring, 100 nodes x 160 points, 1,000 keys"):
        for floor in ("XXH3-64 alone", "CRC-32 alone"):
            if (group, floor) in found:
                emit(f"| Rust | {group}: floor, {floor} ({'ring' if floor.startswith('XXH3') else 'nginx'}'s key hash) | {ns(found[(group, floor)])} | | | |")
    if missing:
        sys.exit("no criterion results for " + "; ".join(missing) + " (run `cargo bench -p shardring-bench` first)")
    if args.c and args.rust:
        c, rust = args.c.read_text(), args.rust.read_text()
        # Issue 23: C within 10% of the same work in Rust.
        pairs = [("C ring_get_node:", "Rust Ring::get_index:", "`get_index`, the same loop"),
                 ("C ring_get_node_batch:", "Rust Ring::get_indices:", "`get_indices` over the same arrays")]
        for label, rust_label, what in pairs:
            ours, same = ns_in(c, label), ns_in(rust, rust_label)
            status = f">= 0.9x: {'met' if same / ours >= 0.9 else 'NOT MET'}"
            emit(f"| C | `{label[2:-1]}`, 1,000,000 keys | {ns(ours)} | Rust {what}: {ns(same)} | {same / ours:.2f}x | {status} |")
        floor = ns_in(c, "C ring_node_count:")
        emit(f"| C | floor: a call into libring (`ring_node_count`) | {ns(floor)} | | | |")
    if args.python:
        # Issue 23: get_many at least 100x uhashring; get kept ahead.
        for row in script_rows(args.python.read_text(), "Python", "uhashring", {"get_many": (100, None)}):
            emit(row)
    if args.node:
        # Issue 23: getMany of strings at most 30 ns per key and 75x npm hashring.
        for row in script_rows(args.node.read_text(), "Node", "npm hashring", {"getMany": (75, 30)}):
            emit(row)
    if args.write:
        write(args.write, rows)
    if args.removals:
        text = args.removals.read_text()
        print(text[text.index("\nMemory per bucket"):].rstrip())


if __name__ == "__main__":
    main()
