"""Every argument's conversion errors, keyword by keyword: a number the
parameter cannot hold is an OutOfRangeError (a RingError and a ValueError,
code ERR_OUT_OF_RANGE, as Node's RangeError) naming the parameter and the
value; a value of another type is a TypeError naming the parameter; an
unknown name is an InvalidConfigError that names the keyword, the value and
the names accepted, without speaking of a config nobody gave."""

import math

import pytest

import shardring
from shardring import InvalidConfigError, LoadTracker, Node, OutOfRangeError, Ring, RingError

# Ring's int keywords, each with the largest value its type holds and an
# algorithm that takes it.
INT_KEYWORDS = {
    "vnodes": (2**32 - 1, "ring"),
    "seed": (2**64 - 1, "ring"),
    "table_size": (2**32 - 1, "maglev"),
    "default_port": (2**16 - 1, "hashring-js"),
    "min_ring_size": (2**64 - 1, "envoy-ring-hash"),
    "max_ring_size": (2**64 - 1, "envoy-ring-hash"),
}

# Ring's keywords naming a choice, with one name each accepts and an algorithm that takes it.
NAME_KEYWORDS = {
    "algorithm": ("ring", "ring"),
    "distribution": ("consistent_ketama", "libmemcached"),
    "key_hash": ("md5", "libmemcached"),
    "server_ids": ("address", "twemproxy"),
    "hash_function": ("xx_hash", "envoy-ring-hash"),
    "endpoint_order": ("by_key", "grpc-ring-hash"),
    "server_key": ("id32", "haproxy"),
    "score": ("integer", "rendezvous"),
}

EVERY_KEYWORD = [*INT_KEYWORDS, *NAME_KEYWORDS, "hash_tag", "avalanche", "haproxy_ids", "buckets", "removed_buckets"]


def out_of_range(call, *named):
    """Runs `call`, which must raise OutOfRangeError naming each of `named`."""
    with pytest.raises(OutOfRangeError) as raised:
        call()
    error = raised.value
    assert isinstance(error, RingError) and isinstance(error, ValueError)
    assert not isinstance(error, (TypeError, OverflowError))
    assert error.code == "ERR_OUT_OF_RANGE"
    for text in named:
        assert str(text) in str(error), (text, str(error))


def test_the_keyword_lists_cover_the_constructor():
    # The ring parameters come from the core (one list, RingParams); the
    # constructor adds the per-node ids and buckets.
    assert sorted([*shardring.PARAMETERS, "haproxy_ids", "buckets"]) == sorted(EVERY_KEYWORD)


@pytest.mark.parametrize("keyword", sorted(INT_KEYWORDS))
@pytest.mark.parametrize("excess", ["negative", "one too many", "beyond any float"])
def test_an_int_keyword_out_of_range_is_a_ring_error_naming_keyword_and_value(keyword, excess):
    largest, algorithm = INT_KEYWORDS[keyword]
    value = {"negative": -1, "one too many": largest + 1, "beyond any float": 10**400}[excess]
    out_of_range(lambda: Ring(["a:1"], algorithm=algorithm, **{keyword: value}), keyword, value)


@pytest.mark.parametrize("keyword", sorted(INT_KEYWORDS))
@pytest.mark.parametrize("value", [None, True, 1.0, "1", b"1", [1]])
def test_an_int_keyword_of_another_type_is_a_type_error_naming_it(keyword, value):
    _, algorithm = INT_KEYWORDS[keyword]
    with pytest.raises(TypeError, match=f"^{keyword} must be an int, not ") as raised:
        Ring(["a:1"], algorithm=algorithm, **{keyword: value})
    assert not isinstance(raised.value, RingError)


@pytest.mark.parametrize("keyword", [*sorted(NAME_KEYWORDS), "hash_tag"])
@pytest.mark.parametrize("value", [None, 1, b"ring", ["ring"]])
def test_a_name_keyword_of_another_type_is_a_type_error_naming_it(keyword, value):
    algorithm = NAME_KEYWORDS.get(keyword, (None, "twemproxy"))[1]
    options = {keyword: value} if keyword == "algorithm" else {"algorithm": algorithm, keyword: value}
    with pytest.raises(TypeError, match=f"^{keyword} must be a str, not "):
        Ring(["a:1"], **options)


@pytest.mark.parametrize("keyword", sorted(NAME_KEYWORDS))
def test_an_unknown_name_names_the_keyword_the_value_and_the_names_accepted(keyword):
    accepted, algorithm = NAME_KEYWORDS[keyword]
    options = {keyword: "nope"} if keyword == "algorithm" else {"algorithm": algorithm, keyword: "nope"}
    with pytest.raises(InvalidConfigError) as raised:
        Ring(["a:1"], **options)
    message = str(raised.value)
    assert raised.value.code == "RING_INVALID_CONFIG"
    # No config was given: the message is about the keyword.
    assert "config" not in message, message
    assert keyword in message and '"nope"' in message and accepted in message, message
    if keyword == "algorithm":
        assert all(name in message for name in shardring.ALGORITHMS), message
    assert Ring(["a:1"], **{**options, keyword: accepted}) is not None


