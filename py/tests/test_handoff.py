"""The handoff protocol on real servers (Debian's redis-server and etcd,
each on a free loopback port, stopped by PID): `shardring rebalance
--migrate` moves keys with MIGRATE while 4 writer processes (two in
Python, two in Node) send SET, INCR,
HSET, HINCRBY, RPUSH, SADD, EXPIRE and DEL through `Transition.route` and
the Redis guard. Every acknowledged command is replayed into a model: each
reply must be the model's (an INCR that started again from 0 on the new
owner shows at once), and afterwards each key's final owner holds exactly
the model's value, no deleted key is back and no server holds a key it does
not own. Also: the guard itself against a real Redis, and a run killed
mid-move and run again."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import redis

import shardring
from test_readme import run
from test_rebalance import CLI, ROOT, config, redises  # noqa: F401 (redises is a fixture)
from test_server_tls import PASSWORD, USER, pki, tls_redises  # noqa: F401 (pki, tls_redises are fixtures)

PREFIX = "/shardring/handoff"


def client_tls(env):
    """redis-py's keyword arguments for the servers `env` describes (as the
    writers read SHARDRING_TEST_REDIS): TLS with a client certificate and
    an ACL user, or nothing for plain servers."""
    if not env:
        return {}
    given = json.loads(env["SHARDRING_TEST_REDIS"])
    return {"ssl": True, "ssl_ca_certs": given["ca"], "ssl_certfile": given["cert"], "ssl_keyfile": given["key"],
            "username": given["user"], "password": given["password"]}


def test_the_guard_runs_a_command_where_the_key_is_and_else_says_it_moved(redises):
    server = redis.Redis(host="127.0.0.1", port=redises[0].port)
    assert server.script_load(shardring.REDIS_GUARD) == shardring.REDIS_GUARD_SHA1
    mark = shardring.Transition.between(shardring.Ring(["a"]), shardring.Ring(["a", "b"])).handoff_mark
    assert mark.startswith("shardring:handoff:") and len(mark) == 34

    def guard(key, *command):
        return server.evalsha(shardring.REDIS_GUARD_SHA1, 2, key, mark, *command)

    server.set("here", 5)
    assert guard("here", "INCRBY", "2") == 7
    server.hset("h", "a", 1)
    assert guard("h", "HINCRBY", "a", "3") == 4
    assert guard("h", "HGETALL") == [b"a", b"4"]
    # Before the mover marks the server, a missing key is created here.
    assert guard("early", "INCR") == 1 and server.get("early") == b"1"
    server.hset(mark, mark, 1)  # the mover's mark: a hash
    with pytest.raises(redis.exceptions.ResponseError, match=f"^{shardring.MOVED_REPLY}$"):
        guard("absent", "INCR")
    assert server.exists("absent") == 0, "a moved reply ran nothing"
    assert guard("here", "GET") == b"7", "a key still here runs here"
    # An expired key is not there.
    server.set("brief", 1, px=1)
    time.sleep(0.01)
    with pytest.raises(redis.exceptions.ResponseError, match=shardring.MOVED_REPLY):
        guard("brief", "GET")
    # The command's own error comes back as itself.
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        guard("h", "INCR")
    # Keys in doubt (a MIGRATE cut short): run where they are; one deleted
    # here is marked so; while missing, nothing runs and the client waits.
    server.set("doubted", 1)
    server.rpush("list", "x")
    server.hset(mark, mapping={"doubted": 1, "list": 1, "gone": 1})
    assert guard("doubted", "INCR") == 2 and server.hget(mark, "doubted") == b"1", "changed, not deleted"
    assert guard("list", "LPOP") == b"x" and server.hget(mark, "list") == b"deleted", "its last element popped"
    assert guard("doubted", "DEL") == 1 and server.hget(mark, "doubted") == b"deleted"
    for key in ["doubted", "list", "gone"]:
        with pytest.raises(redis.exceptions.ResponseError, match=f"^{shardring.TRYAGAIN_REPLY}$"):
            guard(key, "HSET", "f", "1")
        assert server.exists(key) == 0, "a try-again reply ran nothing"
    assert guard("here", "DEL") == 1 and server.hexists(mark, "here") == 0, "a key not in doubt is not marked"


def test_the_docs_client_follows_a_key_from_its_old_owner_to_its_new_one(redises):
    """docs/transitions.md's `call`, as written, against two real Redis servers."""
    _, scope = run(("docs/transitions.md", 1))
    a, b = (s.address for s in redises[:2])
    clients = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises[:2]}
    follower = type("Follower", (), {"transition": shardring.Transition.between(shardring.Ring([a]),
                                                                                 shardring.Ring([a, b]))})
    key = next(f"k{i}" for i in range(100) if follower.transition.route(f"k{i}").moving)
    clients[a].set(key, 1)
    mark = follower.transition.handoff_mark
    clients[a].hset(mark, mark, 1)  # the mover's mark
    assert scope["call"](follower, clients, key, "INCR") == 2, "the key is on its old owner: it runs there"
    assert clients[a].migrate("127.0.0.1", redises[1].port, [key], 0, 5000) == b"OK"
    assert scope["call"](follower, clients, key, "INCR") == 3, "moved: the guard says so and it runs on the new owner"
    assert (clients[a].exists(key), clients[b].get(key)) == (0, b"3")
    fresh = next(f"f{i}" for i in range(100) if follower.transition.route(f"f{i}").moving)
    assert scope["call"](follower, clients, fresh, "RPUSH", "x") == 1
    assert (clients[a].exists(fresh), clients[b].lrange(fresh, 0, -1)) == (0, [b"x"]), "a new key lands on its new owner"
    doubted = next(f"d{i}" for i in range(100) if follower.transition.route(f"d{i}").moving)
    clients[a].hset(mark, doubted, "deleted")
    settle = threading.Timer(0.2, lambda: clients[a].hdel(mark, doubted))  # the mover ends the doubt
    settle.start()
    started = time.monotonic()
    assert scope["call"](follower, clients, doubted, "INCR") == 1, "held back while in doubt, then sent on"
    assert time.monotonic() - started >= 0.15 and (clients[a].exists(doubted), clients[b].get(doubted)) == (0, b"1")
    settle.join()


