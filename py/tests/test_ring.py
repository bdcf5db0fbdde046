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


def test_rings_are_equal_when_they_place_identically():
    a, b = Ring(["x", "y"]), Ring({"y": 1.0, "x": 1.0})
    assert a == b and not (a != b)
    assert a != Ring(["x", "y"], seed=1) and a != Ring(["x"]) and a != "not a ring"
    a.add_node("z")
    assert a != b
    b.add_node("z")
    assert a == b
    # Where order places keys, it is part of equality.
    assert Ring(["10.1.4.18", "10.1.8.1"], algorithm="ketama") != Ring(["10.1.8.1", "10.1.4.18"], algorithm="ketama")
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
    with pytest.raises(ValueError, match="vnodes"):
        Ring(["a"], vnodes=-1)
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
