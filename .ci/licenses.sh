#!/usr/bin/env bash
# Both license files (LICENSE-MIT, LICENSE-APACHE at the root) ship, byte for
# byte, in every artefact a user downloads: each crate that can be published
# (`cargo package`), the Python wheels (the given directory, default
# build/wheels, as `make wheels` leaves it) and an sdist (`maturin sdist`),
# and the npm package (`npm pack`). Fails naming each artefact and missing
# file. Run by `make test` (check-licenses). MATURIN names maturin (default:
# the venv's).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
wheels=${1:-build/wheels}
maturin=${MATURIN:-$root/.venv/bin/maturin}
licenses=(LICENSE-MIT LICENSE-APACHE)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# check ARTEFACT DIR: DIR (in an unpacked artefact) holds both licenses,
# identical to the root's.
check() {
    local artefact=$1 dir=$2 name
    for name in "${licenses[@]}"; do
        if [ ! -f "$dir/$name" ]; then
            echo "license check: $artefact lacks $name"
            failures=$((failures + 1))
        elif ! cmp -s "$dir/$name" "$root/$name"; then
            echo "license check: $artefact has a $name that differs from the repository's"
            failures=$((failures + 1))
        else
            echo "ok: $artefact ships $name"
        fi
    done
}

for name in "${licenses[@]}"; do
    [ -s "$name" ] || { echo "license check: no $name at the repository root"; exit 1; }
done

# Crates: every package whose `publish` is not false.
crates=$(cargo metadata -q --no-deps --format-version 1 | python3 -c '
import json, sys
print("\n".join(p["name"] for p in json.load(sys.stdin)["packages"] if p["publish"] != []))')
# One call for all of them, so a crate depending on another of the workspace
# (shardring-membership on shardring) packages against it, not crates.io.
cargo package -q $(printf -- '-p %s ' $crates) --allow-dirty --no-verify --target-dir "$tmp/cargo"
for crate in $crates; do
    mkdir -p "$tmp/crate-$crate"
    tar -xzf "$tmp"/cargo/package/"$crate"-[0-9]*.crate -C "$tmp/crate-$crate"
    check "crate $crate ($(cd "$tmp/cargo/package" && ls "$crate"-[0-9]*.crate))" "$(ls -d "$tmp/crate-$crate"/*/)"
done

# Python: the built wheels and a fresh sdist.
shopt -s nullglob
built=("$wheels"/*.whl)
[ ${#built[@]} -gt 0 ] || { echo "license check: no wheels in $wheels (run make wheels)"; exit 1; }
for wheel in "${built[@]}"; do
    dir="$tmp/wheel-$(basename "$wheel")"
    python3 -m zipfile -e "$wheel" "$dir"
    # PEP 639: license files go in the .dist-info's licenses/ directory.
    check "wheel $(basename "$wheel")" "$(ls -d "$dir"/*.dist-info)/licenses"
done
(cd py && "$maturin" sdist --out "$tmp/sdist" >"$tmp/sdist.log" 2>&1) || { cat "$tmp/sdist.log"; exit 1; }
for sdist in "$tmp"/sdist/*.tar.gz; do
    mkdir -p "$tmp/sdist-x" && tar -xzf "$sdist" -C "$tmp/sdist-x"
    check "sdist $(basename "$sdist")" "$(ls -d "$tmp"/sdist-x/*/)"
done

# Node: the tarball `npm pack` makes (what `npm publish` uploads).
(cd node && npm pack -q --pack-destination "$tmp" >/dev/null)
mkdir -p "$tmp/npm" && tar -xzf "$tmp"/shardring-*.tgz -C "$tmp/npm"
check "npm package $(cd "$tmp" && ls shardring-*.tgz)" "$tmp/npm/package"

if [ "$failures" -gt 0 ]; then
    echo "license check: $failures missing or different license files"
    exit 1
fi
echo "license check: every artefact ships LICENSE-MIT and LICENSE-APACHE"
