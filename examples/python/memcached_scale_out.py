"""Real memcached servers: store every word routed by shardring, add a server,
read every word back, and count the hits; then the same with hash % N; then
the warm way: the new server joins `warming` (reads stay with the old owners),
`shardring rebalance` copies the arcs it will own, and it turns active.

Starts its own servers on free loopback ports (Debian's `memcached`) and stops
them on exit, failure included. Run (after `pip install ./py pymemcache` and
`cargo build --release -p shardring-cli`):
    python examples/python/memcached_scale_out.py /usr/share/dict/words [--servers 4] [--json] [--cli PATH]
"""

import argparse
import json
import os
import shutil
import pathlib
import socket
import subprocess
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack

from pymemcache.client.base import Client

import shardring


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(stack: ExitStack, name: str) -> tuple[str, Client, int]:
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


def warm_scale_out(words, clients, ports, old: shardring.Ring, new: shardring.Ring, cli: str) -> dict:
    """Stores on `old`, lets the new server warm up while `shardring rebalance`
    copies the keys whose owner changes, then reads on `new`. Returns the hit
    ratios during warming and after, and the rebalancer's report."""
    store(words, clients, old.get)
    transition = shardring.Transition.between(old, new)
    warming_hits = read(words, clients, lambda w: transition.read_nodes(w)[0])
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, ring in (("old", old), ("new", new)):
            path = pathlib.Path(tmp, f"{name}.json")
            path.write_text(ring.to_json())
            paths.append(str(path))
        addresses = [a for name, port in ports.items() for a in ("--address", f"{name}=127.0.0.1:{port}")]
        result = subprocess.run(
            [cli, "rebalance", "--from", paths[0], "--to", paths[1], "--backend", "memcached", "--json", *addresses],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(f"shardring rebalance exited {result.returncode}: {result.stderr}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return {"warming": warming_hits, "after": read(words, clients, new.get), "report": report}


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
        started = [start_server(stack, f"memcached-{i + 1}") for i in range(args.servers + 1)]
        clients = {name: client for name, client, _ in started}
        ports = {name: port for name, _, port in started}
        names = [name for name, _, _ in started]
        old, new = names[:-1], names
        ring_before, ring_after = shardring.Ring(old), shardring.Ring(new)
        ring_hits = store_then_read(words, clients, ring_before.get, ring_after.get)
        modulo_hits = store_then_read(
            words, clients, lambda w: old[shardring.hash_key(w) % len(old)], lambda w: new[shardring.hash_key(w) % len(new)]
        )
        warm = warm_scale_out(words, clients, ports, ring_before, ring_after, args.cli)

    if args.json:
        summary = {"keys": len(words), "servers": args.servers, "ring": ring_hits, "modulo": modulo_hits}
        summary.update(warming=warm["warming"], rebalanced=warm["after"], copied=warm["report"]["copied"])
        print(json.dumps(summary))
        return
    n = args.servers
    print(f"Real memcached, {len(words)} keys stored on {n} servers, then read after a server joins ({n} -> {n + 1}):")
    print(f"  shardring: {100 * ring_hits:5.1f}% of reads still hit (ideal {100 * n / (n + 1):.0f}%)")
    print(f"  hash % N : {100 * modulo_hits:5.1f}% of reads still hit (expected about {100 / (n + 1):.0f}%)")
    r = warm["report"]
    print(f"  shardring, warm: {100 * warm['warming']:5.1f}% of reads hit while the new server warms up,")
    print(f"    {100 * warm['after']:5.1f}% after `shardring rebalance` copied {r['copied']} keys "
          f"({r['bytes']} bytes) in {r['seconds']:.2f} s and it turned active")


if __name__ == "__main__":
    main()