def test_route_is_the_old_and_the_new_owner():
    old, new = shardring.Ring(["a", "b", "c", "d"]), shardring.Ring(["a", "b", "c", "d", "e"])
    transition = shardring.Transition.between(old, new)
    moving = 0
    for i in range(2000):
        route = transition.route(f"k{i}")
        assert (route.old, route.new) == (old.get(f"k{i}"), new.get(f"k{i}"))
        assert route.moving == (route.old != route.new)
        moving += route.moving
    assert 300 < moving < 500, f"{moving} of 2000 keys move to the 5th node"
    route = transition.route(b"k1")
    assert repr(route).startswith("Route(old=") and isinstance(route.moving, bool)
    with pytest.raises(TypeError):
        transition.route(1)


class Model:
    """The acknowledged commands applied in order: per key, its type and
    value, and whether an EXPIRE set a time to live."""

    def __init__(self):
        self.values = {}
        self.ttl = set()
        # key -> (value without, value with) its one command of unknown outcome.
        self.unknown = {}

    def apply(self, key, command, args, reply):
        if reply == "unknown":
            without = self.values.get(key)
            trial = Model()
            trial.values = {key: without} if without is not None else {}
            try:
                trial.apply(key, command, args, None)
            except AssertionError:
                pass  # the reply is not checked; the value is what counts
            self.unknown[key] = (without, trial.values.get(key))
            return
        value = self.values.get(key)
        if command == "SET":
            self.values[key] = ("string", args[0])
            self.ttl.discard(key)
            return
        if command == "INCR":
            number = int(value[1]) + 1 if value else 1
            self.values[key] = ("string", str(number))
            expected = number
        elif command == "HSET":
            fields = dict(value[1]) if value else {}
            expected = int(args[0] not in fields)
            fields[args[0]] = args[1]
            self.values[key] = ("hash", fields)
        elif command == "HINCRBY":
            fields = dict(value[1]) if value else {}
            fields[args[0]] = str(int(fields.get(args[0], "0")) + int(args[1]))
            self.values[key] = ("hash", fields)
            expected = int(fields[args[0]])
        elif command == "RPUSH":
            items = list(value[1]) if value else []
            items.append(args[0])
            self.values[key] = ("list", items)
            expected = len(items)
        elif command == "SADD":
            members = set(value[1]) if value else set()
            expected = int(args[0] not in members)
            members.add(args[0])
            self.values[key] = ("set", members)
        elif command == "EXPIRE":
            expected = int(value is not None)
            if value is not None:
                self.ttl.add(key)
        elif command == "DEL":
            expected = int(value is not None)
            self.values.pop(key, None)
            self.ttl.discard(key)
        else:
            raise AssertionError(command)
        assert reply == expected, f"{command} {key} {args}: the server answered {reply}, the model {expected}"


