#!/usr/bin/env bash
# The Windows x86_64 leg of `make test-platforms` (RELEASING.md,
# "Platforms"), for the Windows platform of release/platforms.json that
# `make dist-all` packed into build/dist/, run under Debian's Wine 8
# (wine64; its prefix in build/windows/prefix, nothing in $HOME):
#   - C: the libring tarball, unpacked; the word-list example and the C
#     tests that need no POSIX or jansson (api, transition, version), built
#     by zig's mingw-w64 against its import libraries, run beside its
#     ring.dll; the word list places to the glibc build's digest;
#   - ring.dll and each wheel's extension import only Windows' own DLLs
#     (and python3.dll, the stable ABI, for the extension); the wheels'
#     tag (file name and WHEEL) is win_amd64.
# Wine 8 lacks bcryptprimitives.dll (Windows 8 and later have it), which
# Rust's standard library imports; release/wine/bcryptprimitives.c stands
# in for it beside the test programs. No Windows Python or Node installs
# here, so the wheel is read, not loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.venv/bin:$PATH"
out=$root/build/windows
dist=$root/build/dist
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
step() { echo "== windows: $*"; }
fail() { echo "windows: $*"; exit 1; }
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || fail "$wine is missing (Debian package wine64)"
# WINEDEBUG=-all: Wine's own notes (no display, no systray) are not ours.
run() { (cd "$out/c" && WINEPREFIX=$out/prefix WINEDEBUG=-all "$wine" "$@"); }
mkdir -p "$out"

read -r npm_name wheel_tag archive wheel_count < <(python3 -c '
import json
for p in json.load(open("release/platforms.json"))["platforms"]:
    if "-windows-" in p["rust"]:
        print(p["npm"], p["wheel"], p["archive"], len(p["python"]))') || fail "release/platforms.json lists no Windows platform"
for artefact in "libring-$version-$archive.tar.gz"; do
    [ -e "$dist/$artefact" ] || fail "build/dist/$artefact is missing: run make dist-all"
done

# check_windows FILE [DLL]: FILE imports only Windows' own DLLs, and DLL.
source release/binaries.sh

step "C: the libring tarball; the word list and the C tests under Wine"
rm -rf "$out/libring" "$out/c" && mkdir -p "$out/libring" "$out/c"
tar -C "$out/libring" -xzf "$dist/libring-$version-$archive.tar.gz"
prefix=$out/libring/libring-$version-$archive
check_windows "$prefix/bin/ring.dll"
zigcc=(python-zig cc -target x86_64-windows-gnu -std=c11 -O2)
"${zigcc[@]}" -shared release/wine/bcryptprimitives.c -ladvapi32 -o "$out/c/bcryptprimitives.dll"
cp "$prefix/bin/ring.dll" "$out/c/"
# The word list links through MSVC's import library, the tests through
# mingw-w64's: both name ring.dll's functions.
"${zigcc[@]}" -I"$prefix/include" examples/c/place_words.c "$prefix/lib/ring.lib" -o "$out/c/place_words.exe"
for test in api transition version; do
    "${zigcc[@]}" -I"$prefix/include" -DRING_CRATE_VERSION="\"$version\"" "ffi-c/tests/$test.c" \
        "$prefix/lib/libring.dll.a" -o "$out/c/$test.exe"
done
[ -x build/place_words ] || fail "build/place_words is missing: run make build-c"
words=/usr/share/dict/words
build/place_words examples/cluster.json "$words" >"$out/words-glibc.txt"
cp examples/cluster.json "$words" "$out/c/"
# Wine's prefix (its C: drive and registry) first, about 10 s; its notes
# (no 32-bit Wine, no display) go to a log.
WINEPREFIX=$out/prefix WINEDEBUG=-all "$wine" wineboot --init >"$out/wineboot.log" 2>&1 \
    || { cat "$out/wineboot.log"; fail "Wine could not create its prefix"; }
run place_words.exe cluster.json words | tr -d '\r' >"$out/words-windows.txt"
diff "$out/words-glibc.txt" "$out/words-windows.txt" || fail "ring.dll placed the word list differently"
echo "   word list: $(grep -i digest "$out/words-windows.txt"), as with glibc"
for test in api transition version; do
    run "$test.exe" | tr -d '\r' >"$out/$test.txt" || { cat "$out/$test.txt"; fail "$test.exe failed under Wine"; }
    echo "   $test.exe: $(tail -1 "$out/$test.txt")"
done

step "the wheels"
unpack_wheels "$dist" "$version" "$wheel_tag" "$out/wheels" "$wheel_count"
for unpacked in "${unpacked_wheels[@]}"; do
    check_windows "$(ls "$unpacked"/shardring/*.pyd)" python3.dll
done
echo "windows: the libring tarball and the wheels ($npm_name) passed under Wine"
