#!/usr/bin/env bash
# Runs every fuzz target of this directory for FUZZ_SECONDS seconds each
# (default 60), after replaying the saved inputs in regressions/TARGET/.
# Exits non-zero when any target crashes, fails an assertion, leaks or hangs
# (an input running longer than FUZZ_TIMEOUT seconds, default 20); the other
# targets still run, so one report shows every failure.
#
#   bash fuzz/run.sh                                 # all targets, 60 s each
#   FUZZ_SECONDS=600 bash fuzz/run.sh derivations    # one target, longer
#
# Needs the nightly toolchain (libFuzzer with AddressSanitizer); installs
# cargo-fuzz when `cargo fuzz` is missing. Called by `make fuzz`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(config_json derivations c_api)
fi
# One worker, one job (the default): the machines have 2 cores, shared.
libfuzzer_flags=(-timeout="${FUZZ_TIMEOUT:-20}" -rss_limit_mb=4096 -print_final_stats=1)

now() { date +%s; }

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    start=$(now)
    cargo install cargo-fuzz --locked
    echo "== cargo-fuzz installed in $(($(now) - start)) s"
fi

failed=()
for target in "${targets[@]}"; do
    echo "== $target: building"
    start=$(now)
    cargo +nightly fuzz build "$target"
    echo "== $target: built in $(($(now) - start)) s"

    if compgen -G "regressions/$target/*" >/dev/null; then
        echo "== $target: replaying regressions/$target/"
        start=$(now)
        # Given files, libFuzzer runs each input once.
        if cargo +nightly fuzz run "$target" regressions/"$target"/* -- "${libfuzzer_flags[@]}"; then
            echo "== $target: regressions passed in $(($(now) - start)) s"
        else
            echo "== $target: a saved regression FAILED after $(($(now) - start)) s (not fuzzing it further)"
            failed+=("$target (regression)")
            continue
        fi
    fi

    corpus=("corpus/$target")
    mkdir -p "corpus/$target"
    if [ -d "seeds/$target" ]; then corpus+=("seeds/$target"); fi
    case "$target" in
        # JSON text: let libFuzzer grow inputs gradually, with a token dictionary.
        config_json) target_flags=(-dict=dicts/config_json.dict) ;;
        # Structured inputs: full length from the start (a short input is a
        # short history), capped so that one input stays cheap.
        derivations) target_flags=(-len_control=0 -max_len=512) ;;
        c_api) target_flags=(-len_control=0 -max_len=4096) ;;
        *) target_flags=() ;;
    esac

    echo "== $target: fuzzing for $seconds s"
    start=$(now)
    if cargo +nightly fuzz run "$target" "${corpus[@]}" -- \
        -max_total_time="$seconds" "${libfuzzer_flags[@]}" "${target_flags[@]}"; then
        echo "== $target: fuzzed for $(($(now) - start)) s without a failure"
    else
        echo "== $target: FAILED after $(($(now) - start)) s; the input is in fuzz/artifacts/$target/"
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "== fuzzing failed: ${failed[*]}"
    exit 1
fi
echo "== fuzzing passed: ${targets[*]}"
