#!/usr/bin/env bash
# The Linux arm64 (aarch64, glibc) leg of `make test-platforms` (RELEASING.md,
# "Platforms"): installs the arm64 artefacts `make dist-all` packed into
# build/dist/ (cross-linked by zig against glibc 2.17) and runs them here
# under qemu-user against Debian's own arm64 programs, unpacked into
# build/arm64/root (nothing arm64 is installed into the system):
#   - C: the libring tarball, unpacked; the word-list example built against
#     it through its ring.pc prints what the x86_64 build prints (keys per
#     node and the digest), and the C vector test passes every case;
#   - Python: the abi3 wheel (cp310), installed for Debian's arm64
#     python3.11, passes py/tests/test_vectors.py;
#   - Node: the two npm tarballs, installed by npm as for an arm64 machine
#     (--cpu=arm64 --force), loaded by Debian's arm64 Node 18 through the package's
#     own loader, pass node/__test__/vectors.test.mjs.
# Needs qemu-user-static and an apt that can fetch arm64 packages (it adds
# the arm64 architecture to dpkg when missing: root, or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
# platform_leg: root, out, dist, version, step.
source release/binaries.sh
platform_leg arm64
sysroot=$out/root
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
now() { date +%s; }
run() { qemu-aarch64-static -L "$sysroot" "$@"; }

command -v qemu-aarch64-static >/dev/null || { echo "arm64: qemu-aarch64-static is missing (Debian package qemu-user-static)"; exit 1; }

# Debian's arm64 Python and Node and the libraries they load, as .debs
# unpacked into one folder; qemu's -L prefix makes it the programs' /.
step "Debian arm64 python3.11, nodejs and libjansson into $sysroot"
start=$(now)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    $sudo apt-get update -q
fi
packages=(libc6 libgcc-s1 libstdc++6 zlib1g libexpat1 libffi8 libbz2-1.0 liblzma5 libuuid1 libsqlite3-0
    libncursesw6 libtinfo6 libreadline8 libcrypt1 libdb5.3 libnsl2 libtirpc3 libgssapi-krb5-2 libkrb5-3
    libk5crypto3 libkrb5support0 libkeyutils1 libcom-err2 libssl3 python3.11-minimal libpython3.11-minimal
    libpython3.11-stdlib nodejs libnode108 libuv1 libicu72 libbrotli1 libc-ares2 libnghttp2-14 libjansson4 libjansson-dev)
# nodejs:arm64 loads these architecture-independent modules from /usr/share.
shared=(node-acorn node-busboy node-cjs-module-lexer node-undici node-xtend)
want="${packages[*]} ${shared[*]}"
if [ "$(cat "$sysroot/.ready" 2>/dev/null)" != "$want" ]; then
    rm -rf "$out/debs" "$sysroot"
    mkdir -p "$out/debs" "$sysroot"
    # apt-get download runs as _apt when it can: a folder it may write to.
    chmod 777 "$out/debs"
    (cd "$out/debs" && apt-get download -q "${packages[@]/%/:arm64}" "${shared[@]}")
    for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$sysroot"; done
    echo "$want" >"$sysroot/.ready"
fi
echo "   $(run "$sysroot/usr/bin/python3.11" -c 'import platform, sys; print("python", sys.version.split()[0], platform.machine())')"
echo "   $(run "$sysroot/usr/bin/node" -p '`node ${process.version} ${process.arch}`')"
step "in $(($(now) - start)) s"

for artefact in "libring-$version-linux-aarch64.tar.gz" "shardring-linux-arm64-gnu-$version.tgz" "shardring-$version.tgz"; do
    [ -e "$dist/$artefact" ] || { echo "arm64: build/dist/$artefact is missing: run make dist-all"; exit 1; }
done

step "C: the libring tarball; the word-list example and the vector test, under qemu"
rm -rf "$out/libring" && mkdir -p "$out/libring"
tar -C "$out/libring" -xzf "$dist/libring-$version-linux-aarch64.tar.gz"
prefix=$out/libring/libring-$version-linux-aarch64
readelf -h "$prefix/lib/libring.so.$version" | grep -q 'Machine:.*AArch64' || { echo "arm64: the tarball's libring is not aarch64"; exit 1; }
zigcc=(python-zig cc -target aarch64-linux-gnu.2.17)
ring=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs ring)
# shellcheck disable=SC2086 # pkg-config's flags are words
"${zigcc[@]}" -std=c11 -O2 examples/c/place_words.c $ring -o "$out/place_words"
# shellcheck disable=SC2086
"${zigcc[@]}" -std=c11 -O2 -isystem "$sysroot/usr/include" ffi-c/tests/vectors.c $ring \
    -L"$sysroot/usr/lib/aarch64-linux-gnu" -ljansson -lm -o "$out/c-vectors"
