#!/usr/bin/env bash
# A Rust developer's first commands on a fresh clone of the current commit,
# before any `make` and without the Makefile's venv: `cargo build`,
# `cargo test --no-run`, and the rest of what rust-analyzer checks
# (`cargo check --workspace --all-targets`: the binding crates, which plain
# cargo leaves out, are checked here with the python3 on PATH).
# Crates compile into FRESH_CLONE_TARGET (default this checkout's target/,
# so the registry dependencies `make test` compiled already are reused; the
# clone's own crates build from its sources); the clone itself is new every
# time. Run by `make test` (check-fresh-clone).
set -euo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-checkout "$repo" "$tmp/shardring"
git -C "$tmp/shardring" checkout -q --detach "$commit"

# Outside the venv: python3 is whatever PATH has once .venv/bin is dropped.
unset PYO3_PYTHON VIRTUAL_ENV
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/\.venv/bin/\?$' | paste -sd: -)
export CARGO_TARGET_DIR=${FRESH_CLONE_TARGET:-$repo/target}

cd "$tmp/shardring"
[ ! -e .venv ] || { echo "fresh clone has a .venv"; exit 1; }
echo "fresh clone of $commit, python3 = $(command -v python3) ($(python3 --version))"
cargo build
cargo test --no-run
cargo check -p shardring-py -p shardring-node --all-targets
echo "fresh clone: cargo build, cargo test --no-run and cargo check of the bindings passed"
