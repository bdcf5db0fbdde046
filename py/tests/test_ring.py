import collections
import json
import math
import pickle
import types

import pytest

import shardring
from shardring import EmptyRingError, InvalidConfigError, InvalidNodeError, Node, Ring, RingError, UnknownNodeError

KEYS = [f"key-{i}" for i in range(5000)]


def test_str_and_bytes_like_keys_land_together():
    ring = Ring([f"node-{i}" for i in range(7)])
    for key in ["abc", "café", "🔑", "", "键", "\x00"]:
        data = key.encode("utf-8")
        owners = {ring.get(key), ring.get(data), ring.get(bytearray(data)), ring.get(memoryview(data))}
        assert len(owners) == 1


@pytest.mark.parametrize("key", [1, 1.5, None, ["a"], ("a",), object()])
def test_other_key_types_raise_type_error(key):
    ring = Ring(["a", "b"])
    with pytest.raises(TypeError, match="key must be str or a bytes-like object"):
        ring.get(key)
    with pytest.raises(TypeError):
        ring.get_many(["ok", key])
    with pytest.raises(TypeError):
        shardring.hash_key(key)


def test_uhashring_str_of_bytes_pitfall_does_not_apply():
    # uhashring hashed b"abc" as the text "b'abc'"; here the bytes are the key.
    ring = Ring([f"n{i}" for i in range(50)])
    assert ring.hash_key(b"abc") == ring.hash_key("abc") != ring.hash_key("b'abc'")


def test_lone_surrogates_are_invalid_utf8_everywhere():
    # One rule in every binding: a str with a lone surrogate has no UTF-8
    # bytes, so it is RING_INVALID_UTF8 (Node throws the same code), never
    # silently replaced.
    ring = Ring(["a", "b"])
    calls = [
        lambda: ring.get("\ud800"),
        lambda: ring.get_n("k\udfff", 2),
        lambda: ring.get_many(["ok", "\ud800"]),
        lambda: ring.hash_key("\ud800"),
        lambda: shardring.hash_key("\ud800"),
        lambda: Ring(["\udcff"]),
        lambda: Ring([Node("a", 1.0, "z\ud800")]),
        lambda: ring.without_node("\ud800"),
        lambda: shardring.LoadTracker(ring, 0.5).acquire("\ud800"),
    ]
    for call in calls:
        with pytest.raises(shardring.InvalidUtf8Error) as raised:
            call()
        assert raised.value.code == "RING_INVALID_UTF8"
        assert isinstance(raised.value, UnicodeError) and isinstance(raised.value, ValueError)
    with pytest.raises(shardring.InvalidUtf8Error, match=r"key '\\ud800' is not valid UTF-8"):
        ring.get("\ud800")
    # The same text as bytes places fine: surrogatepass gives the bytes a caller chose.
    assert ring.get("\ud800".encode("utf-8", "surrogatepass")) in ("a", "b")


def test_none_and_bools_are_never_values():
    # Leave a parameter out for its default; None and True are type errors.
    for options in ({"vnodes": None}, {"seed": None}, {"table_size": None}, {"algorithm": None},
                    {"vnodes": True}, {"seed": False}):
        with pytest.raises(TypeError, match=next(iter(options))):
            Ring(["a"], **options)
    for nodes in ([Node("a", True)], [Node("a", None)], {"a": True}, {"a": None}, [Node(None)]):
        with pytest.raises(TypeError):
            Ring(nodes)
    ring = Ring(["a", "b"])
    for call in (lambda: ring.get_n("k", True), lambda: ring.get_n("k", None), lambda: ring.with_weight("a", True),
                 lambda: ring.set_weight("a", None), lambda: ring.get_by_hash(True), lambda: shardring.hash_key("k", None),
                 lambda: shardring.hash_key("k", True), lambda: shardring.LoadTracker(ring, True)):
        with pytest.raises(TypeError):
            call()
    # Left out, every parameter takes its default; a zone of None is no zone.
    assert Ring(["a"]).fingerprint == Ring(["a"], algorithm="ring", vnodes=160, seed=0).fingerprint
    assert Ring([Node("a", 1.0, None)]).nodes == [Node("a")]
    assert shardring.hash_key("k") == shardring.hash_key("k", 0)
    assert Ring(["a"], algorithm="maglev").table_size == 65537


