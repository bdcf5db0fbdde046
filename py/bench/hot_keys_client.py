"""One Python client of the hot-key bench (`hot_keys.py` starts it): Zipf
requests over a key space, read through memcached cache-aside (a miss loads
the value and writes it back), placed by a ring that a HotKeys sketch
watches; with a hot set, each key's reads and writes follow
`HotSet.plan`. Prints one JSON line: the sketch's top keys and rates, its
recall and precision against the exact counts of the requests it placed,
and what it did.

    python hot_keys_client.py SETTINGS_JSON

SETTINGS_JSON: {"servers": {"node id": "host:port", ...}, "keys": N, "requests": N,
"s": 0.99, "seed": 1, "hot_set": "{...}" or null, "top": 100}.
"""

import bisect
import collections
import itertools
import json
import sys
import time

from pymemcache.client.base import Client

import shardring


def zipf_ranks(keys, s, count, seed):
    """`count` ranks from 0, rank i drawn with probability proportional to
    1/(i+1)^s, from SplitMix64 draws of `seed` (the Node client draws the
    same way)."""
    cumulative = list(itertools.accumulate(1.0 / (i + 1) ** s for i in range(keys)))
    total, mask, state = cumulative[-1], (1 << 64) - 1, seed
    ranks = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        ranks.append(bisect.bisect_left(cumulative, (z >> 11) / (1 << 53) * total))
    return ranks


def key_of(rank):
    return f"key:{rank:07d}"


def value_of(key):
    return (key * 8).encode()[:100]


def main():
    settings = json.loads(sys.argv[1])
    ranks = zipf_ranks(settings["keys"], settings["s"], settings["requests"], settings["seed"])
    ring = shardring.Ring(list(settings["servers"]))
    # Made once the requests are drawn: its rates count from here.
    sketch = shardring.HotKeys(top=settings["top"])
    ring.watch_hot_keys(sketch)
    ring.count_lookups()
    hot = shardring.HotSet.from_json(settings["hot_set"]) if settings["hot_set"] else None
    clients = {}
    for node, address in settings["servers"].items():
        host, port = address.rsplit(":", 1)
        clients[node] = Client((host, int(port)), connect_timeout=5, timeout=5)

    copy_reads = copy_misses = loads = 0
    start = time.perf_counter()
    for rank in ranks:
        key = key_of(rank)
        if hot is None:
            owner = ring.get(key)
            read, read_copy, copies, copy_key = owner, False, [], b""
        else:
            read, read_copy, owner, copies, copy_key = hot.plan(ring, key)
        if read_copy:
            copy_reads += 1
            if clients[read].get(copy_key) is not None:
                continue
            copy_misses += 1
        value = clients[owner].get(key)
        if value is None:
            # Cache-aside: load, then write the owner and every copy.
            loads += 1
            value = value_of(key)
            clients[owner].set(key, value, noreply=False)
            for node in copies:
                clients[node].set(copy_key, value, noreply=False)
        elif read_copy:
            clients[read].add(copy_key, value, noreply=False)
    elapsed = time.perf_counter() - start

    exact = collections.Counter(ranks)
    top = sketch.top()
    found = {k.decode() for k, _, _ in top[: settings["top"]]}
    truth = {key_of(r) for r, _ in exact.most_common(settings["top"])}
    recall = len(found & truth) / len(truth)
    precision = len(found & truth) / max(1, len(found))
    print(json.dumps({
        "language": "python",
        "requests": len(ranks),
        "elapsed": elapsed,
        "rate": len(ranks) / elapsed,
        "top": [[k.decode(), rate] for k, _, rate in top],
        "recall": recall,
        "precision": precision,
        "sketch_bytes": sketch.sketch_bytes,
        "copy_reads": copy_reads,
        "copy_misses": copy_misses,
        "loads": loads,
        "lookups": {node: count / elapsed for node, count in ring.lookup_counts().items()},
    }))


if __name__ == "__main__":
    main()
