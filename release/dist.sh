#!/usr/bin/env bash
# Builds every artefact of a release into build/dist/ (RELEASING.md), for
# each platform of release/platforms.json that it packs (this machine's
# alone, or all of them with DIST_PLATFORMS=all, `make dist-all`):
#   shardring-V-cp310-abi3-<wheel tag>.whl  (manylinux2014_<arch>.manylinux_2_17_<arch>,
#                                          musllinux_1_2_<arch>, macosx_11_0_<arch>
#                                          or win_amd64)
#   shardring-<platform>-V.tgz            the npm platform package (the .node)
#   libring-V-<archive>.tar.gz            libring for C and C++
# and once:
#   shardring-V.tar.gz                    the Python sdist
#   shardring-V.tgz                       the npm package (loader, types, README, licenses)
#   shardring-V.crate, shardring-membership-V.crate, shardring-cli-V.crate
# Binaries are linked by zig against glibc 2.17 (manylinux2014) or, for a
# musl platform, dynamically against musl's libc.so (musllinux_1_2), or for
# macOS against libSystem (macOS 11 or newer), from the venv's ziglang,
# through `maturin build --zig` and `cargo zigbuild`; for Windows by
# Debian's mingw-w64 gcc against its own DLLs. Nothing is downloaded at
# build time. Fails when a glibc wheel is not manylinux2014 for
# auditwheel, a binary needs a glibc symbol newer than 2.17, a musl binary
# needs a library other than libc.so, a macOS one a library or symbol
# macOS lacks or another minimum version, a Windows one a DLL that is not
# Windows' own (or python3.dll, for the wheel), or any binary names a path
# of this machine (release/binaries.sh).
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

# check_glibc, check_musl, check_macos and check_windows: what a binary may import.
source release/binaries.sh

# The crates (cargo package, each built from its packaged sources),
# verified (built) in the workspace's target dir, whose dependencies `make
# test` compiled already. A debug build on one core, so it runs in the
# background while the release wheels' link (fat LTO, one codegen unit:
# one core) runs in the foreground; its output is printed at the end.
# cargo verifies each crate against the others through a local registry
# whose sources it unpacks under $CARGO_HOME/registry/src/-<hash of its
# path>/ and reuses while the version is unchanged: a clone at a path
# packaged before would verify shardring-membership against an old
# shardring. Those are only unpacked copies of these crates, so they go first.
crates_log=$stage/crates.log
(
    start=$(now)
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/shardring-*
    CARGO_TARGET_DIR=$root/target cargo package -q --allow-dirty -p shardring -p shardring-membership -p shardring-cli
    for crate in shardring shardring-membership shardring-cli; do
        cp "$root/target/package/$crate-$version.crate" "$out/"
    done
    step "crates (cargo package, each built from its packaged sources) in $(($(now) - start)) s"
) >"$crates_log" 2>&1 &
crates_pid=$!
# A step failing below ends dist; the packing ends with it.
trap '{ pkill -P "$crates_pid"; kill "$crates_pid"; } 2>/dev/null || true' EXIT

