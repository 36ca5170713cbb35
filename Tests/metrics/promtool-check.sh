#!/usr/bin/env bash
# `loopctl metrics` against a real loopd passes `promtool check metrics`
# (Prometheus's own parser and linter: names, units, HELP and TYPE, histogram
# buckets), after jobs of every ending, a held job, a durable job with fsync,
# so every family the daemon has is in the text. Also checks that each
# family documented in docs/OPERATIONS.md is there.
#
#     Tests/metrics/promtool-check.sh BIN_DIR     (make check-metrics)
#
# BIN_DIR holds loopd and loopctl. Needs promtool on PATH (`make setup-test`
# takes it out of Debian's prometheus package into .build/tools/bin, without
# the server). Prints PASS/FAIL per check and "N passed, M failed".
set -euo pipefail

bin=${1:?usage: $0 BIN_DIR}
cd "$(dirname "$0")/../.."
command -v promtool >/dev/null || { echo "FAIL promtool is not on PATH (make setup-test puts it in .build/tools/bin)"; exit 1; }

work=$(mktemp -d /tmp/loopd-metrics-XXXXXX)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/loopd.toml" <<TOML
[server]
socket = "$work/loopd.sock"
state_dir = "$work/state"
log_level = "warning"

[journal]
fsync = true

[exec]
user = "$( [ "$(id -u)" = 0 ] && echo nobody )"

[actions.true]
argv = ["/bin/true"]

[[workers]]
name = "w1"

[[workers]]
name = "w2"

[schedules.hourly]
action = "noop"
every = "1h"
TOML

"$bin/loopd" --config "$work/loopd.toml" >"$work/loopd.log" 2>&1 &
pid=$!
export LOOPD_SOCKET=$work/loopd.sock
for _ in $(seq 1 150); do "$bin/loopctl" ping >/dev/null 2>&1 && break; sleep 0.1; done

passed=0
failed=0
check() {
    if "${@:2}"; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}

ctl() { "$bin/loopctl" "$@" >/dev/null 2>&1; }
ctl submit --worker w1 echo one
ctl submit --worker w1 --durable echo two
ctl submit --worker w2 fail no || true
ctl submit --worker w2 --timeout 1 sleep 30000 || true
delayed=$("$bin/loopctl" submit --no-wait --worker w2 --delay 600000 noop)
ctl cancel "$delayed" || true
ctl mode w1 maintenance
ctl submit --no-wait --worker w1 noop
ctl submit --worker w2 true
ctl schedules trigger hourly

"$bin/loopctl" metrics >"$work/loopd.prom"

check "promtool check metrics: no problems" promtool check metrics <"$work/loopd.prom"

has() { grep -q "$1" "$work/loopd.prom"; }
check "every family is there" bash -c '
    for family in loopd_jobs_accepted_total loopd_jobs_ended_total loopd_job_wait_seconds loopd_job_run_seconds \
        loopd_worker_queued_jobs loopd_worker_held_jobs loopd_worker_running_jobs loopd_worker_loop_stall_seconds \
        loopd_journal_written_bytes_total loopd_journal_commits_total loopd_journal_size_bytes loopd_journal_fsync_seconds \
        loopd_connections_open loopd_connections_accepted_total loopd_job_cpu_seconds_total loopd_job_memory_peak_bytes \
        loopd_schedule_runs_total loopd_schedule_skipped_slots_total loopd_schedule_lateness_seconds; do
        grep -q "^# TYPE $family " "$1" || { echo "     missing $family"; exit 1; }
        grep -q "\`$family" docs/OPERATIONS.md || { echo "     $family is not in docs/OPERATIONS.md"; exit 1; }
    done' _ "$work/loopd.prom"
check "each ending counted: completed, failed, timed_out, cancelled" bash -c '
    grep -q "^loopd_jobs_ended_total{action=\"echo\",worker=\"w1\",state=\"completed\"} 2$" "$1" &&
    grep -q "^loopd_jobs_ended_total{action=\"fail\",worker=\"w2\",state=\"failed\"} 1$" "$1" &&
    grep -q "^loopd_jobs_ended_total{action=\"sleep\",worker=\"w2\",state=\"timed_out\"} 1$" "$1" &&
    grep -q "^loopd_jobs_ended_total{action=\"noop\",worker=\"w2\",state=\"cancelled\"} 1$" "$1"' _ "$work/loopd.prom"
check "the schedule's trigger counted as a run" has '^loopd_schedule_runs_total{schedule="hourly"} 1$'
check "the held job: w1 holds 1" has '^loopd_worker_held_jobs{worker="w1"} 1.0$'
check "the durable job's commit was timed" bash -c '! grep -q "^loopd_journal_fsync_seconds_count 0$" "$1"' _ "$work/loopd.prom"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
