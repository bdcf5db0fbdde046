"""shardring.Transition: read and write sets while members warm up or
drain, and a Follower's transition over etcd."""

import json

import pytest

import shardring
from shardring import Follower, Ring, Transition

KEYS = [f"key-{i}" for i in range(5000)]


def test_warming_and_draining_members():
    config = {"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "w", "state": "warming"},
                                              {"id": "d", "state": "draining"}]}
    t = Transition.from_json(json.dumps(config))
    old, new = Ring(["a", "b", "d"]), Ring(["a", "b", "w"])
    read = t.read_ring
    assert list(read) == ["a", "b"] and t.old_ring == old and t.new_ring == new
    for key in KEYS:
        owner = read.get(key)
        reads, writes = t.read_nodes(key), t.write_nodes(key)
        assert reads == ([owner, "d"] if old.get(key) == "d" else [owner])
        assert writes == ([owner, "w"] if new.get(key) == "w" else [owner])
    assert (t.state("w"), t.state("d"), t.state("a"), t.state("zz")) == ("warming", "draining", "active", None)
    assert not t.is_steady and t.fingerprint != Ring(["a", "b"]).fingerprint
    moves = t.moves()
    assert all(source == "d" or target == "w" for source, target in moves.flows)
    between = Transition.between(old, new)
    assert between.fingerprint == t.fingerprint
    with pytest.raises(shardring.InvalidConfigError, match='"w" is warming'):
        Ring.from_json(json.dumps(config))
    with pytest.raises(shardring.InvalidConfigError):
        Transition.between(Ring(["a"]), Ring(["a"], seed=1))


PREFIX = "/shardring/transition"


def test_a_follower_follows_member_states(etcd):
    for id in ("a", "b"):
        etcd.ctl("put", f"{PREFIX}/members/{id}", '{"weight": 1}')
    with Follower.etcd(etcd.url, PREFIX) as follower:
        assert follower.transition.is_steady
        assert all(follower.write_nodes(k) == [follower.ring.get(k)] for k in KEYS[:500])
        etcd.ctl("put", f"{PREFIX}/members/w", '{"weight": 1, "state": "warming"}')
        revision = int(json.loads(etcd.ctl("get", f"{PREFIX}/members/w", "-w", "json").stdout)["header"]["revision"])
        follower.wait_for_revision(revision)
        assert list(follower.ring) == ["a", "b"], "a warming member takes no reads"
        new = Ring(["a", "b", "w"])
        assert all(follower.write_nodes(k)[-1] == new.get(k) for k in KEYS[:2000])
        assert any(follower.write_nodes(k) == [follower.ring.get(k), "w"] for k in KEYS[:2000])
        assert follower.transition.state("w") == "warming"
