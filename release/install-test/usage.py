"""The installed wheel: prints "key owner" for each key argument on the ring of
a JSON config, as usage.cjs, usage.mjs and usage.cpp do."""

import sys

import shardring

config, *keys = sys.argv[1:]
with open(config, encoding="utf-8") as f:
    ring = shardring.Ring.from_json(f.read())
print(f"shardring {shardring.__version__} (Python {sys.version.split()[0]})", file=sys.stderr)
for key in keys:
    print(key, ring.get(key))