def held(connection, key):
    kind = connection.type(key).decode()
    if kind == "string":
        return ("string", connection.get(key).decode())
    if kind == "hash":
        return ("hash", {k.decode(): v.decode() for k, v in connection.hgetall(key).items()})
    if kind == "list":
        return ("list", [v.decode() for v in connection.lrange(key, 0, -1)])
    if kind == "set":
        return ("set", {v.decode() for v in connection.smembers(key)})
    return None


@pytest.mark.parametrize("change,fault", [("join", None), ("drain", None), ("join", "kill"), ("join", "restart target"),
                                          ("join", "restart source"), ("join", "tls"), ("join", "promote early"),
                                          ("drain", "kill"), ("drain", "restart source")])
def test_every_command_survives_a_migrating_move(etcd, request, tmp_path, change, fault):
    """4 -> 5 (the 5th joins warming) or 5 -> 4 (the 5th drains) under 4
    writer processes; with "kill", the rebalancer is SIGKILLed mid-move and
    run again; with "restart target" the joining server, with "restart
    source" an old owner (the draining server in a drain; each with an
    append-only file) is SIGKILLed mid-move and started again: the run fails naming it or completes, and a
    run after it completes; with "tls" the servers speak TLS alone, require
    client certificates and an ACL user, and MIGRATE to each other over TLS,
    and every writer and the mover connect so; with "promote early" an
    operator makes the joining member active mid-move, racing the slow
    copy, and is refused (the rebalancer holds the move lock). A writer's command whose
    connection failed has an unknown outcome: its key must hold the value
    with or without it."""
    redises, writer_env, mover_flags, mover_env = None, {}, [], {}
    if fault == "tls":
        redises = request.getfixturevalue("tls_redises")
        pki = request.getfixturevalue("pki")
        cert, key = pki.client
        writer_env = {"SHARDRING_TEST_REDIS": json.dumps({"ca": pki.ca.cert, "cert": cert, "key": key, "user": USER,
                                                          "password": PASSWORD})}
        mover_flags = ["--tls-ca", pki.ca.cert, "--tls-cert", cert, "--tls-key", key, "--redis-user", USER]
        mover_env = {"SHARDRING_REDIS_PASSWORD": PASSWORD}
    else:
        redises = request.getfixturevalue("redises")
    ids = [s.address for s in redises]
    # The joining server is a target; in a drain the draining one is the source.
    restarted = {"restart target": redises[4], "restart source": redises[0 if change == "join" else 4]}.get(fault)
    if restarted is not None:
        restarted.stop()
        restarted.appendonly = True
        restarted.start()
    before, after = (ids[:4], ids) if change == "join" else (ids, ids[:4])
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port, **client_tls(writer_env)) for s in redises}
    agents, writers, rebalancers = [], [], []

    def join(node, state="active"):
        agent = subprocess.Popen([str(CLI), "member", "join", "--etcd", etcd.url, "--prefix", PREFIX, "--id", node,
                                  "--ttl", "5", "--state", state], stdout=subprocess.PIPE, text=True)
        agents.append(agent)
        line = agent.stdout.readline()
        assert line.startswith("joined") and state in line, line

    def rebalance(*extra):
        process = subprocess.Popen([str(CLI), "rebalance", "--etcd", etcd.url, "--prefix", PREFIX, "--backend",
                                    "redis", "--migrate", "--once", "--grace", "1", "--json", *mover_flags, *extra],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, **mover_env})
        rebalancers.append(process)
        return process

    try:
        for node in before:
            join(node)
        # Data from before the change: counters, some with a time to live.
        old = shardring.Ring(before)
        model = Model()
        loads = {node: c.pipeline(transaction=False) for node, c in connections.items()}
        for w in range(4):
            for i in range(0, 2000, 2):
                key = f"w{w}:{i}"
                loads[old.get(key)].set(key, "100")
                model.apply(key, "SET", ["100"], True)
        for i in range(20_000):
            loads[old.get(f"old:{i}")].set(f"old:{i}", "1", ex=3600 if i % 2 else None)
        for load in loads.values():
            assert all(load.execute())
        for w in range(4):
            # Two writers in Python, two in Node, each following the ring in etcd.
            program = [sys.executable, str(ROOT / "py/tests/handoff_writer.py")] if w < 2 else \
                ["node", str(ROOT / "node/__test__/handoff-writer.mjs")]
            log = open(tmp_path / f"writer-{w}.log", "w")
            writers.append((subprocess.Popen([*program, etcd.url, PREFIX, f"w{w}", "2000", str(w)], stdout=log,
                                             stderr=subprocess.STDOUT, env={**os.environ, **writer_env}), log))
        deadline = time.monotonic() + 20
        while not all((tmp_path / f"writer-{w}.log").read_text().startswith("ready") for w in range(4)):
            assert time.monotonic() < deadline, "the writers did not start"
            time.sleep(0.05)
        time.sleep(1)  # writing on the old ring
        rebalancer = rebalance("--rate", "3000") if fault is not None else rebalance()
        time.sleep(0.5)
        if change == "join":
            join(ids[4], "warming")
        else:
            subprocess.run([str(CLI), "member", "set-state", "--etcd", etcd.url, "--prefix", PREFIX, "--id", ids[4],
                            "--state", "draining"], check=True, capture_output=True)
        if fault == "kill":
            assert rebalancer.stdout.readline().startswith("transition at revision")
            time.sleep(1.0 + 0.6)  # the grace, then part of the move
            rebalancer.kill()
            rebalancer.wait()
            goes = shardring.Ring(after)
            moving = [f"old:{i}" for i in range(20_000) if old.get(f"old:{i}") != goes.get(f"old:{i}")]
            still = sum(connections[old.get(k)].exists(k) for k in moving)
            assert 0 < still < len(moving), f"the killed run left {still} of {len(moving)} moving keys"
            members = json.loads(subprocess.run([str(CLI), "member", "list", "--etcd", etcd.url, "--prefix", PREFIX,
                                                 "--json"], capture_output=True, text=True, check=True).stdout)
            changing = "warming" if change == "join" else "draining"
            assert changing in {m["state"] for m in members}, "a killed run changes no member's state"
            # Past its lease's 10 s the killed mover is gone, and its move still holds the membership.
            time.sleep(11)
            early = subprocess.run([str(CLI), "member", "set-state", "--etcd", etcd.url, "--prefix", PREFIX, "--id",
                                    ids[4], "--state", "active"], capture_output=True, text=True)
            assert early.returncode != 0 and "a move is in progress" in early.stderr, early
            rebalancer = rebalance()
        if fault == "promote early":
            assert rebalancer.stdout.readline().startswith("transition at revision")
            time.sleep(1.0 + 0.6)  # the grace, then part of the move
            early = subprocess.run([str(CLI), "member", "set-state", "--etcd", etcd.url, "--prefix", PREFIX, "--id",
                                    ids[4], "--state", "active"], capture_output=True, text=True)
            assert early.returncode != 0 and "a move is in progress" in early.stderr, early
            members = json.loads(subprocess.run([str(CLI), "member", "list", "--etcd", etcd.url, "--prefix", PREFIX,
                                                 "--json"], capture_output=True, text=True, check=True).stdout)
            assert {m["id"]: m["state"] for m in members}[ids[4]] == "warming", members
        if restarted is not None:
            assert rebalancer.stdout.readline().startswith("transition at revision")
            time.sleep(1.0 + 0.6)  # the grace, then part of the move
            restarted.stop()  # SIGKILL: the append-only file holds what it acknowledged
            time.sleep(0.3)
            restarted.start()
            stdout, stderr = rebalancer.communicate(timeout=120)
            print(f"{fault} mid-move: the run exited {rebalancer.returncode}")
            if rebalancer.returncode != 0:
                assert restarted.address in stdout + stderr, (stdout, stderr)
                rebalancer = rebalance()
            else:
                rebalancer = None
        if rebalancer is not None:
            stdout, stderr = rebalancer.communicate(timeout=120)
            assert rebalancer.returncode == 0, (stdout, stderr)
        if fault == "kill":
            assert "resuming the move begun at revision" in stdout, stdout
        time.sleep(1)  # the writers go on against the new ring
        for process, _ in writers:
            process.send_signal(signal.SIGTERM)
        for process, log in writers:
            assert process.wait(timeout=20) == 0
            log.close()

        report = json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])
        assert report["failed"] == 0 and report["remaining"] == 0, report
        assert report["copied"] > 0 and report["deleted"] == report["copied"], report
        members = json.loads(subprocess.run([str(CLI), "member", "list", "--etcd", etcd.url, "--prefix", PREFIX,
                                             "--json"], capture_output=True, text=True, check=True).stdout)
        assert sorted((m["id"], m["state"]) for m in members) == sorted((i, "active") for i in after)

        # Every reply was the model's, command by command.
        commands = 0
        for w in range(4):
            text = (tmp_path / f"writer-{w}.log").read_text().splitlines()
            assert text[0] == "ready" and text[-1] == "done", text[-3:]
            for line in text[1:-1]:
                key, command, args, reply = json.loads(line)
                model.apply(key, command, args, reply)
                commands += 1
        assert commands > 4 * 500, f"{commands} commands"
        assert (restarted is not None) == bool(model.unknown), f"{len(model.unknown)} commands of unknown outcome"
        print(f"{commands} acknowledged commands, {len(model.unknown)} of unknown outcome")
        # 0 lost, 0 resurrected, 0 stranded: each key's final owner holds the model's value, and nothing else is held.
        new = shardring.Ring(after)
        wrong = [key for key, value in model.values.items()
                 if key not in model.unknown and held(connections[new.get(key)], key) != value]
        assert wrong == [], f"{len(wrong)} keys differ from the model, e.g. {wrong[:5]}"
        wrong = [key for key, values in model.unknown.items() if held(connections[new.get(key)], key) not in values]
        assert wrong == [], f"{len(wrong)} keys hold neither outcome of their unknown command, e.g. {wrong[:5]}"
        for key in set(model.values) - set(model.unknown):
            ttl = connections[new.get(key)].ttl(key)
            assert (ttl > 0) if key in model.ttl else (ttl == -1), f"{key}: ttl {ttl}"
        mark = shardring.Transition.between(shardring.Ring(before), shardring.Ring(after)).handoff_mark
        assert all(connections[node].exists(mark) for node in before), "the mover marked every old owner"
        assert all(connections[node].hkeys(mark) == [mark.encode()] for node in before), "no key is left in doubt"
        for node, connection in connections.items():
            for key in connection.scan_iter(count=1000):
                key = key.decode()
                if key.startswith("shardring:handoff:"):
                    assert key == mark and node in before, f"{key} on {node}"
                    continue
                assert new.get(key) == node, f"{key} stranded on {node}"
                assert key.startswith("old:") or key in model.values or key in model.unknown, \
                    f"{key} came back after its DEL"
        assert sum(1 for i in range(1, 2001, 2) if 3500 < connections[new.get(f"old:{i}")].ttl(f"old:{i}") <= 3600) \
            == 1000, "times to live moved with their keys"
        held_keys = set(model.values) - set(model.unknown)
        held_keys |= {key for key in model.unknown if connections[new.get(key)].exists(key)}
        assert sum(c.dbsize() for c in connections.values()) == 20_000 + len(held_keys) + len(before)
    finally:
        for process, log in writers:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
        for process in rebalancers + agents:
            if process.poll() is None:
                process.kill()
            process.wait()


