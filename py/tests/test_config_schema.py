"""docs/config.schema.json (JSON Schema 2020-12) describes the ring config
every binding reads: every config in examples/, testdata/vectors.json and
the documentation (README, docs/, package READMEs) is valid under it, and
configs the library rejects for their shape (a null, an unknown field, a
bad weight, a parameter the algorithm does not take) are invalid under it,
and rejected by the library too."""

import json
import pathlib

import jsonschema
import pytest

import shardring

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "config.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())

# Every JSON file of examples/ but npm's (package.json, package-lock.json, and
# what `npm install` puts in node_modules/).
EXAMPLE_CONFIGS = sorted(
    path
    for path in (ROOT / "examples").rglob("*.json")
    if "node_modules" not in path.parts and path.name not in ("package.json", "package-lock.json")
)
VECTOR_CASES = json.loads((ROOT / "testdata" / "vectors.json").read_text())["cases"]


def errors(config):
    return [e.message for e in VALIDATOR.iter_errors(config)]


def test_the_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_there_are_configs_to_check():
    assert [p.name for p in EXAMPLE_CONFIGS] == ["cluster.json"]
    assert len(VECTOR_CASES) >= 30
    algorithms = {case["config"].get("algorithm", "ring") for case in VECTOR_CASES}
    assert algorithms == set(SCHEMA["properties"]["algorithm"]["enum"])


@pytest.mark.parametrize("path", EXAMPLE_CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_configs_are_valid(path):
    assert errors(json.loads(path.read_text())) == []


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "py" / "README.md", ROOT / "node" / "README.md"]


