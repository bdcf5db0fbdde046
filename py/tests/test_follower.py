"""shardring.Follower on a real etcd and on a config file: the ring follows
joins, leaves and weight changes, lookups and trackers work on it, events
arrive, and bad records are reported by key."""

import json
import os
import threading
import time

import pytest

import shardring
from shardring import Follower, LoadTracker, Ring

PREFIX = "/shardring/test"
# How long a test waits for etcd and the follower: generous, so that a loaded
# 2-core machine (make test runs two suites at a time) is not a failure.
WAIT = 30


def member(etcd, id, record):
    etcd.ctl("put", f"{PREFIX}/members/{id}", json.dumps(record) if not isinstance(record, str) else record)
    return int(json.loads(etcd.ctl("get", f"{PREFIX}/members/{id}", "-w", "json").stdout)["header"]["revision"])


def expected(nodes, **options):
    return Ring([shardring.Node(id, w) for id, w in sorted(nodes.items())], **options)


def test_the_ring_follows_members_and_lookups_work_on_it(etcd):
    member(etcd, "a", {"weight": 1})
    with Follower.etcd(etcd.url, PREFIX) as follower:
        ring = follower.ring
        assert list(ring) == ["a"] and follower.revision > 0
        start = follower.revision
        changes = []
        # The first ring's own event may still be queued: it counts only
        # epochs after `start`.
        follower.on_change(changes.append)
        tracker = LoadTracker(ring, 0.25)
        revision = member(etcd, "b", {"weight": 2, "zone": "east"})
        assert follower.wait_for_revision(revision, timeout=WAIT) >= revision
        want = Ring([shardring.Node("a", 1.0), shardring.Node("b", 2.0, "east")])
        assert ring == want and follower.fingerprint == want.fingerprint
        keys = [f"key-{i}" for i in range(2000)]
        assert ring.get_many(keys) == want.get_many(keys)
        assert {tracker.acquire(k).node for k in keys[:200]} == {"a", "b"}
        etcd.ctl("del", f"{PREFIX}/members/a")
        deadline = time.monotonic() + 5
        while "a" in ring and time.monotonic() < deadline:
            time.sleep(0.01)
        assert list(ring) == ["b"]
        assert all(tracker.acquire(k).node == "b" for k in keys[:100]), "the tracker follows the ring"
        # Callbacks run on the follower's thread after the ring is swapped in,
        # so the second epoch's event may still be on its way.
        def changed_epochs():
            return [c for c in changes if c["kind"] == "epoch" and c["changed"] and c["revision"] > start]

        deadline = time.monotonic() + 5
        while len(changed_epochs()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        epochs = changed_epochs()
        assert len(epochs) >= 2 and epochs[0]["flows"] and 0 < epochs[0]["moved_share"] < 1
        with pytest.raises(TypeError, match="belongs to a Follower"):
            ring.add_node("x")
        status = follower.status()
        assert status["connected"] and status["stale_for"] == 0.0 and status["revision"] == follower.revision


def test_a_wiped_etcd_is_read_again_and_epochs_only_grow(etcd):
    """etcd wiped and restarted under a follower at revision ~60: it reads the
    new store (revisions from 1 again), and `epoch`, in the follower, its
    status and its events, keeps growing while `revision` falls."""
    for i in range(60):
        member(etcd, "a", {"weight": 1 + i % 3})
    with Follower.etcd(etcd.url, PREFIX, timeout=WAIT) as follower:
        assert follower.epoch == follower.revision >= 60, "one store from its start: epoch is the revision"
        events = []
        follower.on_change(events.append)
        before = follower.epoch
        for round in range(2):
            etcd.wipe_and_restart()
            member(etcd, f"x{round}", {"weight": 1})
            revision = member(etcd, f"y{round}", {"weight": 1})
            want = expected({f"x{round}": 1, f"y{round}": 1}).fingerprint
            deadline = time.monotonic() + WAIT
            while follower.fingerprint != want and time.monotonic() < deadline:
                time.sleep(0.02)
            assert follower.fingerprint == want, follower.status()
            assert follower.wait_for_revision(revision, timeout=WAIT) >= revision
            status = follower.status()
            assert status["revision"] < 10 and status["epoch"] == follower.epoch > before, (status, before)
            before = follower.epoch
        numbers = [e["epoch"] for e in events if e["kind"] == "epoch"]
        assert numbers and numbers == sorted(set(numbers)), numbers
        assert any("reading" in e.get("message", "") for e in events if e["kind"] == "disconnected"), events


def test_bad_records_are_reported_by_key_and_the_rest_is_built(etcd):
    member(etcd, "good", {"weight": 1})
    with Follower.etcd([etcd.url], PREFIX, timeout=WAIT) as follower:
        events = follower.events(timeout=WAIT)
        member(etcd, "bad", {"weight": 1, "colour": "red"})
        rejected = next(e for e in events if e["kind"] == "rejected")
        assert rejected["key"] == f"{PREFIX}/members/bad" and "colour" in rejected["message"]
        assert list(follower.ring) == ["good"]


def test_a_callback_that_raises_does_not_stop_the_follower(etcd, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", reported.append)
    member(etcd, "a", {"weight": 1})
    with Follower.etcd(etcd.url, PREFIX) as follower:
        def explode(event):
            raise RuntimeError("callback failure")
        follower.on_change(explode)
        follower.wait_for_revision(member(etcd, "b", {"weight": 1}))
        follower.wait_for_revision(member(etcd, "c", {"weight": 1}))
        assert list(follower.ring) == ["a", "b", "c"]
    assert reported and all(isinstance(r.exc_value, RuntimeError) for r in reported)


def test_readers_on_other_threads_see_whole_rings(etcd):
    for i in range(20):
        member(etcd, f"n{i:02}", {"weight": 1})
    keys = [f"k{i}" for i in range(64)]
    # What every ring of n00..n19 up to n00..n39 answers: a reader must see one of them.
    wholes = {tuple(expected({f"n{i:02}": 1.0 for i in range(size)}).get_many(keys)) for size in range(20, 41)}
    with Follower.etcd(etcd.url, PREFIX) as follower:
        ring, stop, seen = follower.ring, threading.Event(), []

        def read():
            while not stop.is_set():
                seen.append(tuple(ring.get_many(keys)))

        readers = [threading.Thread(target=read) for _ in range(2)]
        for r in readers:
            r.start()
        for i in range(20, 40):
            follower.wait_for_revision(member(etcd, f"n{i:02}", {"weight": 1}))
        stop.set()
        for r in readers:
            r.join()
        assert len(list(ring)) == 40 and len(seen) > 20
        assert set(seen) <= wholes, "a reader saw a placement no whole ring gives"


def test_unreachable_etcd_and_bad_arguments():
    with pytest.raises(TimeoutError, match="127.0.0.1:1") as raised:
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=0.5)
    assert isinstance(raised.value, shardring.FollowerTimeoutError) and raised.value.code == "RING_TIMEOUT"
    with pytest.raises(shardring.InvalidConfigError) as raised:
        Follower.etcd("nowhere", PREFIX)
    assert raised.value.code == "RING_INVALID_CONFIG"
    with pytest.raises(TypeError):
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=True)
    with pytest.raises(TypeError):
        Follower.etcd("http://127.0.0.1:1", PREFIX, timeout=None)


