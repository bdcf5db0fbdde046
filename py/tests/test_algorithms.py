"""Every algorithm through the Python binding: compatibility with the peers'
own recorded placements, parameters, errors and derived rings."""

import json
import pathlib
import pickle

import pytest

import shardring

PEER = json.loads(
    (pathlib.Path(__file__).parents[2] / "testdata" / "peer" / "libmemcached-ketama.json").read_text(encoding="utf-8")
)


def memcached_servers():
    return {f"{s['host']}:{s['port']}": s["weight"] for s in PEER["servers"]}


@pytest.mark.parametrize(("algorithm", "cases"), [("ketama", "cases"), ("ketama-spy", "spy_cases")])
def test_ketama_places_like_libmemcached(algorithm, cases):
    ring = shardring.Ring(memcached_servers(), algorithm=algorithm)
    keys = [case["key"] for case in PEER[cases]]
    want = [f"{case['server']}:11211" for case in PEER[cases]]
    assert ring.get_many(keys) == want
    assert [ring.get(k) for k in keys] == want
    if algorithm == "ketama":
        assert [ring.hash_key(k) for k in keys] == [case["key_hash"] for case in PEER[cases]]


def test_libketama_documented_example():
    ring = shardring.Ring({"127.0.0.1:11211": 600, "127.0.0.1:11212": 400}, algorithm="libketama")
    assert ring.point_count == 320
    assert ring.hash_key("test") == 3446378249
    assert ring.get("test") == "127.0.0.1:11211"


def test_nginx_and_slots_hash_like_their_peers():
    nginx = shardring.Ring(["127.0.0.1:8080", "unix:/tmp/app.sock"], algorithm="nginx")
    assert nginx.hash_key("123456789") == 0xCBF43926
    slots = shardring.Ring(["a", "b", "c"], algorithm="slots")
    assert slots.hash_key("somekey") == 11058
    assert slots.hash_key("foo{hash_tag}") == 2515
    assert slots.get("{user1000}.following") == slots.get("{user1000}.followers")
    assert [slots.get_by_hash(s) for s in (0, 5460, 5461, 10922, 10923, 16383)] == ["a", "a", "b", "b", "c", "c"]
    with pytest.raises(shardring.HashOutOfRangeError, match="16384"):
        slots.get_by_hash(16384)


@pytest.mark.parametrize("algorithm", shardring.ALGORITHMS)
def test_every_algorithm_derives_and_round_trips(algorithm):
    ids = [f"10.0.0.{i}:11211" for i in range(1, 6)]
    ring = shardring.Ring(ids, algorithm=algorithm)
    assert ring.algorithm == algorithm
    grown = ring.with_node("10.0.0.9:11211")
    assert grown.algorithm == algorithm and len(grown) == 6
    keys = [f"key-{i}" for i in range(2000)]
    before, after = ring.get_many(keys), grown.get_many(keys)
    moved = [(a, b) for a, b in zip(before, after) if a != b]
    # Every algorithm sends keys to the new node; only jump's append and
    # the others' add move about 1/6 of them (Maglev a little more). Envoy's
    # and gRPC's rings shrink every host's points as one joins (points per
    # host depend on the host count, envoyproxy/envoy#22558), and Maglev
    # tables refill, so keys also move between old nodes there, as in the peers.
    ring_hash = algorithm.endswith("ring-hash")
    assert all(b == "10.0.0.9:11211" for _, b in moved) or ring_hash or algorithm.endswith("maglev")
    assert 0.10 < len(moved) / len(keys) < (0.35 if ring_hash else 0.26), f"{algorithm} moved {len(moved)}"
    for copy in (shardring.Ring.from_json(grown.to_json()), pickle.loads(pickle.dumps(grown))):
        assert copy.algorithm == algorithm and copy.fingerprint == grown.fingerprint
        assert copy.get_many(keys) == after
    assert sorted(grown.get_n("k", 9)) == sorted(grown)
    assert sum(grown.ownership().values()) == pytest.approx(1.0)


