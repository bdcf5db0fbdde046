#!/usr/bin/env bash
# Installs each artefact of build/dist/ (release/dist.sh) as a user would,
# in a scratch folder and with no `cargo` or `rustc` on PATH:
#   - the wheels into fresh venvs of Python 3.10 and 3.13 (pyenv's), which run
#     the vector tests and place the word list;
#   - both npm tarballs into a fresh project, used from CommonJS, ESM and a
#     type-checked TypeScript file, running the vector tests; the main tarball
#     alone, or on a platform without a binary, fails with
#     RING_UNSUPPORTED_PLATFORM;
#   - the libring tarball, unpacked, with a C program (shared and static) and a
#     C++ program built through `pkg-config` alone.
# Every binary's highest GLIBC symbol is at most GLIBC_2.17 (objdump -T), and
# every language places the word list and a set of keys identically. Then, with
# Rust present, the sdist builds and installs with pip. Run by `make
# test-install` (part of `make test`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=$root/build/dist
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
config=$root/examples/cluster.json
words=/usr/share/dict/words
tsc=$root/node/node_modules/.bin/tsc
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rust_path=$PATH

step() { echo "== install test: $*"; }
fail() { echo "install test FAILED: $*"; exit 1; }

for artefact in "shardring-$version.tar.gz" "shardring-$version.tgz" "shardring-linux-x64-gnu-$version.tgz" \
    "libring-$version-linux-x86_64.tar.gz"; do
    [ -f "$dist/$artefact" ] || fail "no $artefact in build/dist (run make dist)"
