#!/usr/bin/env bash
# The Linux arm64 (aarch64, glibc) leg of `make test-platforms` (RELEASING.md,
# "Platforms"): builds libring, the Node binding and the abi3 wheel for
# aarch64-unknown-linux-gnu, linked by zig against glibc 2.17 as the x86_64
# ones are, and runs them here under qemu-user against Debian's own arm64
# programs, unpacked into build/arm64/root (nothing arm64 is installed into
# the system):
#   - C: the word-list example prints what the x86_64 build prints (keys per
#     node and the digest), and the C vector test passes every case;
#   - Python: the wheel, installed for Debian's arm64 python3.11, passes
#     py/tests/test_vectors.py;
#   - Node: the .node, loaded by Debian's arm64 Node 18 through the package's
#     own loader, passes node/__test__/vectors.test.mjs.
# Needs qemu-user-static and an apt that can fetch arm64 packages (it adds
# the arm64 architecture to dpkg when missing: root, or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/.venv
export PATH="$venv/bin:$PATH"
export PYO3_PYTHON="$venv/bin/python"
# The same cache as build-release (Makefile): cargo-zigbuild's compiler
# wrappers, whose paths cargo hashes.
export CARGO_ZIGBUILD_CACHE_DIR=$root/target/zig-cache

triple=aarch64-unknown-linux-gnu
out=$root/build/arm64
sysroot=$out/root
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
now() { date +%s; }
step() { echo "== arm64: $*"; }
run() { qemu-aarch64-static -L "$sysroot" "$@"; }

command -v qemu-aarch64-static >/dev/null || { echo "arm64: qemu-aarch64-static is missing (Debian package qemu-user-static)"; exit 1; }
rustup target add "$triple" >/dev/null
mkdir -p "$out"

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

# One cargo invocation, as build-release's: same profile and cache, so the
# host-side build scripts and proc macros it compiled are reused.
step "libring and the Node binding for $triple (cargo zigbuild, glibc 2.17)"
start=$(now)
CARGO_TARGET_DIR=$root/target/zig cargo zigbuild --release --config 'profile.release.strip="none"' \
    -p shardring-ffi -p shardring-node --target "$triple.2.17"
built=$root/target/zig/$triple/release
for f in libring.so libshardring_node.so; do
    readelf -h "$built/$f" | grep -q 'Machine:.*AArch64' || { echo "arm64: $f is not an aarch64 ELF"; exit 1; }
    newest=$(objdump -T "$built/$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] \
        || { echo "arm64: $f needs $newest, newer than GLIBC_2.17"; exit 1; }
    echo "   $f: aarch64, highest glibc symbol $newest"
done
step "built in $(($(now) - start)) s"

step "the abi3 wheel for $triple (maturin --zig, manylinux2014)"
start=$(now)
rm -rf "$out/wheels"
make -s wheel ABI=abi3-py310 WHEEL_OUT="$out/wheels" WHEEL_TARGET="$triple"
wheel=$(ls "$out"/wheels/shardring-*.whl)
case $(basename "$wheel") in
    *-cp310-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64.whl | *-cp310-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64.whl) ;;
    *) echo "arm64: unexpected wheel name $(basename "$wheel")"; exit 1 ;;
esac
echo "   $(basename "$wheel")"
step "built in $(($(now) - start)) s"

step "C: the word-list example and the vector test, under qemu"
lib=$out/lib
rm -rf "$lib" && mkdir -p "$lib"
cp "$built/libring.so" "$lib/"
soname=$(readelf -d "$lib/libring.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
ln -sf libring.so "$lib/$soname"
zigcc=(python-zig cc -target aarch64-linux-gnu.2.17)
"${zigcc[@]}" -std=c11 -O2 -Iinclude examples/c/place_words.c -L"$lib" -lring -o "$out/place_words"
"${zigcc[@]}" -std=c11 -O2 -Iinclude -isystem "$sysroot/usr/include" ffi-c/tests/vectors.c -L"$lib" -lring \
    -L"$sysroot/usr/lib/aarch64-linux-gnu" -ljansson -lm -o "$out/c-vectors"
words=/usr/share/dict/words
build/place_words examples/cluster.json "$words" >"$out/words-x86_64.txt"
LD_LIBRARY_PATH=$lib run "$out/place_words" examples/cluster.json "$words" >"$out/words-arm64.txt"
diff "$out/words-x86_64.txt" "$out/words-arm64.txt" || { echo "arm64: the word list placed differently"; exit 1; }
echo "   word list: $(grep -i digest "$out/words-arm64.txt"), as on x86_64"
LD_LIBRARY_PATH=$lib run "$out/c-vectors" testdata/vectors.json

step "Python: the wheel in Debian's arm64 python3.11, test_vectors.py"
site=$out/site
rm -rf "$site"
pytest_version=$(sed -n 's/^pytest==//p' py/requirements-dev.txt)
# pytest and its dependencies are pure Python; the wheel is the arm64 one.
python -m pip install -q --target "$site" "pytest==$pytest_version"
python -m pip install -q --target "$site" --no-deps --platform manylinux2014_aarch64 --only-binary=:all: "$wheel"
readelf -h "$site"/shardring/*.so | grep -q 'Machine:.*AArch64'
PYTHONPATH=$site run "$sysroot/usr/bin/python3.11" -B -m pytest -q -p no:cacheprovider --noconftest \
    py/tests/test_vectors.py

step "Node: the .node through the package's loader in Debian's arm64 Node, vectors.test.mjs"
stage=$out/package
rm -rf "$stage" && mkdir -p "$stage/node/__test__" "$stage/testdata"
cp node/shardring.js node/index.js node/package.json "$stage/node/"
cp "$built/libshardring_node.so" "$stage/node/shardring.linux-arm64-gnu.node"
cp node/__test__/vectors.test.mjs "$stage/node/__test__/"
cp testdata/vectors.json "$stage/testdata/"
# Run as a program, not with --test: the test runner would start a child
# process of the arm64 node itself, which only qemu can run.
run "$sysroot/usr/bin/node" "$stage/node/__test__/vectors.test.mjs" >"$out/node-vectors.tap" \
    || { cat "$out/node-vectors.tap"; exit 1; }
grep -E '^# (pass|fail) ' "$out/node-vectors.tap" | paste -sd' ' | sed 's/^/   Node vectors: /'
grep -qx '# fail 0' "$out/node-vectors.tap"
echo "arm64: libring, the wheel and the Node binding passed under qemu-aarch64"
