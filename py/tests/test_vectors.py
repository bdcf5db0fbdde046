"""Every case of testdata/vectors.json, placed through the Python binding."""

import json
import pathlib

import pytest

import shardring

VECTORS = json.loads((pathlib.Path(__file__).parents[2] / "testdata" / "vectors.json").read_text(encoding="utf-8"))
CASES = VECTORS["cases"]


def test_format_version():
    assert VECTORS["format_version"] == shardring.PLACEMENT_FORMAT == 1
    assert len(CASES) >= 12


def build(config):
    nodes = {node["id"]: node["weight"] for node in config["nodes"]}
    return shardring.Ring(nodes, vnodes=config["vnodes"], seed=config["seed"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case):
    from_json = shardring.Ring.from_json(json.dumps(case["config"]))
    # The constructor takes no zones yet: zoned rings come from their JSON config.
    zoned = any("zone" in node for node in case["config"]["nodes"])
    ring = from_json if zoned else build(case["config"])
    assert ring.nodes == from_json.nodes == [n["id"] for n in case["config"]["nodes"]]
    assert ring.fingerprint == from_json.fingerprint == int(case["fingerprint"], 16)
    for lookup in case.get("hash_lookups", []):
        assert ring.get_by_hash(int(lookup["hash"], 16)) == lookup["owner"]
    for lookup in case["lookups"]:
        key = bytes.fromhex(lookup["key_hex"])
        assert ring.hash_key(key) == int(lookup["key_hash"], 16)
        assert shardring.hash_key(key, case["config"]["seed"]) == int(lookup["key_hash"], 16)
        assert ring.get(key) == lookup["owner"]
        assert from_json.get(key) == lookup["owner"]
        assert ring.get_n(key, lookup["n"]) == lookup["preference"]
        if "key" in lookup:
            assert ring.get(lookup["key"]) == lookup["owner"]
            assert ring.get_n(lookup["key"], lookup["n"]) == lookup["preference"]
