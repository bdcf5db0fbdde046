"""Hot keys against real memcached: does spreading balance the requests?

Starts N memcached servers on loopback (Debian's memcached) and runs the
same Zipf-distributed requests twice, each time from four client processes
at once, two in Python (`hot_keys_client.py`, pymemcache) and two in Node
(`node/bench/hot_keys_client.mjs`, memjs), all reading cache-aside:

1. **plain**: every key read from its owner. Each client's HotKeys sketch
   (64 KiB) watches its ring; the clients report their top keys and rates.
2. **spread**: the publisher's step, done here as `shardring hot publish`
   would: the clients' reports summed, `HotSet.advance` twice (the keys
   enter as `writing`, then `spread`), and every client reads and writes by
   `HotSet.plan`.

Both runs start from empty servers. Prints, per run, each server's gets
(memcached's `cmd_get`) and their max over mean, the hit ratio, the sets and
bytes the copies added, and each client's recall and precision of the top
100 against the exact counts of its own requests.

    python py/bench/hot_keys.py                        # the full bench
    python py/bench/hot_keys.py --keys 100000 --requests 200000 --check --min-recall 0.75
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py" / "tests"))

from pymemcache.client.base import Client  # noqa: E402
from servers import Memcached, flush_all  # noqa: E402

import shardring  # noqa: E402

STATS = ("cmd_get", "get_hits", "cmd_set", "bytes", "curr_items")


def stats(servers):
    rows = []
    for server in servers:
        client = Client((server.host, server.port))
        raw = client.stats()
        client.close()
        rows.append({name: int(raw[name.encode()]) for name in STATS})
    return rows


def run(servers, ids, args, hot_set):
    """Four clients at once (Python, Node, Python, Node); their reports."""
    flush_all(servers)
    # flush_all leaves the items' memory until they are touched: wait a tick
    # so that items written after it are not flushed too (its resolution is 1 s).
    time.sleep(1.1)
    commands = []
    for index in range(4):
        settings = {"servers": ids, "keys": args.keys, "requests": args.requests // 4, "s": args.s,
                    "seed": 1000 + index, "hot_set": hot_set, "top": 100}
        text = json.dumps(settings)
        if index % 2 == 0:
            commands.append([sys.executable, str(ROOT / "py" / "bench" / "hot_keys_client.py"), text])
        else:
            commands.append(["node", str(ROOT / "node" / "bench" / "hot_keys_client.mjs"), text])
    before = stats(servers)
    processes = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True) for c in commands]
    reports = []
    for process, command in zip(processes, commands):
        out, _ = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise SystemExit(f"client {command[:2]} failed with exit code {process.returncode}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    after = stats(servers)
    delta = [{name: a[name] - b[name] for name in STATS} for a, b in zip(after, before)]
    for row, final in zip(delta, after):
        row["bytes"], row["curr_items"] = final["bytes"], final["curr_items"]
    return reports, delta


def summary(name, reports, delta):
    gets = [row["cmd_get"] for row in delta]
    requests = sum(r["requests"] for r in reports)
    return {
        "run": name,
        "max_over_mean": max(gets) / statistics.mean(gets),
        "gets": gets,
        "requests": requests,
        # A request hits unless it had to load the value (a miss on the owner).
        "hit_ratio": 1 - sum(r["loads"] for r in reports) / requests,
        "sets": sum(row["cmd_set"] for row in delta),
        "bytes": sum(row["bytes"] for row in delta),
        "items": sum(row["curr_items"] for row in delta),
        "copy_reads": sum(r["copy_reads"] for r in reports),
        "copy_misses": sum(r["copy_misses"] for r in reports),
        "clients": [{"language": r["language"], "rate": round(r["rate"]), "recall": r["recall"],
                     "precision": r["precision"], "sketch_bytes": r["sketch_bytes"]} for r in reports],
    }


def publish(reports, ids, bound):
    """The hot set the publisher would write: the clients' top keys and
    requests per node summed, advanced twice (writing, then spread)."""
    rates, loads = {}, {}
    for report in reports:
        for key, rate in report["top"]:
            rates[key] = rates.get(key, 0.0) + rate
        for node, rate in report["lookups"].items():
            loads[node] = loads.get(node, 0.0) + rate
    observed = [(key.encode(), rate) for key, rate in rates.items()]
    ring = shardring.Ring(list(ids))
    hot = shardring.HotSet().advance(ring, observed, loads, bound)
    return hot.advance(ring, observed, loads, bound)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=12)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=2_000_000, help="in all, over the four clients")
    parser.add_argument("--s", type=float, action="append", help="Zipf exponent (default: 0.99 and 1.2)")
    parser.add_argument("--bound", type=float, default=1.25, help="the goal for max/mean gets with spreading")
    parser.add_argument("--target", type=float, default=1.2,
                        help="the bound the publisher spreads for, under the goal: its rates are estimates")
    parser.add_argument("--min-recall", type=float, default=0.95)
    parser.add_argument("--check", action="store_true",
                        help="exit non-zero unless spreading brings max/mean under the bound and every "
                        "client's recall reaches --min-recall")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    exponents = args.s or [0.99, 1.2]
    servers = [Memcached() for _ in range(args.servers)]
    failures, results = [], []
    try:
        # Fixed node ids (the addresses change from run to run): the same
        # placement, hence the same figures, every time.
        ids = {f"mc-{i + 1:02d}": f"{s.host}:{s.port}" for i, s in enumerate(servers)}
        for s in exponents:
            args.s = s
            reports, delta = run(servers, ids, args, None)
            plain = summary("plain", reports, delta)
            hot = publish(reports, ids, args.target)
            spread = summary("spread", *run(servers, ids, args, hot.to_json()))
            spread["hot_keys"] = [(k.decode(), r, round(rate)) for k, r, _, _, rate in hot.keys()]
            results.append({"s": s, "plain": plain, "spread": spread})
            print(report(s, plain, spread, args))
            if spread["max_over_mean"] > args.bound:
                failures.append(f"s={s}: max/mean {spread['max_over_mean']:.3f} with spreading, above {args.bound}")
            for client in plain["clients"]:
                if client["recall"] < args.min_recall:
                    failures.append(f"s={s}: a {client['language']} client's recall {client['recall']:.2f} "
                                    f"< {args.min_recall}")
    finally:
        for server in servers:
            server.close()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    if args.check and failures:
        raise SystemExit("hot keys bench: " + "; ".join(failures))


def report(s, plain, spread, args):
    lines = [f"Zipf s = {s}: {args.servers} memcached, {args.keys:,} keys, {plain['requests']:,} requests "
             f"from 4 clients (2 Python, 2 Node)",
             "| | max/mean gets | hit ratio | sets | bytes on servers | items |",
             "|---|---:|---:|---:|---:|---:|"]
    for run in (plain, spread):
        lines.append(f"| {run['run']} | {run['max_over_mean']:.3f} | {run['hit_ratio']:.4f} | {run['sets']:,} | "
                     f"{run['bytes']:,} | {run['items']:,} |")
    lines.append(f"copies: {spread['sets'] - plain['sets']:+,} sets, {spread['bytes'] - plain['bytes']:+,} bytes; "
                 f"copy reads {spread['copy_reads']:,} ({spread['copy_misses']:,} missed)")
    lines.append("spread keys (key, replicas, rate/s): " + ", ".join(f"{k} x{r} {rate:,}/s" for k, r, rate in spread["hot_keys"]))
    lines.append("top-100 recall / precision per client (64 KiB sketch): " + ", ".join(
        f"{c['language']} {c['recall']:.2f}/{c['precision']:.2f}" for c in plain["clients"]))
    lines.append("gets per server, plain:  " + " ".join(str(g) for g in plain["gets"]))
    lines.append("gets per server, spread: " + " ".join(str(g) for g in spread["gets"]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
