"""Eyes on the fleet, against a real etcd: followers count their lookups per
node and render OpenMetrics text that Prometheus's own parser reads, as
does a running rebalance (real memcached servers); six
followers in three languages (Python, Node, the Rust CLI) report under
`P/clients/`, `shardring fleet status` finds them in agreement, reports a
follower frozen with SIGSTOP, and exits non-zero on a forged report."""

import json
import os
import signal
import subprocess
import time
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

import pytest

import shardring
from servers import free_port
from shardring import Follower
from test_rebalance import CLI, ROOT, clients_of, config, memcached, store, words  # noqa: F401 (a fixture)

PREFIX = "/shardring/fleet"
WAIT = 30
INTERVAL = 0.5

# A Node follower that reports as argv[3], makes 1,000 lookups, prints its
# counts and metrics as one JSON line, then runs until stdin closes.
NODE_FOLLOWER = r"""
const { Follower } = require(process.argv[1])
Follower.etcd(process.argv[2], process.argv[3], { reportAs: process.argv[4], reportInterval: Number(process.argv[5]) })
  .then((follower) => {
    for (let i = 0; i < 1000; i++) follower.ring.get(`key-${i}`)
    console.log(JSON.stringify({ counts: follower.lookupCounts(), metrics: follower.metrics() }))
    process.stdin.on('end', () => follower.close())
    process.stdin.resume()
  })
  .catch((error) => { console.error(error); process.exit(3) })
"""


def put_members(etcd, ids):
    for id in ids:
        etcd.ctl("put", f"{PREFIX}/members/{id}", json.dumps({"weight": 1}))
    return int(json.loads(etcd.ctl("get", f"{PREFIX}/members/{ids[-1]}", "-w", "json").stdout)["header"]["revision"])