def test_a_migration_to_a_target_that_is_gone_fails_and_keeps_every_key(redises, tmp_path):
    """--migrate --from/--to with the new server stopped: the run exits 1
    naming it, every key stays on its old owner, and a run after the server
    is back moves them."""
    ids = [s.address for s in redises]
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises}
    for i in range(5000):
        connections[old.get(f"k{i}")].set(f"k{i}", i)
    paths = ["--from", config(tmp_path / "old.json", ids[:4]), "--to", config(tmp_path / "new.json", ids)]
    redises[4].stop()
    result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--migrate", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failed"] > 0 and report["copied"] == 0, report
    assert redises[4].address in json.dumps(report["servers"]), report["servers"]
    assert all(connections[old.get(f"k{i}")].get(f"k{i}") == str(i).encode() for i in range(5000))
    redises[4].start()
    result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--migrate", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    moving = sum(old.get(f"k{i}") != new.get(f"k{i}") for i in range(5000))
    assert report["copied"] == moving and report["remaining"] == 0, report
    assert all(connections[new.get(f"k{i}")].get(f"k{i}") == str(i).encode() for i in range(5000))


def test_a_migration_deletes_the_marks_of_earlier_transitions(redises, tmp_path):
    """Marks of two earlier transitions on the old owners (one on every
    server, one on two of them) are gone after a --migrate run, which set its
    own mark on every old owner instead; the marks never moved as data."""
    ids = [s.address for s in redises]
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises}
    for i in range(3000):
        connections[old.get(f"k{i}")].set(f"k{i}", i)
    earlier = ["shardring:handoff:00000000000000aa", "shardring:handoff:00000000000000bb"]
    for node in ids[:4]:
        connections[node].set(earlier[0], 1)
    for node in ids[:2]:
        connections[node].set(earlier[1], 1)
    paths = ["--from", config(tmp_path / "old.json", ids[:4]), "--to", config(tmp_path / "new.json", ids)]
    result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--migrate", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    mark = shardring.Transition.between(old, new).handoff_mark
    for node in ids[:4]:
        marks = sorted(k.decode() for k in connections[node].scan_iter(match="shardring:handoff:*"))
        assert marks == [mark], f"{node} holds {marks}"
    assert connections[ids[4]].keys("shardring:handoff:*") == []
    assert all(connections[new.get(f"k{i}")].get(f"k{i}") == str(i).encode() for i in range(3000))


