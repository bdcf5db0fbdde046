"""Every row of testdata/bad-inputs.json (docs/bad-inputs.md) through the
Python API: the exception class each row records, or its answer."""

import json
import pathlib

import pytest

import shardring

CASES = json.loads((pathlib.Path(__file__).parents[2] / "testdata" / "bad-inputs.json").read_text())["cases"]


def datum(value, *, text):
    """An id (`text=True`: a str, bytes that are not UTF-8 as lone surrogates)
    or a key (bytes) of the file; {"utf16": [...]} is a str of those code units."""
    if isinstance(value, dict) and "utf16" in value:
        return "".join(chr(int(unit, 16)) for unit in value["utf16"])
    if isinstance(value, str):
        data = value.encode()
    elif "hex" in value:
        data = bytes.fromhex(value["hex"])
    elif "fill" in value:
        data = bytes.fromhex(value["fill"]) * value["len"]
    else:
        data = bytes(range(256))
    return data.decode("utf-8", "surrogateescape") if text else data


def number(value):
    return float(value) if isinstance(value, str) else value


def run(case):
    op = case.get("op", {})
    if "from_json" in op:
        shardring.Ring.from_json(op["from_json"])
        return True
    nodes = []
    for node in case["nodes"]:
        if isinstance(node, str):
            node = {"id": node, "weight": 1}
        zone = datum(node["zone"], text=True) if "zone" in node else None
        nodes.append(shardring.Node(datum(node["id"], text=True), number(node["weight"]), zone))
    ring = shardring.Ring(nodes, **case.get("options", {}))
    if "get" in op:
        return ring.get(datum(op["get"], text=False))
    if "get_n" in op:
        key, n = op["get_n"]
        return ring.get_n(datum(key, text=False), n)
    if "fingerprint" in op:
        return str(ring.fingerprint)
    if "hash_key" in op:
        key, seed = op["hash_key"]
        return str(shardring.hash_key(datum(key, text=False), seed))
    if "get_by_hash" in op:
        return ring.get_by_hash(op["get_by_hash"])
    if "remove" in op:
        return len(ring.without_node(op["remove"]))
    if "add" in op:
        return len(ring.with_node(op["add"]))
    if "tracker" in op:
        return shardring.LoadTracker(ring, number(op["tracker"])).balance_factor
    if "release" in op:
        return shardring.LoadTracker(ring, 0.1).release(op["release"])
    return None


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_row(case):
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(Exception) as raised:
            run(case)
        assert type(raised.value).__name__ == expect["error"]["python"], raised.value
        assert str(raised.value)
        if isinstance(raised.value, shardring.RingError):
            assert not isinstance(raised.value, (TypeError, OverflowError))
            # The code names the error as C and Node do (JS codes equal C names).
            assert raised.value.code == expect["error"]["c" if expect["error"]["c"].startswith("RING_") else "js"]
    else:
        answer = run(case)
        assert answer == expect["ok"]


def test_the_table_keeps_its_rows():
    assert len(CASES) >= 52
