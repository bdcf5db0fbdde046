"""Hot keys in Python: a ring shows its sketch every key it places, a hot
set spreads a key over its preference list, the near cache serves for its
TTL, and against real memcached spreading balances the requests (the small
run of `py/bench/hot_keys.py`)."""

import json
import pathlib
import subprocess
import sys
import time

import pytest

import shardring

ROOT = pathlib.Path(__file__).resolve().parents[2]


def top_counts(sketch):
    return {key.decode(): requests for key, requests, _ in sketch.top()}


def test_a_watched_ring_shows_its_sketch_every_key_it_places():
    ring = shardring.Ring(["a", "b", "c"])
    sketch = shardring.HotKeys(sample=1)
    ring.watch_hot_keys(sketch)
    ring.get("one")
    ring.get_many(["batch", "batch", "batch"])
    ring.get_n("list", 2)
    ring.get_by_hash(ring.hash_key("by-hash"))  # no key: not observed
    ring.add_node("d")  # still watched after a change
    ring.get("one")
    assert top_counts(sketch) == {"one": 2, "batch": 3, "list": 1}
    assert sketch.sketch_bytes == 2 * 4096 * 8


def test_sketch_settings_out_of_range_are_named():
    for kwargs, says in [({"width": 100}, "width 100"), ({"sample": 3}, "sample 3"), ({"top": 0}, "top 0"),
                         ({"half_life": -1.0}, "half_life -1")]:
        with pytest.raises(shardring.OutOfRangeError, match=says):
            shardring.HotKeys(**kwargs)


def test_a_spread_key_is_read_from_its_preference_list_in_turn_and_written_to_all():
    ring = shardring.Ring([f"n{i}" for i in range(12)])
    observed = [(b"hot", 300.0)]
    loads = {f"n{i}": 75.0 for i in range(12)}
    loads[ring.get("hot")] += 300.0
    writing = shardring.HotSet().advance(ring, observed, loads)
    assert [(k, r, p, g) for k, r, p, g, _ in writing.keys()] == [(b"hot", 6, "writing", 1)]
    spread = shardring.HotSet.from_json(writing.advance(ring, observed, loads).to_json())
    assert spread.epoch == 2 and spread.keys()[0][2] == "spread"
    listed = ring.get_n("hot", 6)
    plans = [spread.plan(ring, "hot") for _ in range(12)]
    assert [p[0] for p in plans] == listed * 2
    assert {(p[1], p[2], tuple(p[3]), p[4]) for p in plans[1:6]} == {(True, listed[0], tuple(listed[1:]), b"hot#hot1")}
    # Writing: the owner is read, the copies are written.
    assert writing.plan(ring, "hot")[:4] == (listed[0], False, listed[0], listed[1:])
    assert spread.plan(ring, "cold") == (ring.get("cold"), False, ring.get("cold"), [], b"")


def test_bad_hot_sets_and_loads_are_named():
    ring = shardring.Ring(["a", "b"])
    with pytest.raises(shardring.InvalidConfigError, match="replicas 1"):
        shardring.HotSet.from_json('{"epoch": 1, "keys": [{"key": "k", "replicas": 1, "phase": "spread", "generation": 1}]}')
    with pytest.raises(shardring.InvalidConfigError, match='"zz", not a node'):
        shardring.HotSet().advance(ring, [], {"zz": 1.0})
    with pytest.raises(shardring.InvalidConfigError, match="bound 0.5"):
        shardring.HotSet().advance(ring, [], {"a": 1.0}, bound=0.5)


def test_the_near_cache_serves_values_for_their_ttl():
    assert shardring.NearCache.default_capacity(12) == 44
    cache = shardring.NearCache(2, 0.05)
    cache.put("k", b"v")
    assert cache.get("k") == b"v" and cache.get("other") is None
    time.sleep(0.06)
    assert cache.get("k") is None
    assert cache.hits_and_misses == (1, 2)
    with pytest.raises(shardring.OutOfRangeError, match="capacity 0"):
        shardring.NearCache(0, 1.0)


def test_a_follower_reports_its_near_cache_in_its_metrics(tmp_path):
    path = tmp_path / "ring.json"
    path.write_text('{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}')
    with shardring.Follower.file(path) as follower:
        assert "near_cache" not in follower.metrics()
        cache = shardring.NearCache(16, 60.0)
        follower.report_near_cache(cache)
        cache.put("hot", b"v")
        for _ in range(3):
            assert cache.get("hot") == b"v"
        assert cache.get("cold") is None
        text = follower.metrics()
        for line in ["shardring_near_cache_hits_total 3", "shardring_near_cache_misses_total 1",
                     "shardring_near_cache_entries 1.0", "shardring_near_cache_capacity 16.0",
                     "shardring_near_cache_hit_ratio 0.75"]:
            assert line + "\n" in text, line


def test_spreading_balances_requests_on_real_memcached(tmp_path):
    """12 memcached, 100,000 keys, 200,000 Zipf requests (s = 0.99 and 1.2)
    from two Python and two Node clients: with the hot set, no server takes
    more than 1.25 times the mean of gets (without, over 1.7)."""
    out = tmp_path / "hot.json"
    subprocess.run([sys.executable, str(ROOT / "py" / "bench" / "hot_keys.py"), "--keys", "100000",
                    "--requests", "200000", "--check", "--min-recall", "0.75", "--json", str(out)],
                   check=True, timeout=600)
    for result in json.loads(out.read_text()):
        assert result["plain"]["max_over_mean"] > 1.5
        assert result["spread"]["max_over_mean"] <= 1.25
        assert abs(result["spread"]["hit_ratio"] - result["plain"]["hit_ratio"]) < 0.01
        assert result["spread"]["copy_reads"] > 0