def test_nodes_as_ids_dict_or_node_objects():
    a = Ring(["x", "y"])
    b = Ring({"x": 1.0, "y": 1.0})
    c = Ring([Node("x"), Node("y", 1.0)])
    d = Ring(iter(["x", "y"]))
    assert a.fingerprint == b.fingerprint == c.fingerprint == d.fingerprint
    assert Ring(types.MappingProxyType({"x": 3.0, "y": 0.0})).nodes == [Node("x", 3.0), Node("y", 0.0)]
    assert Ring(collections.UserDict({"x": 3.0})).nodes == [Node("x", 3.0)]
    zoned = Ring([Node("x", 2.0, "east"), "y"])
    assert zoned.nodes == [Node("x", 2.0, "east"), Node("y", 1.0, None)]
    with pytest.raises(TypeError, match="a node must be a str id or a shardring.Node, not int"):
        Ring(["x", 3])
    with pytest.raises(TypeError, match="not a single str"):
        Ring("xy")


def test_weights_and_drained_nodes():
    ring = Ring({"small": 1.0, "big": 3.0, "drained": 0.0}, vnodes=100)
    counts = {"small": 0, "big": 0, "drained": 0}
    for owner in ring.get_many(KEYS * 4):
        counts[owner] += 1
    assert counts["drained"] == 0
    shares = ring.ownership()
    assert shares["drained"] == 0.0
    assert math.isclose(sum(shares.values()), 1.0)
    for node in ("small", "big"):
        assert abs(counts[node] / 20000 - shares[node]) < 0.02
    assert sorted(ring.get_n("k", 5)) == ["big", "small"]


def test_get_many_matches_get_and_accepts_any_iterable():
    ring = Ring([f"n{i}" for i in range(10)])
    assert ring.get_many(KEYS) == [ring.get(k) for k in KEYS]
    assert ring.get_many(tuple(KEYS[:10])) == ring.get_many(k for k in KEYS[:10])
    assert ring.get_many([]) == []
    with pytest.raises(TypeError, match="not a single str"):
        ring.get_many("abc")


def test_get_by_hash_agrees_with_get():
    ring = Ring(["a", "b", "c"], seed=9)
    for key in KEYS[:200]:
        assert ring.get_by_hash(ring.hash_key(key)) == ring.get(key)
        assert ring.hash_key(key) == shardring.hash_key(key, 9)
    with pytest.raises(shardring.HashOutOfRangeError):
        ring.get_by_hash(2**64)


def test_derivation_is_immutable_and_minimal():
    ring = Ring(["a", "b", "c"])
    grown = ring.with_node(Node("d", 1.0, "west"))
    assert list(ring) == ["a", "b", "c"] and list(grown) == ["a", "b", "c", "d"]
    for key in KEYS:
        assert grown.get(key) in (ring.get(key), "d")
    assert grown.without_node("d").fingerprint == ring.fingerprint
    heavier = ring.with_weight("a", 2.0)
    for key in KEYS:
        assert heavier.get(key) in (ring.get(key), "a")


def test_mutating_conveniences():
    ring = Ring(["a", "b"])
    before = {k: ring.get(k) for k in KEYS}
    ring.add_node("c")
    assert "c" in ring and len(ring) == 3
    moved = [k for k in KEYS if ring.get(k) != before[k]]
    assert moved and all(ring.get(k) == "c" for k in moved)
    ring.set_weight("c", 0.0)
    assert all(ring.get(k) == before[k] for k in KEYS)
    ring.remove_node("c")
    assert list(ring) == ["a", "b"]