def test_parameters_and_errors_name_the_value():
    maglev = shardring.Ring(["a", "b"], algorithm="maglev", table_size=251)
    assert maglev.table_size == 251 and maglev.vnodes is None
    assert shardring.Ring(["a"]).vnodes == 160 and shardring.Ring(["a"]).table_size is None
    with pytest.raises(shardring.InvalidConfigError, match="65535"):
        shardring.Ring(["a"], algorithm="maglev", table_size=65535)
    with pytest.raises(shardring.InvalidConfigError, match='"chord"'):
        shardring.Ring(["a"], algorithm="chord")
    with pytest.raises(shardring.InvalidConfigError, match="vnodes"):
        shardring.Ring(["a"], algorithm="ketama", vnodes=100)
    with pytest.raises(shardring.InvalidNodeError, match="whole numbers"):
        shardring.Ring({"a": 1.5}, algorithm="nginx")
    with pytest.raises(shardring.InvalidNodeError, match="jump has no weights"):
        shardring.Ring({"a": 1, "b": 2}, algorithm="jump")
    with pytest.raises(shardring.InvalidNodeError, match="99999"):
        shardring.Ring(["10.0.0.1:99999"], algorithm="ketama")
    with pytest.raises(shardring.InvalidConfigError, match="different algorithms"):
        shardring.diff(shardring.Ring(["a"]), shardring.Ring(["a"], algorithm="jump"))


def test_integer_arguments_name_themselves():
    with pytest.raises(ValueError, match="table_size must be an int from 0 to 4294967295, got 4294967296"):
        shardring.Ring(["a"], algorithm="maglev", table_size=2**32)
    with pytest.raises(ValueError, match="vnodes .* got -1"):
        shardring.Ring(["a"], vnodes=-1)
    with pytest.raises(TypeError, match="table_size must be an int, not bool"):
        shardring.Ring(["a"], algorithm="maglev", table_size=True)
    with pytest.raises(shardring.HashOutOfRangeError, match="2\\^64"):
        shardring.Ring(["a"]).get_by_hash(2**64)
    with pytest.raises(shardring.HashOutOfRangeError):
        shardring.Ring(["a"]).get_by_hash(-1)


def test_the_load_balancers_parameters_through_the_constructor():
    envoy = shardring.Ring([f"127.0.0.1:{p}" for p in range(90, 96)], algorithm="envoy-ring-hash", min_ring_size=12)
    # Envoy's ring_hash_lb_test.cc, Basic: h = 0 and the wrap go to :94, a point to itself.
    assert envoy.ring_sizes == (12, 8388608) and envoy.hash_function == "xx_hash" and envoy.point_count == 12
    assert [envoy.get_by_hash(h) for h in (0, 2**64 - 1, 3551244743356806947)] == ["127.0.0.1:94", "127.0.0.1:94", "127.0.0.1:95"]
    grpc = shardring.Ring({"b:1": 1, "a:1": 2}, algorithm="grpc-ring-hash", endpoint_order="by_key", max_ring_size=10**6)
    assert grpc.ring_sizes == (1024, 4096) and grpc.endpoint_order == "by_key"
    haproxy = shardring.Ring({"web1": 1, "web2": 2}, algorithm="haproxy", hash_function="djb2", haproxy_ids={"web2": 7})
    assert (haproxy.hash_function, haproxy.avalanche, haproxy.server_key, haproxy.haproxy_ids) == ("djb2", False, "id", {"web2": 7})
    assert shardring.Ring.from_json(haproxy.to_json()) == haproxy
    assert "hash_function='djb2'" in repr(haproxy) and "avalanche=False" in repr(haproxy)
    with pytest.raises(TypeError, match="avalanche must be a bool"):
        shardring.Ring(["a"], algorithm="haproxy", avalanche=1)
    with pytest.raises(shardring.InvalidConfigError, match=r"minimum_ring_size \(10\) > maximum_ring_size \(5\)"):
        shardring.Ring(["a:1"], algorithm="envoy-ring-hash", min_ring_size=10, max_ring_size=5)
    with pytest.raises(shardring.InvalidConfigError, match="haproxy ids do not apply"):
        shardring.Ring(["a"], haproxy_ids={"a": 1})
    with pytest.raises(shardring.InvalidConfigError, match="murmur_hash_2"):
        shardring.Ring(["a:1"], algorithm="grpc-ring-hash", hash_function="murmur_hash_2")
    with pytest.raises(shardring.InvalidConfigError, match="same id 3"):
        shardring.Ring(["a", "b"], algorithm="haproxy", haproxy_ids={"a": 3, "b": 3})
    with pytest.raises(shardring.InvalidNodeError, match="257"):
        shardring.Ring({"a": 257}, algorithm="haproxy")


