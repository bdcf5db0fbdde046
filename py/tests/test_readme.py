"""Every Python snippet of the documentation runs as written, against the
built package: the README, the pages of docs/ and py/README.md (the PyPI
page). A snippet is named by its file and its position among that file's
```python blocks; a snippet this test does not know fails it (run the new
one here, or say why not), and each known one must print exactly what it
printed when written, which its comments say. The follower snippet runs
against a real etcd (the `etcd` fixture), with the fixture's address in
place of the snippet's `http://127.0.0.1:2379`, while a member joins."""

import contextlib
import io
import json
import pathlib
import re
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "py" / "README.md"]
ETCD_IN_SNIPPETS = "http://127.0.0.1:2379"


def snippets():
    """{(file relative to the root, index among its Python blocks): code}."""
    found = {}
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for i, block in enumerate(text.split("```python\n")[1:]):
            found[(str(path.relative_to(ROOT)), i)] = block.split("```", 1)[0]
    return found


def run(name, code=None, scope=None):
    """Runs snippet `name` (or `code` in its place) in `scope`; returns its
    standard output and the scope."""
    scope = {} if scope is None else scope
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code or snippets()[name], f"{name[0]} (Python block {name[1]})", "exec"), scope)
    return out.getvalue(), scope


EXPECTED = {
    ("README.md", 0): "cache-2\n['cache-2', 'cache-1']\n0.208\n",
    ("docs/algorithms.md", 0): "10.0.1.2:11212 10.0.1.1 cache-b\n",
    ("docs/algorithms.md", 1): "10.0.1.1:11211\n3443\n",
    ("docs/bounded-loads.md", 0): "serving user:42 on cache-2 whose load is now 1\n0\n",
    ("docs/transitions.md", 0): "Ada ['cache-1', 'cache-5'] warming\n0.205\n",
    ("py/README.md", 0): (
        "cache-2\n['cache-2', 'cache-1']\n51059\n"
        "0.208 (('cache-1', 'cache-4'), 0.04842022840192636)\nserving user:42 on cache-2\nTrue\n"
    ),
    ("py/README.md", 1): "InvalidNodeError RING_INVALID_WEIGHT\nRING_EMPTY_RING\n",
}
NEEDS_ETCD = {("docs/fleet.md", 0)}
# Snippets another test runs against real servers.
RUN_ELSEWHERE = {("docs/transitions.md", 1): "test_handoff.py runs it against real Redis servers"}


def test_the_docs_have_the_snippets_this_test_knows():
    assert sorted(snippets()) == sorted([*EXPECTED, *NEEDS_ETCD, *RUN_ELSEWHERE]), (
        "a Python snippet was added, moved or removed: run it here, or say why not"
    )


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda name: f"{name[0]}:{name[1]}")
def test_each_snippet_prints_what_it_says(name):
    out, _ = run(name)
    assert out == EXPECTED[name]


def test_the_quick_example_moves_a_fifth_of_the_keys_to_the_new_node_only():
    _, scope = run(("README.md", 0))
    assert len(scope["ring"]) == 4 and len(scope["owners"]) == 1000
    # cache-4 (weight 1 of 5) takes about a fifth of the keys, from the others only.
    assert 0.15 < scope["moved"].moved_share < 0.25
    assert {flow[1] for flow in scope["moved"].flows} == {"cache-4"}


def test_the_peer_mode_snippet_builds_rings_with_the_peers_parameters():
    _, scope = run(("docs/algorithms.md", 0))
    assert (scope["plain"].distribution, scope["plain"].key_hash, scope["plain"].point_count) == (
        "consistent_ketama", "one_at_a_time", 200)
    assert (scope["spy"].distribution, scope["spy"].key_hash) == ("consistent_ketama_spy", "fnv1a_32")
    proxy = scope["proxy"]
    assert (proxy.distribution, proxy.key_hash, proxy.server_ids, proxy.hash_tag) == ("ketama", "fnv1a_64", "label", "{}")
    # The hash tag: keys with one tag land together.
    assert proxy.get("{user:42}:cart") == proxy.get("{user:42}:profile") == proxy.get("user:42")
    _, scope = run(("docs/algorithms.md", 1))
    assert (scope["table"].algorithm, scope["table"].table_size) == ("maglev", 65537)


def test_the_tracker_and_transition_snippets_leave_no_load_and_dual_write():
    _, scope = run(("docs/bounded-loads.md", 0))
    assert scope["tracker"].total_load == 0
    _, scope = run(("docs/transitions.md", 0))
    # The write went to the owner and to the warming member that will own the key.
    assert [node for node, values in scope["servers"].items() if "user:3" in values] == ["cache-1", "cache-5"]


def member(etcd, prefix, id, weight):
    etcd.ctl("put", f"{prefix}/members/{id}", json.dumps({"weight": weight}))


def test_the_follower_snippet_runs_on_a_real_etcd_while_a_member_joins(etcd):
    code = snippets()[("docs/fleet.md", 0)]
    assert 'Follower.etcd("http://127.0.0.1:2379", "/shardring/cache")' in code
    member(etcd, "/shardring/cache", "cache-1", 1)
    # The snippet waits for the next event: a member joins once it follows.
    joined = threading.Timer(1.0, member, (etcd, "/shardring/cache", "cache-2", 1))
    joined.start()
    try:
        out, scope = run(("docs/fleet.md", 0), code.replace(ETCD_IN_SNIPPETS, etcd.url))
    finally:
        # The follower can see the write before etcdctl has its answer: wait
        # for etcdctl before the fixture stops etcd.
        joined.cancel()
        joined.join()
    ring = scope["ring"]  # the follower's last ring, kept after close()
    first, change, last = out.splitlines()
    assert re.fullmatch(r"cache-1 \d+ [0-9a-f]{16}", first), out
    kind, revision, fingerprint, moved = change.split()
    assert (kind, fingerprint) == ("epoch", ring.fingerprint_hex) and int(revision) > int(first.split()[1])
    assert 0.3 < float(moved) < 0.7  # cache-2 takes about half
    assert last == f"{ring.get('user:42')} {revision}" and list(ring) == ["cache-1", "cache-2"]
