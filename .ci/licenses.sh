#!/usr/bin/env bash
# Both license files (LICENSE-MIT, LICENSE-APACHE at the root) ship, byte for
# byte, in every artefact a user downloads: everything release/dist.sh writes
# to the given directory (default build/dist): the crates, the wheels and the
# sdist, both npm tarballs and the libring tarball. Fails naming each artefact
# and missing file. Run by `make test` (check-licenses).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=${1:-build/dist}
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

shopt -s nullglob
found=0
for artefact in "$dist"/*; do
    name=$(basename "$artefact")
    dir="$tmp/$name"
    mkdir -p "$dir"
    case "$name" in
        *.whl)
            python3 -m zipfile -e "$artefact" "$dir"
            # PEP 639: license files go in the .dist-info's licenses/ directory.
            check "wheel $name" "$(ls -d "$dir"/*.dist-info)/licenses" ;;
        *.crate | *.tar.gz | *.tgz)
            tar -xzf "$artefact" -C "$dir"
            # Each unpacks into one directory (npm's: package/).
            check "$name" "$(ls -d "$dir"/*/)" ;;
        *) echo "license check: $name is not an artefact kind this check knows"; failures=$((failures + 1)); continue ;;
    esac
    found=$((found + 1))
done
[ "$found" -ge 8 ] || { echo "license check: $found artefacts in $dist, expected 8 (run make dist)"; exit 1; }

if [ "$failures" -gt 0 ]; then
    echo "license check: $failures missing or different license files"
    exit 1
fi
echo "license check: every artefact of $dist ($found) ships LICENSE-MIT and LICENSE-APACHE"