def fleet_status(etcd):
    done = subprocess.run([str(CLI), "fleet", "status", "--etcd", etcd.url, "--prefix", PREFIX, "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def wait_for(predicate, what):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def families(text):
    parsed = {family.name: family for family in text_string_to_metric_families(text)}
    assert parsed, "no metric parsed"
    return parsed


def lookups_of(parsed):
    return {s.labels["node"]: int(s.value) for s in parsed["shardring_lookups"].samples if s.name.endswith("_total")}


def test_a_follower_counts_its_lookups_and_its_metrics_parse(etcd):
    put_members(etcd, ["a", "b", "c"])
    with Follower.etcd(etcd.url, PREFIX, timeout=WAIT) as follower:
        ring = follower.ring
        keys = [f"key-{i}" for i in range(3000)]
        want = {}
        for key in keys:
            want[ring.get(key)] = want.get(ring.get(key), 0) + 1
        # get counted each key twice above; a batch, get_n and read_nodes once more each.
        ring.get_many(keys)
        for key in keys:
            ring.get_n(key, 2)
            follower.read_nodes(key)
        want = {node: 5 * count for node, count in want.items()}
        assert follower.lookup_counts() == want
        # The source reports itself connected just after the first ring is in place.
        wait_for(lambda: follower.status()["connected"], "a connected follower")
        parsed = families(follower.metrics())
        assert lookups_of(parsed) == want
        info = parsed["shardring_ring"].samples[0].labels
        assert info["fingerprint"] == follower.fingerprint_hex and info["algorithm"] == "ring"
        assert int(info["epoch"]) == follower.epoch
        shares = {s.labels["node"]: s.value for s in parsed["shardring_node_ownership_ratio"].samples}
        assert set(shares) == {"a", "b", "c"} and abs(sum(shares.values()) - 1) < 1e-9
        assert parsed["shardring_points_per_node_min"].samples[0].value == 160
        members = {s.labels["state"]: s.value for s in parsed["shardring_members"].samples}
        assert members == {"active": 3, "warming": 0, "draining": 0}
        assert parsed["shardring_connected"].samples[0].value == 1
        rebuilds = [s for s in parsed["shardring_rebuild_duration_seconds"].samples if s.name.endswith("_count")]
        assert rebuilds[0].value >= 1


def test_six_followers_in_three_languages_agree_and_a_frozen_one_is_reported(etcd):
    put_members(etcd, ["a", "b", "c"])
    python = [Follower.etcd(etcd.url, PREFIX, timeout=WAIT, report_as=f"py-{i}", report_interval=INTERVAL)
              for i in range(2)]
    metrics_ports = [free_port(), free_port()]
    rust = [subprocess.Popen([str(CLI), "watch", "--etcd", etcd.url, "--prefix", PREFIX, "--report-as", f"rust-{i}",
                              "--report-interval", str(INTERVAL), "--metrics-listen", f"127.0.0.1:{metrics_ports[i]}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(2)]
    node = [subprocess.Popen(["node", "-e", NODE_FOLLOWER, str(ROOT / "node"), etcd.url, PREFIX, f"node-{i}",
                              str(INTERVAL)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for i in range(2)]
    try:
        for i, process in enumerate(node):
            report = json.loads(process.stdout.readline())
            want = {}
            for k in range(1000):
                owner = python[0].ring.get(f"key-{k}")
                want[owner] = want.get(owner, 0) + 1
            assert report["counts"] == want, f"node-{i}"
            assert lookups_of(families(report["metrics"])) == want
        for k in range(900):
            python[0].ring.get(f"py-key-{k}")

        ids = {"py-0", "py-1", "rust-0", "rust-1", "node-0", "node-1"}

        def agreed():
            code, status = fleet_status(etcd)
            current = {c["id"] for c in status["clients"] if c["standing"] == "current"}
            return status if code == 0 and current == ids else None

        status = wait_for(agreed, "six current clients")
        fingerprint = status["fingerprint"]
        # The CLI's follower serves its metrics.
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_ports[0]}/metrics", timeout=5) as response:
            served = families(response.read().decode())
        assert served["shardring_ring"].samples[0].labels["fingerprint"] == fingerprint
        assert served["shardring_client_reports"].samples[0].value >= 1
        assert fingerprint == python[0].fingerprint_hex
        assert all(c["fingerprint"] == fingerprint for c in status["clients"])
        # The lookups of the Node and Python clients reach the fleet's sum.
        wait_for(lambda: sum(n["lookups"] for n in fleet_status(etcd)[1]["lookups"].values()) > 0, "lookups")

        # Frozen: rust-1 stops reporting; a new member makes the others move on.
        os.kill(rust[1].pid, signal.SIGSTOP)
        revision = put_members(etcd, ["d"])
        for follower in python:
            follower.wait_for_revision(revision, timeout=WAIT)

        def frozen_reported():
            code, status = fleet_status(etcd)
            standing = {c["id"]: c["standing"] for c in status["clients"]}
            others = all(standing.get(i) == "current" for i in ids - {"rust-1"})
            return (code, status) if others and standing.get("rust-1") in ("stale", "lagging") else None

        code, status = wait_for(frozen_reported, "rust-1 reported as stale or lagging")
        assert code == 1 and not status["agrees"]
        assert status["fingerprint"] == python[0].fingerprint_hex != fingerprint
        os.kill(rust[1].pid, signal.SIGCONT)
        wait_for(lambda: fleet_status(etcd)[0] == 0, "agreement once rust-1 runs again")

        # A forged report: the revision of py-0's, another fingerprint.
        _, status = fleet_status(etcd)
        real = next(c for c in status["clients"] if c["id"] == "py-0")
        forged = {"format_version": 1, "epoch": real["epoch"], "revision": real["revision"],
                  "fingerprint": "0123456789abcdef", "algorithm": "ring", "connected": True,
                  "interval_seconds": 3600, "reported_at_ms": int(time.time() * 1000), "lookups": {}}
        etcd.ctl("put", f"{PREFIX}/clients/forged", json.dumps(forged))
        code, status = fleet_status(etcd)
        assert code == 1 and not status["agrees"]
        assert any(s["revision"] == real["revision"] and "0123456789abcdef" in s["fingerprints"]
                   for s in status["split"]), status["split"]
        text = subprocess.run([str(CLI), "fleet", "status", "--etcd", etcd.url, "--prefix", PREFIX],
                              capture_output=True, text=True, timeout=60)
        assert text.returncode == 1 and "agreement: NO" in text.stdout and "split:" in text.stdout
    finally:
        for process in rust:
            os.kill(process.pid, signal.SIGCONT)
            process.terminate()
            process.wait(timeout=WAIT)
        for process in node:
            process.stdin.close()
            process.wait(timeout=WAIT)
        for follower in python:
            follower.close()
    # A closed follower revokes its lease: its report goes at once.
    gone = json.loads(etcd.ctl("get", f"{PREFIX}/clients/py-0", "-w", "json").stdout)
    assert not gone.get("kvs"), "py-0's report outlived its follower"


def test_route_prints_owner_preference_sets_and_arc(etcd, tmp_path):
    config = {"format_version": 1, "algorithm": "ring", "nodes": [
        {"id": "a"}, {"id": "b"}, {"id": "c", "state": "warming"}]}
    path = tmp_path / "ring.json"
    path.write_text(json.dumps(config))
    transition = shardring.Transition.from_json(json.dumps(config))
    ring = shardring.Ring.from_json(json.dumps({**config, "nodes": config["nodes"][:2]}))
    keys = [f"key-{i}" for i in range(40)]
    done = subprocess.run([str(CLI), "route", "--config", str(path), "--json", "--replicas", "2", *keys],
                          capture_output=True, text=True, timeout=60, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["key"] for line in lines] == keys
    moving = 0
    for line in lines:
        key = line["key"]
        assert line["owner"] == ring.get(key) and line["preference"] == ring.get_n(key, 2)
        assert line["read"] == transition.read_nodes(key) and line["write"] == transition.write_nodes(key)
        arc = line["arc"]
        assert arc["owner"] == line["owner"]
        inside = arc["start"] <= arc["position"] <= arc["end"] if arc["start"] <= arc["end"] else (
            arc["position"] >= arc["start"] or arc["position"] <= arc["end"])
        assert inside and line["hash"] == ring.hash_key(key)
        moving += len(line["write"]) == 2
    assert 0 < moving < len(keys), "some keys move to the warming member"


def test_a_running_rebalance_serves_its_progress_as_metrics(memcached, tmp_path):
    keys = words(20_000)
    ids = [s.address for s in memcached]
    store(clients_of(memcached), shardring.Ring(ids[:4]), keys)
    port = free_port()
    run = subprocess.Popen([str(CLI), "rebalance", "--from", config(tmp_path / "old.json", ids[:4]), "--to",
                            config(tmp_path / "new.json", ids), "--backend", "memcached", "--rate", "3000",
                            "--metrics-listen", f"127.0.0.1:{port}", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def scraped():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                    assert response.headers["Content-Type"].startswith("application/openmetrics-text")
                    parsed = families(response.read().decode())
            except OSError:
                return None
            handled = parsed["shardring_rebalance_keys_handled"].samples[0].value
            return parsed if handled >= 1000 else None

        parsed = wait_for(scraped, "1,000 keys handled")
        moved = {(s.labels["source"], s.labels["target"]): s.value
                 for s in parsed["shardring_rebalance_keys_moved"].samples if s.name.endswith("_total")}
        assert moved and all(source in ids[:4] and target == ids[4] for source, target in moved)
        handled = parsed["shardring_rebalance_keys_handled"].samples[0].value
        to_move = parsed["shardring_rebalance_keys_to_move"].samples[0].value
        assert 1000 <= sum(moved.values()) <= handled <= to_move
        moved_bytes = sum(s.value for s in parsed["shardring_rebalance_moved_bytes"].samples
                          if s.name.endswith("_total"))
        assert moved_bytes >= sum(moved.values()), "every word is at least a byte"
        assert parsed["shardring_rebalance_running"].samples[0].value == 1
        assert 0 < parsed["shardring_rebalance_rate_keys_per_second"].samples[0].value <= 6000
        assert parsed["shardring_rebalance_eta_seconds"].samples[0].value >= 0
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        final = json.loads(out.strip().splitlines()[-1])
        assert final["copied"] >= sum(moved.values())
    finally:
        run.kill()
        run.wait()


def test_a_ring_counts_its_lookups_once_asked_across_in_place_changes():
    ring = shardring.Ring(["a", "b", "c"])
    ring.get("before")
    assert ring.lookup_counts() == {}
    ring.count_lookups()
    keys = [f"key-{i}" for i in range(3000)]
    want = {}
    for key in keys:
        want[ring.get(key)] = want.get(ring.get(key), 0) + 2
    assert ring.lookup_counts() == want
    ring.add_node("d")
    ring.count_lookups()
    ring.get_many(keys)
    d = sum(1 for key in keys if ring.get(key) == "d")
    counts = ring.lookup_counts()
    assert sum(counts.values()) == 2 * len(keys) + 2 * len(keys) and counts["d"] == 2 * d > 0


def test_node_ids_with_quotes_backslashes_and_line_breaks_stay_one_label(tmp_path):
    ids = ['a"b', "c\\d", "e\nf", "plain"]
    path = tmp_path / "ring.json"
    path.write_text(json.dumps({"format_version": 1, "nodes": [{"id": i} for i in ids]}))
    with Follower.file(path) as follower:
        want = {}
        for key in [f"key-{i}" for i in range(1000)]:
            owner = follower.ring.get(key)
            want[owner] = want.get(owner, 0) + 1
        parsed = families(follower.metrics())
        assert lookups_of(parsed) == want and set(want) == set(ids)
        shares = {s.labels["node"] for s in parsed["shardring_node_ownership_ratio"].samples}
        assert shares == set(ids)


def test_bad_report_settings_are_typed_errors(etcd):
    put_members(etcd, ["a"])
    for options, word in [({"report_as": "a/b"}, "client id"), ({"report_as": ""}, "client id"),
                          ({"report_as": "x", "report_interval": 0.01}, "100 ms"),
                          ({"report_as": "x", "report_interval": 1e300}, "report_interval"),
                          ({"report_as": "x", "report_interval": -1.0}, "report_interval")]:
        with pytest.raises(shardring.InvalidConfigError, match=word):
            Follower.etcd(etcd.url, PREFIX, timeout=WAIT, **options)
