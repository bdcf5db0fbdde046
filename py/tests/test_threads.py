"""Readers place keys while another thread adds and removes nodes: every answer
comes from one whole snapshot."""

import threading

from shardring import Ring

BASE = [f"node-{i}" for i in range(8)]
KEYS = [f"key-{i}" for i in range(2000)]


def test_readers_see_whole_snapshots_while_a_writer_mutates():
    ring = Ring(BASE, vnodes=40)
    without = {k: ring.get(k) for k in KEYS}
    with_extra = {k: o for k, o in zip(KEYS, ring.with_node("extra").get_many(KEYS))}
    stop = threading.Event()
    errors: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            batch = ring.get_many(KEYS)  # one snapshot for the whole batch
            snapshot = without if batch == [without[k] for k in KEYS] else with_extra
            if batch != [snapshot[k] for k in KEYS]:
                errors.append("a batch mixed two rings")
            for key in KEYS[:200]:
                owner = ring.get(key)
                if owner not in (without[key], with_extra[key]):
                    errors.append(f"{key} -> {owner}")
                listed = ring.get_n(key, 3)
                if len(set(listed)) != 3:
                    errors.append(f"preference list {listed}")

    readers = [threading.Thread(target=reader) for _ in range(4)]
    for thread in readers:
        thread.start()
    for _ in range(200):
        ring.add_node("extra")
        ring.remove_node("extra")
    stop.set()
    for thread in readers:
        thread.join()
    assert errors == []
    assert list(ring) == BASE
