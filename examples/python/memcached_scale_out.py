"""Real memcached servers: store every word routed by shardring, add a server,
read every word back, and count the hits; then the same with hash % N.

Starts its own servers on free loopback ports (Debian's `memcached`) and stops
them on exit, failure included. Run (after `pip install ./py pymemcache`):
    python examples/python/memcached_scale_out.py /usr/share/dict/words [--servers 4] [--json]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import time
from collections import defaultdict
from contextlib import ExitStack

from pymemcache.client.base import Client

import shardring


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(stack: ExitStack, name: str) -> tuple[str, Client]:
    """A memcached on a free loopback port, known on the ring as `name` (so
    placement does not depend on the port), stopped when `stack` closes."""
    port = free_port()
    process = subprocess.Popen(
        [shutil.which("memcached") or "memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "128", "-t", "1"]
        + (["-u", "root"] if os.geteuid() == 0 else []),  # memcached refuses to run as root without -u
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stack.callback(process.wait)
    stack.callback(process.terminate)
    client = Client(("127.0.0.1", port), connect_timeout=2, timeout=5)
    stack.callback(client.close)
    for _ in range(100):
        try:
            client.version()
            return name, client
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"memcached on port {port} did not start")


def store_then_read(words: list[bytes], clients: dict[str, Client], before, after) -> float:
    """Writes each word to before(word)'s server, reads it from after(word)'s; returns the hit ratio."""
    for client in clients.values():
        client.flush_all()
    batches: dict[str, dict[bytes, bytes]] = defaultdict(dict)
    for word in words:
        batches[before(word)][word] = b"1"
    for server, batch in batches.items():
        clients[server].set_many(batch, noreply=False)
    reads: dict[str, list[bytes]] = defaultdict(list)
    for word in words:
        reads[after(word)].append(word)
    hits = 0
    for server, keys in reads.items():
        for start in range(0, len(keys), 500):
            hits += len(clients[server].get_many(keys[start : start + 500]))
    return hits / len(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("words")
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the ratios as JSON")
    args = parser.parse_args()
    with open(args.words, "rb") as f:
        # memcached text-protocol keys: no whitespace or control bytes, at most 250 bytes.
        words = sorted({w for w in f.read().split(b"\n") if w and len(w) <= 250 and all(b > 32 for b in w)})

    with ExitStack() as stack:
        started = [start_server(stack, f"memcached-{i + 1}") for i in range(args.servers + 1)]
        clients = dict(started)
        names = [name for name, _ in started]
        old, new = names[:-1], names
        ring_before, ring_after = shardring.Ring(old), shardring.Ring(new)
        ring_hits = store_then_read(words, clients, ring_before.get, ring_after.get)
        modulo_hits = store_then_read(
            words, clients, lambda w: old[shardring.hash_key(w) % len(old)], lambda w: new[shardring.hash_key(w) % len(new)]
        )

    if args.json:
        print(json.dumps({"keys": len(words), "servers": args.servers, "ring": ring_hits, "modulo": modulo_hits}))
        return
    n = args.servers
    print(f"Real memcached, {len(words)} keys stored on {n} servers, then read after a server joins ({n} -> {n + 1}):")
    print(f"  shardring: {100 * ring_hits:5.1f}% of reads still hit (ideal {100 * n / (n + 1):.0f}%)")
    print(f"  hash % N : {100 * modulo_hits:5.1f}% of reads still hit (expected about {100 / (n + 1):.0f}%)")


if __name__ == "__main__":
    main()
