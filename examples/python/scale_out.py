"""How many keys move when an 11th node joins: shardring against hash % N.

Run (after `pip install ./py`):
    python examples/python/scale_out.py examples/cluster.json /usr/share/dict/words
"""

import json
import sys

import shardring


def main(config_path: str, words_path: str) -> None:
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    with open(words_path, "rb") as f:
        words = [w for w in f.read().split(b"\n") if w]

    before = shardring.Ring.from_json(json.dumps(config))
    config["nodes"].append({"id": "cache-11", "weight": 1.0})
    after = shardring.Ring.from_json(json.dumps(config))

    moved = [w for w in words if before.get(w) != after.get(w)]
    to_new = sum(1 for w in moved if after.get(w) == "cache-11")
    n = len(before)
    hashes = [shardring.hash_key(w) for w in words]
    modulo_moved = sum(1 for h in hashes if h % n != h % (n + 1))

    new_share = 1.0 / 12.0  # cache-11 has weight 1 of a total weight 12
    print(f"Scale-out {n} -> {n + 1} nodes over {len(words)} keys:")
    print(f"  shardring: {len(moved):7} keys moved ({100 * len(moved) / len(words):5.2f}%, "
          f"ideal {100 * new_share:.2f}%), {to_new} of them to the new node")
    print(f"  hash % N : {modulo_moved:7} keys moved ({100 * modulo_moved / len(words):5.2f}%, "
          f"expected {100 * n / (n + 1):.2f}%)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: scale_out.py CLUSTER.json WORDS")
    main(sys.argv[1], sys.argv[2])
