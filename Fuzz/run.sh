#!/usr/bin/env bash
# Builds the libFuzzer targets and fuzzes each for SECONDS on a copy of its
# committed seed corpus (Fuzz/corpus/<target>/ is never written), as many
# targets at once as there are CPUs. Fails on any crash, hang, leak,
# out-of-memory or sanitizer report, and prints one summary line per target.
# docs/RELIABILITY.md ("Fuzzing") has the figures.
#
#   Fuzz/run.sh SECONDS [TARGET...]      CI: Fuzz/run.sh 60 (make fuzz)
#
# Environment: FUZZ_SCRATCH (build directory, default .build-fuzz),
# FUZZ_KEEP=DIR (keep the grown corpora, logs and artifacts in DIR instead of
# a temporary directory that is removed on success), FUZZ_TIMEOUT (seconds
# one input may take before it counts as a hang, default 10), FUZZ_RSS_MB
# (memory limit, default 2048), FUZZ_JOBS (targets fuzzed at once, default
# the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ || $1 -lt 1 ]]; then
    echo "usage: Fuzz/run.sh SECONDS [TARGET...]" >&2
    exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(FuzzRequestDecoder FuzzLineFramer FuzzConfigParser)
scratch=${FUZZ_SCRATCH:-.build-fuzz}
hang_seconds=${FUZZ_TIMEOUT:-10}
rss_mb=${FUZZ_RSS_MB:-2048}

# Swift code gets libFuzzer's coverage instrumentation and AddressSanitizer
# (with LeakSanitizer) from one -sanitize= list: the driver keeps only the
# last -sanitize= it is given, so SwiftPM's own --sanitize cannot add a
# second one. --sanitize fuzzer is still needed: with it SwiftPM links
# libFuzzer's main instead of the executable's. C code (CLoopShims) gets
# AddressSanitizer too. LOOPD_LIBFUZZER leaves out each target's replay
# main. lld (Fuzz/toolset.json) because gold warns about every ASan symbol.
build=(swift build -c release --scratch-path "$scratch" --toolset Fuzz/toolset.json
    --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xswiftc -DLOOPD_LIBFUZZER)

if [[ -n ${FUZZ_KEEP:-} ]]; then
    work=$FUZZ_KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d /tmp/loopd-fuzz.XXXXXX)
fi

for t in "${targets[@]}"; do
    if [[ ! -d Fuzz/corpus/$t ]]; then
        echo "unknown target $t (no Fuzz/corpus/$t)" >&2
        exit 2
    fi
    echo "building $t (log: $work/$t.build.log)"
    if ! "${build[@]}" --product "$t" >"$work/$t.build.log" 2>&1; then
        tail -n 40 "$work/$t.build.log"
        echo "$t: BUILD FAILED (log kept in $work)"
        exit 1
    fi
done
bin=$("${build[@]}" --show-bin-path)

# Runs target $1 on a copy of its corpus; its exit status goes to
# $work/$1.rc (a missing one is a failure of this script, said below).
fuzz() {
    set +e
    local t=$1 corpus=$work/$1.corpus log=$work/$1.log
    rm -rf "$corpus" "$log"
    cp -R "Fuzz/corpus/$t" "$corpus"
    local flags=(-timeout="$hang_seconds" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb"
        -print_final_stats=1 -artifact_prefix="$work/$t-")
    case $t in
        FuzzRequestDecoder) flags+=(-dict=Fuzz/dict/request.dict) ;;
        FuzzConfigParser) flags+=(-dict=Fuzz/dict/config.dict) ;;
    esac
    # SWIFT_BACKTRACE: the Swift runtime's crash handler would race
    # libFuzzer's for a trap and can hang; libFuzzer's records the input.
    # -detect_leaks=1: LeakSanitizer checks after every input that
    # allocated more than it freed, so a leak fails the run at once.
    local rc=0
    SWIFT_BACKTRACE=enable=no \
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
        "$bin/$t" -max_total_time="$seconds" -detect_leaks=1 "${flags[@]}" "$corpus" >"$log" 2>&1 || rc=$?
    echo "$rc" >"$work/$t.rc"
}

# The targets run side by side, as many at once as there are CPUs
# (FUZZ_JOBS), so on an otherwise idle machine each has a CPU to itself.
jobs=${FUZZ_JOBS:-$(nproc)}
if [[ ! $jobs =~ ^[0-9]+$ || $jobs -lt 1 ]]; then
    echo "FUZZ_JOBS must be a positive number, not $jobs" >&2
    exit 2
fi
running=0
for t in "${targets[@]}"; do
    if [[ $running -ge $jobs ]]; then
        wait -n || true
        running=$((running - 1))
    fi
    echo "fuzzing $t for ${seconds}s (log: $work/$t.log)"
    fuzz "$t" &
    running=$((running + 1))
done
wait

failed=0
summaries=()
for t in "${targets[@]}"; do
    log=$work/$t.log
    seeds=$(find "Fuzz/corpus/$t" -type f | wc -l)
    rc=$(cat "$work/$t.rc" 2>/dev/null || echo "no status")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    runs=${runs:-0}
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    peak=${peak:-0}

    speed=$((runs / seconds))
    cov=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]*' | tail -1 | cut -d' ' -f2)
    ft=$(grep -E '^#[0-9]+' "$log" | grep -o 'ft: [0-9]*' | tail -1 | cut -d' ' -f2)
    units=$(grep -E '^#[0-9]+' "$log" | grep -o 'corp: [0-9]*/[0-9A-Za-z]*' | tail -1 | cut -d' ' -f2)
    if [[ $rc == 0 ]] && ! grep -qE '^(==[0-9]+== ?)?ERROR: |^SUMMARY: ' "$log"; then
        verdict="ok"
    else
        failed=1
        if grep -q 'ERROR: libFuzzer: timeout' "$log"; then verdict="HANG"
        elif grep -q 'ERROR: LeakSanitizer' "$log"; then verdict="LEAK"
        elif grep -qE 'ERROR: libFuzzer: (out-of-memory|malloc)' "$log"; then verdict="OUT OF MEMORY"
        elif grep -q 'ERROR: AddressSanitizer' "$log"; then verdict="ADDRESS SANITIZER"
        else verdict="CRASH"
        fi
        verdict="$verdict (exit $rc)"
        artifact=$(sed -n "s/.*Test unit written to //p" "$log" | tail -1)
        [[ -n $artifact ]] && verdict="$verdict, input: $artifact"
        grep -E 'ERROR:|Fatal error|Assertion|Precondition|SUMMARY' "$log" | head -n 5 | sed "s/^/  $t: /"
    fi
    summaries+=("$t: $verdict; $runs runs in ${seconds}s ($speed/s), cov ${cov:-?}, ft ${ft:-?}, corpus $seeds seeds -> ${units:-?} (inputs/bytes), peak RSS $peak MB")
done

echo "fuzz summary (${seconds}s per target):"
printf '  %s\n' "${summaries[@]}"
if [[ $failed -ne 0 ]]; then
    echo "fuzzing FAILED: logs, corpora and failing inputs kept in $work"
    exit 1
fi
if [[ -z ${FUZZ_KEEP:-} ]]; then rm -rf "$work"; fi
