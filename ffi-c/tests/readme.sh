#!/usr/bin/env bash
# The C and C++ in the documentation cannot rot. Searches README.md and
# docs/*.md (DOCS="file ..." checks others):
#   - runs the install-and-compile commands (the ```sh block starting with
#     PREFIX=, in docs/c-api.md) verbatim, with HOME in a temporary directory
#     and `make` run in the repository, on the README's app.c (the ```c
#     block starting with /* app.c), checks both programs print what the
#     snippet says they print, uninstalls and checks nothing is left;
#   - compiles every ```c block as warning-free C11 and every ```cpp block as
#     warning-free C++17 (each is a whole file, naming itself in its first
#     comment), and runs the C++ program app.cpp against this build's
#     libring, checking it prints what its first line says;
#   - checks the C API table (the one headed | area | functions |) names
#     every function of include/ring.h.
# Run by `make test-c`, after `make build-c`.
set -euo pipefail
# The docs' commands run as a user runs them, outside any make: a parent
# make's flags (make test's -j2) would add "Entering directory" lines.
unset MAKEFLAGS MFLAGS MAKELEVEL
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
read -r -a docs <<< "${DOCS:-$(cd "$root" && echo README.md docs/*.md)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"

# The fenced block of language $1 whose first line starts with $2, from the
# first doc that has one.
block() {
    awk -v lang="$1" -v first="$2" '
        FNR == 1 { inside = 0 }
        /^```/ { if (inside) { if (keep) exit; inside = 0; next }
                 if ($0 == "```" lang) { inside = 1; started = 0; next } }
        inside && !started { started = 1; keep = index($0, first) == 1 }
        inside && keep { print }' "${docs[@]}"
}

# Every fenced block of language $1, each into $2/<n>.<ext> with a line
# naming its doc; prints how many.
blocks() {
    awk -v lang="$1" -v dir="$2" -v ext="$3" '
        FNR == 1 { inside = 0 }
        /^```/ { if (inside) { inside = 0; close(file); next }
                 if ($0 == "```" lang) { inside = 1; n++; file = dir "/" n "." ext
                                         print "/* from " FILENAME " */" > file; next } }
        inside { print > file }
        END { print n + 0 }' "${docs[@]}"
}

# What a program's first line says it prints (after "prints: ").
says() { sed -n '1s|.*prints: \(.*\)$|\1|p' "$1" | sed 's| \*/$||'; }

block c '/* app.c' > "$tmp/app.c"
block sh 'PREFIX=$HOME/.local' > "$tmp/commands.sh"
[ -s "$tmp/app.c" ] || { echo "docs: no \`\`\`c block starting with /* app.c"; exit 1; }
[ -s "$tmp/commands.sh" ] || { echo "docs: no \`\`\`sh block starting with PREFIX=\$HOME/.local"; exit 1; }
want="$(says "$tmp/app.c")"
[ -n "$want" ] || { echo "docs: app.c's first line does not say what it prints"; exit 1; }

mkdir "$tmp/home"
# A fresh bash with -e, HOME moved (the Rust toolchain stays where it is; the
# Makefile pins cargo-zigbuild's cache, so `make install` finds the release
# build up to date), and `make` run in the repository.
env HOME="$tmp/home" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" \
    ROOT="$root" bash -euo pipefail -c \
    'make() { command make -s -C "$ROOT" "$@"; }; cd "$1"; source ./commands.sh' bash "$tmp" \
    > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; echo "docs: the C install commands failed"; exit 1; }
printf '%s\n%s\n' "$want" "$want" | diff - "$tmp/out" || { echo "docs: the C programs printed the above, not \"$want\" twice"; exit 1; }

command make -s -C "$root" uninstall PREFIX="$tmp/home/.local"
left="$(find "$tmp/home/.local" -mindepth 1)"
[ -z "$left" ] || { echo "make uninstall left: $left"; exit 1; }
echo "docs: C install commands and app.c: OK ($want)"

# Every C and C++ block compiles on its own, without a warning.
mkdir "$tmp/c" "$tmp/cpp"
c_count="$(blocks c "$tmp/c" c)"
cpp_count="$(blocks cpp "$tmp/cpp" cpp)"
for file in "$tmp"/c/*.c; do
    cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only "$file" \
        || { echo "docs: this C block does not compile:"; cat "$file"; exit 1; }
done
for file in "$tmp"/cpp/*.cpp; do
    c++ -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only "$file" \
        || { echo "docs: this C++ block does not compile:"; cat "$file"; exit 1; }
done
echo "docs: $c_count C and $cpp_count C++ blocks compile"

# The C++ program runs against this build's libring and prints what it says.
grep -l '^// app.cpp' "$tmp"/cpp/*.cpp > "$tmp/app-cpp" || { echo "docs: no \`\`\`cpp block starting with // app.cpp"; exit 1; }
app_cpp="$(head -1 "$tmp/app-cpp")"
tail -n +2 "$app_cpp" > "$tmp/app.cpp"
want="$(says "$tmp/app.cpp")"
[ -n "$want" ] || { echo "docs: app.cpp's first line does not say what it prints"; exit 1; }
libdir="$root/target/release"
c++ -std=c++17 -Iinclude "$tmp/app.cpp" -L"$libdir" -lring -Wl,-rpath,"$libdir" -o "$tmp/app-cpp-bin"
got="$("$tmp/app-cpp-bin")"
[ "$got" = "$want" ] || { echo "docs: app.cpp printed \"$got\", not \"$want\""; exit 1; }
echo "docs: app.cpp: OK ($want)"

# Every function of ring.h is in the C API table.
table="$(awk '/^\| area \| functions \|/ { on = 1 } on && /^$/ { exit } on' "${docs[@]}")"
[ -n "$table" ] || { echo "docs: no C API table (| area | functions |)"; exit 1; }
missing=0
for f in $(grep -oE '\bring_[a-z_]+\(' include/ring.h | tr -d '(' | sort -u); do
    grep -qF "\`$f\`" <<< "$table" || { echo "the C API table does not list $f"; missing=1; }
done
[ "$missing" = 0 ] && echo "docs: the C API table lists every function of include/ring.h"
exit "$missing"