def test_diff_is_exact():
    old = Ring(["a", "b", "c"])
    new = old.with_node("d")
    d = shardring.diff(old, new)
    assert math.isclose(d.moved_share, new.ownership()["d"], rel_tol=1e-12)
    assert set(d.flows) == {("a", "d"), ("b", "d"), ("c", "d")}
    assert math.isclose(sum(d.flows.values()), d.moved_share, rel_tol=1e-12)
    for key in KEYS:
        h = old.hash_key(key)
        inside = [arc for arc in d.arcs if arc[0] <= h <= arc[1]]
        if old.get(key) != new.get(key):
            assert inside and inside[0][2:] == (old.get(key), "d")
        else:
            assert not inside
    assert repr(d).startswith("Diff(moved_share=")
    with pytest.raises(InvalidConfigError, match="different seeds"):
        shardring.diff(old, Ring(["a"], seed=1))
    with pytest.raises(EmptyRingError):
        shardring.diff(old, Ring([]))


def test_balance_statistics():
    ring = Ring({"a": 1.0, "b": 3.0})
    b = ring.balance(KEYS)
    assert b.keys == len(KEYS) and sum(b.counts.values()) == len(KEYS)
    assert b.by_node.max_over_mean > 1.3  # b holds about 3x a
    assert b.by_weight.max_over_mean < b.by_node.max_over_mean
    assert b.by_weight.cv >= 0


def test_json_pickle_and_repr_round_trip():
    ring = Ring([Node("a", 1.5, "east"), "b"], vnodes=40, seed=2**63 + 5)
    again = Ring.from_json(ring.to_json())
    assert again.fingerprint == ring.fingerprint and again.nodes == ring.nodes
    config = json.loads(ring.to_json())
    assert config["seed"] == 2**63 + 5 and config["nodes"][0]["zone"] == "east"
    unpickled = pickle.loads(pickle.dumps(ring))
    assert unpickled.fingerprint == ring.fingerprint
    assert [unpickled.get(k) for k in KEYS[:100]] == [ring.get(k) for k in KEYS[:100]]
    assert repr(ring) == (
        "Ring([Node('a', 1.5, zone='east'), Node('b', 1.0)], algorithm='ring', vnodes=40, "
        f"seed=9223372036854775813, points=100, fingerprint={ring.fingerprint:#018x})"
    )
    many = Ring([f"n{i}" for i in range(10)], algorithm="jump")
    assert repr(many).startswith("Ring([Node('n0', 1.0), ") and ", ... 2 more], algorithm='jump', seed=0, " in repr(many)


# Keys for comparing placement: many ordinary ones, and "key-19", whose point
# two ketama servers share (see the ketama tie pair below).
PLACED_KEYS = [f"key-{i}" for i in range(3000)]
SERVERS = [f"10.0.0.{i}:11211" for i in range(1, 7)]


def placement(ring):
    """Everything a ring answers for a key: the owner and the preference list."""
    return [(ring.get(key), ring.get_n(key, 3)) for key in PLACED_KEYS]


def ring_pairs(algorithm):
    """(why, a, b, same): pairs of rings of one algorithm; `same` when they are
    one config built two ways (so they must be equal), else None (equal or
    not, as their placement decides)."""
    build = lambda nodes, **options: Ring(nodes, algorithm=algorithm, **options)  # noqa: E731
    a = build(SERVERS)
    yield "a list and a dict of its weights", a, build({id: 1.0 for id in SERVERS}), True
    yield "ids and Node objects", a, build([Node(id) for id in SERVERS]), True
    yield "a JSON round trip", a, Ring.from_json(a.to_json()), True
    yield "a pickle round trip", a, pickle.loads(pickle.dumps(a)), True
    yield "the nodes reversed", a, build(SERVERS[::-1]), None
    yield "the nodes rotated", a, build(SERVERS[1:] + SERVERS[:1]), None
    yield "the first two swapped", a, build([SERVERS[1], SERVERS[0], *SERVERS[2:]]), None
    yield "a node fewer", a, build(SERVERS[:-1]), None
    yield "a node added by derivation", a, build(SERVERS[:-1]).with_node(SERVERS[-1]), None
    yield "a node added in place", a, _added_in_place(build(SERVERS[:-1]), SERVERS[-1]), None
    try:
        yield "a weight doubled", a, build([Node(SERVERS[0], 2.0), *SERVERS[1:]]), None
    except InvalidNodeError:  # jump, jumpback and memento have no weights
        pass
    try:
        yield "another seed", a, build(SERVERS, seed=1), None
    except InvalidConfigError:  # the peers' modes have no seed
        pass
    yield "zones given", a, build([Node(id, 1.0, f"z{i % 2}") for i, id in enumerate(SERVERS)]), None
    # Where order places keys only on a tie, two servers sharing a point.
    tied = TIED_PAIRS.get(algorithm)
    if tied:
        yield "a tied pair reversed", build(tied), build(tied[::-1]), None