def test_a_key_written_back_to_its_old_owner_fails_the_migration_naming_it(redises, tmp_path):
    """A client that breaks the protocol (it keeps writing a moving key on
    its old owner, unguarded) puts the key back after MIGRATE took it: each
    listing finds it again, so no listing is clean, and the run fails naming
    the key rather than reporting the old owner empty, even when the check
    after the last listing happens to fall between two of its writes.

    The writer is redis-benchmark (4 connections, 16 SETs in flight on
    each), so the key is back within microseconds of each MIGRATE. A run
    that still succeeds missed the writer in some listing (the machine
    stalled it for the length of a listing): it must then report the key
    late and nothing left, and up to three runs must see the failure."""
    ids = [s.address for s in redises]
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises}
    rogue = next(f"k{i}" for i in range(2000) if old.get(f"k{i}") != new.get(f"k{i}"))
    paths = ["--from", config(tmp_path / "old.json", ids[:4]), "--to", config(tmp_path / "new.json", ids)]
    outcomes = []
    for _ in range(3):
        for connection in connections.values():
            connection.flushall()
        for i in range(2000):
            connections[old.get(f"k{i}")].set(f"k{i}", i)
        port = redises[ids.index(old.get(rogue))].port
        writer = subprocess.Popen(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "4", "-P", "16",
                                   "-n", "1000000000", "-q", "SET", rogue, "rogue"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not connections[old.get(rogue)].get(rogue) == b"rogue":
                time.sleep(0.001)
            result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--migrate", "--json"],
                                    capture_output=True, text=True, timeout=120)
        finally:
            writer.kill()
            writer.wait()
        assert result.returncode in (0, 1), result.stdout + result.stderr
        report = json.loads(result.stdout.strip().splitlines()[-1])
        if result.returncode == 1:
            errors = [server["error"] for server in report["servers"].values() if server["error"]]
            assert any("kept coming back" in e and f'"{rogue}"' in e for e in errors), report["servers"]
            assert report["scans"] == 4, report
            return
        assert report["late"] >= 1 and report["remaining"] == 0, report
        outcomes.append(report["scans"])
    raise AssertionError(f"three runs each ended clean (scans {outcomes}): the key written back was never refused")


