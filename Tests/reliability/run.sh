#!/usr/bin/env bash
# The CI forms of the reliability scripts (load, crash, faults, leaks,
# privilege) against one loopd build, one after another except leaks, which
# runs beside load and crash; docs/RELIABILITY.md has the long forms. leaks
# measures memory per job, not time, on daemons of its own, so their load
# does not change what it checks; they allow seconds for what takes
# milliseconds, so its load does not change what they check. faults (which
# measures loopd's CPU time while it cannot accept) and privilege run after
# leaks, alone.
#
#   Tests/reliability/run.sh [BIN_DIR]      (default $LOOPD_BIN_DIR, else .build/release)
#
# Each script prints its own "N passed, M failed"; this prints the same for
# the scripts and exits non-zero if any failed. Every script bounds its
# waits and cleans up its daemons and mounts itself (also on SIGINT/SIGTERM);
# the timeout below is a last resort.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LOOPD_BIN_DIR="${1:-${LOOPD_BIN_DIR:-.build/release}}"
here=Tests/reliability
passed=0
failed=0
run() {
    local name=$1 limit=$2
    shift 2
    echo "=== $name: $*"
    if timeout --kill-after=10 "$limit" python3 "$@"; then
        passed=$((passed + 1))
    else
        echo "=== $name FAILED (exit $?)"
        failed=$((failed + 1))
    fi
}
# leaks in the background, its output printed whole once it is done; its last
# resort allows for sharing the CPUs.
leaks_args=("$here/leaks.py" --jobs 20000)
leaks_log=$(mktemp)
timeout --kill-after=10 600 python3 "${leaks_args[@]}" >"$leaks_log" 2>&1 &
leaks_pid=$!
# Stopped with this script (leaks.py cleans up its daemons on SIGTERM).
trap 'kill "$leaks_pid" 2>/dev/null; rm -f "$leaks_log"' EXIT
# load.py bounds each of its phases (warm-ups, load, drain, retention wait…)
# itself; its last resort is the sum of those limits, which it reports.
load_args=(--duration 60)
load_budget=$(python3 "$here/load.py" "${load_args[@]}" --budget) || load_budget=1800
run load $((load_budget + 60)) "$here/load.py" "${load_args[@]}"
run crash 240 "$here/crash.py" --rounds 20
leaks_status=0
wait "$leaks_pid" || leaks_status=$?
echo "=== leaks: ${leaks_args[*]}"
cat "$leaks_log"
if [ "$leaks_status" = 0 ]; then
    passed=$((passed + 1))
else
    echo "=== leaks FAILED (exit $leaks_status)"
    failed=$((failed + 1))
fi
run faults 240 "$here/faults.py"
run privilege 120 "$here/privilege.py"
echo "reliability: $passed passed, $failed failed"
[ "$failed" = 0 ]
