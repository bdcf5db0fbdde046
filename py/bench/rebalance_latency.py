"""What `shardring rebalance` costs live traffic, on real servers, and
that the traffic loses nothing while it runs.

Five memcached servers (or five redis-servers) on loopback; KEYS words with
100-byte values stored on the 4-server ring; a 5th server joins warming. A
writer process stores fresh keys on `Transition.write_nodes(key)` (1,000 a
second), and a reader sends one get at a time to
`Transition.read_nodes(key)[0]` (words, and one read in five a fresh key
already written: the traffic a warming member must not disturb) while the
rebalancer copies the new server's arcs at each --rate; the first row has no
rebalancer. After each read of a word that moves, the reader also asks the
new server for it: the copy is under way from the first such probe that
finds it to the last that does not, and the reads in that window are the
ones a warm-up must keep whole (reading the new server alone, they would
miss). Prints, per row, the reads in that window and their misses, what
the new server alone answered then, the reader's p50 and p99 latency, and
the rebalancer's keys/s and MB/s as its JSON report gives them; fails when
a read missed or a rebalancer row saw no read during the copy.

Not a test: run it with `make bench` or
`python py/bench/rebalance_latency.py [--quick] [--backend memcached|redis]`.
"""

import argparse
import json
import multiprocessing
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
        self.clients = connect(kind, self.ports)

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


def connect(kind, ports):
    """A client per server name, for one thread or process."""
    if kind == "memcached":
        return {n: Client(("127.0.0.1", p), connect_timeout=2, timeout=5) for n, p in ports.items()}
    return {n: redis.Redis(port=p, socket_timeout=5) for n, p in ports.items()}


def fresh_key(i):
    return b"fresh:%d" % i


def write(kind, ports, old_names, new_names, written, stop, rate=1000):
    """The writer process: stores fresh keys 0, 1, ... on
    `write_nodes(key)` of the transition from `old_names` to `new_names`,
    `rate` a second, and counts each in `written` once every node stored it."""
    transition = shardring.Transition.between(shardring.Ring(old_names), shardring.Ring(new_names))
    clients, due = connect(kind, ports), time.monotonic()
    while not stop.is_set():
        key = fresh_key(written.value)
        for node in transition.write_nodes(key):
            client = clients[node]
            assert client.set(key, VALUE, noreply=False) if kind == "memcached" else client.set(key, VALUE)
        written.value += 1
        due += 1 / rate
        time.sleep(max(0.0, due - time.monotonic()))


def read_during(backend, keys, old, new, written, stop):
    """Single gets until `stop` is set, from `read_nodes(key)[0]`: of words,
    and one in five of the fresh keys written so far. Returns each read as
    (time, latency in microseconds, hit) and, for each word that moves, a
    probe of its new owner as (time, hit)."""
    transition = shardring.Transition.between(old, new)
    reads, probes = [], []
    rng = random.Random(1)
    moving = {k for k in keys if new.get(k) != old.get(k)}
    while not stop.is_set():
        count = written.value
        key = fresh_key(rng.randrange(count)) if count and rng.random() < 0.2 else keys[rng.randrange(len(keys))]
        name = transition.read_nodes(key)[0]
        start = time.perf_counter_ns()
        value = backend.get(name, key)
        reads.append((time.monotonic(), (time.perf_counter_ns() - start) / 1000, value == VALUE))
        if key in moving:
            probes.append((time.monotonic(), backend.get(new.get(key), key) == VALUE))
    return reads, probes


def copy_window(probes):
    """From the first probe that found a moving word on its new server to the
    last that did not (only the rebalancer puts words there); None if no
    probe saw the copy half done."""
    first = next((t for t, hit in probes if hit), None)
    last = max((t for t, hit in probes if not hit and first is not None and t > first), default=None)
    return None if last is None else (first, last)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(backend, keys, old, new, rate, idle_seconds):
    """One row: the reader and the writer alone (rate None) or beside a
    rebalance at `rate` (0: unlimited). Returns the row as a dict."""
    backend.store(keys, old.get)
    stop, stop_writer = threading.Event(), multiprocessing.Event()
    written = multiprocessing.Value("q", 0)
    writer = multiprocessing.Process(
        target=write, args=(backend.kind, backend.ports, list(old), list(new), written, stop_writer)
    )
    writer.start()
    result = {}
    reader = threading.Thread(
        target=lambda: result.update(zip(("reads", "probes"), read_during(backend, keys, old, new, written, stop)))
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
        stop_writer.set()
        writer.join(timeout=30)
    if writer.exitcode != 0:
        raise RuntimeError(f"the writer process exited with {writer.exitcode}")
    reads, probes = result["reads"], result["probes"]
    latencies = [latency for _, latency, _ in reads]
    window = copy_window(probes) if rate is not None else None
    during = [hit for t, _, hit in reads if window and window[0] <= t <= window[1]]
    new_alone = [hit for t, hit in probes if window and window[0] <= t <= window[1]]
    row = {
        "rate": "no rebalancer" if rate is None else (f"--rate {rate}" if rate else "unlimited"),
        "reads": len(reads),
        "misses": sum(1 for _, _, hit in reads if not hit),
        "written": written.value,
        "copy_reads": len(during),
        "copy_misses": sum(1 for hit in during if not hit),
        "copy_seconds": window[1] - window[0] if window else 0.0,
        "new_alone_hits": sum(new_alone) / len(new_alone) if new_alone else None,
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
    # Quick: a rate that keeps the copy of about 2,000 keys under way for
    # about half a second, so the reader sees it half done.
    rates = [None, 4000] if args.quick else [None, 2000, 10000, 0]

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
          "a writer storing fresh keys through write_nodes and a reader sending single gets through read_nodes "
          "meanwhile; 'in copy': the reads while the copy was under way, 'new alone': what the new server alone "
          "answered then:")
    print(f"  {'rebalancer':<14}{'reads':>8}{'in copy':>9}{'misses':>8}{'new alone':>10}{'p50 us':>9}{'p99 us':>9}"
          f"{'copied':>9}{'s':>7}{'keys/s':>9}{'MB/s':>7}{'moved':>8}{'diff':>8}")
    for r in rows:
        alone = "" if r["new_alone_hits"] is None else f"{100 * r['new_alone_hits']:.1f}%"
        line = (f"  {r['rate']:<14}{r['reads']:>8}{r['copy_reads']:>9}{r['misses']:>8}{alone:>10}"
                f"{r['p50_us']:>9.0f}{r['p99_us']:>9.0f}")
        if "copied" in r:
            line += (f"{r['copied']:>9}{r['seconds']:>7.2f}{r['keys_per_s']:>9.0f}{r['mb_per_s']:>7.2f}"
                     f"{100 * r['moved_share']:>7.2f}%{100 * r['predicted_share']:>7.2f}%")
        print(line)
    for r in rows:
        assert r["misses"] == 0, f"the reader missed {r['misses']} of {r['reads']} reads ({r['rate']})"
        assert r["rate"] == "no rebalancer" or r["copy_reads"] > 0, (
            f"no read saw the copy under way ({r['rate']}): the row measured nothing during it")


if __name__ == "__main__":
    main()
