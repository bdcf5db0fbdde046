import math

import pytest

import shardring
from shardring import EmptyRingError, InvalidConfigError, InvalidNodeError, Ring, RingError


def test_str_and_bytes_keys_land_together():
    ring = Ring([f"node-{i}" for i in range(7)])
    for key in ["abc", "café", "🔑", "", "键"]:
        assert ring.get(key) == ring.get(key.encode("utf-8"))


@pytest.mark.parametrize("key", [1, 1.5, None, ["a"], bytearray(b"a")])
def test_other_key_types_raise_type_error(key):
    ring = Ring(["a", "b"])
    with pytest.raises(TypeError, match="key must be str or bytes"):
        ring.get(key)


def test_weights_from_dict():
    ring = Ring({"small": 1.0, "big": 3.0, "drained": 0.0}, vnodes=100)
    counts = {"small": 0, "big": 0, "drained": 0}
    for i in range(20_000):
        counts[ring.get(f"k{i}")] += 1
    assert counts["drained"] == 0
    assert 2.0 < counts["big"] / counts["small"] < 4.5
    assert ring.get_n("k", 5) in (["small", "big"], ["big", "small"])


@pytest.mark.parametrize(
    ("nodes", "kwargs", "error", "builtin", "text"),
    [
        (["a", "a"], {}, InvalidNodeError, ValueError, '"a"'),
        ([""], {}, InvalidNodeError, ValueError, "position 0"),
        ({"a": math.nan}, {}, InvalidNodeError, ValueError, "NaN"),
        ({"a": -1.0}, {}, InvalidNodeError, ValueError, "-1"),
        ({"a": math.inf}, {}, InvalidNodeError, ValueError, "inf"),
        ({"a": 1e18}, {}, InvalidConfigError, ValueError, "limit"),
        (["a"], {"vnodes": 0}, InvalidConfigError, ValueError, "vnodes"),
    ],
)
def test_bad_input_raises_typed_errors(nodes, kwargs, error, builtin, text):
    with pytest.raises(error, match=text) as info:
        Ring(nodes, **kwargs)
    assert isinstance(info.value, builtin)
    assert isinstance(info.value, RingError)


@pytest.mark.parametrize("nodes", [[], {"drained": 0.0}])
def test_empty_ring_raises_lookup_error(nodes):
    ring = Ring(nodes)
    with pytest.raises(EmptyRingError) as info:
        ring.get("k")
    assert isinstance(info.value, LookupError)
    with pytest.raises(LookupError):
        ring.get_n("k", 2)


def test_bad_json_names_the_field():
    with pytest.raises(InvalidConfigError, match="colour"):
        Ring.from_json('{"format_version": 1, "nodes": [], "colour": 1}')


def test_repr_and_len():
    ring = Ring(["a", "b"], vnodes=10, seed=3)
    assert len(ring) == 2
    assert repr(ring) == "Ring(2 nodes, 20 points, vnodes=10, seed=3)"
    assert shardring.hash_key("k", 3) == ring.hash_key("k") != shardring.hash_key("k")
