#!/usr/bin/env bash
# The Linux musl leg of `make test-platforms` (RELEASING.md, "Platforms"),
# for each musl platform of release/platforms.json that `make dist-all`
# packed into build/dist/: x86_64 runs natively, aarch64 under qemu-user.
# No musl Python or Node installs here (Debian has neither), so C programs
# run and the wheel and the .node are read, not loaded:
#   - C: the libring tarball, unpacked; the word-list example built against
#     it through its ring.pc, once linked statically (libring.a and musl's
#     libc.a: one file to copy onto any Linux) and once dynamically
#     (libring.so, run by musl's own loader), prints what the glibc build
#     prints: keys per node and the digest;
#   - every binary (libring.so, each wheel's extension, the .node): the
#     right machine, no library but musl's libc.so, and every symbol it
#     imports defined by Debian's musl libc.so, besides Python's C API
#     (Py*, _Py*) for the wheels and Node-API (napi_*) for the .node;
#   - the wheels' platform tag (file name and WHEEL) and the npm package's
#     os, cpu and libc, and the main package listing it.
# Debian's musl (1.2.3, libc and loader) for each architecture is unpacked
# into build/musl/<arch>/ from its .deb; nothing is installed into the
# system. Needs qemu-user-static and an apt that can fetch arm64 packages
# (it adds the arm64 architecture to dpkg when missing: root, or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
# platform_leg, check_musl, unpack_wheels and unpack_npm_package.
source release/binaries.sh
platform_leg musl
sudo=$([ "$(id -u)" = 0 ] || echo sudo)

