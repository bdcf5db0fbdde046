"""A follower process, as every application server runs one: follows the
ring in etcd (or a config file) and prints each epoch as a JSON line,
{"lang": "python", "revision": R, "fingerprint": "16 hex digits", "at_us": T}
(at_us: wall clock in microseconds once the new ring is in place). On
stdin, "digest N" prints {"digest": "16 hex digits", "revision": R}: XXH3-64
(seed 0) of the owners of keys key-0 .. key-(N-1), each followed by a
newline. "quit" or end of input exits.

Usage: follow.py --etcd URL --prefix P | follow.py --file PATH
(the same protocol as membership/examples/follow.rs, examples/c/follow.c and
examples/node/follow.mjs)."""

import argparse
import json
import sys
import threading
import time

import shardring

lock = threading.Lock()
printed = -1  # the last revision printed, under `lock`


def emit(record):
    with lock:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()


def emit_epoch(revision, fingerprint_hex):
    """Prints an epoch once: the callback can also report the first ring,
    which main() prints itself, after the callback is registered.
    fingerprint_hex is the text the CLI and every binding print."""
    global printed
    with lock:
        if revision <= printed:
            return
        printed = revision
        record = {"lang": "python", "revision": revision, "fingerprint": fingerprint_hex,
                  "at_us": time.time_ns() // 1000}
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--etcd")
    parser.add_argument("--prefix")
    parser.add_argument("--file")
    args = parser.parse_args()
    if args.file:
        follower = shardring.Follower.file(args.file)
    else:
        follower = shardring.Follower.etcd(args.etcd, args.prefix)

    def on_change(event):
        if event["kind"] == "epoch":
            emit_epoch(event["revision"], event["fingerprint_hex"])

    follower.on_change(on_change)
    status = follower.status()  # revision and fingerprint of one epoch
    emit_epoch(status["revision"], status["fingerprint_hex"])
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["digest"]:
            ring, n = follower.ring, int(words[1])
            revision = follower.revision
            owners = ring.get_many([f"key-{i}" for i in range(n)])
            digest = shardring.hash_key("".join(f"{owner}\n" for owner in owners), 0)
            emit({"digest": f"{digest:016x}", "revision": revision})
        elif words[:1] == ["quit"]:
            break
    follower.close()


if __name__ == "__main__":
    main()
