"""How fast `shardring rebalance` moves keys, next to what the servers
themselves accept, measured in the same run.

Five servers of one kind on loopback; KEYS keys of 100 bytes stored on the
4-server ring; `shardring rebalance --from 4 --to 5`, unlimited, moves the
5th server's arcs: Redis with `--migrate` (the handoff protocol's mover)
and with the copy mode, memcached with the copy mode. Each row gives the
keys moved, the seconds (listings included), keys/s and the rebalancer's
peak resident memory; then the servers' own capacity: `redis-benchmark -P
64` SET and GET on one Redis, and pipelined `ms` (memcached's meta set,
quiet mode) on one memcached. Fails when a run exits non-zero or the 5th
server does not hold exactly the keys the new ring gives it.

Not a test: `make bench` runs it at 1,000,000 keys, or
`python py/bench/rebalance_speed.py [--keys N] [--backend redis|memcached]`
(10,000,000 keys need about 3 GB of memory for the servers).
"""

import argparse
import json
import random
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py" / "tests"))

import redis  # noqa: E402
from servers import Memcached, Redis  # noqa: E402

import shardring  # noqa: E402

CLI = ROOT / "target" / "release" / "shardring"
# Incompressible, so Redis's DUMP and MIGRATE payloads (LZF-compressed) are
# as large as the values; --value-bytes replaces it.
VALUE = random.Random(0).randbytes(100)


class BigMemcached(Memcached):
    """A memcached with room for the bench's items (`megabytes` of memory,
    items up to 2 MiB)."""

    megabytes = 1024

    def command(self):
        command = super().command()
        command[command.index("-m") + 1] = str(self.megabytes)
        return [*command, "-I", "2m"]


def key(i):
    return b"key:%d" % i