# The platforms to pack (release/platforms.json): the one build-release
# builds for alone (make dist), every one (make dist-all: DIST_PLATFORMS=all),
# every other one (DIST_PLATFORMS=cross: make test-platforms) or those
# DIST_PLATFORMS names (npm names, space-separated).
host=$(basename "$(dirname "$zig_release")")
mapfile -t platforms < <(python3 - "$host" "${DIST_PLATFORMS:-}" <<'EOF'
import json, sys
host, selection = sys.argv[1:]
listed = json.load(open("release/platforms.json"))["platforms"]
if selection == "all":
    chosen = listed
elif selection == "cross":
    chosen = [p for p in listed if p["rust"] != host]
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
    print(p["npm"], p["rust"], p["linker"], p["glibc"] or "-", p["macos"] or "-", p["wheel"], p["policy"] or "-",
          p["archive"], p["strip"] or "-", "node" if p["node"] else "-", ",".join(p["python"]))
EOF
)
[ ${#platforms[@]} -gt 0 ] || exit 1
packed=()

for line in "${platforms[@]}"; do
    read -r npm_name triple linker glibc macos wheel_tag policy archive strip_tool node pythons <<<"$line"
    [ "$glibc" = - ] && glibc=
    [ "$macos" = - ] && macos=
    [ "$policy" = - ] && policy=
    [ "$strip_tool" = - ] && strip_tool=
    [ "$node" = - ] && node=
    arch=${triple%%-*} && [ "$arch" = aarch64 ] && [ -n "$macos" ] && arch=arm64
    # node_api: the symbols the host process gives a Node module (none
    # where the module links them or, on Windows, looks them up itself).
    case $triple in
    *-windows-*) os=windows libc="Windows' DLLs" library=ring.dll node_binary=shardring_node.dll node_api= ;;
    *-apple-darwin) os=macos libc="macOS $macos's libSystem" library=libring.dylib node_binary=libshardring_node.dylib node_api='^_napi_' ;;
    *) os=linux libc=$([ -n "$glibc" ] && echo "glibc $glibc" || echo "musl's libc") library=libring.so node_binary=libshardring_node.so node_api= ;;
    esac
    [ -z "$node" ] || packed+=("$npm_name")
    what="libring${node:+ and the Node binding}"
    # maturin and cargo-zigbuild take the minimum macOS from here.
    if [ -n "$macos" ]; then export MACOSX_DEPLOYMENT_TARGET=$macos; else unset MACOSX_DEPLOYMENT_TARGET; fi
    if [ "$triple" = "$host" ]; then
        release_dir=$zig_release wheel_target=
        step "$npm_name: $what, linked against $libc (make build-release: cargo zigbuild)"
        start=$(now)
        make -s build-release
    else
        release_dir=$root/target/$linker/$triple/release wheel_target=$triple
        step "$npm_name: $what, cross-linked against $libc by $linker (make build-target)"
        start=$(now)
        make -s build-target RUST_TARGET="$triple" LINKER="$linker" GLIBC="$glibc" \
            TARGET_PACKAGES="-p shardring-ffi${node:+ -p shardring-node}"
    fi
    # check_binary FILE [ALLOWED]: the check of FILE's platform; ALLOWED,
    # the symbols or DLL the host process provides (Python's, Node's).
    check_binary() {
        case $os in
        windows) check_windows "$1" ${2:+"$2"} ;;
        macos) check_macos "$1" "$arch" "$macos" ${2:+"$2"} ;;
        *) if [ -n "$glibc" ]; then check_glibc "$1"; else check_musl "$1"; fi ;;
        esac
    }
    check_binary "$release_dir/$library"
    [ -z "$node" ] || check_binary "$release_dir/$node_binary" "$node_api"
    [ "$os" != macos ] || check_macos_exports "$release_dir/$library"
    step "built in $(($(now) - start)) s"

    step "$npm_name: Python wheels (abi3, $wheel_tag)"
    start=$(now)
    # build-py built this machine's wheel already; maturin relinks nothing.
    IFS=, read -r -a abis <<<"$pythons"
    for abi in "${abis[@]}"; do
        make -s wheel ABI="$abi" WHEEL_OUT="$out" WHEEL_TARGET="$wheel_target" WHEEL_POLICY="$policy" \
            WHEEL_LINKER="$linker"
    done
    if [ -n "$glibc" ]; then
        shopt -s nullglob
        wheels=("$out"/shardring-"$version"-cp3*-abi3-*"$wheel_tag".whl)
        shopt -u nullglob
        [ ${#wheels[@]} -eq ${#abis[@]} ] || { echo "dist: expected ${#abis[@]} $wheel_tag wheels, found ${#wheels[@]}"; exit 1; }
        for wheel in "${wheels[@]}"; do
            report=$(auditwheel show "$wheel")
            grep -q "\"$wheel_tag\"" <<<"$report" || { echo "$report"; echo "dist: $wheel is not $wheel_tag"; exit 1; }
            echo "   $(basename "$wheel"): auditwheel: consistent with $wheel_tag"
        done
    else
        # auditwheel reads neither musl, macOS nor Windows binaries here.
        unpack_wheels "$out" "$version" "$wheel_tag" "$stage/wheels" ${#abis[@]}
        for unpacked in "${unpacked_wheels[@]}"; do
            case $os in
            windows) check_binary "$(ls "$unpacked"/shardring/*.pyd)" python3.dll ;;
            macos) check_binary "$(ls "$unpacked"/shardring/*.so)" '^_Py|^__Py' ;;
            *) check_binary "$(ls "$unpacked"/shardring/*.so)" ;;
            esac
        done
    fi
    for wheel in "$out"/shardring-"$version"-cp3*-abi3-*"$wheel_tag".whl; do check_paths "$wheel"; done
    step "wheels in $(($(now) - start)) s"

    step "$npm_name: libring-$version-$archive.tar.gz"
    c_dir=$stage/libring-$version-$archive
    if [ "$os" = windows ]; then
        # ring.dll in bin/ (beside the programs, where Windows looks for
        # it); in lib/ its import libraries, mingw-w64's (libring.dll.a)
        # and MSVC's (ring.lib, written by llvm-dlltool from the DLL's
        # exports), and the static library for mingw-w64.
        mkdir -p "$c_dir/bin" "$c_dir/lib" "$c_dir/include"
        cp "$release_dir/ring.dll" "$c_dir/bin/"
        "$strip_tool" --strip-debug "$c_dir/bin/ring.dll"
        check_paths "$c_dir/bin/ring.dll"
        cp "$release_dir/libring.dll.a" "$release_dir/libring.a" "$c_dir/lib/"
        { echo "LIBRARY ring.dll"; echo EXPORTS
          objdump -p "$c_dir/bin/ring.dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^\s*\[ *[0-9]*\] //p'
        } >"$stage/ring.def"
        python-zig dlltool -m i386:x86-64 -d "$stage/ring.def" -l "$c_dir/lib/ring.lib"
        echo "   ring.dll exports $(grep -c '^ring_' "$stage/ring.def") ring_* functions and $(grep -vc '^ring_\|^LIBRARY\|^EXPORTS' "$stage/ring.def") others"
        grep -vq '^ring_\|^LIBRARY\|^EXPORTS' "$stage/ring.def" && { echo "dist: ring.dll exports more than ring_*"; exit 1; }
        cp include/ring.h include/ring.hpp "$c_dir/include/"
    elif [ "$os" = macos ]; then
        # lib/libring.0.MINOR.dylib, its install name's file, with
        # libring.dylib linking to it; the static library; a ring.pc whose
        # static link adds the one system library it needs beyond
        # libSystem, libiconv (Rust's std links it on Apple targets). Not
        # stripped: zig signed it, and a strip would void the signature.
        dylib=$(llvm-objdump --macho --dylib-id "$release_dir/libring.dylib" | sed -n 's|^@rpath/||p')
        [ "$dylib" = "libring.${soname#libring.so.}.dylib" ] || { echo "dist: libring.dylib's install name is @rpath/$dylib"; exit 1; }
        mkdir -p "$c_dir/lib/pkgconfig" "$c_dir/include"
        cp "$release_dir/libring.dylib" "$c_dir/lib/$dylib"
        ln -s "$dylib" "$c_dir/lib/libring.dylib"
        cp "$release_dir/libring.a" "$c_dir/lib/"
        check_paths "$c_dir/lib/$dylib"
        cp include/ring.h include/ring.hpp "$c_dir/include/"
        sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$version|" \
            -e 's|^Libs.private: .*|Libs.private: -liconv|' ffi-c/ring.pc.in >"$c_dir/lib/pkgconfig/ring.pc"
    else
        # The pkg-config file is relocatable: prefix is where the tarball was unpacked.
        make -s install-files DESTDIR="$c_dir" PREFIX= LIBDIR="$release_dir" PC_PREFIX='$${pcfiledir}/../..'
        readelf -d "$c_dir/lib/libring.so.$version" | grep -qF "Library soname: [$soname]"
        # build-release keeps std's debug sections (and the symbols valgrind
        # needs); the packed copy keeps the symbols only, as a native release
        # build would. Another architecture's binaries need its own strip.
        "$strip_tool" --strip-debug "$c_dir/lib/libring.so.$version"
        check_paths "$c_dir/lib/libring.so.$version"
    fi
    cp LICENSE-MIT LICENSE-APACHE "$c_dir/"
    tar -C "$stage" -czf "$out/libring-$version-$archive.tar.gz" "libring-$version-$archive"

    [ -n "$node" ] || continue
    step "$npm_name: the npm platform package"
    # npm/<platform>/ plus the binary and the licenses.
    platform_dir=$stage/npm-$npm_name
    cp -r "npm/$npm_name" "$platform_dir"
    cp "$release_dir/$node_binary" "$platform_dir/shardring.$npm_name.node"
    [ -z "$strip_tool" ] || "$strip_tool" --strip-debug "$platform_dir/shardring.$npm_name.node"
    check_paths "$platform_dir/shardring.$npm_name.node"
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

# The crates packed in the background (above) must have passed.
wait "$crates_pid" || { cat "$crates_log"; echo "dist: cargo package failed"; exit 1; }
trap - EXIT
cat "$crates_log"

echo "== dist: build/dist/"
(cd "$out" && ls -l --block-size=1 | awk 'NR > 1 { printf "   %10d  %s\n", $5, $9 }')