done
wheels=("$dist"/shardring-"$version"-cp3*-abi3-*.manylinux_2_17_x86_64.whl)
[ ${#wheels[@]} -eq 1 ] || fail "expected 1 abi3 wheel (cp310) in build/dist, found ${#wheels[@]}"

# No Rust toolchain from here on: drop every PATH entry holding cargo or rustc.
PATH=$(tr ':' '\n' <<<"$PATH" | while read -r dir; do
    [ -n "$dir" ] && [ ! -x "$dir/cargo" ] && [ ! -x "$dir/rustc" ] && echo "$dir"; done | paste -sd: -)
export PATH
unset CARGO_TARGET_DIR PYO3_PYTHON VIRTUAL_ENV RUSTUP_TOOLCHAIN
! command -v cargo >/dev/null && ! command -v rustc >/dev/null || fail "cargo or rustc is still on PATH"
cd "$scratch"

keys=(user:42 session:9f2c cart:17 "ключ" "" 12345 "a key with spaces")
expected_digest=""
# digest OUTPUT_FILE WHO: checks the place_words digest agrees across languages.
digest() {
    local found
    found=$(grep '^digest ' "$1" | cut -d' ' -f2)
    [ -n "$found" ] || fail "$2 printed no digest"
    if [ -z "$expected_digest" ]; then expected_digest=$found
    elif [ "$found" != "$expected_digest" ]; then fail "$2 placed the word list differently: $found, not $expected_digest"; fi
    echo "   $2: digest $found"
}
# same_owners FILE WHO: FILE's "key owner" lines equal the first language's.
same_owners() {
    if [ ! -f "$scratch/owners" ]; then cp "$1" "$scratch/owners"
    elif ! cmp -s "$1" "$scratch/owners"; then diff "$scratch/owners" "$1" || true; fail "$2 placed the keys differently"; fi
}
glibc_of() {
    local newest
    newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] || fail "$2 needs $newest"
    echo "   $2: highest GLIBC symbol $newest"
}

step "Python wheels"
for py in 3.10 3.13; do
    interpreter=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$py.*/bin/python$py 2>/dev/null | tail -1)
    [ -n "$interpreter" ] || fail "python$py is not installed (pyenv)"
    "$interpreter" -m venv "venv-$py"
    "venv-$py/bin/pip" install -q --no-index --find-links "$dist" "shardring==$version"
    "venv-$py/bin/pip" install -q pytest
    installed=$("venv-$py/bin/python" -c 'import shardring, pathlib; print(pathlib.Path(shardring.__file__).parent)')
    case "$installed" in "$scratch"/*) ;; *) fail "python$py imports shardring from $installed" ;; esac
    for file in py.typed _shardring.pyi; do [ -f "$installed/$file" ] || fail "the wheel lacks $file"; done
    got=$("venv-$py/bin/python" -c 'import shardring; print(shardring.__version__)')
    [ "$got" = "$version" ] || fail "python$py: __version__ is $got, not $version"
    # Which wheel pip chose (its tags) and its long description, from the installed metadata.
    tags=$("venv-$py/bin/python" -c 'import importlib.metadata as m; print(" ".join(l.split(": ")[1] for l in m.distribution("shardring").read_text("WHEEL").splitlines() if l.startswith("Tag: ")))')
    glibc_of "$(ls "$installed"/_shardring*.so)" "python$py's _shardring (wheel $tags)"
    metadata=$("venv-$py/bin/python" -c 'import importlib.metadata as m; print(m.distribution("shardring").read_text("METADATA"))')
    grep -q '^Description-Content-Type: text/markdown' <<<"$metadata" || fail "the wheel has no README as its long description"
    grep -q '^# shardring for Python' <<<"$metadata" || fail "the wheel's long description is not py/README.md"
    "venv-$py/bin/python" -m pytest -q -p no:cacheprovider "$root/py/tests/test_vectors.py"
    "venv-$py/bin/python" "$root/examples/python/place_words.py" "$config" "$words" >"place-py$py.txt"
    digest "place-py$py.txt" "Python $py"
    "venv-$py/bin/python" "$root/release/install-test/usage.py" "$config" "${keys[@]}" >"owners-py$py.txt"
    same_owners "owners-py$py.txt" "Python $py"
done

step "npm packages"
mkdir app && cd app
echo '{ "name": "install-test", "private": true, "version": "1.0.0" }' >package.json
npm install -q --offline --no-audit --no-fund "$dist/shardring-linux-x64-gnu-$version.tgz" "$dist/shardring-$version.tgz"
[ -d node_modules/shardring ] && [ ! -L node_modules/shardring ] || fail "node_modules/shardring is not an installed copy"
[ ! -e node_modules/shardring/shardring.linux-x64-gnu.node ] || fail "the main package holds a binary"
for file in README.md LICENSE-MIT LICENSE-APACHE shardring.d.ts index.d.ts; do
    [ -f "node_modules/shardring/$file" ] || fail "the npm package lacks $file"
done
grep -q '^# shardring for Node' node_modules/shardring/README.md || fail "the npm package's README is not node/README.md"
glibc_of node_modules/shardring-linux-x64-gnu/shardring.linux-x64-gnu.node "the .node (shardring-linux-x64-gnu-$version.tgz)"
# Copied into the project: node resolves 'shardring' from the script's folder.
cp "$root/release/install-test/usage.cjs" .
node usage.cjs "$config" "${keys[@]}" >owners-cjs.txt
same_owners owners-cjs.txt "Node (CommonJS)"
cp "$root/release/install-test/usage.mjs" .
node usage.mjs "$config" "${keys[@]}" >owners-esm.txt
same_owners owners-esm.txt "Node (ESM)"
cp "$root/examples/node/place_words.mjs" .
node place_words.mjs "$config" "$words" >place-node.txt
digest place-node.txt "Node $(node --version)"
# The repository's vector tests and type test, importing the installed package.
sed -e "s|require('../shardring.js')|require('shardring')|" \
    -e "s|new URL('../../testdata/vectors.json', import.meta.url)|'$root/testdata/vectors.json'|" \
    "$root/node/__test__/vectors.test.mjs" >vectors.test.mjs
grep -q "require('shardring')" vectors.test.mjs || fail "vectors.test.mjs no longer requires ../shardring.js"
node --test vectors.test.mjs >vectors.log || { cat vectors.log; fail "Node vector tests"; }
grep -E '^# (pass|fail)' vectors.log | paste -sd' ' | sed 's/^/   vectors: /'
sed "s|'../shardring.js'|'shardring'|g" "$root/node/__test__/types.ts" >types.ts
cat >tsconfig.json <<EOF
{ "compilerOptions": { "strict": true, "noEmit": true, "module": "nodenext", "moduleResolution": "nodenext",
  "target": "es2022", "types": ["node"], "typeRoots": ["$root/node/node_modules/@types"], "skipLibCheck": false },
  "files": ["types.ts"] }
EOF
"$tsc" -p tsconfig.json || fail "TypeScript does not type-check against the installed types"
echo "   TypeScript: types.ts type-checks against the installed package"
cd "$scratch"
# The main package without its platform package, and a platform without one.
mkdir bare && cd bare
echo '{ "name": "install-test-bare", "private": true, "version": "1.0.0" }' >package.json
npm install -q --offline --no-audit --no-fund --omit=optional "$dist/shardring-$version.tgz"
for arch in x64 riscv64; do
    out=$(node -e "Object.defineProperty(process, 'arch', { value: '$arch' })
try { require('shardring') } catch (e) { console.log(e.code + ': ' + e.message); process.exit(0) }
console.log('loaded'); process.exit(1)") || fail "shardring loaded without a binary ($arch)"
    echo "   linux-$arch without a binary: $out"
    # x64 has a platform package (the main package's optionalDependencies,
    # which the loader reads): it names it; riscv64 has none: it lists those.
    if [ "$arch" = x64 ]; then
        want="the binary package shardring-linux-x64-gnu for this platform (linux-x64-gnu) is not installed"
    else
        want="no prebuilt binary for this platform (linux-riscv64-gnu); prebuilt: linux-x64-gnu "
    fi
    grep -qF "RING_UNSUPPORTED_PLATFORM: shardring: $want" <<<"$out" || fail "unclear error: $out"
done
cd "$scratch"

step "libring tarball"
tar -xzf "$dist/libring-$version-linux-x86_64.tar.gz"
prefix=$scratch/libring-$version-linux-x86_64
major=${version%%.*} rest=${version#*.}
soname=libring.so.$([ "$major" = 0 ] && echo "0.${rest%%.*}" || echo "$major")
[ "$(readlink "$prefix/lib/$soname")" = "libring.so.$version" ] || fail "lib/$soname is not a link to libring.so.$version"
[ "$(readlink "$prefix/lib/libring.so")" = "$soname" ] || fail "lib/libring.so is not a link to $soname"
for file in lib/libring.a include/ring.h include/ring.hpp lib/pkgconfig/ring.pc LICENSE-MIT LICENSE-APACHE; do
    [ -f "$prefix/$file" ] || fail "the tarball lacks $file"
done
readelf -d "$prefix/lib/libring.so.$version" | grep -qF "Library soname: [$soname]" || fail "SONAME"
glibc_of "$prefix/lib/libring.so.$version" "libring.so.$version"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion ring)" = "$version" ] || fail "pkg-config --modversion ring"
cc -O2 "$root/examples/c/place_words.c" $(pkg-config --cflags --libs ring) -Wl,-rpath,"$prefix/lib" -o place_words
readelf -d place_words | grep -qF "Shared library: [$soname]" || fail "place_words does not load $soname"
./place_words "$config" "$words" >place-c.txt
digest place-c.txt "C (shared)"
cc -static -O2 "$root/examples/c/place_words.c" $(pkg-config --cflags --libs --static ring) -o place_words_static 2>&1 \
    | { grep -v -e 'in statically linked applications requires at runtime' -e 'in function .std::' || true; }
./place_words_static "$config" "$words" >place-c-static.txt
digest place-c-static.txt "C (static)"
c++ -std=c++17 -O2 "$root/release/install-test/usage.cpp" $(pkg-config --cflags --libs ring) -Wl,-rpath,"$prefix/lib" -o usage-cpp
./usage-cpp "$config" "${keys[@]}" >owners-cpp.txt
same_owners owners-cpp.txt "C++"

step "sdist (with Rust: pip builds it)"
PATH=$rust_path
# What this proves is that the sdist holds everything a build needs and
# places keys as the wheels do, not its optimisation: it compiles in the dev
# profile (maturin's PEP 517 arguments) into the workspace's target/, whose
# debug dependencies `make test` built already, instead of a cold release
# build of every dependency.
python3=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13.*/bin/python3.13 | tail -1)
"$python3" -m venv venv-sdist
MATURIN_PEP517_ARGS="--profile dev" CARGO_TARGET_DIR=$root/target venv-sdist/bin/pip install -q "$dist/shardring-$version.tar.gz"
venv-sdist/bin/pip install -q pytest
venv-sdist/bin/python -m pytest -q -p no:cacheprovider "$root/py/tests/test_vectors.py"
venv-sdist/bin/python "$root/release/install-test/usage.py" "$config" "${keys[@]}" >owners-sdist.txt
same_owners owners-sdist.txt "Python (sdist)"

echo "== install test: every artefact installed and placed the word list (digest $expected_digest) and the keys identically:"
sed 's/^/   /' "$scratch/owners"
