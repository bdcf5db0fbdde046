"""What `shardring rebalance` costs live traffic, on real servers.

Five memcached servers (or five redis-servers) on loopback; KEYS words with
100-byte values stored on the 4-server ring; a 5th server joins warming. A
reader sends one get at a time to `Transition.read_nodes(key)[0]` (the
traffic a warming member must not disturb) while the rebalancer copies the
new server's arcs at each --rate; the first row is the reader alone. Prints,
per row, the reader's p50 and p99 latency and the rebalancer's keys/s and
MB/s, as the rebalancer's JSON report gives them.

Not a test: run it with `make bench` or
`python py/bench/rebalance_latency.py [--quick] [--backend memcached|redis]`.
"""

import argparse
import json
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py" / "tests"))

import redis  # noqa: E402
from pymemcache.client.base import Client  # noqa: E402
from servers import Memcached, Redis  # noqa: E402

import shardring  # noqa: E402

CLI = ROOT / "target" / "release" / "shardring"
WORDS = pathlib.Path("/usr/share/dict/words")
# Incompressible, so Redis DUMP payloads (LZF-compressed) are as large as memcached values.
VALUE = random.Random(0).randbytes(100)


class Backend:
    """Five servers of one kind, named `server-1` .. `server-5` on the ring."""

    def __init__(self, kind, count=5):
        self.kind = kind
        self.servers = [(Memcached if kind == "memcached" else Redis)() for _ in range(count)]
        self.names = [f"server-{i + 1}" for i in range(count)]
        self.ports = dict(zip(self.names, (s.port for s in self.servers)))
        if kind == "memcached":
            self.clients = {n: Client(("127.0.0.1", p), connect_timeout=2, timeout=5) for n, p in self.ports.items()}
        else:
            self.clients = {n: redis.Redis(port=p, socket_timeout=5) for n, p in self.ports.items()}

    def store(self, keys, owner):
        for client in self.clients.values():
            client.flushall() if self.kind == "redis" else client.flush_all()
        batches = {}
        for key in keys:
            batches.setdefault(owner(key), []).append(key)
        for name, batch in batches.items():
            client = self.clients[name]
            for start in range(0, len(batch), 1000):
                chunk = batch[start : start + 1000]
                if self.kind == "memcached":
                    client.set_many({k: VALUE for k in chunk}, noreply=False)
                else:
                    client.mset({k: VALUE for k in chunk})

    def get(self, name, key):
        return self.clients[name].get(key)

    def close(self):
        for server in self.servers:
            server.close()


def read_latencies(backend, keys, owner, stop):
    """Single gets of random keys from owner(key) until `stop` is set; returns
    the latencies in microseconds and the number of misses."""
    latencies, misses = [], 0
    rng = random.Random(1)
    while not stop.is_set():
        key = keys[rng.randrange(len(keys))]
        name = owner(key)
        start = time.perf_counter_ns()
        value = backend.get(name, key)
        latencies.append((time.perf_counter_ns() - start) / 1000)
        misses += value is None
    return latencies, misses


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(backend, keys, old, new, rate, idle_seconds):
    """One row: the reader alone (rate None) or beside a rebalance at `rate`
    (0: unlimited). Returns the row as a dict."""
    backend.store(keys, old.get)
    transition = shardring.Transition.between(old, new)
    stop = threading.Event()
    result = {}
    reader = threading.Thread(
        target=lambda: result.update(zip(("latencies", "misses"), read_latencies(backend, keys, lambda k: transition.read_nodes(k)[0], stop)))
    )
    reader.start()
    report = None
    try:
        if rate is None:
            time.sleep(idle_seconds)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                paths = []
                for name, ring in (("old", old), ("new", new)):
                    path = pathlib.Path(tmp, f"{name}.json")
                    path.write_text(ring.to_json())
                    paths.append(str(path))
                command = [str(CLI), "rebalance", "--from", paths[0], "--to", paths[1], "--backend", backend.kind, "--json"]
                command += [a for n, p in backend.ports.items() for a in ("--address", f"{n}=127.0.0.1:{p}")]
                if rate:
                    command += ["--rate", str(rate)]
                done = subprocess.run(command, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise RuntimeError(f"rebalance exited {done.returncode}: {done.stderr}")
                report = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        stop.set()
        reader.join()
    latencies = result["latencies"]
    row = {
        "rate": "reader alone" if rate is None else (f"--rate {rate}" if rate else "unlimited"),
        "reads": len(latencies),
        "misses": result["misses"],
        "p50_us": statistics.median(latencies),
        "p99_us": percentile(latencies, 0.99),
    }
    if report is not None:
        row.update(
            copied=report["copied"],
            seconds=report["seconds"],
            keys_per_s=report["copied"] / report["seconds"],
            mb_per_s=report["bytes"] / report["seconds"] / 1e6,
            moved_share=report["moved_share"],
            predicted_share=shardring.diff(old, new).moved_share,
        )
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10,000 keys, two rows (for bench-smoke)")
    parser.add_argument("--backend", choices=("memcached", "redis"), default="memcached")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    count = 10_000 if args.quick else 100_000
    found = [w for w in WORDS.read_bytes().split(b"\n") if w and len(w) <= 250 and all(b > 32 for b in w)]
    keys = found[:count]
    rates = [None, 0] if args.quick else [None, 2000, 10000, 0]

    backend = Backend(args.backend)
    try:
        old, new = shardring.Ring(backend.names[:4]), shardring.Ring(backend.names)
        rows = [run(backend, keys, old, new, rate, 1 if args.quick else 5) for rate in rates]
    finally:
        backend.close()

    if args.json:
        print(json.dumps(rows))
        return
    print(f"shardring rebalance on real {args.backend} (4 -> 5 servers, {len(keys)} keys of {len(VALUE)} bytes), "
          "a reader sending single gets meanwhile:")
    print(f"  {'rebalancer':<14}{'reads':>8}{'misses':>8}{'p50 us':>9}{'p99 us':>9}{'copied':>9}{'s':>7}{'keys/s':>9}{'MB/s':>7}{'moved':>8}{'diff':>8}")
    for r in rows:
        line = f"  {r['rate']:<14}{r['reads']:>8}{r['misses']:>8}{r['p50_us']:>9.0f}{r['p99_us']:>9.0f}"
        if "copied" in r:
            line += (f"{r['copied']:>9}{r['seconds']:>7.2f}{r['keys_per_s']:>9.0f}{r['mb_per_s']:>7.2f}"
                     f"{100 * r['moved_share']:>7.2f}%{100 * r['predicted_share']:>7.2f}%")
        print(line)
    for r in rows:
        assert r["misses"] == 0, f"the reader missed {r['misses']} keys ({r['rate']})"


if __name__ == "__main__":
    main()