def test_the_file_follower(tmp_path):
    path = tmp_path / "ring.json"

    def write(config):
        temporary = tmp_path / "ring.json.tmp"
        temporary.write_text(json.dumps(config))
        os.replace(temporary, path)

    write({"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]})
    with Follower.file(str(path)) as follower:
        assert follower.revision == 1 and list(follower.ring) == ["a", "b"]
        write({"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}]})
        assert follower.wait_for_revision(2) == 2
        assert list(follower.ring) == ["a", "b", "c"]


def test_every_follower_error_is_a_ring_error_with_a_code(tmp_path):
    """Follower errors subclass RingError and the builtin a caller catches,
    with Node's codes: a closed follower, a file that cannot be read."""
    config = tmp_path / "ring.json"
    config.write_text('{"format_version": 1, "nodes": [{"id": "a"}]}')
    follower = Follower.file(str(config))
    follower.close()
    for call in (lambda: follower.revision, follower.status, lambda: follower.wait_for_revision(1)):
        with pytest.raises(ValueError, match="closed") as raised:
            call()
        assert isinstance(raised.value, shardring.FollowerClosedError) and raised.value.code == "RING_STOPPED"
    with pytest.raises(shardring.SourceError) as raised:
        Follower.file(str(tmp_path / "missing.json"), timeout=0.5)
    assert raised.value.code == "RING_FILE" and "missing.json" in str(raised.value)
    assert isinstance(raised.value, (ConnectionError, shardring.RingError))


def utf16(text):
    return b"\xff\xfe" + text.encode("utf-16-le")


REFUSED_FILES = [
    ("bom8.json", b"\xef\xbb\xbf" + b'{"format_version": 1, "nodes": [{"id": "a"}]}',
     "the text starts with a byte-order mark (U+FEFF, bytes EF BB BF)"),
    ("utf16.json", utf16('{"format_version": 1, "nodes": [{"id": "a"}]}'),
     "the text starts with a UTF-16 byte-order mark (bytes FF FE)"),
    ("latin1.json", b'{"format_version": 1, "nodes": [{"id": "caf\xe9"}]}',
     "byte 0xE9 at line 1 column 44 (offset 43) is not UTF-8"),
    ("down.json", b'{"format_version": 1, "algorithm": "ketama", "nodes": [{"id": "a:1", "down": true}]}',
     'do not apply to algorithm "ketama"'),
    ("missing.json", None, "cannot read it: No such file or directory"),
    ("directory", "dir", "cannot read it: Is a directory"),
]


@pytest.mark.parametrize("name,content,reason", REFUSED_FILES, ids=[c[0] for c in REFUSED_FILES])
def test_a_file_that_cannot_be_read_or_is_refused_fails_at_once_naming_why(tmp_path, name, content, reason):
    """It used to wait the whole timeout and raise FollowerTimeoutError
    "no answer" (a refused config, a missing file, a directory), or say
    "stream did not contain valid UTF-8" with no position (UTF-16, Latin-1)."""
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    started = time.monotonic()
    with pytest.raises(shardring.SourceError) as raised:
        Follower.file(str(path), timeout=30)
    took = time.monotonic() - started
    assert raised.value.code == "RING_FILE"
    assert isinstance(raised.value, ConnectionError) and isinstance(raised.value, shardring.RingError)
    assert str(raised.value).startswith(f"{path}: ") and reason in str(raised.value), str(raised.value)
    assert took < 5, f"refused after {took:.1f} s, not at once"


def test_a_reload_that_fails_keeps_the_ring_and_says_why(tmp_path):
    path = tmp_path / "ring.json"

    def write(data):
        temporary = tmp_path / "ring.json.tmp"
        temporary.write_bytes(data)
        os.replace(temporary, path)

    write(b'{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}')
    with Follower.file(str(path)) as follower:
        events = follower.events(timeout=30)
        fingerprint = follower.fingerprint

        def next_event(kind):
            for event in events:
                if event["kind"] == kind:
                    return event
            raise AssertionError(f"no {kind} event within 30 s")

        write(b"\xef\xbb\xbf" + b'{"format_version": 1, "nodes": [{"id": "c"}]}')
        event = next_event("rejected")
        assert event["key"] == str(path) and "byte-order mark (U+FEFF" in event["message"], event
        write(utf16('{"format_version": 1, "nodes": [{"id": "c"}]}'))
        assert "UTF-16 byte-order mark" in next_event("rejected")["message"]
        path.unlink()
        event = next_event("disconnected")
        assert str(path) in event["message"] and "No such file or directory" in event["message"], event
        assert (follower.revision, follower.fingerprint, list(follower.ring)) == (1, fingerprint, ["a", "b"])
        write(b'{"format_version": 1, "nodes": [{"id": "z"}]}')
        assert follower.wait_for_revision(2, timeout=30) == 2 and list(follower.ring) == ["z"]


def test_wait_for_revision_takes_a_revision_as_every_int_argument(tmp_path):
    """2**63 and -2**70 raised a plain OverflowError without .code, True
    was taken as 1, and a negative revision returned at once."""
    config = tmp_path / "ring.json"
    config.write_text('{"format_version": 1, "nodes": [{"id": "a"}]}')
    with Follower.file(str(config)) as follower:
        for revision in (2**63, -2**70, -1, 2**64):
            with pytest.raises(shardring.OutOfRangeError) as raised:
                follower.wait_for_revision(revision, timeout=0)
            assert raised.value.code == "ERR_OUT_OF_RANGE" and isinstance(raised.value, ValueError)
            assert str(raised.value) == f"revision must be an int from 0 to {2**63 - 1}, got {revision}"
        for revision in (True, False, 1.0, "1", None):
            with pytest.raises(TypeError, match="revision must be an int, not"):
                follower.wait_for_revision(revision, timeout=0)
        assert follower.wait_for_revision(0) == 1 and follower.wait_for_revision(1) == 1
        with pytest.raises(shardring.FollowerTimeoutError):
            follower.wait_for_revision(2**63 - 1, timeout=0.1)


def test_a_closed_follower_answers_nothing_but_close(tmp_path):
    """ring, transition, read_nodes, write_nodes and on_change worked after
    close() (a callback that never fires) while revision and status raised:
    now every call raises FollowerClosedError; close() again and __exit__ do not."""
    config = tmp_path / "ring.json"
    config.write_text('{"format_version": 1, "nodes": [{"id": "a"}]}')
    follower = Follower.file(str(config))
    ring = follower.ring
    follower.close()
    calls = {
        "ring": lambda: follower.ring,
        "transition": lambda: follower.transition,
        "read_nodes": lambda: follower.read_nodes("k"),
        "write_nodes": lambda: follower.write_nodes("k"),
        "on_change": lambda: follower.on_change(print),
        "revision": lambda: follower.revision,
        "fingerprint": lambda: follower.fingerprint,
        "fingerprint_hex": lambda: follower.fingerprint_hex,
        "status": follower.status,
        "wait_for_revision": lambda: follower.wait_for_revision(1),
        "events": follower.events,
    }
    for name, call in calls.items():
        with pytest.raises(shardring.FollowerClosedError) as raised:
            call()
        assert raised.value.code == "RING_STOPPED" and "closed" in str(raised.value), name
    follower.close()
    assert follower.__exit__(None, None, None) is False
    assert repr(follower) == "Follower(closed)"
    assert ring.get("k") == "a", "a ring taken before close keeps its last snapshot"
