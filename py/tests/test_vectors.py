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
    """The case's ring through the constructor (listed slot ranges and nginx's
    down marks exist only in configs)."""
    if any("slots" in n or "down" in n for n in config["nodes"]):
        return shardring.Ring.from_json(json.dumps(config))
    nodes = [shardring.Node(n["id"], n["weight"], n.get("zone")) for n in config["nodes"]]
    # Every ring parameter under its config name (shardring.PARAMETERS, the
    # core's list): a parameter added to the core needs no line here.
    options = {k: config[k] for k in shardring.PARAMETERS if k in config}
    haproxy_ids = {n["id"]: n["haproxy_id"] for n in config["nodes"] if "haproxy_id" in n}
    if haproxy_ids:
        options["haproxy_ids"] = haproxy_ids
    buckets = {n["id"]: n["bucket"] for n in config["nodes"] if "bucket" in n}
    if buckets:
        options["buckets"] = buckets
    return shardring.Ring(nodes, **options)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case):
    from_json = shardring.Ring.from_json(json.dumps(case["config"]))
    ring = build(case["config"])
    assert list(ring) == list(from_json) == [n["id"] for n in case["config"]["nodes"]]
    assert ring.algorithm == case["config"]["algorithm"]
    assert ring.fingerprint == from_json.fingerprint == int(case["fingerprint"], 16)
    # The text form is the file's (the generator's, in Rust) exactly.
    assert ring.fingerprint_hex == from_json.fingerprint_hex == case["fingerprint"]
    for lookup in case.get("hash_lookups", []):
        assert ring.get_by_hash(int(lookup["hash"], 16)) == lookup["owner"]
    for lookup in case["lookups"]:
        key = bytes.fromhex(lookup["key_hex"])
        assert ring.hash_key(key) == int(lookup["key_hash"], 16)
        if case["config"]["algorithm"] in ("ring", "jump", "rendezvous", "maglev", "jumpback", "memento"):
            assert shardring.hash_key(key, case["config"]["seed"]) == int(lookup["key_hash"], 16)
        assert ring.get(key) == lookup["owner"]
        assert from_json.get(key) == lookup["owner"]
        assert ring.get_n(key, lookup["n"]) == lookup["preference"]
        if "key" in lookup:
            assert ring.get_many([lookup["key"], key]) == [lookup["owner"]] * 2
            assert ring.get(lookup["key"]) == lookup["owner"]
            assert ring.get_n(lookup["key"], lookup["n"]) == lookup["preference"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_in_one_batch(case):
    ring = build(case["config"])
    keys = [bytes.fromhex(lookup["key_hex"]) for lookup in case["lookups"]]
    assert ring.get_many(keys) == [lookup["owner"] for lookup in case["lookups"]]