def test_jumpback_matches_hash4j_and_grows_like_jump():
    ring = shardring.Ring([f"bucket-{i:04}" for i in range(1000)], algorithm="jumpback")
    # hash4j's jumpBackHashSplitMix64() on 1,000 buckets (docs/algorithms.md, jumpback: hash4j's values).
    assert [ring.get_by_hash(h) for h in (0, 1, 2**64 - 1, 0x9E3779B97F4A7C15)] == [
        "bucket-0313", "bucket-0492", "bucket-0288", "bucket-0618"]
    keys = [f"key-{i}" for i in range(5000)]
    grown = ring.with_node("bucket-1000")
    moved = [(a, b) for a, b in zip(ring.get_many(keys), grown.get_many(keys)) if a != b]
    assert all(b == "bucket-1000" for _, b in moved) and 0 < len(moved) < 20
    with pytest.raises(shardring.InvalidNodeError, match="jumpback has no weights"):
        shardring.Ring({"a": 1, "b": 2}, algorithm="jumpback")


def test_memento_removes_any_node_and_carries_its_history():
    ids = [f"shard-{i}" for i in range(10)]
    jumpback, ring = shardring.Ring(ids, algorithm="jumpback"), shardring.Ring(ids, algorithm="memento")
    keys = [f"key-{i}" for i in range(5000)]
    before = ring.get_many(keys)
    assert before == jumpback.get_many(keys)  # no removals: jumpback's placement
    ring.remove_node("shard-3")
    ring.remove_node("shard-7")
    after = ring.get_many(keys)
    assert all(a == b or a in ("shard-3", "shard-7") for a, b in zip(before, after))
    assert ring.removed_buckets == [3, 7] and ring.buckets["shard-8"] == 8
    assert "removed_buckets=[3, 7]" in repr(ring)
    # The history travels in the config; a node list alone would forget it.
    copy = shardring.Ring.from_json(ring.to_json())
    assert copy == ring and copy.get_many(keys) == after
    rebuilt = shardring.Ring(list(ring), algorithm="memento", removed_buckets=[3, 7], buckets=ring.buckets)
    assert rebuilt == ring and rebuilt.get_many(keys) == after
    assert pickle.loads(pickle.dumps(ring)).get_many(keys) == after
    # Re-adding in reverse order restores the placement; the newcomer takes bucket 7.
    ring.add_node("fresh")
    assert ring.buckets["fresh"] == 7 and ring.removed_buckets == [3]
    # The failover order: the second choice is where the key goes when its owner leaves.
    owner, second = ring.get_n("user:42", 2)
    assert ring.without_node(owner).get("user:42") == second
    with pytest.raises(shardring.InvalidConfigError, match="removed_buckets lists bucket 1 twice"):
        shardring.Ring(["a", "b"], algorithm="memento", removed_buckets=[1, 1])
    with pytest.raises(shardring.InvalidConfigError, match="bucket 9 is outside the buckets 0..2"):
        shardring.Ring(["a", "b"], algorithm="memento", buckets={"a": 9})
    with pytest.raises(shardring.InvalidConfigError, match=r"removed_buckets \(\[.*\]\) does not apply"):
        shardring.Ring(["a"], removed_buckets=[0])
    # The order is the history: strings, bytes and unordered collections are refused.
    for unordered in ("0", b"\x00", bytearray(b"\x00"), {0}, frozenset({0}), {0: 1}):
        with pytest.raises(TypeError, match=f"removed_buckets must be a list of ints in removal order, not {type(unordered).__name__}"):
            shardring.Ring(["a", "b"], algorithm="memento", removed_buckets=unordered)
    assert shardring.Ring(["a", "b"], algorithm="memento", removed_buckets=(0,)).removed_buckets == [0]
    with pytest.raises(shardring.InvalidNodeError, match="memento has no weights"):
        shardring.Ring({"a": 2}, algorithm="memento")
    assert shardring.Ring(["a"]).buckets is None and shardring.Ring(["a"]).removed_buckets is None


def test_rendezvous_scores_by_integers_by_default_and_keeps_the_float_score():
    weights = {"a": 1, "b": 2, "c": 1, "d": 3}
    integer, float_ = shardring.Ring(weights, algorithm="rendezvous"), shardring.Ring(weights, algorithm="rendezvous", score="float")
    assert (integer.score, float_.score) == ("integer", "float")
    keys = [f"key-{i}" for i in range(20000)]
    # The two rank alike but for scores within about 2^-50 of each other.
    assert integer.get_many(keys) == float_.get_many(keys)
    assert integer.fingerprint != float_.fingerprint and "score='float'" in repr(float_)
    assert '"score"' not in integer.to_json() and '"score": "float"' in float_.to_json()
    assert shardring.Ring.from_json(float_.to_json()) == float_
    with pytest.raises(shardring.InvalidConfigError, match='unknown score "exact"'):
        shardring.Ring(weights, algorithm="rendezvous", score="exact")
    with pytest.raises(shardring.InvalidConfigError, match="score .*does not apply"):
        shardring.Ring(weights, score="float")
    assert shardring.Ring(["a"]).score is None
