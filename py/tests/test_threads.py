"""Concurrency stress: reader threads place keys (get_many releases the GIL)
while a writer keeps changing the shared ring in place (remove x, add y,
remove y, add x, ...), for every algorithm, about 10 s in all
(SHARDRING_STRESS_SECS changes it). Every answer must come from one whole
snapshot: a get_many batch must equal, key for key, what a ring rebuilt from
one of the published states answers, and each get / get_n answer must be one
of those states' answers for its key. The writer records a state's answers
before it publishes the state."""

import os
import threading
import time

import pytest

import shardring
from shardring import Ring

SERVERS = [f"10.0.0.{i}:11211" for i in range(1, 9)]
X, Y = "10.0.0.100:11211", "10.0.0.101:11211"
KEYS = [f"stress-key-{i}" for i in range(256)]
SECONDS = float(os.environ.get("SHARDRING_STRESS_SECS", "10")) / len(shardring.ALGORITHMS)


def answers(ring: Ring) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Owners and preference lists of 3 of every key, from a rebuilt ring."""
    rebuilt = Ring.from_json(ring.to_json())
    assert rebuilt.fingerprint == ring.fingerprint
    return tuple(rebuilt.get_many(KEYS)), tuple(tuple(rebuilt.get_n(k, 3)) for k in KEYS)


@pytest.mark.parametrize("algorithm", shardring.ALGORITHMS)
def test_readers_see_whole_snapshots_while_a_writer_mutates(algorithm):
    ring = Ring([*SERVERS, X], algorithm=algorithm)
    owners, lists = answers(ring)
    batches = {owners}  # every published state's owners, in key order
    # Each key's owners and lists over the states (membership tests only: the
    # writer adds to these sets while readers test them).
    key_owners = [{o} for o in owners]
    key_lists = [{l} for l in lists]
    stop = threading.Event()
    errors: list[str] = []
    reads = [0]

    def reader() -> None:
        while not stop.is_set():
            batch = tuple(ring.get_many(KEYS))  # one snapshot, GIL released
            if batch not in batches:
                errors.append("a get_many batch matches no published state")
            for i in range(0, len(KEYS), 16):
                owner, listed = ring.get(KEYS[i]), tuple(ring.get_n(KEYS[i], 3))
                if owner not in key_owners[i] or listed not in key_lists[i]:
                    errors.append(f"{KEYS[i]}: {owner}, {listed} match no published state")
            reads[0] += 1

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for thread in readers:
        thread.start()
    steps = [
        (lambda r: r.without_node(X), lambda: ring.remove_node(X)),
        (lambda r: r.with_node(Y), lambda: ring.add_node(Y)),
        (lambda r: r.without_node(Y), lambda: ring.remove_node(Y)),
        (lambda r: r.with_node(X), lambda: ring.add_node(X)),
    ]
    swaps = 0
    end = time.monotonic() + SECONDS
    # At least a few swaps and reads, however slowly a loaded machine hands
    # the GIL round, then until the time is up.
    def short() -> bool:
        return swaps < 4 or (reads[0] < 3 and any(t.is_alive() for t in readers))

    while short() or time.monotonic() < end:
        derive, mutate = steps[swaps % 4]
        owners, lists = answers(derive(ring))  # recorded before it is published
        batches.add(owners)
        for i, (owner, listed) in enumerate(zip(owners, lists)):
            key_owners[i].add(owner)
            key_lists[i].add(listed)
        mutate()
        swaps += 1
    stop.set()
    for thread in readers:
        thread.join()
    assert reads[0] >= 3, "the readers died"
    assert errors == [], f"{len(errors)} torn reads over {swaps} swaps, e.g. {errors[:3]}"