# npm name, Rust triple, wheel tag, archive and wheel count of each musl platform.
mapfile -t platforms < <(python3 -c '
import json
for p in json.load(open("release/platforms.json"))["platforms"]:
    if p["rust"].endswith("-musl"):
        print(p["npm"], p["rust"], p["wheel"], p["archive"], len(p["python"]))')
[ ${#platforms[@]} -gt 0 ] || fail "release/platforms.json lists no musl platform"

# The glibc build's output, which every musl program must print.
words=/usr/share/dict/words
[ -x build/place_words ] || fail "build/place_words is missing: run make build-c"
build/place_words examples/cluster.json "$words" >"$out/words-glibc.txt"

# dynamic_symbols FILE KIND: FILE's dynamic symbols, one name per line
# (symbol versions dropped); KIND `imports`: undefined ones it needs
# (GLOBAL: weak ones may stay undefined), `exports`: defined ones.
dynamic_symbols() {
    readelf --dyn-syms -W "$1" | awk -v kind="$2" '
        NR > 3 && $8 != "" {
            name = $8; sub(/@.*/, "", name)
            if (kind == "imports" && $7 == "UND" && $5 == "GLOBAL") print name
            if (kind == "exports" && $7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK")) print name
        }' | sort -u
}
# check_binary FILE MACHINE LIBC_SO ALLOWED: FILE is MACHINE's, needs no
# library but libc.so, and each symbol it imports is LIBC_SO's or matches
# the extended regex ALLOWED (the host program's API).
check_binary() {
    local file=$1 machine=$2 libc=$3 allowed=$4 missing
    readelf -h "$file" | grep -q "Machine:.*$machine" || fail "$(basename "$file") is not $machine"
    check_musl "$file"
    missing=$(comm -23 <(dynamic_symbols "$file" imports | grep -Ev "$allowed") <(dynamic_symbols "$libc" exports))
    [ -z "$missing" ] || fail "$(basename "$file") imports symbols musl's libc.so lacks: $(paste -sd' ' <<<"$missing")"
    echo "   $(basename "$file"): $machine, $(dynamic_symbols "$file" imports | grep -Evc "$allowed") libc imports all defined by musl"
}

for line in "${platforms[@]}"; do
    read -r npm_name triple wheel_tag archive wheel_count <<<"$line"
    arch=${triple%%-*}
    machine=$([ "$arch" = aarch64 ] && echo AArch64 || echo X86-64)
    deb_arch=$([ "$arch" = aarch64 ] && echo arm64 || echo amd64)
    sysroot=$out/$arch
    for artefact in "libring-$version-$archive.tar.gz" "shardring-$npm_name-$version.tgz" "shardring-$version.tgz"; do
        [ -e "$dist/$artefact" ] || fail "build/dist/$artefact is missing: run make dist-all"
    done

    step "$npm_name: Debian's musl ($deb_arch) into $sysroot"
    if [ ! -e "$sysroot/lib/$arch-linux-musl/libc.so" ]; then
        if [ "$deb_arch" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
            $sudo dpkg --add-architecture arm64
            $sudo apt-get update -q
        fi
        rm -rf "$sysroot" && mkdir -p "$sysroot/debs"
        # apt-get download runs as _apt when it can: a folder it may write to.
        chmod 777 "$sysroot/debs"
        (cd "$sysroot/debs" && apt-get download -q "musl:$deb_arch")
        dpkg -x "$sysroot"/debs/musl_*.deb "$sysroot"
    fi
    libc=$sysroot/lib/$arch-linux-musl/libc.so
    [ -x "$libc" ] || fail "Debian's musl package holds no $libc"
    # musl's libc.so is its dynamic loader too: natively it runs a program
    # given as its argument; under qemu, -L makes the sysroot the guest's /,
    # where /lib/ld-musl-aarch64.so.1 links to libc.so.
    if [ "$arch" = aarch64 ]; then
        run_static() { qemu-aarch64-static "$@"; }
        run_dynamic() { LD_LIBRARY_PATH=$prefix/lib qemu-aarch64-static -L "$sysroot" "$@"; }
    else
        run_static() { "$@"; }
        run_dynamic() { LD_LIBRARY_PATH=$prefix/lib "$libc" "$@"; }
    fi

    step "$npm_name: C against the libring tarball, statically and dynamically linked"
    rm -rf "$out/libring-$arch" && mkdir -p "$out/libring-$arch"
    tar -C "$out/libring-$arch" -xzf "$dist/libring-$version-$archive.tar.gz"
    prefix=$out/libring-$arch/libring-$version-$archive
    check_binary "$prefix/lib/libring.so.$version" "$machine" "$libc" '^$'
    zigcc=(python-zig cc -target "$arch-linux-musl" -std=c11 -O2)
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    # Rust's unwinder comes from libgcc_eh, which gcc adds to every static
    # link (Alpine's gcc too); zig cc adds its own libunwind when asked.
    # shellcheck disable=SC2046 # pkg-config's flags are words
    "${zigcc[@]}" -static examples/c/place_words.c $(pkg-config --static --cflags --libs ring) -lunwind \
        -o "$out/words-static-$arch"
    # shellcheck disable=SC2046
    "${zigcc[@]}" examples/c/place_words.c $(pkg-config --cflags --libs ring) -o "$out/words-dynamic-$arch"
    ! readelf -l "$out/words-static-$arch" | grep -q INTERP || fail "the static program asks for a loader"
    readelf -l "$out/words-dynamic-$arch" | grep -q "interpreter: /lib/ld-musl-$arch.so.1" \
        || fail "the dynamic program's loader is not musl's"
    for kind in static dynamic; do
        "run_$kind" "$out/words-$kind-$arch" examples/cluster.json "$words" >"$out/words-$kind-$arch.txt"
        diff "$out/words-glibc.txt" "$out/words-$kind-$arch.txt" || fail "the $kind $arch program placed the word list differently"
        echo "   word list, $kind: $(grep -i digest "$out/words-$kind-$arch.txt"), as with glibc"
    done

    step "$npm_name: the wheels"
    unpack_wheels "$dist" "$version" "$wheel_tag" "$out/wheels-$arch" "$wheel_count"
    for unpacked in "${unpacked_wheels[@]}"; do
        check_binary "$(ls "$unpacked"/shardring/*.so)" "$machine" "$libc" '^_?Py'
    done

    step "$npm_name: the npm packages"
    unpack_npm_package "$dist" "$version" "$npm_name" "$out/npm-$arch" linux \
        "$([ "$arch" = aarch64 ] && echo arm64 || echo x64)" musl
    check_binary "$npm_module" "$machine" "$libc" '^napi_'
done
echo "musl: the libring tarballs, the wheels and the npm packages passed"