def test_a_failed_move_keeps_the_move_lock_through_its_retries(etcd, redises):
    """The joining server is down: the rebalancer's move fails and it
    retries every 5 s, holding the move lock meanwhile, so making the member
    active by hand between two tries (keys still on their old owners) is
    refused; once the server is back the retry moves every key and makes it
    active."""
    ids = [s.address for s in redises]
    prefix = "/shardring/retry"
    member = [str(CLI), "member"]
    where = ["--etcd", etcd.url, "--prefix", prefix]
    for node, state in [*((node, "active") for node in ids[:4]), (ids[4], "warming")]:
        etcd.ctl("put", f"{prefix}/members/{node}", json.dumps({"weight": 1.0, "state": state}))
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises}
    for i in range(2000):
        connections[old.get(f"k{i}")].set(f"k{i}", i)
    redises[4].stop()
    rebalancer = subprocess.Popen([str(CLI), "rebalance", *where, "--backend", "redis", "--migrate", "--grace", "0.2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = iter(rebalancer.stdout.readline, "")
        assert any("a server failed: the transition stays; retrying" in line for line in lines)
        early = subprocess.run([*member, "set-state", *where, "--id", ids[4], "--state", "active"],
                               capture_output=True, text=True)
        assert early.returncode != 0 and "a move is in progress" in early.stderr, early
        redises[4].start()
        assert any(line.startswith("members active at revision") for line in lines)
        moving = [f"k{i}" for i in range(2000) if old.get(f"k{i}") != new.get(f"k{i}")]
        assert moving and all(connections[new.get(k)].exists(k) and not connections[old.get(k)].exists(k)
                              for k in moving)
    finally:
        rebalancer.kill()
        rebalancer.wait()


def test_a_move_left_unfinished_holds_the_membership_until_abandoned(etcd, redises):
    """A `--once` move that fails (its target is down) exits, and its move
    stays recorded: making the warming member active is refused. A second
    rebalancer resumes it and is killed; the membership then changes under
    the move (the member's record goes, as with an agent's lease ending).
    A rebalancer started while the killed one's lease lives finds the ring
    steady, keeps the record and says why once that lease is gone; the
    membership stays put until an operator abandons the move, which names
    the revision it began at."""
    ids = [s.address for s in redises]
    prefix = "/shardring/abandon"
    where = ["--etcd", etcd.url, "--prefix", prefix]
    for node, state in [*((node, "active") for node in ids[:4]), (ids[4], "warming")]:
        etcd.ctl("put", f"{prefix}/members/{node}", json.dumps({"weight": 1.0, "state": state}))
    old = shardring.Ring(ids[:4])
    connections = {s.address: redis.Redis(host="127.0.0.1", port=s.port) for s in redises}
    for i in range(500):
        connections[old.get(f"k{i}")].set(f"k{i}", i)
    redises[4].stop()
    try:
        run = subprocess.run([str(CLI), "rebalance", *where, "--backend", "redis", "--migrate", "--grace", "0.2",
                              "--once"], capture_output=True, text=True, timeout=60)
        assert run.returncode != 0 and "the move stays recorded" in run.stdout, run
        early = subprocess.run([str(CLI), "member", "set-state", *where, "--id", ids[4], "--state", "active"],
                               capture_output=True, text=True)
        assert early.returncode != 0 and "shardring member abandon-move" in early.stderr, early
        # A rebalancer resumes it, fails again and is killed: its lease outlives it by up to 10 s.
        retrying = subprocess.Popen([str(CLI), "rebalance", *where, "--backend", "redis", "--migrate", "--grace",
                                     "0.2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = iter(retrying.stdout.readline, "")
        assert any(line.startswith("resuming the move begun at revision") for line in lines)
        assert any("retrying in 5 s" in line for line in lines)
        retrying.kill()
        retrying.wait()
        etcd.ctl("del", f"{prefix}/members/{ids[4]}")
        # Started while the dead mover's lease lives, a rebalancer looks again once it is gone.
        steady = subprocess.Popen([str(CLI), "rebalance", *where, "--backend", "redis", "--migrate"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        timer = threading.Timer(30, steady.kill)  # a rebalancer that never says it ends the wait
        timer.start()
        try:
            said = next((line for line in steady.stdout if "left unfinished" in line), "nothing said")
        finally:
            timer.cancel()
            steady.kill()
            steady.wait()
        assert "the membership changed under it" in said and "abandon-move" in said, said
        reweigh = [str(CLI), "member", "set-weight", *where, "--id", ids[0], "--weight", "2"]
        assert subprocess.run(reweigh, capture_output=True).returncode != 0, "the record was kept"
        abandon = subprocess.run([str(CLI), "member", "abandon-move", *where], capture_output=True, text=True,
                                 check=True)
        assert abandon.stdout.startswith("abandoned the move begun at revision "), abandon
        subprocess.run(reweigh, check=True, capture_output=True)
        again = subprocess.run([str(CLI), "member", "abandon-move", *where], capture_output=True, text=True,
                               check=True)
        assert again.stdout == f"no move is recorded under {prefix}\n", again
        typo = subprocess.run([str(CLI), "member", "abandon-move", "--etcd", etcd.url, "--prefix", f"{prefix}-typo"],
                              capture_output=True, text=True, check=True)
        assert typo.stdout == f"no move is recorded under {prefix}-typo (nor any member)\n", typo
    finally:
        redises[4].start()
