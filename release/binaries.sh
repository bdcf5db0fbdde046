# Checks of the binaries a release ships: what they may import, by C
# library, and the wheels' tags. Sourced by release/dist.sh and the
# platform legs (release/test-*.sh). Each check prints what it found or
# exits 1 naming the file and what is wrong.

# platform_leg NAME: the setting of a platform leg of make test-platforms
# (release/test-NAME.sh), run from the repository's root: root, PATH with
# the venv's tools (zig, maturin) first, out (build/NAME/, created), dist
# (build/dist/), the crate version, and step and fail, which print under
# NAME (fail exits 1).
platform_leg() {
    leg=$1
    root=$PWD
    export PATH="$root/.venv/bin:$PATH"
    out=$root/build/$leg
    dist=$root/build/dist
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
    mkdir -p "$out"
    step() { echo "== $leg: $*"; }
    fail() { echo "$leg: $*"; exit 1; }
}

# highest_glibc FILE: the newest GLIBC_x.y symbol version FILE imports.
highest_glibc() { objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1; }
check_glibc() {
    local newest
    newest=$(highest_glibc "$1")
    if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" != GLIBC_2.17 ]; then
        echo "$(basename "$0"): $1 needs $newest, newer than GLIBC_2.17"
        exit 1
    fi
    echo "   $(basename "$1"): highest symbol $newest"
}
# check_musl FILE: FILE needs musl's libc.so and no other library
# (auditwheel cannot read musl binaries on a glibc machine).
check_musl() {
    local needed
    needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
    [ "$needed" = libc.so ] || { echo "$(basename "$0"): $1 needs [$needed], not musl's libc.so alone"; exit 1; }
    echo "   $(basename "$1"): needs libc.so alone"
}
# check_windows FILE [DLL]: FILE imports only Windows' own DLLs (the
# kernel, C runtime, sockets, random numbers), and DLL (python3.dll).
check_windows() {
    local imports foreign
    local own='^(api-ms-win-[a-z0-9-]+|kernel32|ntdll|ws2_32|userenv|bcryptprimitives|advapi32|bcrypt|secur32|crypt32|ncrypt|shell32|ole32|oleaut32|iphlpapi|ucrtbase|msvcrt)\.dll$'
    objdump -f "$1" | grep -q 'file format pei-x86-64$' || { echo "$(basename "$0"): $1 is not a Windows x86-64 (PE32+) file"; exit 1; }
    [ -n "${2:-}" ] && own+="|^${2//./\\.}\$"
    imports=$(objdump -p "$1" | sed -n 's/^\s*DLL Name: //p' | sort -uf)
    [ -n "$imports" ] || { echo "$(basename "$0"): objdump read no import table in $1"; exit 1; }
    foreign=$(grep -Eiv "$own" <<<"$imports" || true)
    [ -z "$foreign" ] || { echo "$(basename "$0"): $1 imports $(paste -sd' ' <<<"$foreign"), not Windows' own"; exit 1; }
    echo "   $(basename "$1"): x86-64, imports $(paste -sd' ' <<<"$imports")"
}
# check_macos FILE ARCH MINOS [ALLOWED]: FILE is a Mach-O file for ARCH
# (arm64 or x86_64) that runs on macOS MINOS and later (LC_BUILD_VERSION),
# carries a code signature if arm64 (zig signs it ad hoc; arm64 Macs load
# nothing unsigned, Intel ones need none), loads only libraries of the system (/usr/lib, /System), and
# imports no symbol that the system libraries it loads lack, besides those
# ALLOWED names (an extended regex: Python's C API, Node-API), which the
# host process defines (-undefined dynamic_lookup). The libraries'
# symbols come from the text stubs (.tbd) zig and cargo-zigbuild link
# against: macOS keeps no library files on disk to read. Read with LLVM's
# llvm-objdump and llvm-nm (Debian's llvm package).
check_macos() {
    local file=$1 arch=$2 minos=$3 allowed=${4:-} headers cpu loads foreign missing
    headers=$(llvm-objdump --macho --private-header --private-headers "$file") \
        || { echo "$(basename "$0"): llvm-objdump cannot read $file as Mach-O"; exit 1; }
    cpu=$(awk '$1 == "MH_MAGIC_64" { print $2; exit }' <<<"$headers")
    [ "$cpu" = "$([ "$arch" = arm64 ] && echo ARM64 || echo X86_64)" ] \
        || { echo "$(basename "$0"): $file is for ${cpu:-no known CPU}, not $arch"; exit 1; }
    grep -A4 'cmd LC_BUILD_VERSION' <<<"$headers" | grep -q '^ *platform macos$' \
        && grep -A4 'cmd LC_BUILD_VERSION' <<<"$headers" | grep -q "^ *minos $minos\$" \
        || { echo "$(basename "$0"): $file does not say macOS $minos as its minimum (LC_BUILD_VERSION)"; exit 1; }
    [ "$arch" != arm64 ] || grep -q 'cmd LC_CODE_SIGNATURE' <<<"$headers" \
        || { echo "$(basename "$0"): $file carries no code signature (arm64 macOS loads nothing unsigned)"; exit 1; }
    loads=$(grep -A2 'cmd LC_LOAD_DYLIB' <<<"$headers" | sed -n 's/^ *name \(.*\) (offset.*/\1/p')
    foreign=$(grep -Ev '^/usr/lib/|^/System/Library/' <<<"$loads" || true)
    [ -z "$foreign" ] || { echo "$(basename "$0"): $file loads $(paste -sd' ' <<<"$foreign"), not the system's"; exit 1; }
    missing=$(comm -23 <(llvm-nm --undefined-only --just-symbol-name "$file" | grep -Ev "${allowed:-^\$}" | sort -u) \
        <(macos_stubs | sort -u))
    [ -z "$missing" ] || { echo "$(basename "$0"): $file imports symbols macOS's libraries lack: $(paste -sd' ' <<<"$missing")"; exit 1; }
    echo "   $(basename "$file"): $arch, macOS $minos+,$([ "$arch" = arm64 ] && echo " signed,") loads $(paste -sd' ' <<<"$loads"), every import defined"
}
# check_macos_exports FILE: the macOS libring exports every ring_*
# function include/ring.h declares and otherwise only ring_* functions
# kept for programs built against older headers, Rust's mangled symbols
# and the few the toolchain adds. zig's Mach-O linker ignores
# rustc's exported-symbols list (cargo-zigbuild drops it), so the Rust
# symbols stay visible; under macOS's two-level namespace a program binds
# each import to the library it linked, so they cannot capture another
# library's symbols, but an unmangled C name could, and fails here.
check_macos_exports() {
    local exports declared missing other
    exports=$(llvm-objdump --macho --exports-trie "$1" | awk 'NR > 3 { print $2 }' | sort -u)
    declared=$(grep -oE '\bring_[a-z0-9_]+\(' include/ring.h | tr -d '(' | sed 's/^/_/' | sort -u)
    missing=$(comm -23 <(echo "$declared") <(echo "$exports"))
    [ -z "$missing" ] || { echo "$(basename "$0"): $1 does not export $(paste -sd' ' <<<"$missing")"; exit 1; }
    other=$(comm -13 <(echo "$declared") <(echo "$exports") \
        | grep -Ev '^_ring_[a-z0-9_]+$|^__R|^__ZN|^(__mh_dylib_header|___dso_handle|_rust_eh_personality|___isPlatformVersionAtLeast|___isOSVersionAtLeast)$' || true)
    [ -z "$other" ] || { echo "$(basename "$0"): $1 exports unmangled symbols besides ring_*: $(paste -sd' ' <<<"$other")"; exit 1; }
    echo "   $(basename "$1"): exports the $(wc -l <<<"$declared") ring_* functions of ring.h, $(grep -c '^_ring_' <<<"$exports") ring_* in all, and $(grep -vc '^_ring_' <<<"$exports") Rust and toolchain symbols"
}
# macos_stub_dirs: the folders of the text stubs (.tbd) of macOS's
# libraries, one per line: libSystem's in zig's Python package, libiconv's
# and libcharset's in cargo-zigbuild's cache (which the release builds use).
macos_stub_dirs() {
    python3 -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__) + "/lib/libc/darwin")'
    ls -d "${CARGO_ZIGBUILD_CACHE_DIR:-$PWD/target/zig-cache}"/cargo-zigbuild/*/deps
}
# macos_stubs: every symbol those stubs define, one per line.
macos_stubs() {
    local dir
    while read -r dir; do cat "$dir"/*.tbd; done < <(macos_stub_dirs) \
        | grep -oE "[A-Za-z_\$][A-Za-z0-9_\$.]*"
}
# unpack_wheels DIST VERSION TAG OUT COUNT: the COUNT abi3 wheels (cp310:
# release/platforms.json's python) of platform tag TAG in DIST, each
# unpacked into OUT/<abi>/ after checking that its WHEEL says that tag;
# sets `unpacked_wheels` to those folders.
unpack_wheels() {
    local dist=$1 version=$2 tag=$3 out=$4 count=$5 wheel abi wheels
    shopt -s nullglob
    wheels=("$dist"/shardring-"$version"-cp3*-abi3-"$tag".whl)
    shopt -u nullglob
    [ ${#wheels[@]} -eq "$count" ] || { echo "$(basename "$0"): expected $count $tag wheels in $dist, found ${#wheels[@]}"; exit 1; }
    unpacked_wheels=()
    for wheel in "${wheels[@]}"; do
        abi=$(basename "$wheel" | cut -d- -f3)
        rm -rf "${out:?}/$abi" && mkdir -p "$out/$abi"
        (cd "$out/$abi" && python3 -m zipfile -e "$wheel" .)
        grep -qx "Tag: $abi-abi3-$tag" "$out/$abi/shardring-$version.dist-info/WHEEL" \
            || { echo "$(basename "$0"): $(basename "$wheel"): WHEEL does not say Tag: $abi-abi3-$tag"; exit 1; }
        echo "   $(basename "$wheel"): Tag: $abi-abi3-$tag"
        unpacked_wheels+=("$out/$abi")
    done
}
# unpack_npm_package DIST VERSION NAME OUT OS CPU [LIBC]: the npm platform
# package shardring-NAME in DIST, unpacked into OUT after checking that its
# package.json names OS, CPU (and LIBC, on Linux) and the module
# shardring.NAME.node, and that the main package (shardring-VERSION.tgz)
# lists it among its optionalDependencies; sets `npm_module` to the
# unpacked module, which the caller checks for its platform.
unpack_npm_package() {
    local dist=$1 version=$2 name=$3 out=$4 os=$5 cpu=$6 libc=${7:-}
    rm -rf "$out" && mkdir -p "$out"
    tar -C "$out" -xzf "$dist/shardring-$name-$version.tgz"
    python3 - "$out/package/package.json" "$name" "$os" "$cpu" "$libc" <<'EOF' || exit 1
import json, sys
path, name, os, cpu, libc = sys.argv[1:]
package = json.load(open(path))
want = {"os": [os], "cpu": [cpu], **({"libc": [libc]} if libc else {}), "main": f"shardring.{name}.node"}
got = {key: package.get(key) for key in want}
if got != want:
    sys.exit(f"shardring-{name}'s package.json says {got}; want {want}")
EOF
    tar -xzOf "$dist/shardring-$version.tgz" package/package.json \
        | python3 -c "import json, sys; sys.exit('shardring-$name' not in json.load(sys.stdin)['optionalDependencies'])" \
        || { echo "$(basename "$0"): the main npm package does not list shardring-$name"; exit 1; }
    echo "   shardring-$name: os $os, cpu $cpu${libc:+, libc $libc}; listed by shardring's optionalDependencies"
    npm_module=$out/package/shardring.$name.node
}
# check_paths FILE: FILE (a binary, or a wheel's extension) names no path
# of this machine, neither the workspace nor cargo's home: release builds
# remap both (the Makefile's REMAP), so a user's backtrace or a panic
# message shows `index.crates.io-…/tokio-1.x/src/…`, not the builder's home.
check_paths() {
    local found
    found=$(python3 -c '
import sys, zipfile
path = sys.argv[1]
if path.endswith(".whl"):
    with zipfile.ZipFile(path) as wheel:
        data = b"".join(wheel.read(n) for n in wheel.namelist() if n.endswith((".so", ".pyd")))
else:
    data = open(path, "rb").read()
for root in sys.argv[2:]:
    at = data.find(root.encode())
    if at >= 0:
        end = data.find(b"\0", at)
        print(data[at:min(end, at + 160)].decode(errors="replace"))
' "$1" "$PWD/" "${CARGO_HOME:-$HOME/.cargo}/")
    [ -z "$found" ] || { echo "$(basename "$0"): $1 names paths of this machine: $found"; exit 1; }
    echo "   $(basename "$1"): names no path of this machine"
}
