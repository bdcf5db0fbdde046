"""shardring.Follower on a real etcd and on a config file: the ring follows
joins, leaves and weight changes, lookups and trackers work on it, events
arrive, and bad records are reported by key."""

import json
import os
import threading
import time

import pytest

import shardring
from shardring import Follower, LoadTracker, Ring

PREFIX = "/shardring/test"


def member(etcd, id, record):
    etcd.ctl("put", f"{PREFIX}/members/{id}", json.dumps(record) if not isinstance(record, str) else record)
    return int(json.loads(etcd.ctl("get", f"{PREFIX}/members/{id}", "-w", "json").stdout)["header"]["revision"])


def expected(nodes, **options):
    return Ring([shardring.Node(id, w) for id, w in sorted(nodes.items())], **options)


def test_the_ring_follows_members_and_lookups_work_on_it(etcd):
    member(etcd, "a", {"weight": 1})
    with Follower.etcd(etcd.url, PREFIX) as follower:
        ring = follower.ring
        assert list(ring) == ["a"] and follower.revision > 0
        changes = []
        follower.on_change(changes.append)
        tracker = LoadTracker(ring, 0.25)
        revision = member(etcd, "b", {"weight": 2, "zone": "east"})
        assert follower.wait_for_revision(revision, timeout=5) >= revision
        want = Ring([shardring.Node("a", 1.0), shardring.Node("b", 2.0, "east")])
        assert ring == want and follower.fingerprint == want.fingerprint
        keys = [f"key-{i}" for i in range(2000)]
        assert ring.get_many(keys) == want.get_many(keys)
        assert {tracker.acquire(k).node for k in keys[:200]} == {"a", "b"}
        etcd.ctl("del", f"{PREFIX}/members/a")
        deadline = time.monotonic() + 5
        while "a" in ring and time.monotonic() < deadline:
            time.sleep(0.01)
        assert list(ring) == ["b"]
        assert all(tracker.acquire(k).node == "b" for k in keys[:100]), "the tracker follows the ring"
        # Callbacks run on the follower's thread after the ring is swapped in,
        # so the second epoch's event may still be on its way.
        def changed_epochs():
            return [c for c in changes if c["kind"] == "epoch" and c["changed"]]

        deadline = time.monotonic() + 5
        while len(changed_epochs()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        epochs = changed_epochs()
        assert len(epochs) >= 2 and epochs[0]["flows"] and 0 < epochs[0]["moved_share"] < 1
        with pytest.raises(TypeError, match="belongs to a Follower"):
            ring.add_node("x")
        status = follower.status()
        assert status["connected"] and status["stale_for"] == 0.0 and status["revision"] == follower.revision


def test_bad_records_are_reported_by_key_and_the_rest_is_built(etcd):
    member(etcd, "good", {"weight": 1})
    with Follower.etcd([etcd.url], PREFIX, timeout=5.0) as follower:
        events = follower.events(timeout=5)
        member(etcd, "bad", {"weight": 1, "colour": "red"})
        rejected = next(e for e in events if e["kind"] == "rejected")
        assert rejected["key"] == f"{PREFIX}/members/bad" and "colour" in rejected["message"]
        assert list(follower.ring) == ["good"]


def test_a_callback_that_raises_does_not_stop_the_follower(etcd, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", reported.append)
    member(etcd, "a", {"weight": 1})
    with Follower.etcd(etcd.url, PREFIX) as follower:
        def explode(event):
            raise RuntimeError("callback failure")
        follower.on_change(explode)
        follower.wait_for_revision(member(etcd, "b", {"weight": 1}))
        follower.wait_for_revision(member(etcd, "c", {"weight": 1}))
        assert list(follower.ring) == ["a", "b", "c"]
    assert reported and all(isinstance(r.exc_value, RuntimeError) for r in reported)


def test_readers_on_other_threads_see_whole_rings(etcd):
    for i in range(20):
        member(etcd, f"n{i:02}", {"weight": 1})
    keys = [f"k{i}" for i in range(64)]
    # What every ring of n00..n19 up to n00..n39 answers: a reader must see one of them.
    wholes = {tuple(expected({f"n{i:02}": 1.0 for i in range(size)}).get_many(keys)) for size in range(20, 41)}
    with Follower.etcd(etcd.url, PREFIX) as follower:
        ring, stop, seen = follower.ring, threading.Event(), []

        def read():
            while not stop.is_set():
                seen.append(tuple(ring.get_many(keys)))

        readers = [threading.Thread(target=read) for _ in range(2)]
        for r in readers:
            r.start()
        for i in range(20, 40):
            follower.wait_for_revision(member(etcd, f"n{i:02}", {"weight": 1}))
        stop.set()
        for r in readers:
            r.join()
        assert len(list(ring)) == 40 and len(seen) > 20
        assert set(seen) <= wholes, "a reader saw a placement no whole ring gives"


def test_unreachable_etcd_and_bad_arguments():
    with pytest.raises(TimeoutError, match="127.0.0.1:1"):
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=0.5)
    with pytest.raises(shardring.InvalidConfigError) as raised:
        Follower.etcd("nowhere", PREFIX)
    assert raised.value.code == "RING_INVALID_CONFIG"
    with pytest.raises(TypeError):
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=True)
    with pytest.raises(TypeError):
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=None)


def test_the_file_follower(tmp_path):
    path = tmp_path / "ring.json"

    def write(config):
        temporary = tmp_path / "ring.json.tmp"
        temporary.write_text(json.dumps(config))
        os.replace(temporary, path)

    write({"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]})
    with Follower.file(str(path)) as follower:
        assert follower.revision == 1 and list(follower.ring) == ["a", "b"]
        write({"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}]})
        assert follower.wait_for_revision(2) == 2
        assert list(follower.ring) == ["a", "b", "c"]
