"""The "uhashring" and "uhashring-ketama" migration modes side by side with
uhashring itself (PyPI, pinned in py/requirements-dev.txt) on 100,000 keys:
every key, including keys that hash exactly onto a point (the point labels
themselves), must go to the node uhashring picks."""

import pytest
from uhashring import HashRing

import shardring

NODES = {"node-1": 1, "10.0.0.2:11211": 3, "cache-é": 2, "drained": 0, "n": 5}
KEYS = [f"key:{i}" for i in range(100_000)]


def labels(nodes, vnodes, ketama):
    """Every point label of the ring, as keys: each hashes onto a point."""
    total = sum(nodes.values())
    out = []
    for name, weight in nodes.items():
        count = (vnodes * len(nodes) * weight) // total if ketama else vnodes * weight
        out += [f"{name}-{w}" for w in range(count)]
    return out


@pytest.mark.parametrize("ketama", [False, True], ids=["default", "ketama"])
@pytest.mark.parametrize("vnodes", [None, 7])
def test_every_key_goes_where_uhashring_sends_it(ketama, vnodes):
    options = {"hash_fn": "ketama"} if ketama else {}
    if vnodes:
        options["vnodes"] = vnodes
    theirs = HashRing(nodes=NODES, **options)
    ours = shardring.Ring(NODES, algorithm="uhashring-ketama" if ketama else "uhashring",
                          **({"vnodes": vnodes} if vnodes else {}))
    keys = KEYS + labels(NODES, vnodes or (40 if ketama else 160), ketama)
    wrong = [key for key in keys if ours.get(key) != theirs.get_node(key)]
    assert not wrong, f"{len(wrong)} of {len(keys)} differ, e.g. {wrong[:5]}"
    assert len(theirs.get_points()) == ours.point_count
    print(f"uhashring {'ketama' if ketama else 'default'} vnodes={vnodes}: {len(keys)} of {len(keys)} keys matched")


def test_keys_on_points_take_the_next_point_as_bisect_right_does():
    theirs = HashRing(nodes={"a": 1, "b": 1}, hash_fn="ketama")
    ours = shardring.Ring({"a": 1, "b": 1}, algorithm="uhashring-ketama")
    points = {point for point, _ in theirs.get_points()}
    on_points = [k for k in labels({"a": 1, "b": 1}, 40, True) if theirs.hashi(k) in points]
    assert len(on_points) == 80  # word 0 of each label's digest is a point
    for key in on_points:
        assert ours.hash_key(key) == theirs.hashi(key)
        assert ours.get(key) == theirs.get_node(key)
    # The default ring's points are 128-bit; hash_key gives their top 64 bits.
    plain = HashRing(nodes={"a": 1, "b": 1})
    assert shardring.Ring({"a": 1, "b": 1}, algorithm="uhashring").hash_key("test") == plain.hashi("test") >> 64


def test_uhashring_weights_are_whole_numbers():
    with pytest.raises(shardring.InvalidNodeError, match="uhashring"):
        shardring.Ring({"a": 1.5}, algorithm="uhashring")
