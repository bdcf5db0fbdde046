"""Derived `slots` rings against a real Redis Cluster (Debian's
redis-server and redis-cli 7.0): masters made by `redis-cli --cluster
create`, grown with `add-node` + `rebalance --cluster-use-empty-masters`,
and drained with `rebalance --cluster-weight <id>=0`. After each step the
ring derived by shardring must hold exactly the slots `CLUSTER SLOTS`
reports, slot for slot.

redis-cli lists the cluster as the node it contacts, then that node's
`CLUSTER NODES` order, which Redis does not fix; where equal balances make
that order matter (which of several equal destinations a drained master
feeds first), the ring is built in the order redis-cli read."""

import json
import subprocess
import time

import shardring
from servers import RedisClusterNode


def cli(*args):
    result = subprocess.run(["redis-cli", *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"redis-cli {args}: {result.stdout[-2000:]} {result.stderr[-2000:]}"
    return result.stdout


def wait_until_agreed(members):
    """Until every member knows all the others and they agree on the slots."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        check = subprocess.run(["redis-cli", "--cluster", "check", members[0].address], capture_output=True, text=True)
        known = [len(cli("-p", str(m.port), "cluster", "nodes").strip().splitlines()) for m in members]
        if check.returncode == 0 and "All nodes agree" in check.stdout and known == [len(members)] * len(members):
            return
        time.sleep(0.2)
    raise AssertionError(f"the cluster did not converge: {check.stdout[-2000:]}")


def slot_table(node):
    """Owner (host:port) of each of the 16,384 slots, from CLUSTER SLOTS."""
    table = [None] * 16384
    reply = cli("-p", str(node.port), "--json", "cluster", "slots")
    for entry in json.loads(reply):
        first, last, (host, port, *_) = entry[0], entry[1], entry[2]
        for slot in range(first, last + 1):
            table[slot] = f"{host}:{port}"
    assert None not in table
    return table


def cli_order(contacted):
    """The node list redis-cli works on: the contacted node, then its CLUSTER NODES order."""
    others = []
    for line in cli("-p", str(contacted.port), "cluster", "nodes").strip().splitlines():
        fields = line.split()
        address = fields[1].split("@")[0]
        if "myself" not in fields[2]:
            others.append(address)
    return [contacted.address, *others]


def ring_of(table, order):
    """A slots ring holding exactly `table`, its nodes in `order`."""
    ranges = {address: [] for address in order}
    start = 0
    for slot in range(1, 16385):
        if slot == 16384 or table[slot] != table[start]:
            ranges[table[start]].append([start, slot - 1])
            start = slot
    nodes = [{"id": a, "weight": 1.0, "slots": ranges[a]} if ranges[a] else {"id": a, "weight": 1.0} for a in order]
    return shardring.Ring.from_json(json.dumps({"format_version": 1, "algorithm": "slots", "nodes": nodes}))


def table_of(ring):
    table = [None] * 16384
    for node in json.loads(ring.to_json())["nodes"]:
        for first, last in node.get("slots", []):
            for slot in range(first, last + 1):
                table[slot] = node["id"]
    if None in table:  # a fresh assignment lists no ranges
        return [ring.get_by_hash(slot) for slot in range(16384)]
    return table


def moved(before, after):
    return sum(1 for a, b in zip(before, after) if a != b)


def test_derived_slots_rings_predict_redis_cli_rebalance():
    nodes = []
    try:
        nodes = [RedisClusterNode() for _ in range(5)]
        a, b, c, d, e = nodes
        cli("--cluster", "create", a.address, b.address, c.address, "--cluster-yes")
        wait_until_agreed(nodes[:3])
        created = slot_table(a)
        ring = shardring.Ring([a.address, b.address, c.address], algorithm="slots")
        assert table_of(ring) == created, "create's ranges"

        # 3 -> 4 masters: add-node, then rebalance with empty masters.
        cli("--cluster", "add-node", d.address, a.address)
        wait_until_agreed(nodes[:4])
        cli("--cluster", "rebalance", a.address, "--cluster-use-empty-masters")
        wait_until_agreed(nodes[:4])
        four = slot_table(a)
        derived = ring.with_node(d.address)
        assert table_of(derived) == four
        assert moved(created, four) == 4096

        # 4 -> 5 masters.
        cli("--cluster", "add-node", e.address, a.address)
        wait_until_agreed(nodes)
        cli("--cluster", "rebalance", a.address, "--cluster-use-empty-masters")
        wait_until_agreed(nodes)
        five = slot_table(a)
        derived = ring_of(four, [n.address for n in nodes[:4]]).with_node(e.address)
        assert table_of(derived) == five
        assert moved(four, five) == 3280

        # Drain b (weight 0), as before `del-node`: its slots go to the
        # others, equal destinations in redis-cli's list order.
        order = cli_order(a)
        node_id = cli("-p", str(b.port), "cluster", "myid").strip()
        cli("--cluster", "rebalance", a.address, f"--cluster-weight", f"{node_id}=0")
        wait_until_agreed(nodes)
        drained = slot_table(a)
        assert b.address not in drained
        derived = ring_of(five, order).without_node(b.address)
        assert table_of(derived) == drained
        print(f"Redis Cluster: 3 derivations, {3 * 16384} slots compared, all matched")
    finally:
        for node in nodes:
            node.close()
