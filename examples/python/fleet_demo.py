"""The demo's fleet step: a real etcd, 3 memcached servers that join the
ring as members (`shardring member join`, each under a lease), and one
follower client each in C, Python and Node (examples/c/follow.c,
examples/python/follow.py, examples/node/follow.mjs). A 4th memcached joins;
every client prints the same new epoch and fingerprint, and all three place
100,000 keys identically.

Run by examples/demo.sh (after `make demo` built everything):
    python examples/python/fleet_demo.py
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time
from contextlib import ExitStack

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "py", "tests"))
from servers import Etcd  # noqa: E402  (the tests' etcd launcher)

from memcached_scale_out import start_server  # noqa: E402

PREFIX = "/shardring/demo"
CLI = os.path.join(ROOT, "target", "release", "shardring")


class Client:
    """A follower process and the JSON lines it prints."""

    def __init__(self, name, command, url):
        self.name = name
        self.process = subprocess.Popen(command + ["--etcd", url, "--prefix", PREFIX], cwd=ROOT, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(json.loads(line)) for line in self.process.stdout],
                         daemon=True).start()

    def next(self, timeout=10):
        return self.lines.get(timeout=timeout)

    def digest(self, keys):
        self.process.stdin.write(f"digest {keys}\n")
        self.process.stdin.flush()
        while True:
            line = self.next(60)
            if "digest" in line:
                return line["digest"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def join(stack, url, name):
    """A memcached server and the agent that keeps it a member."""
    start_server(stack, name)
    agent = subprocess.Popen([CLI, "member", "join", "--etcd", url, "--prefix", PREFIX, "--id", name, "--ttl", "5"],
                             stdout=subprocess.PIPE, text=True)
    stack.callback(agent.wait)
    stack.callback(agent.terminate)
    agent.stdout.readline()  # "joined ...": registered


def main():
    with ExitStack() as stack:
        etcd = Etcd()
        stack.callback(etcd.close)
        for i in range(1, 4):
            join(stack, etcd.url, f"cache-{i}")
        print(f"fleet: etcd on {etcd.url}, 3 memcached servers joined as members cache-1..3 of {PREFIX}")
        clients = [
            Client("c", [os.path.join(ROOT, "build", "follow")], etcd.url),
            Client("python", [sys.executable, "examples/python/follow.py"], etcd.url),
            Client("node", ["node", "examples/node/follow.mjs"], etcd.url),
        ]
        for client in clients:
            stack.callback(client.close)
        first = {client.name: client.next() for client in clients}
        for name, epoch in first.items():
            print(f"  {name:7} epoch {epoch['revision']:>3}  fingerprint {epoch['fingerprint']}")
        joined = time.time_ns() // 1000
        join(stack, etcd.url, "cache-4")
        print("a 4th memcached server joins as cache-4:")
        latest = {}
        for client in clients:
            epoch = client.next()
            latest[client.name] = epoch
            print(f"  {client.name:7} epoch {epoch['revision']:>3}  fingerprint {epoch['fingerprint']}"
                  f"  ({(epoch['at_us'] - joined) / 1000:.1f} ms after the join began)")
        digests = {client.name: client.digest(100_000) for client in clients}
        epochs = {(e["revision"], e["fingerprint"]) for e in latest.values()}
        if len(epochs) == 1 and len(set(digests.values())) == 1 and len({(e["revision"], e["fingerprint"]) for e in first.values()}) == 1:
            revision, fingerprint = epochs.pop()
            print(f"OK: C, Python and Node hold epoch {revision}, fingerprint {fingerprint}, and place 100,000 keys "
                  f"identically (digest {digests['c']})")
        else:
            print(f"MISMATCH: epochs {latest}, digests {digests}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