# Pairs of servers that share a point (testdata/bad-inputs.json's tie rows:
# ketama's key-19, libketama's key-452, nginx's key-202 land on it).
TIED_PAIRS = {
    "ketama": ["10.1.4.18", "10.1.8.1"],
    "libketama": ["10.2.2.52:11211", "10.2.0.86:11211"],
    "nginx": ["10.3.3.35:80", "10.3.2.173:80"],
}


def _added_in_place(ring, node):
    ring.add_node(node)
    return ring


@pytest.mark.parametrize("algorithm", shardring.ALGORITHMS)
def test_rings_are_equal_when_they_place_identically(algorithm):
    """== is the fingerprint's promise: equal rings place every key on the same
    owner and preference list; rings that place any key differently are
    unequal. Checked by placement, for every algorithm, on pairs that differ
    by node order (which places keys for some algorithms only), a node, a
    weight, the seed and zones, and on one config built several ways."""
    placing_differently = 0
    for why, a, b, same in ring_pairs(algorithm):
        equal = a == b
        assert equal is (not (a != b)), why
        placed_alike = placement(a) == placement(b)
        assert placed_alike or not equal, f"{algorithm}, {why}: equal rings place keys differently"
        if same:
            assert equal and placed_alike, f"{algorithm}, {why}: one config, built two ways"
        placing_differently += not placed_alike
    # Not vacuous: pairs that place differently were compared for every algorithm.
    assert placing_differently >= 2, algorithm


def test_ring_equality_sees_ties_order_and_types():
    # Where node order breaks a tie, the reversed ring places "key-19" on the
    # other server (libmemcached's rule), so the rings are unequal.
    listed = Ring(["10.1.4.18", "10.1.8.1"], algorithm="ketama")
    reversed_ = Ring(["10.1.8.1", "10.1.4.18"], algorithm="ketama")
    assert listed.get("key-19") != reversed_.get("key-19") and listed != reversed_
    # Where node order places every key (jump numbers buckets by position), too.
    jump = Ring(SERVERS, algorithm="jump")
    assert placement(jump) != placement(Ring(SERVERS[::-1], algorithm="jump"))
    assert jump != Ring(SERVERS[::-1], algorithm="jump")
    a, b = Ring(["x", "y"]), Ring({"y": 1.0, "x": 1.0})
    assert a == b and placement(a) == placement(b)
    a.add_node("z")
    assert a != b and placement(a) != placement(b)
    b.add_node("z")
    assert a == b and placement(a) == placement(b)
    assert a != "not a ring" and not (a == "not a ring")
    # Mutable, so not hashable.
    with pytest.raises(TypeError):
        hash(a)


def test_version_and_error_codes():
    assert shardring.__version__.count(".") == 2 and shardring.__version__[0].isdigit()
    with pytest.raises(EmptyRingError) as raised:
        Ring([]).get("k")
    assert raised.value.code == "RING_EMPTY_RING"
    with pytest.raises(shardring.InvalidNodeError) as raised:
        Ring(["a", "a"])
    assert raised.value.code == "RING_DUPLICATE_ID"
    with pytest.raises(shardring.InvalidConfigError) as raised:
        Ring(["a"], vnodes=0)
    assert raised.value.code == "RING_ZERO_VNODES"


