"""A writer process of the Redis handoff test: follows the ring in etcd and
sends a mix of commands (SET, INCR, HSET, HINCRBY, RPUSH, SADD, EXPIRE,
DEL) over its own keys through the handoff protocol: a key that does not
move goes to its owner; a moving key's command runs through the guard on
its old owner (again after a short wait while the guard says it is in
doubt), and on the guard's moved reply on its new owner. Each
acknowledged command is printed as one JSON line, in the order they were
acknowledged; the test replays them into a model. A command whose
connection failed (a server restarting) has an unknown outcome: it is
printed with the reply "unknown", not sent again (redis-py's retries are
off), and its key is not used again.

    python handoff_writer.py ETCD_URL PREFIX WRITER_ID KEYS SEED

Runs until SIGTERM, then prints "done" and exits 0."""

import json
import os
import random
import signal
import sys
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import shardring

# Commands and the arguments after the key; each draws its own.
COMMANDS = [
    ("SET", lambda r, n: [str(n)]),
    ("INCR", lambda r, n: []),
    ("HSET", lambda r, n: [f"f{n}", str(n)]),
    ("HINCRBY", lambda r, n: ["hits", str(r.randint(1, 9))]),
    ("RPUSH", lambda r, n: [str(n)]),
    ("SADD", lambda r, n: [str(n % 50)]),
    ("EXPIRE", lambda r, n: ["86400"]),
    ("DEL", lambda r, n: []),
]
WEIGHTS = [4, 8, 4, 4, 4, 4, 1, 1]


def main():
    url, prefix, writer, keys, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    stop = False

    def on_term(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    clients = {}
    # TLS with a client certificate and an ACL user, when the test's servers want them.
    given = json.loads(os.environ.get("SHARDRING_TEST_REDIS", "null"))
    security = {} if given is None else {
        "ssl": True, "ssl_ca_certs": given["ca"], "ssl_certfile": given["cert"], "ssl_keyfile": given["key"],
        "username": given["user"], "password": given["password"]}

    def client(node):
        if node not in clients:
            host, port = node.rsplit(":", 1)
            clients[node] = redis.Redis(host=host, port=int(port), socket_timeout=10, retry=Retry(NoBackoff(), 0),
                                        **security)
        return clients[node]

    def guarded(node, mark, key, command, args):
        """EVALSHA, loading the guard on NOSCRIPT and trying again a little
        later while the key is in doubt; None on the moved reply."""
        loads = 0
        while True:
            try:
                return client(node).evalsha(shardring.REDIS_GUARD_SHA1, 2, key, mark, command, *args)
            except redis.exceptions.NoScriptError:
                loads += 1
                assert loads < 3, "the guard would not load"
                assert client(node).script_load(shardring.REDIS_GUARD) == shardring.REDIS_GUARD_SHA1
            except redis.exceptions.ResponseError as error:
                if str(error) == shardring.MOVED_REPLY:  # redis-py strips Redis's "ERR "
                    return None
                if str(error) == shardring.TRYAGAIN_REPLY:
                    time.sleep(0.005)
                    continue
                raise

    rng = random.Random(seed)
    out = sys.stdout
    # A key keeps one type until deleted; the test stored the even keys as
    # counters before the writers start.
    kinds = {f"{writer}:{i}": "string" for i in range(0, keys, 2)}
    retired = set()
    with shardring.Follower.etcd(url, prefix) as follower:
        print("ready", flush=True)
        n = 0
        while not stop:
            n += 1
            key = f"{writer}:{rng.randrange(keys)}"
            if key in retired:
                continue
            command, draw = rng.choices(COMMANDS, WEIGHTS)[0]
            kind = {"SET": "string", "INCR": "string", "HSET": "hash", "HINCRBY": "hash", "RPUSH": "list",
                    "SADD": "set"}.get(command)
            if kind is not None and kinds.get(key, kind) != kind:
                command, draw, kind = "DEL", (lambda r, n: []), None
            args = draw(rng, n)
            if command == "SET":
                # INCR needs an integer: a SET stores one.
                args = [str(rng.randint(0, 1000))]
            transition = follower.transition
            route = transition.route(key)
            try:
                if not route.moving:
                    reply = client(route.new).execute_command(command, key, *args)
                else:
                    reply = guarded(route.old, transition.handoff_mark, key, command, args)
                    if reply is None:
                        reply = client(route.new).execute_command(command, key, *args)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                retired.add(key)
                out.write(json.dumps([key, command, args, "unknown"]) + "\n")
                continue
            if command == "DEL":
                kinds.pop(key, None)
            elif kind is not None:
                kinds[key] = kind
            out.write(json.dumps([key, command, args, reply if isinstance(reply, int) else None]) + "\n")
    out.write("done\n")
    out.flush()


if __name__ == "__main__":
    main()
