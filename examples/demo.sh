#!/usr/bin/env bash
# The main job: place the Debian word list on examples/cluster.json from C,
# Python and Node, check the three placements are identical, show what an
# 11th node moves, replay a scale-out on 4 -> 5 real memcached servers, run a
# fleet (etcd, memcached members, C, Python and Node followers) through a
# join, and print `shardring simulate`. Run through `make demo`, which builds first.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFIG=examples/cluster.json
WORDS=/usr/share/dict/words
mkdir -p build

build/place_words "$CONFIG" "$WORDS" | tee build/demo-c.txt
echo
.venv/bin/python examples/python/place_words.py "$CONFIG" "$WORDS" | tee build/demo-python.txt
echo
node examples/node/place_words.mjs "$CONFIG" "$WORDS" | tee build/demo-node.txt
echo

digest() { grep '^digest ' "$1" | cut -d' ' -f2; }
c=$(digest build/demo-c.txt) py=$(digest build/demo-python.txt) js=$(digest build/demo-node.txt)
if [ "$c" = "$py" ] && [ "$py" = "$js" ]; then
  echo "OK: C, Python and Node placed every key identically (digest $c)"
else
  echo "MISMATCH: C $c, Python $py, Node $js" >&2
  exit 1
fi
echo
.venv/bin/python examples/python/scale_out.py "$CONFIG" "$WORDS"
echo
.venv/bin/python examples/python/memcached_scale_out.py "$WORDS" --servers 4
echo
.venv/bin/python examples/python/fleet_demo.py
echo
echo "shardring simulate: the same scale-out on synthetic keys, ring against hash % N"
target/release/shardring simulate --nodes 10 --keys 1000000
