"""A writer process of the Redis rebalance test: follows the ring in etcd
and writes each key to every node of `write_nodes(key)` (its old owner and,
while a member warms up, its new one), cycling over its own keys with a
rising counter as the value. A write is acknowledged once every node stored
it; each acknowledged (key, value) is printed, and the last one per key is
what the test must read back from the key's final owner.

    python redis_writer.py ETCD_URL PREFIX WRITER_ID KEYS

Runs until SIGTERM, then prints "done" and exits 0."""

import signal
import sys

import redis

import shardring


def main():
    url, prefix, writer, keys = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    stop = False

    def on_term(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    clients = {}
    out = sys.stdout
    with shardring.Follower.etcd(url, prefix) as follower:
        print("ready", flush=True)
        counter = 0
        while not stop:
            key = f"{writer}:{counter % keys}"
            value = str(counter)
            for node in follower.write_nodes(key):
                client = clients.get(node)
                if client is None:
                    host, port = node.rsplit(":", 1)
                    client = clients[node] = redis.Redis(host=host, port=int(port), socket_timeout=5)
                client.set(key, value)
            out.write(f"{key} {value}\n")
            counter += 1
    out.write("done\n")
    out.flush()


if __name__ == "__main__":
    main()