words=/usr/share/dict/words
build/place_words examples/cluster.json "$words" >"$out/words-x86_64.txt"
LD_LIBRARY_PATH=$prefix/lib run "$out/place_words" examples/cluster.json "$words" >"$out/words-arm64.txt"
diff "$out/words-x86_64.txt" "$out/words-arm64.txt" || { echo "arm64: the word list placed differently"; exit 1; }
echo "   word list: $(grep -i digest "$out/words-arm64.txt"), as on x86_64"
LD_LIBRARY_PATH=$prefix/lib run "$out/c-vectors" testdata/vectors.json

pytest_version=$(sed -n 's/^pytest==//p' py/requirements-dev.txt)
for abi in cp310; do
    # The glibc one (build/dist/ holds the musl one too).
    wheel=$(ls "$dist"/shardring-"$version"-$abi-abi3-*.manylinux_2_17_aarch64.whl)
    step "Python: $(basename "$wheel") in Debian's arm64 python3.11, test_vectors.py"
    site=$out/site-$abi
    rm -rf "$site"
    # pytest and its dependencies are pure Python; the wheel is the arm64 one.
    python -m pip install -q --target "$site" "pytest==$pytest_version"
    python -m pip install -q --target "$site" --no-deps --platform manylinux2014_aarch64 --only-binary=:all: "$wheel"
    readelf -h "$site"/shardring/*.so | grep -q 'Machine:.*AArch64'
    PYTHONPATH=$site run "$sysroot/usr/bin/python3.11" -B -m pytest -q -p no:cacheprovider --noconftest \
        py/tests/test_vectors.py
done

step "Node: the npm tarballs installed for arm64, in Debian's arm64 Node, vectors.test.mjs"
project=$out/project
rm -rf "$project" && mkdir -p "$project/test"
echo '{ "name": "arm64-test", "private": true, "version": "1.0.0" }' >"$project/package.json"
# --cpu=arm64 picks optional dependencies as on arm64, but npm still checks
# a package named on the command line against this machine's CPU: --force
# lets the arm64 one in (on an arm64 machine neither flag is needed).
(cd "$project" && npm install -q --offline --no-audit --no-fund --cpu=arm64 --os=linux --libc=glibc --force \
    "$dist/shardring-linux-arm64-gnu-$version.tgz" "$dist/shardring-$version.tgz")
[ -e "$project/node_modules/shardring-linux-arm64-gnu/shardring.linux-arm64-gnu.node" ] \
    || { echo "arm64: npm did not install the arm64 platform package"; exit 1; }
sed "s|'../shardring.js'|'shardring'|; s|'../../testdata/vectors.json'|'$root/testdata/vectors.json'|" \
    node/__test__/vectors.test.mjs >"$project/test/vectors.test.mjs"
grep -q "require('shardring')" "$project/test/vectors.test.mjs" || { echo "arm64: the Node test's import was not rewritten"; exit 1; }
# Run as a program, not with --test: the test runner would start a child
# process of the arm64 node itself, which only qemu can run.
(cd "$project" && run "$sysroot/usr/bin/node" test/vectors.test.mjs) >"$out/node-vectors.tap" \
    || { cat "$out/node-vectors.tap"; exit 1; }
grep -E '^# (pass|fail) ' "$out/node-vectors.tap" | paste -sd' ' | sed 's/^/   Node vectors: /'
grep -qx '# fail 0' "$out/node-vectors.tap"
# Without its platform package the loader names it, from the main
# package's optionalDependencies (written from release/platforms.json).
rm -rf "$project/node_modules/shardring-linux-arm64-gnu"
missing=$(cd "$project" && run "$sysroot/usr/bin/node" -e \
    "try { require('shardring') } catch (e) { console.log(e.code + ': ' + e.message); process.exit(0) }; process.exit(1)") \
    || { echo "arm64: shardring loaded without its platform package"; exit 1; }
grep -q '^RING_UNSUPPORTED_PLATFORM: shardring: the binary package shardring-linux-arm64-gnu for this platform (linux-arm64-gnu) is not installed' <<<"$missing" \
    || { echo "arm64: unclear error without the platform package: $missing"; exit 1; }
echo "   without shardring-linux-arm64-gnu: ${missing:0:120}..."
echo "arm64: the libring tarball, the wheel and the npm packages passed under qemu-aarch64"
