#!/usr/bin/env bash
# A Rust developer's first commands on a fresh clone of the current commit,
# before any `make` and without the Makefile's venv: `cargo build` (the
# default members, which leave the binding crates out), then what
# rust-analyzer checks, `cargo check --workspace --all-targets`: every
# crate's tests, examples and benches, the bindings with the python3 on
# PATH. A check, not `cargo test --no-run`: a file the clone lacks or a
# build script that needs the venv fails both, and the test binaries'
# codegen and links (half of this script's time) are test-rust's, from the
# same sources; clippy checked the same dependencies (pyo3's aside, whose
# build script reads the interpreter).
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
cargo check --workspace --all-targets
echo "fresh clone: cargo build and cargo check --workspace --all-targets passed"
