#!/usr/bin/env bash
# The CI forms of the reliability scripts (load, crash,
# faults, leaks, privilege), one after another against one loopd build;
# docs/RELIABILITY.md has the long forms.
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
# load.py bounds each of its phases (warm-ups, load, drain, retention wait…)
# itself; its last resort is the sum of those limits, which it reports.
load_args=(--duration 60)
load_budget=$(python3 "$here/load.py" "${load_args[@]}" --budget) || load_budget=1800
run load $((load_budget + 60)) "$here/load.py" "${load_args[@]}"
run crash 240 "$here/crash.py" --rounds 20
run faults 240 "$here/faults.py"
run leaks 300 "$here/leaks.py" --jobs 20000
run privilege 120 "$here/privilege.py"
echo "reliability: $passed passed, $failed failed"
[ "$failed" = 0 ]
