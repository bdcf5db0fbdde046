"""Places every word of a word list on the cluster of a JSON ring config and
prints the keys per node and an FNV-1a 64 digest of the placements.

Run (after `pip install ./py`):
    python examples/python/place_words.py examples/cluster.json /usr/share/dict/words
"""

import sys
from collections import Counter

import shardring

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def fnv1a(digest: int, data: bytes) -> int:
    for byte in data:
        digest = ((digest ^ byte) * FNV_PRIME) & MASK
    return digest


def main(config_path: str, words_path: str) -> None:
    with open(config_path, encoding="utf-8") as f:
        ring = shardring.Ring.from_json(f.read())
    with open(words_path, "rb") as f:
        words = f.read().split(b"\n")
    if words and words[-1] == b"":
        words.pop()

    owners = ring.get_many(words)  # one call; placed without holding the GIL
    counts = Counter(owners)
    digest = FNV_OFFSET
    for word, node in zip(words, owners):
        digest = fnv1a(digest, word + b"\t" + node.encode("utf-8") + b"\n")

    print(f"Python: {len(words)} keys on {len(ring)} nodes")
    for node in ring:  # node ids, in order
        print(f"  {node:<10} {counts[node]:7}  {100 * counts[node] / len(words):5.2f}%")
    print(f"digest {digest:016x}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: place_words.py CLUSTER.json WORDS")
    main(sys.argv[1], sys.argv[2])
