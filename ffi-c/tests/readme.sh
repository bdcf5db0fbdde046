#!/usr/bin/env bash
# The README's C section cannot rot: runs its install-and-compile commands
# (the ```sh block starting with PREFIX=) verbatim, with HOME in a temporary
# directory and `make` run in the repository, on its app.c (the ```c block
# starting with /* app.c), checks both programs print what the snippet says
# they print, uninstalls and checks nothing is left. Then checks the C API
# table names every function of include/ring.h. Run by `make test-c`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readme="${README:-$root/README.md}"  # README=path checks another copy
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The fenced block of the given language whose first line starts with $2.
block() {
    awk -v lang="$1" -v first="$2" '
        /^```/ { if (inside) { if (keep) exit; inside = 0; next }
                 if ($0 == "```" lang) { inside = 1; started = 0; next } }
        inside && !started { started = 1; keep = index($0, first) == 1 }
        inside && keep { print }' "$readme"
}

block c '/* app.c' > "$tmp/app.c"
block sh 'PREFIX=$HOME/.local' > "$tmp/commands.sh"
[ -s "$tmp/app.c" ] || { echo "README: no \`\`\`c block starting with /* app.c"; exit 1; }
[ -s "$tmp/commands.sh" ] || { echo "README: no \`\`\`sh block starting with PREFIX=\$HOME/.local"; exit 1; }
want="$(sed -n 's|.*prints: \(.*\) \*/$|\1|p' "$tmp/app.c" | head -1)"
[ -n "$want" ] || { echo "README: app.c's first line does not say what it prints"; exit 1; }

mkdir "$tmp/home"
# A fresh bash with -e, HOME moved (the Rust toolchain stays where it is), and
# `make` run in the repository.
env HOME="$tmp/home" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" \
    ROOT="$root" bash -euo pipefail -c \
    'make() { command make -s -C "$ROOT" "$@"; }; cd "$1"; source ./commands.sh' bash "$tmp" \
    > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; echo "README C commands failed"; exit 1; }
printf '%s\n%s\n' "$want" "$want" | diff - "$tmp/out" || { echo "README C programs printed the above, not \"$want\" twice"; exit 1; }
# The snippet is also warning-free C11.
cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$root/include" -fsyntax-only "$tmp/app.c"

command make -s -C "$root" uninstall PREFIX="$tmp/home/.local"
left="$(find "$tmp/home/.local" -mindepth 1)"
[ -z "$left" ] || { echo "make uninstall left: $left"; exit 1; }
echo "README C commands and app.c: OK ($want)"

# Every function of ring.h is in the README's C API table.
table="$(awk '/^\| area \| functions \|/ { on = 1 } on && /^$/ { exit } on' "$readme")"
missing=0
for f in $(grep -oE '\bring_[a-z_]+\(' "$root/include/ring.h" | tr -d '(' | sort -u); do
    grep -qF "\`$f\`" <<< "$table" || { echo "README's C API table does not list $f"; missing=1; }
done
[ "$missing" = 0 ] && echo "README C API table: every function of include/ring.h listed"
exit "$missing"
