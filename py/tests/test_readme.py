"""The README's Python snippets run as written, against the built package:
the self-contained ones verbatim, the LoadTracker one with a `serve` that
records its node. The follower and transition snippets need an etcd and are
exercised by test_follower.py and test_transition.py instead."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def python_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


def test_the_readme_has_the_snippets_this_test_knows():
    blocks = python_blocks()
    assert len(blocks) == 6, "a Python snippet was added or removed: run it here, or say why not"
    assert "Follower.etcd" in blocks[4] and "transition.read_nodes" in blocks[5]


def test_the_quick_example_runs_and_moves_a_quarter_of_the_keys():
    scope: dict = {}
    exec(compile(python_blocks()[0], "README.md (Python quick example)", "exec"), scope)
    assert len(scope["ring"]) == 4
    # cache-4 (weight 1 of 5) takes about a fifth of the keys, from the others only.
    assert 0.15 < scope["moved"].moved_share < 0.25
    assert {flow[1] for flow in scope["moved"].flows} == {"cache-4"}


def test_the_algorithm_and_tracker_snippets_run():
    scope: dict = {}
    exec(compile(python_blocks()[0], "README.md (Python quick example)", "exec"), scope)
    exec(compile(python_blocks()[2], "README.md (algorithms)", "exec"), scope)
    served = []
    scope["serve"] = served.append
    exec(compile(python_blocks()[3], "README.md (bounded loads)", "exec"), scope)
    assert served == [scope["ring"].get("user:42")]
    assert scope["tracker"].total_load == 0


def test_the_peer_mode_snippet_runs_with_the_peers_parameters():
    scope: dict = {}
    exec(compile(python_blocks()[1], "README.md (libmemcached and twemproxy)", "exec"), scope)
    assert (scope["plain"].distribution, scope["plain"].key_hash, scope["plain"].point_count) == (
        "consistent_ketama", "one_at_a_time", 200)
    assert (scope["spy"].distribution, scope["spy"].key_hash) == ("consistent_ketama_spy", "fnv1a_32")
    proxy = scope["proxy"]
    assert (proxy.distribution, proxy.key_hash, proxy.server_ids, proxy.hash_tag) == ("ketama", "fnv1a_64", "label", "{}")
    # The hash tag: keys with one tag land together.
    assert proxy.get("{user:42}:cart") == proxy.get("{user:42}:profile") == proxy.get("user:42")