def doc_configs():
    """The ```json blocks of the README, docs/ and the package READMEs that
    are ring configs, as (file, config)."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        blocks = [block.split("```", 1)[0] for block in text.split("```json\n")[1:]]
        found += [(path.relative_to(ROOT), json.loads(block)) for block in blocks if '"format_version"' in block]
    return found


def test_the_configs_of_the_docs_are_valid():
    configs = doc_configs()
    # docs/config.md's example and docs/algorithms.md's memento ring.
    assert {str(path) for path, _ in configs} >= {"docs/config.md", "docs/algorithms.md"}
    for path, config in configs:
        assert errors(config) == [], path
        shardring.Ring.from_json(json.dumps(config))


@pytest.mark.parametrize("case", VECTOR_CASES, ids=lambda c: c["name"])
def test_vector_configs_are_valid(case):
    assert errors(case["config"]) == []


GOOD = {"format_version": 1, "nodes": [{"id": "a"}, {"id": "b", "weight": 2, "zone": "east"}]}


def with_(**fields):
    return {**GOOD, **fields}


def with_node(**fields):
    return {**GOOD, "nodes": [{"id": "a", **fields}]}


def test_a_minimal_config_is_valid():
    assert errors(GOOD) == []
    assert errors({"format_version": 1, "nodes": []}) == []
    assert errors(with_(algorithm="maglev", table_size=251, seed=7)) == []
    assert errors(with_(algorithm="ketama", seed=0)) == []
    assert errors(with_(vnodes=4294967295, seed=18446744073709551615)) == []
    assert errors({**GOOD, "algorithm": "slots", "nodes": [{"id": "a", "slots": [[0, 16383]]}]}) == []
    assert errors({**GOOD, "algorithm": "memento", "removed_buckets": [1], "nodes": [{"id": "a", "bucket": 2}]}) == []
    assert errors(with_(algorithm="rendezvous", score="float")) == []


# Each bad config, and the words the schema's complaint must contain.
BAD = {
    "null vnodes": (with_(vnodes=None), "None is not of type 'integer'"),
    "null seed": (with_(seed=None), "None is not of type 'integer'"),
    "null table size": (with_(algorithm="maglev", table_size=None), "None is not of type 'integer'"),
    "null algorithm": (with_(algorithm=None), "None is not one of"),
    "null zone": (with_node(zone=None), "None is not of type 'string'"),
    "null weight": (with_node(weight=None), "None is not of type 'number'"),
    "null state": (with_node(state=None), "None is not one of"),
    "unknown state": (with_node(state="joining"), "'joining' is not one of"),
    "unknown field": (with_(colour="red"), "Additional properties are not allowed ('colour' was unexpected)"),
    "unknown node field": (with_node(wieght=2), "Additional properties are not allowed ('wieght' was unexpected)"),
    "weight -1": (with_node(weight=-1), "-1 is less than the minimum of 0"),
    "string weight": (with_node(weight="2"), "'2' is not of type 'number'"),
    "boolean weight": (with_node(weight=True), "True is not of type 'number'"),
    "vnodes 0": (with_(vnodes=0), "0 is less than the minimum of 1"),
    "vnodes above u32": (with_(vnodes=4294967296), "4294967296 is greater than the maximum of 4294967295"),
    "negative seed": (with_(seed=-1), "-1 is less than the minimum of 0"),
    "seed above u64": (with_(seed=18446744073709551616), "is greater than the maximum of 18446744073709551615"),
    "table size 0": (with_(algorithm="maglev", table_size=0), "0 is less than the minimum of 1"),
    "table size above 2^24": (with_(algorithm="maglev", table_size=16777217), "greater than the maximum of 16777216"),
    "format 2": (with_(format_version=2), "1 was expected"),
    "no format_version": ({"nodes": []}, "'format_version' is a required property"),
    "no nodes": ({"format_version": 1}, "'nodes' is a required property"),
    "unknown algorithm": (with_(algorithm="ketamax"), "'ketamax' is not one of"),
    "empty id": ({"format_version": 1, "nodes": [{"id": ""}]}, "'' should be non-empty"),
    "empty zone": (with_node(zone=""), "'' should be non-empty"),
    "numeric id": ({"format_version": 1, "nodes": [{"id": 1}]}, "1 is not of type 'string'"),
    "vnodes on ketama": (with_(algorithm="ketama", vnodes=160), "should not be valid"),
    "table size on ring": (with_(table_size=251), "should not be valid"),
    "seed on ketama": (with_(algorithm="ketama", seed=1), "0 was expected"),
    "slots on ring": (with_node(slots=[[0, 16383]]), "should not be valid"),
    "slot 16384": ({**GOOD, "algorithm": "slots", "nodes": [{"id": "a", "slots": [[0, 16384]]}]}, "16384"),
    "slot range of three": ({**GOOD, "algorithm": "slots", "nodes": [{"id": "a", "slots": [[0, 1, 2]]}]}, "2"),
    "config as an array": ([1, {"id": "a"}], "is not of type 'object'"),
    "removed buckets on ring": (with_(removed_buckets=[0]), "should not be valid"),
    "bucket on jump": ({**GOOD, "algorithm": "jump", "nodes": [{"id": "a", "bucket": 0}]}, "should not be valid"),
    "negative bucket": ({**GOOD, "algorithm": "memento", "nodes": [{"id": "a", "bucket": -1}]}, "-1 is less than the minimum of 0"),
    "bucket removed twice": (with_(algorithm="memento", removed_buckets=[1, 1]), "has non-unique elements"),
    "score on ring": (with_(score="float"), "should not be valid"),
    "unknown score": (with_(algorithm="rendezvous", score="exact"), "'exact' is not one of"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_configs_are_rejected(name):
    config, complaint = BAD[name]
    found = errors(config)
    assert found, f"{name}: the schema accepts it"
    assert any(complaint in message for message in found), found


@pytest.mark.parametrize("name", BAD)
def test_the_library_rejects_them_too(name):
    config, _ = BAD[name]
    with pytest.raises(shardring.RingError):
        shardring.Ring.from_json(json.dumps(config))


def test_states_describe_a_transition():
    config = {"format_version": 1, "nodes": [{"id": "a"}, {"id": "b", "state": "warming"}, {"id": "c", "state": "draining"}]}
    assert errors(config) == []
    assert errors(with_node(state="active")) == []
    transition = shardring.Transition.from_json(json.dumps(config))
    assert [transition.state(i) for i in "abc"] == ["active", "warming", "draining"]
    # A transition is not a ring.
    with pytest.raises(shardring.InvalidConfigError):
        shardring.Ring.from_json(json.dumps(config))


def test_the_library_builds_the_good_ones():
    for config in (GOOD, with_(algorithm="maglev", table_size=251, seed=7), with_(algorithm="ketama", seed=0)):
        assert shardring.Ring.from_json(json.dumps(config)).to_json()