def test_a_parameter_the_algorithm_does_not_take_is_named_without_speaking_of_a_config():
    with pytest.raises(InvalidConfigError, match=r'^vnodes \(10\) does not apply to algorithm "jump"$'):
        Ring(["a"], algorithm="jump", vnodes=10)
    with pytest.raises(InvalidConfigError, match='^hash_tag'):
        Ring(["a"], hash_tag="{}")


def test_a_config_that_cannot_be_read_says_so_and_a_refused_parameter_names_itself():
    with pytest.raises(InvalidConfigError, match="^invalid ring config: algorithm: unknown variant `nope`"):
        Ring.from_json('{"format_version": 1, "algorithm": "nope", "nodes": [{"id": "a"}]}')
    with pytest.raises(InvalidConfigError, match='^vnodes .* does not apply to algorithm "jump"'):
        shardring.Transition.from_json('{"format_version": 1, "algorithm": "jump", "vnodes": 10, "nodes": [{"id": "a"}]}')


@pytest.mark.parametrize("keyword", ["haproxy_ids", "buckets"])
def test_mapping_keywords_check_every_value(keyword):
    algorithm = "haproxy" if keyword == "haproxy_ids" else "memento"
    for value in (-1, 2**32, 10**400):
        out_of_range(lambda: Ring(["a"], algorithm=algorithm, **{keyword: {"a": value}}), f"{keyword} value", value)
    for value in (None, True, 1.5, "1"):
        with pytest.raises(TypeError, match=f"^{keyword} value must be an int"):
            Ring(["a"], algorithm=algorithm, **{keyword: {"a": value}})
    with pytest.raises(TypeError, match=f"^{keyword} id must be a str"):
        Ring(["a"], algorithm=algorithm, **{keyword: {1: 1}})
    for value in (None, [("a", 1)], "a"):
        with pytest.raises(TypeError, match=f"^{keyword} must be a mapping"):
            Ring(["a"], algorithm=algorithm, **{keyword: value})


def test_removed_buckets_checks_every_item():
    for value in (-1, 2**32, 10**400):
        out_of_range(lambda: Ring(["a"], algorithm="memento", removed_buckets=[value]), "removed_buckets item", value)
    for value in (None, True, 1.5, "1"):
        with pytest.raises(TypeError, match="^removed_buckets item must be an int"):
            Ring(["a"], algorithm="memento", removed_buckets=[value])
    for value in (None, 1, "ab", b"ab", {1}, {1: 1}):
        with pytest.raises(TypeError, match="^removed_buckets must be a list"):
            Ring(["a"], algorithm="memento", removed_buckets=value)


def test_avalanche_takes_a_bool_only():
    for value in (None, 1, "yes"):
        with pytest.raises(TypeError, match="^avalanche must be a bool"):
            Ring(["a"], algorithm="haproxy", avalanche=value)


def test_the_other_calls_taking_numbers():
    ring = Ring(["a", "b"])
    for n in (-1, 2**64, 10**400):
        out_of_range(lambda: ring.get_n("k", n), "n", n)
    for seed in (-1, 2**64, 10**400):
        out_of_range(lambda: shardring.hash_key("k", seed), "seed", seed)
    for factor in (-1, 2**32):
        out_of_range(lambda: LoadTracker.haproxy(Ring(["a"], algorithm="haproxy"), factor), "hash_balance_factor", factor)
    # An int no float holds, where a float is taken: a weight, an epsilon, a timeout.
    huge = 10**400
    out_of_range(lambda: Ring([Node("a", huge)]), "weight", huge)
    out_of_range(lambda: Ring({"a": -huge}), "weight", -huge)
    out_of_range(lambda: ring.with_weight("a", huge), "weight", huge)
    out_of_range(lambda: ring.set_weight("a", huge), "weight", huge)
    out_of_range(lambda: ring.add_node(Node("c", huge)), "weight", huge)
    out_of_range(lambda: LoadTracker(ring, huge), "epsilon", huge)
    for timeout in (-1, -0.5, math.nan, huge, 2.0**64):
        out_of_range(lambda: shardring.Follower.file("/nonexistent", timeout=timeout), "timeout")


@pytest.mark.parametrize("nodes", [None, 5, 1.5, True])
def test_nodes_of_another_type_are_a_type_error_naming_them(nodes):
    with pytest.raises(TypeError, match="^nodes must be a list of ids or Node objects, or a dict, not "):
        Ring(nodes)
