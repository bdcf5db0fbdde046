#!/usr/bin/env bash
# Builds every artefact of a release into build/dist/ (RELEASING.md), for
# each platform of release/platforms.json that it packs (this machine's
# alone, or all of them with DIST_PLATFORMS=all, `make dist-all`):
#   shardring-V-cp39-abi3-<wheel tag>.whl  (manylinux2014_<arch>.manylinux_2_17_<arch>,
#   shardring-V-cp310-abi3-<wheel tag>.whl  or musllinux_1_2_<arch>)
#   shardring-<platform>-V.tgz            the npm platform package (the .node)
#   libring-V-<archive>.tar.gz            libring for C and C++
# and once:
#   shardring-V.tar.gz                    the Python sdist
#   shardring-V.tgz                       the npm package (loader, types, README, licenses)
#   shardring-V.crate, shardring-membership-V.crate, shardring-cli-V.crate
# Binaries are linked by zig against glibc 2.17 (manylinux2014) or, for a
# musl platform, dynamically against musl's libc.so (musllinux_1_2), from
# the venv's ziglang, through `maturin build --zig` and `cargo zigbuild`;
# nothing is downloaded at build time. Fails when a glibc wheel is not
# manylinux2014 for auditwheel, a binary needs a glibc symbol newer than
# 2.17, or a musl binary needs a library other than libc.so.
# Run by `make dist`; `release/install-test.sh` installs what it writes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/.venv
# zig (ziglang), cargo-zigbuild, maturin and auditwheel come from the venv.
export PATH="$venv/bin:$PATH"
export PYO3_PYTHON="$venv/bin/python"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
major=${version%%.*} rest=${version#*.}
minor=${rest%%.*}
soname=libring.so.$([ "$major" = 0 ] && echo "0.$minor" || echo "$major")
out=$root/build/dist
# Not build/stage, which `make check-install` uses (make test runs both at once).
stage=$root/build/dist-stage
# The zig-linked builds are `make build`'s own (build-release, and `make
# wheel` for build-py), in target/zig and target/zig-py: maturin's zig and
# cargo-zigbuild set the C compiler differently, so one dir shared by both
# would rebuild on every switch. After `make build` the cp310 wheel and
# libring are built already. The Makefile exports where build-release puts
# its files.
zig_release=${ZIG_RELEASE:?run release/dist.sh through make dist}
rm -rf "$out" "$stage"
mkdir -p "$out" "$stage"

now() { date +%s; }
step() { echo "== dist: $*"; }

# highest_glibc FILE: the newest GLIBC_x.y symbol version FILE imports.
highest_glibc() { objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1; }
check_glibc() {
    local newest
    newest=$(highest_glibc "$1")
    if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" != GLIBC_2.17 ]; then
        echo "dist: $1 needs $newest, newer than GLIBC_2.17"
        exit 1
    fi
    echo "   $(basename "$1"): highest symbol $newest"
}
# check_musl FILE: FILE needs musl's libc.so and no other library
# (auditwheel cannot read musl binaries on a glibc machine).
check_musl() {
    local needed
    needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
    [ "$needed" = libc.so ] || { echo "dist: $1 needs [$needed], not musl's libc.so alone"; exit 1; }
    echo "   $(basename "$1"): needs libc.so alone"
}

# The platforms to pack (release/platforms.json): the one build-release
# builds for alone (make dist), every one (make dist-all: DIST_PLATFORMS=all)
# or those DIST_PLATFORMS names (npm names, space-separated).
host=$(basename "$(dirname "$zig_release")")
mapfile -t platforms < <(python3 - "$host" "${DIST_PLATFORMS:-}" <<'EOF'
import json, sys
host, selection = sys.argv[1:]
listed = json.load(open("release/platforms.json"))["platforms"]
if selection == "all":
    chosen = listed
elif selection:
    names = selection.split()
    unknown = sorted(set(names) - {p["npm"] for p in listed})
    if unknown:
        sys.exit(f"dist: DIST_PLATFORMS names {', '.join(unknown)}, not in release/platforms.json")
    chosen = [p for p in listed if p["npm"] in names]
else:
    chosen = [p for p in listed if p["rust"] == host]
if not chosen:
    sys.exit(f"dist: build-release's target {host} is not in release/platforms.json")
for p in chosen:
    print(p["npm"], p["rust"], p["glibc"] or "-", p["wheel"], p["policy"], p["archive"], p["strip"])
EOF
)
[ ${#platforms[@]} -gt 0 ] || exit 1
packed=()

for line in "${platforms[@]}"; do
    read -r npm_name triple glibc wheel_tag policy archive strip_tool <<<"$line"
    [ "$glibc" = - ] && glibc= libc="musl's libc" || libc="glibc $glibc"
    packed+=("$npm_name")
    if [ "$triple" = "$host" ]; then
        release_dir=$zig_release wheel_target=
        step "$npm_name: libring and the Node binding, linked against $libc (make build-release: cargo zigbuild)"
        start=$(now)
        make -s build-release
    else
        release_dir=$root/target/zig/$triple/release wheel_target=$triple
        step "$npm_name: libring and the Node binding, cross-linked against $libc (make build-target)"
        start=$(now)
        make -s build-target RUST_TARGET="$triple" GLIBC="$glibc"
    fi
    for binary in libring.so libshardring_node.so; do
        if [ -n "$glibc" ]; then check_glibc "$release_dir/$binary"; else check_musl "$release_dir/$binary"; fi
    done
    step "built in $(($(now) - start)) s"

    step "$npm_name: Python wheels (abi3, $policy)"
    start=$(now)
    # cp310 first: build-py built it last, so only cp39 recompiles here.
    for abi in abi3-py310 abi3-py39; do
        make -s wheel ABI="$abi" WHEEL_OUT="$out" WHEEL_TARGET="$wheel_target" WHEEL_POLICY="$policy"
    done
    shopt -s nullglob
    wheels=("$out"/shardring-"$version"-cp3*-abi3-*"$wheel_tag".whl)
    shopt -u nullglob
    [ ${#wheels[@]} -eq 2 ] || { echo "dist: expected 2 $wheel_tag wheels, found ${#wheels[@]}"; exit 1; }
    for wheel in "${wheels[@]}"; do
        if [ -n "$glibc" ]; then
            report=$(auditwheel show "$wheel")
            grep -q "\"$wheel_tag\"" <<<"$report" || { echo "$report"; echo "dist: $wheel is not $wheel_tag"; exit 1; }
            echo "   $(basename "$wheel"): auditwheel: consistent with $wheel_tag"
        else
            rm -rf "$stage/wheel" && mkdir -p "$stage/wheel"
            (cd "$stage/wheel" && python3 -m zipfile -e "$wheel" .)
            check_musl "$(ls "$stage"/wheel/shardring/*.so)"
        fi
    done
    step "wheels in $(($(now) - start)) s"

    step "$npm_name: libring-$version-$archive.tar.gz"
    c_dir=$stage/libring-$version-$archive
    # The pkg-config file is relocatable: prefix is where the tarball was unpacked.
    make -s install-files DESTDIR="$c_dir" PREFIX= LIBDIR="$release_dir" PC_PREFIX='$${pcfiledir}/../..'
    readelf -d "$c_dir/lib/libring.so.$version" | grep -qF "Library soname: [$soname]"
    # build-release keeps std's debug sections (and the symbols valgrind
    # needs); the packed copy keeps the symbols only, as a native release
    # build would. Another architecture's binaries need its own strip.
    "$strip_tool" --strip-debug "$c_dir/lib/libring.so.$version"
    cp LICENSE-MIT LICENSE-APACHE "$c_dir/"
    tar -C "$stage" -czf "$out/libring-$version-$archive.tar.gz" "libring-$version-$archive"

    step "$npm_name: the npm platform package"
    # npm/<platform>/ plus the binary and the licenses.
    platform_dir=$stage/npm-$npm_name
    cp -r "npm/$npm_name" "$platform_dir"
    cp "$release_dir/libshardring_node.so" "$platform_dir/shardring.$npm_name.node"
    "$strip_tool" --strip-debug "$platform_dir/shardring.$npm_name.node"
    cp LICENSE-MIT LICENSE-APACHE "$platform_dir/"
    (cd "$platform_dir" && npm pack -q --pack-destination "$out" >/dev/null)
done

step "the Python sdist"
(cd py && maturin sdist --out "$out" >/dev/null)

step "the main npm package"
# node/'s files but no binary, with the platform packages packed above as
# optionalDependencies at this version (as napi-rs's prepublish adds them).
main_dir=$stage/npm-shardring
mkdir -p "$main_dir"
cp node/shardring.js node/shardring.d.ts node/index.js node/index.d.ts node/README.md \
    node/LICENSE-MIT node/LICENSE-APACHE "$main_dir/"
python3 - "$root/node/package.json" "$main_dir/package.json" "$version" "${packed[@]}" <<'EOF'
import json, pathlib, sys
source, target, version, *platforms = sys.argv[1:]
package = json.loads(pathlib.Path(source).read_text())
package["files"] = [f for f in package["files"] if not f.endswith(".node")]
package["optionalDependencies"] = {f"shardring-{platform}": version for platform in platforms}
# What a user's install needs: no build scripts, no development tools.
package.pop("scripts", None)
package.pop("devDependencies", None)
pathlib.Path(target).write_text(json.dumps(package, indent=2) + "\n")
EOF
(cd "$main_dir" && npm pack -q --pack-destination "$out" >/dev/null)

step "crates (cargo package, each built from its packaged sources)"
start=$(now)
# Verified (built) in the workspace's target dir, whose dependencies `make
# test` compiled already. cargo verifies each crate against the others
# through a local registry whose sources it unpacks under
# $CARGO_HOME/registry/src/-<hash of its path>/ and reuses while the
# version is unchanged: a clone at a path packaged before would verify
# shardring-membership against an old shardring. Those are only unpacked
# copies of these crates, so they go first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/shardring-*
CARGO_TARGET_DIR=$root/target cargo package -q --allow-dirty -p shardring -p shardring-membership -p shardring-cli
for crate in shardring shardring-membership shardring-cli; do
    cp "$root/target/package/$crate-$version.crate" "$out/"
done
step "crates in $(($(now) - start)) s"

echo "== dist: build/dist/"
(cd "$out" && ls -l --block-size=1 | awk 'NR > 1 { printf "   %10d  %s\n", $5, $9 }')
