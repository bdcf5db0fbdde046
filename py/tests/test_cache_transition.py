"""memcached through a transition keeps cache semantics: a miss is allowed,
a stale value is not (Debian's memcached, 5 servers on free loopback
ports, stopped by PID). Clients write a key's current owner (`set`,
`incr`, `append`, `delete`) and then delete the key on its new owner, while
`shardring rebalance --backend memcached` copies 4 -> 5 with `add` and
reads each copied key's CAS on its old owner again, deleting the copy when
a client changed the value meanwhile. Afterwards every moved key's new
owner holds either nothing or exactly its old owner's value."""

import json
import random
import subprocess
import threading

from pymemcache.client.base import Client

import shardring
from test_rebalance import CLI, config, memcached  # noqa: F401 (memcached is a fixture)

# Hot keys, all of them moving to the 5th server, and how many times the
# rebalancer runs while they are written: each run copies again the hot
# keys that clients deleted on their new owner, so each run races them anew.
HOT = 100
RUNS = 8


def writer(ids, ports, transition, hot, stop, seed, counts):
    """Hot counters: incr, set, append and delete on the current owner,
    then a delete on the new owner while the key moves."""
    rng = random.Random(seed)
    clients = {i: Client(("127.0.0.1", ports[i]), timeout=10) for i in ids}
    while not stop.is_set():
        key = rng.choice(hot)
        nodes = transition.write_nodes(key)
        owner = clients[nodes[0]]
        op = rng.choices(["incr", "set", "append", "delete"], [5, 2, 2, 1])[0]
        if op == "incr":
            owner.incr(key, 1, noreply=False)
        elif op == "set":
            owner.set(key, str(rng.randrange(1000)), noreply=False)
        elif op == "append":
            owner.append(key, "1", noreply=False)
        else:
            owner.delete(key, noreply=False)
        if len(nodes) == 2:
            clients[nodes[1]].delete(key, noreply=False)
        counts[op] += 1


def test_under_hot_writes_cold_keys_are_copied_and_hot_keys_end_current_or_missing(memcached, tmp_path):
    """Broad: eight runs under two writers. It does not provoke the stale
    copy (a plant without the CAS check passed it); the race test below does."""
    ids = [s.address for s in memcached]
    ports = {s.address: s.port for s in memcached}
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    transition = shardring.Transition.between(old, new)
    clients = {i: Client(("127.0.0.1", ports[i]), timeout=10) for i in ids}
    hot = [k for k in (f"hot:{i}" for i in range(10 * HOT)) if old.get(k) != new.get(k)][:HOT]
    keys = hot + [f"cold:{i}" for i in range(5_000)]
    by_owner = {}
    for key in keys:
        by_owner.setdefault(old.get(key), {})[key] = "7"
    for node, batch in by_owner.items():
        assert clients[node].set_many(batch, noreply=False) == []
    stop = threading.Event()
    counts = [{"incr": 0, "set": 0, "append": 0, "delete": 0} for _ in range(2)]
    threads = [threading.Thread(target=writer, args=(ids, ports, transition, hot, stop, seed, counts[seed]))
               for seed in range(2)]
    for thread in threads:
        thread.start()
    reports = []
    try:
        for _ in range(RUNS):
            result = subprocess.run([str(CLI), "rebalance", "--from", config(tmp_path / "old.json", ids[:4]), "--to",
                                     config(tmp_path / "new.json", ids), "--backend", "memcached", "--json"],
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stdout + result.stderr
            reports.append(json.loads(result.stdout.strip().splitlines()[-1]))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert all(r["failed"] == 0 for r in reports) and reports[0]["copied"] > 500, reports[0]
    changed = sum(r["changed"] for r in reports)
    moved = [k for k in keys if old.get(k) != new.get(k)]
    stale, misses, hits, cold_misses = [], 0, 0, []
    hot_keys = set(hot)
    for key in moved:
        current = clients[old.get(key)].get(key)
        there = clients[new.get(key)].get(key)
        if there is None:
            misses += 1
            if key not in hot_keys:
                cold_misses.append(key)
        elif there == current:
            hits += 1
        else:
            stale.append((key, there, current))
    print(f"{len(moved)} moved keys: {hits} hits, {misses} misses, {len(stale)} stale; "
          f"{changed} copies dropped as changed meanwhile in {RUNS} runs; writes {counts}")
    assert stale == [], f"{len(stale)} stale values on their new owners, e.g. {stale[:5]}"
    # No client writes a cold key, so each moved one was copied. (How many
    # hot keys end as hits depends on how fast the writers run.)
    assert len(moved) - len(hot) > 500 and cold_misses == [], f"{len(cold_misses)} cold keys not copied"
    assert sum(c["incr"] for c in counts) > 1000, counts


def test_a_copy_that_races_the_last_write_is_dropped(memcached, tmp_path):
    """The race the CAS check is for, provoked: a client increments a moving
    key on its old owner and deletes it on its new one, over and over, and
    stops writing as soon as it sees the rebalancer's copy land after its
    delete. That copy may hold a value read before the client's last write;
    the rebalancer must have dropped it. 30 rounds."""
    ids = [s.address for s in memcached]
    ports = {s.address: s.port for s in memcached}
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    transition = shardring.Transition.between(old, new)
    key = next(k for k in (f"race:{i}" for i in range(1000)) if old.get(k) != new.get(k))
    source, target = (Client(("127.0.0.1", ports[n]), timeout=10) for n in (old.get(key), new.get(key)))
    assert transition.write_nodes(key) == [old.get(key), new.get(key)]
    arguments = ["--from", config(tmp_path / "old.json", ids[:4]), "--to", config(tmp_path / "new.json", ids),
                 "--backend", "memcached", "--json"]
    stale, raced = [], 0
    for round in range(30):
        source.set(key, "0", noreply=False)
        target.delete(key, noreply=False)
        stop = threading.Event()

        def write():
            while not stop.is_set():
                source.incr(key, 1, noreply=False)
                target.delete(key, noreply=False)
                if target.get(key) is not None:
                    return  # the copy landed after the last delete

        thread = threading.Thread(target=write)
        thread.start()
        result = subprocess.run([str(CLI), "rebalance", *arguments], capture_output=True, text=True, timeout=60)
        stop.set()
        thread.join()
        assert result.returncode == 0, result.stdout + result.stderr
        raced += json.loads(result.stdout.strip().splitlines()[-1])["changed"]
        there, current = target.get(key), source.get(key)
        if there is not None and there != current:
            stale.append((round, there, current))
    print(f"{raced} of 30 copies dropped as changed meanwhile; stale: {stale}")
    assert stale == [], f"stale copies on the new owner (round, value there, current value): {stale}"
