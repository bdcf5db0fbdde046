"""Real memcached servers: store every word routed by shardring, add a server,
read every word back, and count the hits; then the same with hash % N; then
the warm way: the new server joins `warming` (reads stay with the old owners,
writes go to both), `shardring rebalance` copies the arcs it will own while a
reader reads and a writer writes through the transition, and it turns active.
The reader counts its hits while the copy is under way: from the moment the
new server holds some moved word until the last moment it still lacks one
(reading the new server alone, as a client that skipped warming would, misses
then; through `read_nodes` nothing may).

Starts its own servers on free loopback ports (Debian's `memcached`) and stops
them on exit, failure included. Run (after `pip install ./py pymemcache` and
`cargo build --release -p shardring-cli`):
    python examples/python/memcached_scale_out.py /usr/share/dict/words [--servers 4] [--json] [--cli PATH]
"""

import argparse
import json
import os
import random
import shutil
import pathlib
import socket
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from typing import Optional

from pymemcache.client.base import Client

import shardring


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(stack: ExitStack, name: str, pids: Optional[list[int]] = None) -> tuple[str, Client, int]:
    """A memcached on a free loopback port, known on the ring as `name` (so
    placement does not depend on the port), stopped when `stack` closes; its
    PID is appended to `pids` when given."""
    port = free_port()
    process = subprocess.Popen(
        [shutil.which("memcached") or "memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "128", "-t", "1"]
        + (["-u", "root"] if os.geteuid() == 0 else []),  # memcached refuses to run as root without -u
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if pids is not None:
        pids.append(process.pid)
    stack.callback(process.wait)
    stack.callback(process.terminate)
    client = Client(("127.0.0.1", port), connect_timeout=2, timeout=5)
    stack.callback(client.close)
    for _ in range(100):
        try:
            client.version()
            return name, client, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"memcached on port {port} did not start")


def store(words: list[bytes], clients: dict[str, Client], owner) -> None:
    """Empties every server, then writes each word to owner(word)'s server."""
    for client in clients.values():
        client.flush_all()
    batches: dict[str, dict[bytes, bytes]] = defaultdict(dict)
    for word in words:
        batches[owner(word)][word] = b"1"
    for server, batch in batches.items():
        clients[server].set_many(batch, noreply=False)


def read(words: list[bytes], clients: dict[str, Client], owner) -> float:
    """Reads each word from owner(word)'s server; returns the hit ratio."""
    reads: dict[str, list[bytes]] = defaultdict(list)
    for word in words:
        reads[owner(word)].append(word)
    hits = 0
    for server, keys in reads.items():
        for start in range(0, len(keys), 500):
            hits += len(clients[server].get_many(keys[start : start + 500]))
    return hits / len(words)


def store_then_read(words: list[bytes], clients: dict[str, Client], before, after) -> float:
    """Writes each word to before(word)'s server, reads it from after(word)'s; returns the hit ratio."""
    store(words, clients, before)
    return read(words, clients, after)


def copy_window(probes: list[tuple[float, bool]]) -> tuple[float, float] | None:
    """The time the copy was under way, from `(time, hit)` reads of moved
    words on their new server (which only the rebalancer fills): from the
    first hit to the last miss after it; `None` if no read saw the copy half done."""
    first_hit = next((t for t, hit in probes if hit), None)
    last_miss = max((t for t, hit in probes if not hit and first_hit is not None and t > first_hit), default=None)
    return None if last_miss is None else (first_hit, last_miss)


def warm_scale_out(words, ports, old: shardring.Ring, new: shardring.Ring, cli: str) -> dict:
    """Stores on `old`, then lets the new server warm up while `shardring
    rebalance` copies the keys whose owner changes (paced to take about two
    seconds), a writer stores fresh keys on `transition.write_nodes` and a
    reader reads words and those fresh keys (one read in five) from
    `transition.read_nodes`.
    Returns the reader's hit ratio while the copy was under way (and the
    number of those reads), what reading the new owner alone would have hit
    then, the hit ratio on `new` afterwards, and the rebalancer's report."""
    opened: list[Client] = []

    def connect() -> dict[str, Client]:  # one set per thread: pymemcache clients are not shared
        clients = {name: Client(("127.0.0.1", port), connect_timeout=2, timeout=5) for name, port in ports.items()}
        opened.extend(clients.values())
        return clients

    clients = connect()
    store(words, clients, old.get)
    transition = shardring.Transition.between(old, new)
    moved = {w for w in words if old.get(w) != new.get(w)}
    fresh: list[bytes] = []  # acknowledged by every write node, in order
    reads: list[tuple[float, bool]] = []  # (time, hit through read_nodes)
    probes: list[tuple[float, bool]] = []  # (time, a moved word on its new server)
    done = threading.Event()

    def writer() -> None:  # 2,000 writes a second, as a busy client might
        writers, due = connect(), time.monotonic()
        while not done.is_set():
            key = b"fresh:%d" % len(fresh)
            for node in transition.write_nodes(key):
                writers[node].set(key, b"1", noreply=False)
            fresh.append(key)
            due += 1 / 2000
            time.sleep(max(0.0, due - time.monotonic()))

    def reader() -> None:
        readers, rng = connect(), random.Random(0)
        while not done.is_set():
            key = rng.choice(fresh) if fresh and rng.random() < 0.2 else rng.choice(words)
            reads.append((time.monotonic(), readers[transition.read_nodes(key)[0]].get(key) is not None))
            if key in moved:
                probes.append((time.monotonic(), readers[new.get(key)].get(key) is not None))

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, ring in (("old", old), ("new", new)):
            path = pathlib.Path(tmp, f"{name}.json")
            path.write_text(ring.to_json())
            paths.append(str(path))
        addresses = [a for name, port in ports.items() for a in ("--address", f"{name}=127.0.0.1:{port}")]
        rate = max(500, len(moved) // 2)
        for thread in threads:
            thread.start()
        try:
            result = subprocess.run(
                [cli, "rebalance", "--from", paths[0], "--to", paths[1], "--backend", "memcached", "--json",
                 "--rate", str(rate), *addresses],
                capture_output=True,
                text=True,
                timeout=300,
            )
        finally:
            done.set()
            for thread in threads:
                thread.join()
        if result.returncode != 0:
            raise RuntimeError(f"shardring rebalance exited {result.returncode}: {result.stderr}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    after = read(words + fresh, clients, new.get)
    for client in opened:
        client.close()
    window = copy_window(probes)
    during = [hit for t, hit in reads if window and window[0] <= t <= window[1]]
    new_owner = [hit for t, hit in probes if window and window[0] <= t <= window[1]]
    return {
        "warming": sum(during) / len(during) if during else None,
        "warming_reads": len(during),
        "warming_seconds": window[1] - window[0] if window else 0.0,
        "new_owner_alone": sum(new_owner) / len(new_owner) if new_owner else None,
        "fresh_written": len(fresh),
        "after": after,
        "report": report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("words")
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the ratios as JSON")
    default_cli = pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "shardring"
    parser.add_argument("--cli", default=str(default_cli), help="the shardring binary (default: %(default)s)")
    args = parser.parse_args()
    with open(args.words, "rb") as f:
        # memcached text-protocol keys: no whitespace or control bytes, at most 250 bytes.
        words = sorted({w for w in f.read().split(b"\n") if w and len(w) <= 250 and all(b > 32 for b in w)})

    with ExitStack() as stack:
        pids: list[int] = []
        started = [start_server(stack, f"memcached-{i + 1}", pids) for i in range(args.servers + 1)]
        clients = {name: client for name, client, _ in started}
        ports = {name: port for name, _, port in started}
        names = [name for name, _, _ in started]
        old, new = names[:-1], names
        ring_before, ring_after = shardring.Ring(old), shardring.Ring(new)
        ring_hits = store_then_read(words, clients, ring_before.get, ring_after.get)
        modulo_hits = store_then_read(
            words, clients, lambda w: old[shardring.hash_key(w) % len(old)], lambda w: new[shardring.hash_key(w) % len(new)]
        )
        warm = warm_scale_out(words, ports, ring_before, ring_after, args.cli)

    if args.json:
        summary = {"keys": len(words), "servers": args.servers, "ring": ring_hits, "modulo": modulo_hits}
        summary.update({k: warm[k] for k in ("warming", "warming_reads", "warming_seconds", "new_owner_alone",
                                             "fresh_written")})
        summary.update(rebalanced=warm["after"], copied=warm["report"]["copied"])
        summary.update(pids=pids)
        print(json.dumps(summary))
        return
    n = args.servers
    print(f"Real memcached, {len(words)} keys stored on {n} servers, then read after a server joins ({n} -> {n + 1}):")
    print(f"  shardring: {100 * ring_hits:5.1f}% of reads still hit (ideal {100 * n / (n + 1):.0f}%)")
    print(f"  hash % N : {100 * modulo_hits:5.1f}% of reads still hit (expected about {100 / (n + 1):.0f}%)")
    r = warm["report"]
    if warm["warming"] is None:
        raise RuntimeError("no read saw the copy under way: the rebalancer finished too fast to measure")
    print(f"  shardring, warm: {100 * warm['warming']:5.1f}% of {warm['warming_reads']} reads hit (through read_nodes) "
          f"during the {warm['warming_seconds']:.2f} s the copy was under way, while a writer stored "
          f"{warm['fresh_written']} fresh keys; reading the new server alone would have hit "
          f"{100 * warm['new_owner_alone']:.1f}% of moved words then;")
    print(f"    {100 * warm['after']:5.1f}% after `shardring rebalance` copied {r['copied']} keys "
          f"({r['bytes']} bytes) in {r['seconds']:.2f} s and it turned active")


if __name__ == "__main__":
    main()
