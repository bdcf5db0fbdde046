"""One text for a fingerprint: every object that has a fingerprint gives
`fingerprint_hex`, 16 lowercase hex digits zero-padded, the exact text the CLI
prints (`shardring stats`, `shardring watch`) and Node's `fingerprintHex`
gives (node/__test__/fingerprint.test.mjs compares the same CLI text)."""

import json
import os
import pathlib
import subprocess

import pytest

import shardring
from shardring import Follower, Ring, Transition

CLI = pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "shardring"


def config_with_a_leading_zero():
    """The first seed whose ring's fingerprint is below 2^60, so its text
    starts with a 0 that only zero-padding keeps."""
    for seed in range(1000):
        ring = Ring(["a", "b", "c"], seed=seed)
        if ring.fingerprint < 1 << 60:
            return json.loads(ring.to_json())
    raise AssertionError("no fingerprint below 2^60 in 1000 seeds")


def write(path, config):
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(config))
    os.replace(temporary, path)


def cli(*args):
    assert CLI.exists(), f"{CLI} is missing: run `make build-cli` (make test-py does)"
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=60, check=True).stdout


def test_the_text_is_16_hex_digits_zero_padded():
    config = config_with_a_leading_zero()
    ring = Ring.from_json(json.dumps(config))
    assert ring.fingerprint_hex == f"{ring.fingerprint:016x}"
    assert len(ring.fingerprint_hex) == 16 and ring.fingerprint_hex.startswith("0")
    assert int(ring.fingerprint_hex, 16) == ring.fingerprint
    assert ring.fingerprint_hex in repr(ring)
    # It follows the ring as it changes in place.
    ring.add_node("d")
    assert ring.fingerprint_hex == f"{ring.fingerprint:016x}" != Ring.from_json(json.dumps(config)).fingerprint_hex


def test_rings_transitions_followers_and_change_events_give_the_cli_text(tmp_path):
    first = config_with_a_leading_zero()
    second = {**first, "nodes": [*first["nodes"], {"id": "d", "weight": 2.0}]}
    path = tmp_path / "ring.json"
    write(path, first)
    stats = cli("stats", str(path)).splitlines()[0]
    assert stats.endswith(f"fingerprint {Ring.from_json(json.dumps(first)).fingerprint_hex}"), stats
    watch = subprocess.Popen([str(CLI), "watch", "--file", str(path), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def printed(after):
        """The CLI's next epoch past revision `after` (it may print its first epoch twice)."""
        while True:
            line = json.loads(watch.stdout.readline())
            if line["kind"] == "epoch" and line["revision"] > after:
                return line

    try:
        with Follower.file(str(path)) as follower:
            epochs = follower.events(timeout=30)
            first_epoch = printed(0)
            text = first_epoch["fingerprint"]
            assert text.startswith("0") and len(text) == 16
            ring = Ring.from_json(json.dumps(first))
            assert ring.fingerprint_hex == text
            assert Transition.from_json(json.dumps(first)).fingerprint_hex == text
            assert follower.fingerprint_hex == follower.ring.fingerprint_hex == text
            assert follower.status()["fingerprint_hex"] == text
            assert follower.transition.fingerprint_hex == text

            write(path, second)
            text = printed(first_epoch["revision"])["fingerprint"]
            # The first ring's epoch may reach the iterator too: take the new ring's.
            event = next(e for e in epochs if e["kind"] == "epoch" and e["fingerprint"] != ring.fingerprint)
            assert event["fingerprint_hex"] == text == Ring.from_json(json.dumps(second)).fingerprint_hex
            assert event["fingerprint"] == int(text, 16)
            follower.wait_for_revision(event["revision"])
            assert follower.fingerprint_hex == follower.status()["fingerprint_hex"] == text
        watch.terminate()
        assert watch.wait(timeout=60) == 0, watch.stderr.read()
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()


def test_a_transition_between_rings_gives_its_own_text():
    old = Ring(["a", "b"])
    moving = Transition.between(old, old.with_node("c"))
    assert moving.fingerprint_hex == f"{moving.fingerprint:016x}" != old.fingerprint_hex
    assert Transition.between(old, old).fingerprint_hex == old.fingerprint_hex


@pytest.mark.parametrize("algorithm", shardring.ALGORITHMS)
def test_every_algorithm_gives_the_cli_text(tmp_path, algorithm):
    ring = Ring([f"10.0.0.{i}:11211" for i in range(1, 4)], algorithm=algorithm)
    path = tmp_path / "ring.json"
    path.write_text(ring.to_json())
    assert cli("stats", str(path)).splitlines()[0].endswith(f"fingerprint {ring.fingerprint_hex}")
