"""Hypothesis properties: key encodings agree, and add_node moves keys only to the new node."""

from hypothesis import given, settings
from hypothesis import strategies as st

from shardring import Node, Ring

ids = st.text(min_size=1, max_size=8)
node_sets = st.lists(ids, min_size=1, max_size=8, unique=True)
keys = st.lists(st.text(max_size=20), min_size=1, max_size=50)


@settings(max_examples=300, deadline=None)
@given(nodes=node_sets, key=st.text(), seed=st.integers(0, 2**64 - 1))
def test_str_and_its_utf8_bytes_land_together(nodes, key, seed):
    ring = Ring(nodes, vnodes=20, seed=seed)
    data = key.encode("utf-8", "surrogatepass")
    try:
        expected = ring.get(key)
    except UnicodeEncodeError:
        return  # lone surrogates have no UTF-8 form
    assert ring.get(data) == ring.get(bytearray(data)) == expected


@settings(max_examples=300, deadline=None)
@given(nodes=node_sets, newcomer=ids, weight=st.sampled_from([0.5, 1.0, 2.0]), keys=keys)
def test_add_node_moves_keys_only_to_it(nodes, newcomer, weight, keys):
    if newcomer in nodes:
        return
    ring = Ring(nodes, vnodes=20)
    before = ring.get_many(keys)
    ring.add_node(Node(newcomer, weight))
    after = ring.get_many(keys)
    assert all(a == b or a == newcomer for a, b in zip(after, before))


@settings(max_examples=200, deadline=None)
@given(nodes=node_sets, keys=keys, n=st.integers(0, 10))
def test_preference_lists_are_distinct_and_start_with_the_owner(nodes, keys, n):
    ring = Ring(nodes, vnodes=10)
    for key in keys:
        listed = ring.get_n(key, n)
        assert len(listed) == min(n, len(nodes)) == len(set(listed))
        if n:
            assert listed[0] == ring.get(key)
