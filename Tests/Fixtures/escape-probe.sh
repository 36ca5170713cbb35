# What an exec child can reach outside its job: run as
#   sh -c "$(cat escape-probe.sh)" probe STATE_DIR SOCKET LOOPD_PID OTHER_JOB_PID
# It prints "WHAT: allowed" or "WHAT: denied" for each attempt. The three
# controls must be allowed (they show the probe itself works); every other
# attempt must be denied (Tests/LoopdTests/ExecContainmentTests.swift by
# hand as root, Tests/systemd/run.sh under the installed unit).
try() { what=$1; shift; if "$@" >/dev/null 2>&1; then echo "$what: allowed"; else echo "$what: denied"; fi; }
try control-read ls /
try control-signal-self kill -0 $$
try control-python python3 -c pass
try read-state ls "$1"
try read-journal cat "$1/journal.log"
try write-state touch "$1/escaped"
try signal-loopd kill -0 "$3"
try signal-other-job kill -0 "$4"
try connect-socket python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$2"
