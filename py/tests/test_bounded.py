"""Bounded loads through Python: capacities, the context manager, swaps,
errors and threads."""

import math
import threading

import pytest

import shardring
from shardring import LoadTracker, Ring


def test_hot_key_spills_in_preference_order_within_capacity():
    ring = Ring(["a", "b", "c", "d"])
    tracker = LoadTracker(ring, 0.25)
    leases = [tracker.acquire("hot") for _ in range(100)]
    assert leases[0].node == ring.get("hot") and leases[0].probes == 1
    # Capacity ceil(1.25 * (T + 1) / 4) is 1 for the first three requests,
    # 2 for the fourth: they walk the preference list, then return to its head.
    order = ring.get_n("hot", 4)
    assert [lease.node for lease in leases[:4]] == [order[0], order[1], order[2], order[0]]
    assert max(lease.probes for lease in leases) == 4
    assert sum(tracker.loads.values()) == tracker.total_load == 100
    assert max(tracker.loads.values()) <= math.ceil(1.25 * 100 / 4)
    for lease in leases:
        lease.release()
    assert tracker.total_load == 0


def test_context_manager_releases_on_exit_even_on_error():
    tracker = LoadTracker(Ring(["a", "b"]), 0.5)
    with tracker.acquire("k") as node:
        assert node in ("a", "b")
        assert tracker.total_load == 1
    assert tracker.total_load == 0
    with pytest.raises(RuntimeError):
        with tracker.acquire("k"):
            raise RuntimeError("boom")
    assert tracker.total_load == 0
    lease = tracker.acquire("k")
    lease.release()
    assert lease.released
    with pytest.raises(shardring.NoLoadError):
        lease.release()
    with tracker.acquire("k") as node:
        pass
    with pytest.raises(shardring.NoLoadError):
        tracker.release(node)


def test_swap_carries_loads_by_id_and_errors_name_the_value():
    ring = Ring(["a", "b", "c"])
    tracker = LoadTracker(ring, 1.0)
    leases = [tracker.acquire(f"k{i}") for i in range(30)]
    before = tracker.loads
    tracker.swap(ring.without_node("a").with_node("z"))
    assert tracker.loads == {"b": before["b"], "c": before["c"], "z": 0}
    gone = next(lease for lease in leases if lease.node == "a") if before["a"] else None
    if gone is not None:
        with pytest.raises(shardring.UnknownNodeError):
            gone.release()
        with tracker.acquire("x"):
            pass
    for epsilon in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(shardring.InvalidConfigError, match="epsilon"):
            LoadTracker(ring, epsilon)
    with pytest.raises(shardring.EmptyRingError):
        LoadTracker(Ring({"drained": 0.0}), 0.25).acquire("k")
    with pytest.raises(TypeError):
        tracker.acquire(42)


def test_threads_acquire_and_release_together():
    tracker = LoadTracker(Ring([f"n{i}" for i in range(8)]), 0.1)
    errors = []

    def work(t):
        try:
            for i in range(3000):
                with tracker.acquire(f"t{t}-{i % 37}"):
                    pass
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and tracker.total_load == 0


def test_a_tracker_follows_its_ring_as_it_changes_in_place():
    # A worker that removes a failed node must stop sending it requests at once.
    ring = Ring(["a", "b", "c"])
    tracker = LoadTracker(ring, 0.25)
    held = [tracker.acquire(f"k{i}") for i in range(30)]
    on_a = sum(1 for lease in held if lease.node == "a")
    assert on_a > 0
    ring.remove_node("a")
    assert "a" not in tracker.loads and tracker.total_load == 30 - on_a
    assert all(tracker.acquire(f"k{i}").node != "a" for i in range(200))
    ring.add_node("d")
    assert tracker.loads["d"] == 0
    assert any(tracker.acquire(f"x{i}").node == "d" for i in range(200))
    # swap() moves the tracker onto another ring, which it then follows.
    other = ring.without_node("b")
    tracker.swap(other)
    other.remove_node("c")
    assert set(tracker.loads) == {"d"}
