#!/usr/bin/env bash
# The macOS leg of `make test-platforms` (RELEASING.md, "Platforms"), for
# each macOS platform of release/platforms.json that `make dist-all`
# packed into build/dist/. No emulator runs macOS programs on Linux, so
# this leg reads every Mach-O file with LLVM's tools (Debian's llvm) and
# links C against the tarball, but runs nothing:
#   - C: the libring tarball, unpacked: lib/libring.dylib links to the
#     file its install name names (@rpath/libring.0.MINOR.dylib), which is
#     for the platform's CPU and minimum macOS, signed, loads only system
#     libraries, imports only what they define and exports every ring_*
#     function of ring.h (check_macos, check_macos_exports); the word-list
#     example links against it by zig through the tarball's ring.pc, once
#     dynamically (the program loads @rpath/libring.0.MINOR.dylib) and once
#     statically (libring.a by path: ld64 takes a .dylib before a .a of the
#     same name; the program then loads system libraries alone);
#   - the wheels: their platform tag (file name and WHEEL) and each
#     extension (check_macos, Python's C API left to the interpreter);
#   - the npm package: its os and cpu, the main package listing it, and
#     the .node (check_macos, Node-API left to Node).
set -euo pipefail
cd "$(dirname "$0")/.."
# platform_leg, check_macos, check_macos_exports, macos_stub_dirs, unpack_wheels
# and unpack_npm_package.
source release/binaries.sh
platform_leg macos
major=${version%%.*} rest=${version#*.}
minor=${rest%%.*}
dylib=libring.$([ "$major" = 0 ] && echo "0.$minor" || echo "$major").dylib
command -v llvm-objdump >/dev/null || fail "llvm-objdump is missing (Debian package llvm)"

# npm name, Rust triple, minimum macOS, wheel tag, archive and wheel count.
mapfile -t platforms < <(python3 -c '
import json
for p in json.load(open("release/platforms.json"))["platforms"]:
    if p["macos"]:
        print(p["npm"], p["rust"], p["macos"], p["wheel"], p["archive"], len(p["python"]))')
[ ${#platforms[@]} -gt 0 ] || fail "release/platforms.json lists no macOS platform"

# loads FILE: the install names of the libraries FILE loads, one per line.
loads() { llvm-objdump --macho --dylibs-used "$1" | tail -n +2 | sed 's/^\s*\(.*\) (compatibility.*/\1/'; }

for line in "${platforms[@]}"; do
    read -r npm_name triple minos wheel_tag archive wheel_count <<<"$line"
    arch=${triple%%-*} && [ "$arch" = aarch64 ] && arch=arm64
    for artefact in "libring-$version-$archive.tar.gz" "shardring-$npm_name-$version.tgz" "shardring-$version.tgz"; do
        [ -e "$dist/$artefact" ] || fail "build/dist/$artefact is missing: run make dist-all"
    done

    step "$npm_name: the libring tarball; C linked against it, dynamically and statically"
    rm -rf "$out/$npm_name" && mkdir -p "$out/$npm_name"
    tar -C "$out/$npm_name" -xzf "$dist/libring-$version-$archive.tar.gz"
    lib=$out/$npm_name/libring-$version-$archive/lib
    [ "$(readlink "$lib/libring.dylib")" = "$dylib" ] || fail "lib/libring.dylib does not link to $dylib"
    [ "$(llvm-objdump --macho --dylib-id "$lib/$dylib" | tail -1)" = "@rpath/$dylib" ] \
        || fail "$dylib's install name is not @rpath/$dylib"
    check_macos "$lib/$dylib" "$arch" "$minos"
    check_macos_exports "$lib/$dylib"
    zigcc=(python-zig cc -target "${triple%%-*}-macos.$minos" -std=c11 -O2)
    export PKG_CONFIG_PATH=$lib/pkgconfig
    # shellcheck disable=SC2046 # pkg-config's flags are words
    "${zigcc[@]}" examples/c/place_words.c $(pkg-config --cflags --libs ring) -Wl,-rpath,@executable_path/../lib \
        -o "$out/$npm_name/words-dynamic"
    loads "$out/$npm_name/words-dynamic" | grep -qx "@rpath/$dylib" || fail "the dynamic program does not load @rpath/$dylib"
    # -liconv, which a Mac's SDK resolves, from cargo-zigbuild's stub here.
    # shellcheck disable=SC2046
    "${zigcc[@]}" examples/c/place_words.c $(pkg-config --static --cflags --libs ring | sed "s|-lring\b|$lib/libring.a|") \
        $(macos_stub_dirs | sed 's/^/-L/') -o "$out/$npm_name/words-static"
    check_macos "$out/$npm_name/words-static" "$arch" "$minos"
    echo "   word list: linked dynamically (loads @rpath/$dylib) and statically (system libraries alone)"

    step "$npm_name: the wheels"
    unpack_wheels "$dist" "$version" "$wheel_tag" "$out/$npm_name/wheels" "$wheel_count"
    for unpacked in "${unpacked_wheels[@]}"; do
        check_macos "$(ls "$unpacked"/shardring/*.so)" "$arch" "$minos" '^_Py|^__Py'
    done

    step "$npm_name: the npm packages"
    unpack_npm_package "$dist" "$version" "$npm_name" "$out/$npm_name/npm" darwin \
        "$([ "$arch" = arm64 ] && echo arm64 || echo x64)"
    check_macos "$npm_module" "$arch" "$minos" '^_napi_'
done
echo "macos: the libring tarballs, the wheels and the npm packages passed (read and linked; nothing here runs them)"