def fill(kind, servers, ring, count):
    """Stores keys 0..count, each on its owner under `ring`, pipelined."""
    ports = {s.address: s.port for s in servers}
    step = max(1, min(100_000, 50_000_000 // len(VALUE)))  # at most 50 MB a request
    for start in range(0, count, step):
        keys = [key(i) for i in range(start, min(count, start + step))]
        by_owner = {}
        for k, owner in zip(keys, ring.get_many(keys)):
            by_owner.setdefault(owner, []).append(k)
        for owner, batch in by_owner.items():
            if kind == "redis":
                pipe = redis.Redis(port=ports[owner]).pipeline(transaction=False)
                for k in batch:
                    pipe.set(k, VALUE)
                pipe.execute()
            else:
                request = b"".join(b"ms %s %d q\r\n%s\r\n" % (k, len(VALUE), VALUE) for k in batch) + b"mn\r\n"
                exchange(ports[owner], request, b"MN\r\n")


def exchange(port, request, end):
    """Sends `request` to a memcached and reads until the reply ends with `end`."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(request)
        reply = b""
        while not reply.endswith(end):
            chunk = s.recv(1 << 16)
            if not chunk:
                raise RuntimeError(f"memcached closed the connection: {reply[-200:]!r}")
            reply += chunk
        return reply


def held(kind, server):
    if kind == "redis":
        return redis.Redis(port=server.port).dbsize()
    reply = exchange(server.port, b"stats\r\n", b"END\r\n").decode()
    return int(re.search(r"STAT curr_items (\d+)", reply).group(1))


def watch_peak(process, peak):
    """Samples the run's VmHWM (its peak resident memory, KiB) every 5 ms
    until it exits: wait4's ru_maxrss would count the forking Python's pages."""
    status = pathlib.Path(f"/proc/{process.pid}/status")
    while process.poll() is None:
        try:
            match = re.search(r"VmHWM:\s+(\d+) kB", status.read_text())
        except OSError:
            break
        if match:
            peak[0] = max(peak[0], int(match.group(1)))
        time.sleep(0.005)


def config(path, ids):
    path.write_text(json.dumps({"format_version": 1, "nodes": [{"id": i} for i in ids]}))
    return str(path)


def rebalance(kind, servers, count, extra):
    """One run 4 -> 5 on freshly filled servers: its report, seconds and peak RSS (MiB)."""
    ids = [s.address for s in servers]
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    for server in servers:
        if kind == "redis":
            redis.Redis(port=server.port).flushall()
        else:
            exchange(server.port, b"flush_all\r\n", b"OK\r\n")
    fill(kind, servers, old, count)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [config(pathlib.Path(tmp) / "old.json", ids[:4]), config(pathlib.Path(tmp) / "new.json", ids)]
        started = time.monotonic()
        with open(pathlib.Path(tmp) / "stderr", "w+b") as errors:
            process = subprocess.Popen([str(CLI), "rebalance", "--from", paths[0], "--to", paths[1], "--backend",
                                        kind, "--json", *extra], stdout=subprocess.PIPE, stderr=errors)
            peak = [0]
            watcher = threading.Thread(target=watch_peak, args=(process, peak))
            watcher.start()
            stdout = process.stdout.read()
            process.wait()
            seconds = time.monotonic() - started
            watcher.join()
            errors.seek(0)
            stderr = errors.read()
    assert process.returncode == 0, (stdout, stderr)
    report = json.loads(stdout.decode().strip().splitlines()[-1])
    want = 0
    for start in range(0, count, 100_000):
        keys = [key(i) for i in range(start, min(count, start + 100_000))]
        want += sum(1 for owner in new.get_many(keys) if owner == ids[4])
    got = held(kind, servers[4])
    assert got == want, f"the 5th server holds {got} keys, the new ring gives it {want}"
    return report, seconds, peak[0] / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=("redis", "memcached", "both"), default="both")
    parser.add_argument("--value-bytes", type=int, default=100)
    args = parser.parse_args()
    global VALUE
    VALUE = random.Random(0).randbytes(args.value_bytes)
    print(f"shardring rebalance, 4 -> 5 servers, {args.keys:,} keys of {len(VALUE)} bytes, unlimited:")
    print(f"  {'backend':<10}{'mode':<12}{'moved':>10}{'s':>8}{'keys/s':>10}{'MB/s':>8}{'peak MiB':>10}")
    for kind in ("redis", "memcached") if args.backend == "both" else (args.backend,):
        BigMemcached.megabytes = max(64, args.keys * (300 + 2 * len(VALUE)) // 4 // 1_000_000)
        servers = [(Redis if kind == "redis" else BigMemcached)() for _ in range(5)]
        try:
            modes = [("--migrate", ["--migrate"]), ("copy", [])] if kind == "redis" else [("copy", [])]
            for name, extra in modes:
                report, seconds, peak = rebalance(kind, servers, args.keys, extra)
                print(f"  {kind:<10}{name:<12}{report['copied']:>10,}{seconds:>8.2f}"
                      f"{report['copied'] / seconds:>10,.0f}{report['copied'] * len(VALUE) / 1e6 / seconds:>8.1f}"
                      f"{peak:>10.1f}", flush=True)
            print(f"  {kind} capacity, one server: {capacity(kind, servers[0])}", flush=True)
        finally:
            for server in servers:
                server.close()


def capacity(kind, server):
    if kind == "redis":
        requests = max(1000, min(1_000_000, 2_000_000_000 // len(VALUE)))
        result = subprocess.run(["redis-benchmark", "-p", str(server.port), "-P", "64", "-t", "set,get", "-n",
                                 str(requests), "-d", str(len(VALUE)), "-q"], capture_output=True, text=True,
                                check=True)
        rates = re.findall(r"(SET|GET): ([\d.]+) requests per second", result.stdout.replace("\r", "\n"))
        return ", ".join(f"{op} {float(rate):,.0f}/s ({float(rate) * len(VALUE) / 1e6:,.0f} MB/s)" for op, rate in rates) \
            + " (redis-benchmark -P 64)"
    count = max(100, min(1_000_000, 200_000_000 // len(VALUE)))  # at most 200 MB in one request
    request = b"".join(b"ms bench:%d %d q\r\n%s\r\n" % (i, len(VALUE), VALUE) for i in range(count)) + b"mn\r\n"
    started = time.monotonic()
    exchange(server.port, request, b"MN\r\n")
    rate = count / (time.monotonic() - started)
    return f"ms {rate:,.0f}/s ({rate * len(VALUE) / 1e6:,.0f} MB/s; pipelined, quiet)"


if __name__ == "__main__":
    main()