@pytest.mark.parametrize(
    ("nodes", "kwargs", "error", "builtin", "text"),
    [
        (["a", "a"], {}, InvalidNodeError, ValueError, '"a"'),
        ([""], {}, InvalidNodeError, ValueError, "position 0"),
        ({"a": math.nan}, {}, InvalidNodeError, ValueError, "NaN"),
        ({"a": -1.0}, {}, InvalidNodeError, ValueError, "-1"),
        ({"a": math.inf}, {}, InvalidNodeError, ValueError, "inf"),
        ([Node("a", 1.0, "")], {}, InvalidNodeError, ValueError, "zone"),
        ({"a": 1e18}, {}, InvalidConfigError, ValueError, "limit"),
        (["a"], {"vnodes": 0}, InvalidConfigError, ValueError, "vnodes"),
        (["a"], {"vnodes": 10**9}, InvalidConfigError, ValueError, "limit"),
    ],
)
def test_bad_input_raises_typed_errors(nodes, kwargs, error, builtin, text):
    with pytest.raises(error, match=text) as info:
        Ring(nodes, **kwargs)
    assert isinstance(info.value, builtin)
    assert isinstance(info.value, RingError)


def test_bad_parameters_raise_builtin_errors():
    # Also RingErrors with a code: test_errors.py checks every argument.
    with pytest.raises(ValueError, match="vnodes") as raised:
        Ring(["a"], vnodes=-1)
    assert isinstance(raised.value, RingError) and raised.value.code == "ERR_OUT_OF_RANGE"
    with pytest.raises(ValueError, match="seed must be an int from 0 to 18446744073709551615, got 18446744073709551616"):
        Ring(["a"], seed=2**64)
    with pytest.raises(ValueError, match="n must be an int from 0 to .*, got -1"):
        Ring(["a"]).get_n("k", -1)


@pytest.mark.parametrize("nodes", [[], {"drained": 0.0}])
def test_empty_ring_raises_lookup_error(nodes):
    ring = Ring(nodes)
    for call in (lambda: ring.get("k"), lambda: ring.get_n("k", 2), lambda: ring.get_many(["k"]),
                 lambda: ring.get_by_hash(1), lambda: ring.balance(["k"])):
        with pytest.raises(EmptyRingError) as info:
            call()
        assert isinstance(info.value, LookupError)


def test_unknown_nodes_raise_key_error():
    ring = Ring(["a"])
    for call in (lambda: ring.without_node("zz"), lambda: ring.remove_node("zz"), lambda: ring.set_weight("zz", 1.0),
                 lambda: ring.with_weight("zz", 1.0)):
        with pytest.raises(UnknownNodeError, match='unknown node "zz"') as info:
            call()
        assert isinstance(info.value, KeyError)
    with pytest.raises(InvalidNodeError, match="duplicate"):
        ring.add_node("a")


def test_bad_json_names_the_field():
    with pytest.raises(InvalidConfigError, match="colour"):
        Ring.from_json('{"format_version": 1, "nodes": [], "colour": 1}')
    with pytest.raises(InvalidConfigError, match="format_version 2"):
        Ring.from_json('{"format_version": 2, "nodes": []}')


def test_len_contains_iter():
    ring = Ring(["a", "b"], vnodes=10, seed=3)
    assert len(ring) == 2 and ring.point_count == 20 and ring.vnodes == 10 and ring.seed == 3
    assert "a" in ring and "z" not in ring and 1 not in ring and b"a" not in ring
    assert list(ring) == ["a", "b"]


@pytest.mark.parametrize("algorithm", shardring.ALGORITHMS)
def test_params_are_the_keywords_that_rebuild_the_ring(algorithm):
    """`ring.params` lists the algorithm and every parameter as the ring
    resolved it (defaults filled in), by the names of shardring.PARAMETERS,
    and passing them back builds the same ring."""
    nodes = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]
    ring = Ring(nodes, algorithm=algorithm)
    params = ring.params
    assert params["algorithm"] == algorithm
    assert set(params) <= set(shardring.PARAMETERS)
    again = Ring(nodes, **params)
    assert again.fingerprint == ring.fingerprint and again.params == params
    assert all(f"{name}=" in repr(ring) for name in params)


def test_a_keyword_that_is_no_parameter_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Ring(["a"], colour="red")
