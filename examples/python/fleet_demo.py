"""The demo's fleet step: a real etcd, 3 memcached servers that join the
ring as members (`shardring member join`, each under a lease), and one
follower client each in C, Python and Node (examples/c/follow.c,
examples/python/follow.py, examples/node/follow.mjs). A 4th memcached joins;
every client prints the same new epoch and fingerprint, and all three place
100,000 keys identically. Then the fleet's eyes: a Python follower and a
`shardring watch` report themselves under `P/clients/`, `shardring fleet
status` prints every client and whether they agree; the Python client finds
its hot key, `shardring hot publish` spreads it over more servers and reads
take them in turn; and `shardring dashboard` is photographed by headless
chromium (build/dashboard.png).

Run by examples/demo.sh (after `make demo` built everything):
    python examples/python/fleet_demo.py
"""

import json
import os
import queue
import shutil
import subprocess
import tempfile
import sys
import threading
import time
import urllib.request
from contextlib import ExitStack

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "py", "tests"))
from servers import Etcd, free_port  # noqa: E402  (the tests' etcd launcher)

import shardring  # noqa: E402

from memcached_scale_out import start_server  # noqa: E402
from pymemcache.client.base import Client as MemcacheClient  # noqa: E402

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
    """A memcached server and the agent that keeps it a member; its port."""
    _, _, port = start_server(stack, name)
    agent = subprocess.Popen([CLI, "member", "join", "--etcd", url, "--prefix", PREFIX, "--id", name, "--ttl", "5"],
                             stdout=subprocess.PIPE, text=True)
    stack.callback(agent.wait)
    stack.callback(agent.terminate)
    agent.stdout.readline()  # "joined ...": registered
    return port


def eyes(stack, url, ports):
    """Two reporting clients, `fleet status`, and a dashboard screenshot."""
    follower = shardring.Follower.etcd(url, PREFIX, report_as="demo-python", report_interval=0.5, hot_keys=True)
    stack.callback(follower.close)
    watcher = subprocess.Popen([CLI, "watch", "--etcd", url, "--prefix", PREFIX, "--report-as", "demo-cli",
                                "--report-interval", "0.5"], stdout=subprocess.DEVNULL)
    stack.callback(watcher.wait)
    stack.callback(watcher.terminate)
    # 10,000 keys on their owners, and requests from the follower meanwhile.
    servers = {f"cache-{i}": MemcacheClient(("127.0.0.1", p)) for i, p in ports.items()}
    for i in range(10_000):
        key = f"key-{i}"
        servers[follower.ring.get(key)].set(key, b"value")
    stop = threading.Event()

    # One key, user:42, takes a third of the requests.
    batch = [f"request-{i}" for i in range(4_000)] + [HOT_KEY] * 2_000

    def requests():
        while not stop.is_set():
            follower.ring.get_many(batch)
            time.sleep(0.1)

    sender = threading.Thread(target=requests)
    sender.start()
    stack.callback(sender.join)
    stack.callback(stop.set)
    status = ["fleet", "status", "--etcd", url, "--prefix", PREFIX]
    for _ in range(100):
        answer = subprocess.run([CLI, *status, "--json"], capture_output=True, text=True)
        report = json.loads(answer.stdout) if answer.stdout else {}
        if answer.returncode == 0 and len(report.get("clients", [])) == 2 and report.get("lookups"):
            break
        time.sleep(0.1)
    print("$ shardring fleet status --etcd ... --prefix " + PREFIX)
    print(subprocess.run([CLI, *status], capture_output=True, text=True).stdout.rstrip())
    spread(follower, servers, url)
    chromium = shutil.which("chromium")
    if chromium is None:
        print("(no chromium: the dashboard's screenshot is skipped)")
        return
    port = free_port()
    addresses = [f"--address=cache-{i}=127.0.0.1:{p}" for i, p in ports.items()]
    dashboard = subprocess.Popen([CLI, "dashboard", "--etcd", url, "--prefix", PREFIX, "--listen",
                                  f"127.0.0.1:{port}", "--servers", "memcached", *addresses],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stack.callback(dashboard.wait)
    stack.callback(dashboard.terminate)
    for _ in range(300):
        if dashboard.poll() is not None:
            raise RuntimeError(f"shardring dashboard exited: {dashboard.stderr.read()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2).close()
            break
        except OSError:
            time.sleep(0.1)
    profile = tempfile.mkdtemp(prefix="shardring-chromium-")
    stack.callback(shutil.rmtree, profile, True)
    shot = os.path.join(ROOT, "build", "dashboard.png")
    taken = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--window-size=1280,800", "--virtual-time-budget=3000",
                    f"--screenshot={shot}", f"http://127.0.0.1:{port}/"], capture_output=True, text=True, timeout=120)
    if taken.returncode != 0 or not os.path.exists(shot):
        raise RuntimeError(f"chromium wrote no screenshot: {taken.stdout}{taken.stderr}")
    print(f"shardring dashboard: a screenshot of http://127.0.0.1:{port}/ is in build/dashboard.png")


