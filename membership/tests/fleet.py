"""The fleet test: a real etcd, 3 member agents (`shardring member join`)
and 12 followers in separate processes, 3 each in Rust, C, Python and Node
(the example followers: membership/examples/follow.rs, examples/c/follow.c,
examples/python/follow.py, examples/node/follow.mjs), through 200
membership changes. After every change all 12 must report the same
(revision, fingerprint), the one the driver computes for the members; after
the last, all must place the same 100,000 keys identically. Prints the time
from each etcd write to the last follower's swap (p50, p99), and the
followers' CPU and memory while idle.

Run by `make test-fleet` (after the bindings and examples are built):
    .venv/bin/python membership/tests/fleet.py [--changes 200]
Exits 1 on any disagreement or timeout."""

import argparse
import base64
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "py", "tests"))
from servers import Etcd  # noqa: E402

import shardring  # noqa: E402

PREFIX = "/shardring/fleet"
CLI = os.path.join(ROOT, "target", "release", "shardring")


def b64(text):
    return base64.b64encode(text.encode()).decode()


class Gateway:
    """etcd's JSON gateway (/v3/kv/...), so writes cost one loopback HTTP call."""

    def __init__(self, url):
        self.url = url

    def call(self, path, body):
        request = urllib.request.Request(f"{self.url}/v3/kv/{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(json.loads(response.read())["header"]["revision"])

    def put(self, key, value):
        return self.call("put", {"key": b64(key), "value": b64(value)})

    def delete(self, key):
        return self.call("deleterange", {"key": b64(key)})


class Process:
    """A follower process and the JSON lines it prints."""

    def __init__(self, name, command):
        self.name = name
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=ROOT)
        self.lines = queue.Queue()
        self.epochs = {}  # revision -> (fingerprint, at_us)
        self.latest = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            record = json.loads(line)
            if "revision" in record and "fingerprint" in record:
                self.epochs[record["revision"]] = (record["fingerprint"], record["at_us"])
                self.latest = (record["revision"], record["fingerprint"])
            else:
                self.lines.put(record)

    def ask(self, command, timeout=60):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.lines.get(timeout=timeout)

    def usage(self):
        """(CPU seconds used, resident KiB) from /proc."""
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        with open(f"/proc/{self.proc.pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        return ticks / os.sysconf("SC_CLK_TCK"), rss

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()


def followers(url, per_language):
    commands = {
        # The debug build `cargo test` compiled (make test-fleet builds it too):
        # a follower's speed is not what this test measures.
        "rust": [os.path.join(ROOT, "target", "debug", "examples", "follow")],
        "c": [os.path.join(ROOT, "build", "follow")],
        "python": [sys.executable, "examples/python/follow.py"],
        "node": ["node", "examples/node/follow.mjs"],
    }
    return [Process(f"{lang}-{i}", command + ["--etcd", url, "--prefix", PREFIX])
            for lang, command in commands.items() for i in range(per_language)]


def expected_fingerprint(members):
    return f"{shardring.Ring([shardring.Node(id, w) for id, w in sorted(members.items())]).fingerprint:016x}"


def wait_all(fleet, revision, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(revision in p.epochs or (p.latest and p.latest[0] > revision) for p in fleet):
            return
        for p in fleet:
            if p.proc.poll() is not None:
                raise SystemExit(f"{p.name} exited: {p.proc.stderr.read()}")
        time.sleep(0.0005)
    missing = [p.name for p in fleet if revision not in p.epochs]
    raise SystemExit(f"revision {revision} not reached within {timeout} s by {missing}")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--per-language", type=int, default=3)
    parser.add_argument("--keys", type=int, default=100_000)
    args = parser.parse_args()
    etcd = Etcd()
    agents, fleet = [], []
    try:
        gateway = Gateway(etcd.url)
        members = {}
        for i in range(3):
            agents.append(subprocess.Popen([CLI, "member", "join", "--etcd", etcd.url, "--prefix", PREFIX,
                                            "--id", f"agent-{i}", "--ttl", "5"], stdout=subprocess.PIPE, text=True))
            members[f"agent-{i}"] = 1.0
        for agent in agents:
            agent.stdout.readline()  # "joined ...": registered
        fleet = followers(etcd.url, args.per_language)
        start = gateway.put(f"{PREFIX}/members/seed", json.dumps({"weight": 1}))
        members["seed"] = 1.0
        wait_all(fleet, start, timeout=30)
        rng = random.Random(7)
        latencies, by_language = [], {}
        statics = ["seed"]
        for change in range(args.changes):
            action = rng.random()
            if action < 0.45 or len(statics) < 3:
                id = f"cache-{change:03}"
                weight = rng.choice([1, 1, 2, 3])
                before = time.time_ns() // 1000
                revision = gateway.put(f"{PREFIX}/members/{id}", json.dumps({"weight": weight}))
                members[id] = float(weight)
                statics.append(id)
            elif action < 0.8:
                id = statics.pop(rng.randrange(len(statics)))
                before = time.time_ns() // 1000
                revision = gateway.delete(f"{PREFIX}/members/{id}")
                del members[id]
            else:
                id = rng.choice(statics)
                weight = rng.choice([0, 1, 2, 5])
                before = time.time_ns() // 1000
                revision = gateway.put(f"{PREFIX}/members/{id}", json.dumps({"weight": weight}))
                members[id] = float(weight)
            wait_all(fleet, revision)
            want = expected_fingerprint(members)
            seen = {p.name: p.epochs[revision][0] for p in fleet}
            if set(seen.values()) != {want}:
                raise SystemExit(f"change {change} (revision {revision}): fingerprints {seen}, expected {want}")
            arrivals = {p.name: p.epochs[revision][1] - before for p in fleet}
            latencies.append(max(arrivals.values()) / 1000)
            for name, latency in arrivals.items():
                by_language.setdefault(name.split("-")[0], []).append(latency / 1000)
        digests = {p.name: p.ask(f"digest {args.keys}") for p in fleet}
        values = {d["digest"] for d in digests.values()}
        if len(values) != 1 or {d["revision"] for d in digests.values()} != {revision}:
            raise SystemExit(f"placements differ: {digests}")
        print(f"fleet: {len(fleet)} followers ({args.per_language} each in Rust, C, Python, Node), 3 member agents, "
              f"{args.changes} changes: every change seen by all with one fingerprint; "
              f"{args.keys:,} keys placed identically (digest {values.pop()})")
        print(f"write to last follower's swap: p50 {statistics.median(latencies):.1f} ms, "
              f"p99 {percentile(latencies, 99):.1f} ms, max {max(latencies):.1f} ms")
        for lang, values in by_language.items():
            print(f"  {lang:6}: p50 {statistics.median(values):.1f} ms, p99 {percentile(values, 99):.1f} ms")
        before = {p.name: p.usage() for p in fleet}
        time.sleep(5)
        after = {p.name: p.usage() for p in fleet}
        for lang in ("rust", "c", "python", "node"):
            names = [p.name for p in fleet if p.name.startswith(lang)]
            cpu = max((after[n][0] - before[n][0]) / 5 * 100 for n in names)
            rss = max(after[n][1] for n in names)
            print(f"  idle {lang:6}: CPU {cpu:.2f}% of a core, resident {rss / 1024:.1f} MiB (worst of {len(names)})")
    finally:
        for p in fleet:
            p.stop()
        for agent in agents:
            agent.terminate()
            agent.wait(timeout=10)
        etcd.close()


if __name__ == "__main__":
    main()
