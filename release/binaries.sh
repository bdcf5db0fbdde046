# Checks of the binaries a release ships: what they may import, by C
# library, and the wheels' tags. Sourced by release/dist.sh and the
# platform legs (release/test-*.sh). Each check prints what it found or
# exits 1 naming the file and what is wrong.

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
# unpack_wheels DIST VERSION TAG OUT COUNT: the COUNT abi3 wheels (cp310,
# cp39: release/platforms.json's python) of platform tag TAG in DIST, each
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