HOT_KEY = "user:42"


def spread(follower, servers, url):
    """The follower finds user:42 hot and reports it; `shardring hot
    publish` spreads it (a step to `writing`, one to `spread`); reads then
    take its servers in turn, and every server it is on holds it."""
    for _ in range(100):
        if any(key == HOT_KEY.encode() for key, _, _ in follower.hot_keys() or []):
            break
        time.sleep(0.1)
    top = follower.hot_keys()[0]
    print(f"hot keys: this client sees {top[0].decode()} at ~{top[2]:,.0f} requests/s "
          f"({top[1]:,} estimated requests)")
    publish = [CLI, "hot", "publish", "--etcd", url, "--prefix", PREFIX, "--once"]
    for phase in ("writing", "spread"):
        time.sleep(1.2)  # a new report from the client (every 0.5 s) before each step
        subprocess.run(publish, capture_output=True, text=True, check=True)
        for _ in range(100):
            phases = {key: entry_phase for key, _, entry_phase, _, _ in follower.hot_set().keys()}
            if phases.get(HOT_KEY.encode()) == phase:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{HOT_KEY} did not reach {phase}: {follower.hot_set().to_json()}")
    print("$ shardring hot show --etcd ... --prefix " + PREFIX)
    show = [CLI, "hot", "show", "--etcd", url, "--prefix", PREFIX]
    print(subprocess.run(show, capture_output=True, text=True, check=True).stdout.rstrip())
    # A write goes to the owner under the key and to each copy under the copy key.
    read, read_copy, owner, copies, copy_key = follower.plan(HOT_KEY)
    servers[owner].set(HOT_KEY, b"profile of user 42")
    for node in copies:
        servers[node].set(copy_key, b"profile of user 42")
    reads = []
    for _ in range(2 * (1 + len(copies))):
        read, read_copy, owner, _, copy_key = follower.plan(HOT_KEY)
        value = servers[read].get(copy_key if read_copy else HOT_KEY)
        reads.append(f"{read}{' (copy)' if read_copy else ''}{'' if value else ' MISS'}")
    print(f"{HOT_KEY} is on {owner} and, as {copy_key.decode()}, on {', '.join(copies)}; {len(reads)} reads: "
          + ", ".join(reads))
    if any("MISS" in r for r in reads) or len({r.split()[0] for r in reads}) != 1 + len(copies):
        raise RuntimeError(f"the spread key was not read from each of its servers: {reads}")


def main():
    with ExitStack() as stack:
        etcd = Etcd()
        stack.callback(etcd.close)
        ports = {}
        for i in range(1, 4):
            ports[i] = join(stack, etcd.url, f"cache-{i}")
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
        ports[4] = join(stack, etcd.url, "cache-4")
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
        eyes(stack, etcd.url, ports)


if __name__ == "__main__":
    main()