PREFIX = "/shardring/hot"

# A Node follower that finds hot keys and reports them as argv[3] while it
# looks up keys (one in five is "hot:1"); once its hot set holds "hot:1" in
# phase argv[4], prints that key's plan as one JSON line and exits.
NODE_FOLLOWER = r"""
const { Follower } = require(process.argv[1])
Follower.etcd(process.argv[2], '/shardring/hot', { reportAs: process.argv[3], reportInterval: 0.5, hotKeys: true })
  .then((follower) => {
    let i = 0
    const timer = setInterval(() => {
      for (let n = 0; n < 500; n++, i++) follower.ring.get(i % 5 === 0 ? 'hot:1' : `key-${i}`)
      const entry = follower.hotSet().keys().find((k) => k.key.toString() === 'hot:1')
      if (entry && entry.phase === process.argv[4]) {
        clearInterval(timer)
        const plan = follower.plan('hot:1')
        console.log(JSON.stringify({ ...plan, copyKey: plan.copyKey.toString(), top: follower.hotKeys()[0].key.toString() }))
        follower.close()
      }
    }, 50)
  })
  .catch((error) => { console.error(error); process.exit(3) })
"""


def test_the_fleet_agrees_on_its_hot_set_through_etcd(etcd):
    """Two followers (Python, Node) report their hot keys; `shardring hot
    publish` writes `P/hot` twice (writing, then spread); both plan the hot
    key alike; a value that is not a hot set is rejected and the last set
    kept; deleting the key empties the set."""
    import threading

    from test_fleet import CLI

    for i in range(6):
        etcd.ctl("put", f"{PREFIX}/members/n{i}", json.dumps({"weight": 1}))
    node = subprocess.Popen(["node", "-e", NODE_FOLLOWER, str(ROOT / "node" / "shardring.js"), etcd.url, "node-1", "spread"],
                            stdout=subprocess.PIPE, text=True)
    follower = shardring.Follower.etcd(etcd.url, PREFIX, report_as="py-1", report_interval=0.5, hot_keys=True, timeout=30)
    stop = threading.Event()

    def look_up():
        i = 0
        while not stop.is_set():
            for _ in range(500):
                follower.ring.get("hot:1" if i % 5 == 0 else f"key-{i}")
                i += 1
            time.sleep(0.05)

    worker = threading.Thread(target=look_up)
    worker.start()

    def publish():
        done = subprocess.run([str(CLI), "hot", "publish", "--etcd", etcd.url, "--prefix", PREFIX, "--once"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def wait_for_phase(phase):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            keys = {k: p for k, _, p, _, _ in follower.hot_set().keys()}
            if keys.get(b"hot:1") == phase:
                return
            time.sleep(0.1)
        raise AssertionError(f"hot:1 never reached {phase}: {follower.hot_set().to_json()}")

    try:
        deadline = time.monotonic() + 30
        while "hot:1" not in publish():
            assert time.monotonic() < deadline, "the publisher never spread hot:1"
            time.sleep(0.5)
        wait_for_phase("writing")
        assert follower.hot_keys()[0][0] == b"hot:1"
        read, read_copy, owner, copies, copy_key = follower.plan("hot:1")
        assert (read, read_copy) == (owner, False) and copies and copy_key.startswith(b"hot:1#hot")
        assert "spread" in publish()
        wait_for_phase("spread")
        from test_fleet import families
        metrics = families(follower.metrics())
        phases = {s.labels["phase"]: s.value for s in metrics["shardring_hot_set_keys"].samples}
        assert phases == {"writing": 0, "spread": 1, "leaving": 0}, follower.hot_set().to_json()[:600]
        assert metrics["shardring_hot_set_copies"].samples[0].value == len(copies)
        ranks = {s.labels["rank"]: s.value for s in metrics["shardring_hot_key_requests_per_second"].samples}
        assert ranks["1"] > 0 and len(ranks) <= 10
        out, _ = node.communicate(timeout=60)
        planned = json.loads(out)
        reads = {follower.plan("hot:1")[0] for _ in range(len(copies) + 1)}
        assert reads == {owner, *copies}
        assert (planned["owner"], planned["copies"], planned["copyKey"], planned["top"]) == (owner, copies,
                                                                                              copy_key.decode(), "hot:1")
        shown = subprocess.run([str(CLI), "hot", "show", "--etcd", etcd.url, "--prefix", PREFIX, "--json"],
                               capture_output=True, text=True, timeout=60, check=True)
        assert shardring.HotSet.from_json(shown.stdout).to_json() == follower.hot_set().to_json()
        # Not a hot set: rejected, the last set kept.
        epoch = follower.hot_set().epoch
        events = follower.events()
        etcd.ctl("put", f"{PREFIX}/hot", '{"epoch": 9, "keys": [{"key": "x", "replicas": 0, "phase": "spread", '
                 '"generation": 1}]}')
        rejected = next(e for e in events if e["kind"] == "rejected")
        assert rejected["key"] == f"{PREFIX}/hot"
        assert rejected["message"] == 'not a hot set: hot key "x": replicas 0 must be from 2 to 64'

        assert follower.hot_set().epoch == epoch
        etcd.ctl("del", f"{PREFIX}/hot")
        deadline = time.monotonic() + 30
        while len(follower.hot_set()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert follower.hot_set().epoch == 0 and follower.plan("hot:1")[3] == []
    finally:
        stop.set()
        worker.join()
        follower.close()
        node.kill()
