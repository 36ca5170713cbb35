#!/usr/bin/env bash
# loopd under a real systemd 252, booted privately for this test (needs root):
# installed first by `make install`, then as the Debian package.
#
#   Tests/systemd/run.sh [loopd_VERSION_ARCH.deb]
#
# `make test-systemd` passes the package `make deb` built (and lintian
# checked); without it, this runs `make deb` itself. The make install part
# installs the package's own binaries (PREBUILT=, nothing is built in there).
#
# The build machines' PID 1 is not systemd, so this boots one as PID 1 of its
# own PID, mount and network namespaces: private tmpfs on /tmp, /var/tmp and /var/log/journal (systemd's boot-time
# clean-up would otherwise empty the host's /tmp), mounts shared within the
# namespace as systemd makes them when it boots a machine,
# --unit=basic.target (no host services), everything that talks to it
# through nsenter, and a trap that always kills it. The network namespace
# has only its loopback (systemd brings it up), so the web dashboard's
# 127.0.0.1:9477 is the test's own: a dashboard the host runs there is
# neither reached nor in the way. The Swift toolchain is hidden in there (an empty
# tmpfs over /opt/swift): the binaries carry the Swift runtime and the
# package its crash backtracer, and that must be all they need.
#
# Where the test installs, and why: a private root. The test neither depends
# on nor changes what this machine has installed. In the namespace, /etc,
# /usr, /var/lib and /var/cache are copy-on-write overlays whose upper layers
# live on a tmpfs that only the namespace sees (mounted on
# $SCRATCH/systemd-test/ns): what the installs, dpkg and the services write
# there (the package's files, dpkg's database, sysusers' group, the catalog
# database, systemd's state) never reaches the host. And every place loopd is
# installed to or keeps state in starts empty, whatever the host has there:
# /usr/local, /etc/systemd/system and /var/lib/private are fresh tmpfs
# mounts; the host's /etc/loopd, /var/lib/loopd, sysusers override, catalog
# database and group loopd are removed from the overlays (the host keeps
# them), and so is a policy-rc.d that forbids starting services (container
# images have one; a Debian system does not). /var/log is a tmpfs too, so nothing is created on the host for the
# journal. So the test runs the real `make install` (binaries to
# /usr/local/bin, units to /etc/systemd/system, config, catalog, sysusers
# group, manuals, completions) with a short flow (activation, versions,
# uninstall), then the real `dpkg -i` (its postinst creates the group,
# updates the catalog, enables and starts loopd.socket), the whole flow
# below against the package's unmodified units (ExecStart=/usr/bin/loopd
# --config /etc/loopd/loopd.toml), the web dashboard (installed, not
# enabled; started by its socket; read-only, then with a password given as
# a credential in a drop-in), then `dpkg -r` and `dpkg -P`, after which
# nothing of loopd is left. A config or group left by an earlier install on
# the host can neither be kept nor be mistaken for the install's work. The
# binaries the service runs are on those private mounts: readable by its
# DynamicUser and outside /tmp and /home, which its sandbox hides. The only
# test-specific settings are a drop-in in /run/systemd/system/loopd.service.d
# (short WatchdogSec=, TimeoutStopSec=) and a test config in
# /etc/loopd/loopd.toml derived from Config/loopd.production.toml
# (debug_actions on, 1000 ms stall threshold, 5000 ms grace, an extra worker).
#
# Prints PASS/FAIL per check and ends with "N passed, M failed"; exits
# non-zero on any failure. The test part is bounded (TEST_BUDGET seconds,
# every wait has its own timeout); the release build before it is not.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd -P)
SCRATCH=${LOOPD_SYSTEMD_SCRATCH:-.build}
WORK=$ROOT/$SCRATCH/systemd-test
NSDIR=$WORK/ns
SOCK=/run/loopd.sock
# The web dashboard's address (systemd/loopd-web.socket).
WEB_ADDR=127.0.0.1:9477
DEB=${1:-}
# Where the install under test put things: `make install` first, then the package.
UNITS=/etc/systemd/system
BINDIR=/usr/local/bin
WATCHDOG_SEC=4
GRACE_MS=5000
STALL_MS=1000
TEST_BUDGET=${TEST_BUDGET:-420}
export PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

passed=0
failed=0
WHY=""
SYSTEMD_PID=""
UNSHARE_PID=""
BUDGET_PID=""
CLIENT_PID=""

pass() { passed=$((passed + 1)); printf 'PASS %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL %s%s\n' "$1" "${2:+ -- $2}"; }
# check NAME FUNCTION: runs FUNCTION (which sets WHY before returning 1).
check() {
    local name=$1
    shift
    WHY=""
    if "$@"; then pass "$name"; else fail "$name" "$WHY"; fi
}
note() { printf '     %s\n' "$*"; }

cleanup() {
    local rc=$?
    trap - EXIT INT TERM ERR
    set +e
    # What the private journal saw, for reading after a failure.
    [ -n "$SYSTEMD_PID" ] && ns 10 journalctl --no-pager -o short-precise >"$WORK/journal.txt" 2>&1
    [ -n "$CLIENT_PID" ] && kill -KILL "$CLIENT_PID" 2>/dev/null
    [ -n "$SYSTEMD_PID" ] && kill -KILL "$SYSTEMD_PID" 2>/dev/null
    [ -n "$UNSHARE_PID" ] && kill -KILL "$UNSHARE_PID" 2>/dev/null
    [ -n "$UNSHARE_PID" ] && wait "$UNSHARE_PID" 2>/dev/null
    [ -n "$BUDGET_PID" ] && kill -TERM "$BUDGET_PID" 2>/dev/null
    [ -n "$BUDGET_PID" ] && wait "$BUDGET_PID" 2>/dev/null
    if [ -n "$SYSTEMD_PID" ]; then
        local end=$((SECONDS + 10))
        while [ -e "/proc/$SYSTEMD_PID" ] && [ "$(awk '{print $3}' "/proc/$SYSTEMD_PID/stat" 2>/dev/null)" != Z ] &&
            [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
        [ ! -e "/proc/$SYSTEMD_PID" ] || [ "$(awk '{print $3}' "/proc/$SYSTEMD_PID/stat" 2>/dev/null)" = Z ] ||
            fail "teardown" "the private systemd ($SYSTEMD_PID) is still alive"
    fi
    [ "$rc" = 0 ] || [ "$failed" -gt 0 ] || fail "run" "aborted with status $rc"
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ] && [ "$rc" = 0 ] && exit 0
    exit 1
}
trap cleanup EXIT
trap 'fail "run" "interrupted"; exit 130' INT
trap 'fail "run" "time budget of ${TEST_BUDGET}s exceeded"; exit 124' TERM
trap 'fail "run" "unexpected error at line $LINENO: $BASH_COMMAND"' ERR

# ---- helpers -----------------------------------------------------------------

# ns [TIMEOUT] CMD...: runs CMD inside the namespaces (default 30 s bound).
ns() {
    local t=30
    if [[ $1 =~ ^[0-9]+$ ]]; then t=$1; shift; fi
    timeout -k 2 "$t" nsenter -t "$SYSTEMD_PID" -m -p -u -n -- "$@"
}
ctl() { ns 15 env LOOPD_SOCKET="$SOCK" "$BINDIR/loopctl" "$@"; }
prop() { ns systemctl show -p "$1" --value "${2:-loopd.service}"; }
journal() { ns journalctl --no-pager "$@"; }
# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    while ! "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}
# jget FIELD JSON: a string member of a one-line JSON object (journalctl -o
# json, loopctl --json). Enough for the values these checks read.
jget() {
    grep -o "\"$1\":\"\([^\"\\]\|\\\\.\)*\"" <<<"$2" | head -n 1 | sed 's/^"[^"]*":"//; s/"$//; s/\\"/"/g'
}
# mid NAME: the MESSAGE_ID loopd uses for NAME (MessageIDs.swift).
mid() { sed -n "s/.*case $1 = \"\\([0-9a-f]\\{32\\}\\)\".*/\\1/p" Sources/LoopdCore/Logging/MessageIDs.swift; }
# entries MATCH...: loopd's journal entries matching, one JSON object a line.
entries() { journal -u loopd.service -o json "$@" 2>/dev/null || true; }
has_entry() { [ -n "$(entries "$@")" ]; }
# What the service manager itself logged about loopd.service.
systemd_about_loopd() { journal _PID=1 UNIT=loopd.service "$@" 2>/dev/null || true; }
job_of() { jget job "$1"; }
active_pid() {
    [ "$(prop ActiveState)" = active ] && [ "$(prop SubState)" = running ] && [ "$(prop MainPID)" != 0 ]
}
socket_node_ok() { [ "$(ns stat -c '%a %U %G %F' "$SOCK" 2>/dev/null)" = "660 root loopd socket" ]; }
job_state() { jget state "$(ctl status --json "$1" 2>/dev/null)"; }
# http_get PATH: a GET of the web dashboard from inside the namespaces; the
# status on the first line, then the body. Fails when nothing answers.
http_get() {
    ns 20 python3 -c '
import sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=15) as r:
        status, body = r.status, r.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
print(status)
sys.stdout.write(body.decode("utf-8", "replace"))
' "http://$WEB_ADDR$1" 2>/dev/null
}
# Whether anything accepts connections on the dashboard's address.
web_listening() {
    ns 10 python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()' \
        "${WEB_ADDR%:*}" "${WEB_ADDR##*:}" 2>/dev/null
}

# ---- preflight and build (not part of the time budget) -----------------------

[ "$(id -u)" = 0 ] || { fail "preflight" "needs root (it boots a systemd in new namespaces)"; exit 1; }
for tool in unshare nsenter setsid timeout /lib/systemd/systemd systemctl journalctl systemd-analyze make dpkg dpkg-deb man; do
    command -v "$tool" >/dev/null || { fail "preflight" "missing $tool"; exit 1; }
done
case "$ROOT/" in
/tmp/* | /var/tmp/*)
    fail "preflight" "the checkout ($ROOT) is under /tmp or /var/tmp, which the namespace replaces with a private tmpfs"
    exit 1
    ;;
esac
mkdir -p "$WORK" "$NSDIR"
if [ -z "$DEB" ]; then
    make --no-print-directory deb >"$WORK/build.log" 2>&1 || { fail "make deb" "$(tail -n 5 "$WORK/build.log")"; exit 1; }
    DEB=$(tail -n 1 "$WORK/build.log")
fi
[ -f "$DEB" ] || { fail "preflight" "no package $DEB"; exit 1; }
DEB=$(readlink -f "$DEB")
VERSION=$(make --no-print-directory -s version)
DEB_VERSION=$(dpkg-deb -f "$DEB" Version)
[ "${DEB_VERSION%-*}" = "$VERSION" ] || { fail "preflight" "the package is $DEB_VERSION, the source says $VERSION"; exit 1; }
# make install in the namespace installs the package's own binaries and
# backtracer (PREBUILT=): no build in there, and no toolchain needed.
rm -rf "$WORK/deb-root" "$WORK/prebuilt"
dpkg-deb -x "$DEB" "$WORK/deb-root"
mkdir -p "$WORK/prebuilt"
cp "$WORK/deb-root/usr/bin/loopd" "$WORK/deb-root/usr/bin/loopctl" "$WORK/deb-root/usr/bin/loopd-web" \
    "$WORK/deb-root/usr/lib/loopd/swift-backtrace-static" "$WORK/prebuilt/"
BIN=$WORK/prebuilt
# Ids must be read from the source before anything depends on them.
for name in started ready stopping reloaded reloadFailed workerStalled jobFailed jobFinished; do
    [ -n "$(mid "$name")" ] || { fail "preflight" "no MessageID.$name in MessageIDs.swift"; exit 1; }
done
# What the host has where loopd installs, compared at the end: the test must leave it as it was.
host_state() {
    local f
    for f in /usr/local/bin/loopd /usr/local/bin/loopctl /etc/loopd /etc/loopd/loopd.toml /etc/systemd/system/loopd.service \
        /etc/systemd/system/loopd.socket /usr/local/lib/systemd/catalog/loopd.catalog /usr/local/lib/sysusers.d/loopd.conf \
        /usr/local/share/doc/loopd /var/lib/loopd /var/lib/private/loopd /usr/bin/loopd /usr/bin/loopctl \
        /lib/systemd/system/loopd.service /lib/systemd/system/loopd.socket /usr/lib/loopd /usr/share/doc/loopd \
        /usr/share/man/man1/loopctl.1.gz /var/lib/dpkg/info/loopd.list /usr/local/bin/loopd-web /usr/bin/loopd-web \
        /etc/systemd/system/loopd-web.service /etc/systemd/system/loopd-web.socket \
        /lib/systemd/system/loopd-web.service /lib/systemd/system/loopd-web.socket; do
        stat -c '%n %F %s %Y' "$f" 2>/dev/null || echo "$f absent"
    done
    [ -d /var/log/journal ] && echo "/var/log/journal present" || echo "/var/log/journal absent"
    getent group loopd || echo "group loopd absent"
    getent passwd loopd-web || echo "user loopd-web absent"
    dpkg-query -W -f '${Status}\n' loopd 2>/dev/null || echo "package loopd unknown"
}
host_state >"$WORK/host-before.txt"

# The whole test part: a watchdog of our own ends it (the TERM trap).
(
    trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    sleep "$TEST_BUDGET" &
    sp=$!
    wait "$sp" && kill -TERM $$
) &
BUDGET_PID=$!
started_at=$SECONDS

# ---- boot --------------------------------------------------------------------

boot() {
    # $1 = the tmpfs for the overlays' upper layers; seen only in the namespace.
    # Nothing here writes to the host: mkdir and rm run on the tmpfs mounts
    # and the overlays only (see the header).
    local script='set -e
        mount -t tmpfs tmpfs /tmp
        mount -t tmpfs tmpfs /var/tmp
        mount -t tmpfs tmpfs /var/log
        mkdir /var/log/journal
        mount -t tmpfs -o mode=0700 tmpfs "$1"
        for d in /etc /usr /var/lib /var/cache; do
            n=$(echo "$d" | tr / _)
            mkdir -p "$1/$n.upper" "$1/$n.work"
            mount -t overlay overlay -o "lowerdir=$d,upperdir=$1/$n.upper,workdir=$1/$n.work" "$d"
        done
        mount -t tmpfs -o mode=0755 tmpfs /usr/local
        if [ -d /opt/swift ]; then mount -t tmpfs -o mode=0755,ro tmpfs /opt/swift; fi
        mkdir -p /etc/systemd/system /var/lib/private
        mount -t tmpfs -o mode=0755 tmpfs /etc/systemd/system
        mount -t tmpfs -o mode=0700 tmpfs /var/lib/private
        rm -rf /etc/loopd /var/lib/loopd /etc/sysusers.d/loopd.conf /var/lib/systemd/catalog/database
        rm -f /usr/sbin/policy-rc.d
        # What systemd as PID 1 of a machine does at boot, and leaves to the
        # manager in a container: mounts shared, so that a mount PID 1 makes
        # reaches the services (a credential directory is one). Only the
        # copies in this namespace change: unshare made them private to it.
        mount --make-rshared /
        for f in /etc/group /etc/gshadow /etc/passwd /etc/shadow; do
            if grep -qE "^loopd(-job|-web)?:" "$f" 2>/dev/null; then sed -i -E "/^loopd(-job|-web)?:/d" "$f"; fi
        done
        exec env container=loopd-test /lib/systemd/systemd --system --unit=basic.target'
    setsid unshare --pid --kill-child --mount --mount-proc --uts --net --propagation private \
        sh -c "$script" sh "$NSDIR" >"$WORK/boot.log" 2>&1 </dev/null &
    UNSHARE_PID=$!
    local end=$((SECONDS + 15)) pid
    while [ -z "$SYSTEMD_PID" ]; do
        for pid in $(pgrep -P "$UNSHARE_PID" || true); do
            [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] && SYSTEMD_PID=$pid
        done
        [ -n "$SYSTEMD_PID" ] && break
        [ "$SECONDS" -lt "$end" ] || { WHY="systemd did not start: $(tail -n 5 "$WORK/boot.log")"; return 1; }
        sleep 0.2
    done
    local state=""
    end=$((SECONDS + 60))
    while :; do
        state=$(ns 10 systemctl is-system-running 2>/dev/null || true)
        case "$state" in running | degraded) break ;; esac
        [ "$SECONDS" -lt "$end" ] || { WHY="system state '$state' after 60 s"; return 1; }
        sleep 0.5
    done
    [ "$state" = running ] || note "system is $state: $(ns systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
    note "private systemd pid $SYSTEMD_PID, $state after $((SECONDS - started_at)) s"
}
check "boot a private systemd 252 as PID 1 of new namespaces" boot || true
if [ -z "$SYSTEMD_PID" ] || [ "$failed" -gt 0 ]; then exit 1; fi

# The premise of every check below, and what must hold again after the
# package is purged: no loopd at all, whatever the host has installed.
LOOPD_FILES="/usr/local/bin/loopd /usr/local/bin/loopctl /usr/local/lib/loopd /usr/local/lib/systemd/catalog/loopd.catalog
    /usr/local/lib/sysusers.d/loopd.conf /usr/local/share/doc/loopd /usr/local/share/man/man1/loopctl.1.gz
    /usr/bin/loopd /usr/bin/loopctl /usr/lib/loopd /usr/lib/systemd/catalog/loopd.catalog /usr/lib/sysusers.d/loopd.conf
    /usr/share/doc/loopd /usr/share/man/man1/loopctl.1.gz /usr/share/man/man5/loopd.toml.5.gz
    /usr/share/man/man8/loopd.8.gz /usr/share/bash-completion/completions/loopctl
    /usr/share/zsh/vendor-completions/_loopctl /usr/share/fish/vendor_completions.d/loopctl.fish
    /usr/share/lintian/overrides/loopd /etc/loopd/loopd.toml /etc/systemd/system/loopd.service
    /etc/systemd/system/loopd.socket /etc/systemd/system/sockets.target.wants/loopd.socket
    /lib/systemd/system/loopd.service /lib/systemd/system/loopd.socket /var/lib/loopd /var/lib/private/loopd $SOCK
    /usr/local/bin/loopd-web /usr/local/share/man/man8/loopd-web.8.gz /usr/bin/loopd-web /usr/share/man/man8/loopd-web.8.gz
    /etc/systemd/system/loopd-web.service /etc/systemd/system/loopd-web.socket /etc/systemd/system/loopd-web.service.d
    /etc/systemd/system/sockets.target.wants/loopd-web.socket /lib/systemd/system/loopd-web.service
    /lib/systemd/system/loopd-web.socket /etc/loopd/web-password"
no_loopd() {
    local f
    for f in $LOOPD_FILES; do
        ns test ! -e "$f" -a ! -L "$f" || { WHY="$f is there $1"; return 1; }
    done
    [ -z "$(ns ls -A /etc/loopd 2>/dev/null)" ] || { WHY="/etc/loopd is not empty $1: $(ns ls -A /etc/loopd | tr '\n' ' ')"; return 1; }
    ns getent group loopd >/dev/null && { WHY="the group loopd exists $1"; return 1; }
    ns getent passwd loopd-job >/dev/null && { WHY="the user loopd-job exists $1"; return 1; }
    ns getent group loopd-job >/dev/null && { WHY="the group loopd-job exists $1"; return 1; }
    ns getent passwd loopd-web >/dev/null && { WHY="the user loopd-web exists $1"; return 1; }
    ns getent group loopd-web >/dev/null && { WHY="the group loopd-web exists $1"; return 1; }
    web_listening && { WHY="something listens on $WEB_ADDR $1"; return 1; }
    journal --list-catalog 2>/dev/null | grep -q ' loopd:' && { WHY="the catalog knows loopd $1"; return 1; }
    [ -z "$(ns systemctl list-unit-files --no-legend 'loopd*' 2>/dev/null)" ] ||
        { WHY="systemd knows loopd's units $1: $(ns systemctl list-unit-files --no-legend 'loopd*' | tr '\n' ' ')"; return 1; }
    [ -z "$(ns find /var/lib/systemd -name '*loopd*' 2>/dev/null)" ] ||
        { WHY="systemd state for loopd $1: $(ns find /var/lib/systemd -name '*loopd*' | tr '\n' ' ')"; return 1; }
    ns dpkg-query -W loopd >/dev/null 2>&1 && { WHY="dpkg knows the package loopd $1"; return 1; }
    return 0
}
t_private_root() { no_loopd "before the install"; }
check "the namespace starts without loopd: no files, units, config, state, group, catalog entries or package" t_private_root

t_toolchain_hidden() {
    ns test ! -e /opt/swift/usr/bin/swift || { WHY="the Swift toolchain is visible in the namespace"; return 1; }
    ns sh -c 'command -v swift' >/dev/null && { WHY="swift is on the PATH in the namespace"; return 1; }
    return 0
}
check "the Swift toolchain is hidden in the namespace" t_toolchain_hidden

# The dashboard's static user, in the group that may connect to loopd
# (systemd/loopd.sysusers).
web_user_ok() {
    ns getent passwd loopd-web >/dev/null || { WHY="no user loopd-web"; return 1; }
    [[ " $(ns id -nG loopd-web 2>/dev/null) " == *" loopd "* ]] ||
        { WHY="loopd-web is in '$(ns id -nG loopd-web 2>&1)', not in loopd"; return 1; }
}

# ---- make install ------------------------------------------------------------

t_install() {
    ns 120 make -C "$ROOT" install PREBUILT="$BIN" >"$WORK/install.log" 2>&1 ||
        { WHY="make install failed: $(tail -n 5 "$WORK/install.log" | tr '\n' ' ')"; return 1; }
    local f
    for f in /usr/local/bin/loopd /usr/local/bin/loopctl /usr/local/bin/loopd-web $UNITS/loopd.service $UNITS/loopd.socket \
        $UNITS/loopd-metrics.service $UNITS/loopd-metrics.timer $UNITS/loopd-web.service $UNITS/loopd-web.socket \
        /etc/loopd/loopd.toml /usr/local/lib/systemd/catalog/loopd.catalog /usr/local/lib/sysusers.d/loopd.conf \
        /usr/local/lib/loopd/swift-backtrace-static /usr/local/share/doc/loopd/OPERATIONS.md \
        /usr/local/share/man/man1/loopctl.1.gz /usr/local/share/man/man5/loopd.toml.5.gz \
        /usr/local/share/man/man8/loopd.8.gz /usr/local/share/man/man8/loopd-web.8.gz \
        /usr/local/share/bash-completion/completions/loopctl \
        /usr/local/share/zsh/site-functions/_loopctl /usr/local/share/fish/vendor_completions.d/loopctl.fish; do
        ns test -f "$f" || { WHY="make install did not install $f"; return 1; }
    done
    ns cmp -s "$ROOT/Config/loopd.production.toml" /etc/loopd/loopd.toml ||
        { WHY="/etc/loopd/loopd.toml is not Config/loopd.production.toml"; return 1; }
    ns getent group loopd >/dev/null || { WHY="systemd-sysusers did not create the group loopd"; return 1; }
    web_user_ok || return 1
    ns grep -qx 'ExecStart=/usr/local/bin/loopd-web' $UNITS/loopd-web.service ||
        { WHY="loopd-web.service does not run /usr/local/bin/loopd-web"; return 1; }
    ns grep -q 'swift-backtrace=/usr/local/lib/loopd/swift-backtrace-static' $UNITS/loopd.service ||
        { WHY="the unit does not point SWIFT_BACKTRACE at the installed backtracer"; return 1; }
    # A second install keeps an edited config.
    ns sh -c 'echo "# edited" >>/etc/loopd/loopd.toml'
    ns 120 make -C "$ROOT" install PREBUILT="$BIN" >>"$WORK/install.log" 2>&1 ||
        { WHY="second make install failed"; return 1; }
    ns grep -q '^# edited' /etc/loopd/loopd.toml || { WHY="make install overwrote an existing /etc/loopd/loopd.toml"; return 1; }
}
check "make install: binaries, backtracer, units, config, catalog, sysusers group and users, manuals, completions; an existing config is kept" t_install

t_check_config() {
    local out
    out=$(ns "$BINDIR/loopd" --check-config --config /etc/loopd/loopd.toml 2>&1) || { WHY=$out; return 1; }
}
check "the installed config passes loopd --check-config" t_check_config

t_catalog() {
    local from_source from_catalog listed id
    from_source=$(sed -n 's/.*case [A-Za-z]* = "\([0-9a-f]\{32\}\)".*/\1/p' Sources/LoopdCore/Logging/MessageIDs.swift | sort)
    from_catalog=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' systemd/loopd.catalog | sort)
    [ "$from_source" = "$from_catalog" ] ||
        { WHY="ids differ: source [$(echo $from_source)] catalog [$(echo $from_catalog)]"; return 1; }
    listed=$(journal --list-catalog 2>/dev/null)
    for id in $from_source; do
        grep -q "^$id loopd:" <<<"$listed" || { WHY="journalctl --list-catalog lacks $id (update-catalog?)"; return 1; }
    done
}
check "catalog: one entry per MessageID, known to journalctl after install" t_catalog

t_verify() {
    local out
    out=$(ns systemd-analyze verify "$UNITS/loopd.socket" "$UNITS/loopd.service" \
        "$UNITS/loopd-metrics.service" "$UNITS/loopd-metrics.timer" "$UNITS/loopd-web.socket" "$UNITS/loopd-web.service" 2>&1) ||
        { WHY="exit status $?: $out"; return 1; }
    [ -z "$out" ] || { WHY="warnings: $(echo $out)"; return 1; }
}
check "systemd-analyze verify loopd.socket loopd.service loopd-metrics.service loopd-metrics.timer loopd-web.socket loopd-web.service: clean" t_verify

# loopd --version, loopctl --version and the running daemon's ping agree
# with the source (Sources/LoopdProtocol/Version.swift) and the package.
t_versions() {
    local d c p
    d=$(ns "$BINDIR/loopd" --version 2>&1)
    c=$(ns "$BINDIR/loopctl" --version 2>&1)
    p=$(jget version "$(ctl ping --json 2>&1)")
    [ "$d" = "$VERSION" ] && [ "$c" = "$VERSION" ] && [ "$p" = "$VERSION" ] ||
        { WHY="loopd --version '$d', loopctl --version '$c', ping '$p'; the source says $VERSION"; return 1; }
}

t_make_flow() {
    local out
    out=$(ns systemctl enable --now loopd.socket 2>&1) || { WHY="enable --now failed: $out"; return 1; }
    out=$(ctl ping 2>&1) || { WHY="loopctl ping failed: $out"; return 1; }
    wait_for 10 active_pid || { WHY="loopd.service is $(prop ActiveState)/$(prop SubState)"; return 1; }
    t_versions || return 1
    out=$(ctl submit --worker w1 echo from make install 2>&1) || { WHY="echo: $out"; return 1; }
    [ "$out" = "from make install" ] || { WHY="echo printed '$out'"; return 1; }
}
check "make install, toolchain hidden: the socket starts loopd; a job runs; loopd, loopctl and ping say $VERSION" t_make_flow

t_uninstall() {
    ns 120 make -C "$ROOT" uninstall >"$WORK/uninstall.log" 2>&1 || { WHY="make uninstall: $(tail -n 3 "$WORK/uninstall.log")"; return 1; }
    local f
    for f in /usr/local/bin/loopd /usr/local/bin/loopctl /usr/local/bin/loopd-web $UNITS/loopd.service $UNITS/loopd.socket \
        $UNITS/loopd-metrics.service $UNITS/loopd-metrics.timer $UNITS/loopd-web.service $UNITS/loopd-web.socket \
        /usr/local/lib/loopd /usr/local/share/man/man1/loopctl.1.gz /usr/local/share/man/man8/loopd-web.8.gz \
        /usr/local/share/bash-completion/completions/loopctl; do
        ns test ! -e "$f" || { WHY="$f still there"; return 1; }
    done
    [ "$(prop ActiveState loopd.socket)" = inactive ] || { WHY="loopd.socket still $(prop ActiveState loopd.socket)"; return 1; }
    ns test -f /etc/loopd/loopd.toml || { WHY="uninstall removed the config"; return 1; }
}
check "make uninstall: stops and removes units, binaries, manuals, completions; keeps the config" t_uninstall

# What make uninstall keeps on purpose (config, durable state, group) would
# pass for the package's work below: clear it.
t_clear() {
    ns sh -c 'rm -f /etc/loopd/loopd.toml && rm -rf /var/lib/loopd /var/lib/private/loopd && groupdel loopd &&
        userdel loopd-job && { ! getent group loopd-job >/dev/null || groupdel loopd-job; } &&
        userdel loopd-web && { ! getent group loopd-web >/dev/null || groupdel loopd-web; }' &&
        ns systemctl daemon-reload && ns systemctl reset-failed >/dev/null 2>&1
    no_loopd "after make uninstall and clearing the config, state and group"
}
check "after make uninstall and clearing what it keeps (config, state, group, users), nothing of loopd is left" t_clear

# ---- the Debian package --------------------------------------------------------

UNITS=/lib/systemd/system
BINDIR=/usr/bin
t_dpkg_install() {
    ns 180 dpkg -i "$DEB" >"$WORK/dpkg-install.log" 2>&1 ||
        { WHY="dpkg -i failed: $(tail -n 5 "$WORK/dpkg-install.log" | tr '\n' ' ')"; return 1; }
    local f status
    for f in /usr/bin/loopd /usr/bin/loopctl /usr/bin/loopd-web $UNITS/loopd.service $UNITS/loopd.socket \
        $UNITS/loopd-web.service $UNITS/loopd-web.socket /etc/loopd/loopd.toml \
        /usr/lib/systemd/catalog/loopd.catalog /usr/lib/sysusers.d/loopd.conf /usr/lib/loopd/swift-backtrace-static \
        /usr/share/doc/loopd/copyright /usr/share/doc/loopd/changelog.Debian.gz /usr/share/doc/loopd/OPERATIONS.md \
        /usr/share/man/man1/loopctl.1.gz /usr/share/man/man5/loopd.toml.5.gz /usr/share/man/man8/loopd.8.gz \
        /usr/share/man/man8/loopd-web.8.gz \
        /usr/share/bash-completion/completions/loopctl /usr/share/zsh/vendor-completions/_loopctl \
        /usr/share/fish/vendor_completions.d/loopctl.fish; do
        ns test -f "$f" || { WHY="the package did not install $f"; return 1; }
    done
    status=$(ns dpkg-query -W -f '${Status} ${Version}' loopd 2>&1)
    [ "$status" = "install ok installed $DEB_VERSION" ] || { WHY="dpkg-query: $status"; return 1; }
    ns grep -qx /etc/loopd/loopd.toml /var/lib/dpkg/info/loopd.conffiles || { WHY="/etc/loopd/loopd.toml is no conffile"; return 1; }
    ns cmp -s "$ROOT/Config/loopd.production.toml" /etc/loopd/loopd.toml ||
        { WHY="/etc/loopd/loopd.toml is not Config/loopd.production.toml"; return 1; }
    ns getent group loopd >/dev/null || { WHY="the postinst did not create the group loopd"; return 1; }
    [ "$(ns systemctl is-enabled loopd.socket 2>&1)" = enabled ] || { WHY="loopd.socket not enabled"; return 1; }
    [ "$(prop ActiveState loopd.socket)" = active ] || { WHY="loopd.socket is $(prop ActiveState loopd.socket)"; return 1; }
    socket_node_ok || { WHY="$SOCK is '$(ns stat -c '%a %U %G %F' "$SOCK" 2>&1)', want 660 root loopd socket"; return 1; }
    [ "$(prop ActiveState)" = inactive ] || { WHY="loopd.service already $(prop ActiveState) before any client"; return 1; }
    note "$(ns dpkg-query -W loopd) from $(basename "$DEB")"
}
check "dpkg -i: files in Debian's places, the conffile, the group; loopd.socket enabled and listening 0660 root:loopd, loopd not started" t_dpkg_install

# The dashboard is installed, not enabled: its socket is the admin's choice.
web_idle() {
    [ "$(prop ActiveState loopd-web.socket)" = inactive ] && [ "$(prop ActiveState loopd-web.service)" = inactive ] ||
        { WHY="loopd-web.socket $(prop ActiveState loopd-web.socket), loopd-web.service $(prop ActiveState loopd-web.service)"; return 1; }
    ! web_listening || { WHY="something answers on $WEB_ADDR"; return 1; }
}
t_web_installed() {
    local enabled
    web_user_ok || return 1
    enabled=$(ns systemctl is-enabled loopd-web.socket 2>&1)
    [ "$enabled" = disabled ] || { WHY="loopd-web.socket is '$enabled' after dpkg -i"; return 1; }
    web_idle || return 1
    ns grep -qx 'ExecStart=/usr/bin/loopd-web' $UNITS/loopd-web.service ||
        { WHY="loopd-web.service does not run /usr/bin/loopd-web"; return 1; }
    [ "$(ns /usr/bin/loopd-web --version 2>&1)" = "$VERSION" ] ||
        { WHY="loopd-web --version says '$(ns /usr/bin/loopd-web --version 2>&1)'"; return 1; }
}
check "dpkg -i: loopd-web, its units and its user (in group loopd) are installed; loopd-web.socket neither enabled nor listening" t_web_installed

t_self_contained() {
    local out
    out=$(ns ldd /usr/bin/loopd /usr/bin/loopctl /usr/bin/loopd-web 2>&1)
    grep -q 'not found' <<<"$out" && { WHY="unresolved libraries: $(grep 'not found' <<<"$out" | tr '\n' ' ')"; return 1; }
    grep -qiE 'libswift|libFoundation|libdispatch|libBlocksRuntime' <<<"$out" && { WHY="links Swift libraries: $(echo $out)"; return 1; }
    ns grep -q '^Environment=SWIFT_BACKTRACE=.*swift-backtrace=/usr/lib/loopd/swift-backtrace-static$' $UNITS/loopd.service ||
        { WHY="the unit does not point SWIFT_BACKTRACE at /usr/lib/loopd/swift-backtrace-static"; return 1; }
    ns grep -rq /opt/swift $UNITS/loopd.service $UNITS/loopd.socket $UNITS/loopd-web.service &&
        { WHY="a unit names the toolchain"; return 1; }
    note "ldd /usr/bin/loopd: $(ns ldd /usr/bin/loopd | awk '{print $1}' | tr '\n' ' ')"
}
check "the installed binaries need only system libraries; the unit names the shipped backtracer, not the toolchain" t_self_contained
check "catalog: one entry per MessageID, known to journalctl after dpkg -i" t_catalog
check "systemd-analyze verify of the package's units: clean" t_verify

t_security() {
    local out score
    out=$(ns systemd-analyze security --no-pager loopd.service 2>&1) || true
    score=$(sed -n 's/.*Overall exposure level for loopd.service: \([0-9.]*\).*/\1/p' <<<"$out")
    [ -n "$score" ] || { WHY="no score in: $(tail -n 2 <<<"$out")"; return 1; }
    note "exposure $score; not covered: $(grep '✗' <<<"$out" | awk '{print $2}' | tr '\n' ' ')"
    awk -v s="$score" 'BEGIN { exit !(s <= 1.1) }' || { WHY="exposure $score > 1.1"; return 1; }
}
# 0.4 without what containing exec jobs takes (docs/OPERATIONS.md, "Containing exec jobs").
check "systemd-analyze security loopd.service: exposure <= 1.1" t_security

WEB_EXPOSURE_MAX=0.4
t_web_security() {
    local out score
    out=$(ns systemd-analyze security --no-pager loopd-web.service 2>&1) || true
    score=$(sed -n 's/.*Overall exposure level for loopd-web.service: \([0-9.]*\).*/\1/p' <<<"$out")
    [ -n "$score" ] || { WHY="no score in: $(tail -n 2 <<<"$out")"; return 1; }
    note "exposure $score; not covered: $(grep '✗' <<<"$out" | awk '{print $2}' | tr '\n' ' ')"
    awk -v s="$score" -v m="$WEB_EXPOSURE_MAX" 'BEGIN { exit !(s <= m) }' || { WHY="exposure $score > $WEB_EXPOSURE_MAX"; return 1; }
}
check "systemd-analyze security loopd-web.service: exposure <= $WEB_EXPOSURE_MAX" t_web_security

t_manuals() {
    local page out
    for page in "1 loopctl" "8 loopd" "5 loopd.toml" "8 loopd-web"; do
        out=$(ns env MANPAGER=cat MANWIDTH=100 man $page 2>&1) || { WHY="man $page: $(head -n 3 <<<"$out")"; return 1; }
        grep -q "loopd $VERSION" <<<"$out" || { WHY="man $page does not say loopd $VERSION"; return 1; }
    done
    ns env MANPAGER=cat MANWIDTH=100 man loopctl 2>/dev/null | grep -q 'submit' || { WHY="man loopctl lacks submit"; return 1; }
    out=$(ns bash -c '. /usr/share/bash-completion/completions/loopctl && complete -p loopctl' 2>&1) ||
        { WHY="the bash completion does not load: $out"; return 1; }
    ns grep -q '^#compdef loopctl' /usr/share/zsh/vendor-completions/_loopctl || { WHY="zsh completion"; return 1; }
    ns grep -q "^complete -c 'loopctl'" /usr/share/fish/vendor_completions.d/loopctl.fish || { WHY="fish completion"; return 1; }
}
check "man loopctl, man 8 loopd, man 5 loopd.toml, man 8 loopd-web show the installed version; bash, zsh and fish completions are in place" t_manuals

# ---- the test settings: a drop-in and a test config ----------------------------

sed -e "s/^debug_actions = false$/debug_actions = true/" \
    -e "s/^stall_threshold_ms = .*/stall_threshold_ms = $STALL_MS/" \
    -e "s/^shutdown_grace_ms = .*/shutdown_grace_ms = $GRACE_MS/" \
    "$ROOT/Config/loopd.production.toml" >"$WORK/loopd.toml"
# A worker of its own for the durable job, so the queued client below does not
# wait behind it in a serial lane.
printf '\n[[workers]]\nname = "w3"\n' >>"$WORK/loopd.toml"
# Exec actions that show how a job is contained: who it runs as and where
# (whoami), a job to be another job's target (victim), and a child that
# tries each way out of its job (probe: Tests/Fixtures/escape-probe.sh).
VICTIM_MARK=loopd-mark-victim-$$
PROBE_SCRIPT=$(cat "$ROOT/Tests/Fixtures/escape-probe.sh")
PROBE_TOML=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$PROBE_SCRIPT")
cat >>"$WORK/loopd.toml" <<EOF

[actions.whoami]
argv = ["/bin/sh", "-c", "id -un; sed -n 's/^0:://p' /proc/self/cgroup"]

[actions.victim]
argv = ["/bin/sh", "-c", "/bin/sh -c 'while :; do sleep 0.1; done' $VICTIM_MARK & wait"]
timeout_ms = 600000

[actions.probe]
argv = ["/bin/sh", "-c", $PROBE_TOML, "probe"]
max_client_args = 4
EOF
grep -q '^debug_actions = true$' "$WORK/loopd.toml" && grep -q "^stall_threshold_ms = $STALL_MS\$" "$WORK/loopd.toml" &&
    grep -q "^shutdown_grace_ms = $GRACE_MS\$" "$WORK/loopd.toml" ||
    { fail "test config" "Config/loopd.production.toml no longer has the keys the test edits"; exit 1; }
cat >"$WORK/50-test.conf" <<EOF
# Tests/systemd/run.sh: a short watchdog, and a stop timeout to match the
# test config's grace period.
[Service]
WatchdogSec=${WATCHDOG_SEC}s
TimeoutStopSec=$((GRACE_MS / 1000 + 5))s
EOF
ns install -m 0644 "$WORK/loopd.toml" /etc/loopd/loopd.toml
ns install -D -m 0644 "$WORK/50-test.conf" /run/systemd/system/loopd.service.d/50-test.conf
# The package's postinst already loaded the units: make systemd see the drop-in.
ns systemctl daemon-reload

# ---- socket activation (the package enabled and started loopd.socket) ----------


t_activation() {
    local out pid ready
    out=$(ctl ping 2>&1) || { WHY="loopctl ping failed: $out"; return 1; }
    wait_for 10 active_pid || { WHY="loopd.service is $(prop ActiveState)/$(prop SubState)"; return 1; }
    pid=$(prop MainPID)
    wait_for 5 has_entry _PID="$pid" MESSAGE_ID="$(mid ready)" || { WHY="no 'ready' entry from pid $pid"; return 1; }
    ready=$(entries _PID="$pid" MESSAGE_ID="$(mid ready)")
    grep -q 'from systemd' <<<"$(jget MESSAGE "$ready")" ||
        { WHY="ready message does not say the socket came from systemd: $(jget MESSAGE "$ready")"; return 1; }
    has_entry _PID="$pid" MESSAGE_ID="$(mid started)" || { WHY="no 'started' entry"; return 1; }
    note "activated: pid $pid, $(jget MESSAGE "$ready")"
}
check "the first loopctl call activates loopd (Type=notify: active after READY=1, socket from systemd)" t_activation
check "the package's loopd --version, loopctl --version and ping say $VERSION (package $DEB_VERSION)" t_versions

ECHO_REPLY="" FAIL_JOB="" W2_JOB=""
t_jobs() {
    local out
    ECHO_REPLY=$(ctl submit --json --worker w1 echo hello systemd 2>&1) || { WHY="echo: $ECHO_REPLY"; return 1; }
    grep -q '"output":"hello systemd"' <<<"$ECHO_REPLY" || { WHY="echo reply: $ECHO_REPLY"; return 1; }
    out=$(ctl submit --json --worker w2 date 2>&1) || { WHY="exec action date: $out"; return 1; }
    grep -q 'UTC' <<<"$out" || { WHY="date reply: $out"; return 1; }
    W2_JOB=$(job_of "$out")
    out=$(ctl submit --worker w1 noop 2>&1) || { WHY="noop: $out"; return 1; }
    out=$(ctl submit --json --worker w1 fail boom 2>&1) && { WHY="fail exited 0: $out"; return 1; }
    FAIL_JOB=$(job_of "$out")
    [ -n "$FAIL_JOB" ] || { WHY="fail reply has no job id: $out"; return 1; }
}
check "jobs run: echo, an exec action (date), noop; fail fails with status 1" t_jobs

t_exec_contained() {
    local out who
    out=$(ctl submit --json --worker w1 whoami 2>&1) || { WHY="whoami: $out"; return 1; }
    who=$(jget stdout "$out")
    case "$who" in
    'loopd-job\n/system.slice/loopd.service/loopd-jobs/'*) ;;
    *) WHY="the job ran as, and in: $who"; return 1 ;;
    esac
    [ "$(jget source "$out")" = cgroup ] || { WHY="usage not from the job's cgroup: $out"; return 1; }
    note "$(sed 's/\\n/ in /; s/\\n$//' <<<"$who"); usage from its cgroup"
}
check "an exec job runs as loopd-job in a cgroup of its own under the unit's (Delegate=yes)" t_exec_contained

t_escape() {
    local out victim other report
    out=$(ctl submit --json --no-wait --worker w2 victim 2>&1) || { WHY="victim: $out"; return 1; }
    victim=$(job_of "$out")
    wait_for 10 ns pgrep -f "$VICTIM_MARK" || { WHY="the other job never started"; return 1; }
    other=$(ns pgrep -f "$VICTIM_MARK" | head -n 1)
    out=$(ctl submit --json --worker w1 probe /var/lib/private/loopd "$SOCK" "$(prop MainPID)" "$other" 2>&1) ||
        { WHY="probe: $out"; return 1; }
    ctl cancel "$victim" >/dev/null 2>&1
    report=$(jget stdout "$out")
    [ "$report" = 'control-read: allowed\ncontrol-signal-self: allowed\ncontrol-python: allowed\nread-state: denied\nread-journal: denied\nwrite-state: denied\nsignal-loopd: denied\nsignal-other-job: denied\nconnect-socket: denied\n' ] ||
        { WHY="the child could: $report"; return 1; }
    note "child-escape probe under the unit: $(sed 's/\\n/; /g' <<<"$report")"
}
check "an exec child cannot read or write loopd's state, signal loopd or another job, or connect to its socket" t_escape

t_status_text() {
    status_ok() { grep -Eq 'completed [3-9]|completed [1-9][0-9]' <<<"$(prop StatusText)" && grep -Eq 'failed [1-9]' <<<"$(prop StatusText)"; }
    wait_for 5 status_ok || { WHY="StatusText '$(prop StatusText)'"; return 1; }
    note "StatusText: $(prop StatusText)"
}
check "systemctl show -p StatusText reflects the jobs (completed 3, failed 1)" t_status_text

# ---- metrics for node_exporter -----------------------------------------------------

TEXTFILE=/var/lib/prometheus/node-exporter/loopd.prom
t_metrics_textfile() {
    local out
    # Debian's prometheus-node-exporter makes this directory (root's, 0755).
    ns install -d -m 0755 /var/lib/prometheus/node-exporter
    out=$(ns 30 systemctl enable --now loopd-metrics.timer 2>&1) || { WHY="enable the timer: $out"; return 1; }
    [ "$(prop ActiveState loopd-metrics.timer)" = active ] || { WHY="timer $(prop ActiveState loopd-metrics.timer)"; return 1; }
    out=$(ns 30 systemctl start loopd-metrics.service 2>&1) ||
        { WHY="loopd-metrics.service: $out $(journal -u loopd-metrics.service -n 5 | tr '\n' ' ')"; return 1; }
    ns test -f "$TEXTFILE" || { WHY="no $TEXTFILE"; return 1; }
    [ "$(ns stat -c '%a %U' "$TEXTFILE")" = "644 root" ] || { WHY="$TEXTFILE is $(ns stat -c '%a %U' "$TEXTFILE")"; return 1; }
    ns cat "$TEXTFILE" >"$WORK/loopd.prom"
    grep -q '^loopd_jobs_ended_total{action="echo",worker="w1",state="completed"} [1-9]' "$WORK/loopd.prom" ||
        { WHY="no completed echo on w1 in $TEXTFILE: $(head -c 300 "$WORK/loopd.prom")"; return 1; }
    if command -v promtool >/dev/null; then
        out=$(promtool check metrics <"$WORK/loopd.prom" 2>&1) || { WHY="promtool: $out"; return 1; }
    fi
    [ -z "$(ns find /var/lib/prometheus/node-exporter -name '.loopd.prom.*')" ] || { WHY="a temporary file was left"; return 1; }
    note "$(grep -c '^loopd_' "$WORK/loopd.prom") samples in $TEXTFILE"
    # The checks below count on nothing else connecting to loopd.
    ns 30 systemctl stop loopd-metrics.timer
}
check "loopd-metrics.service writes loopctl metrics to node_exporter's textfile directory (0644, promtool-clean); the timer is active" t_metrics_textfile

t_journal_fields() {
    local id entry f v
    id=$(job_of "$ECHO_REPLY")
    [ -n "$id" ] || { WHY="no job id in $ECHO_REPLY"; return 1; }
    wait_for 5 has_entry JOB_ID="$id" || { WHY="journalctl -u loopd JOB_ID=$id -o json: nothing"; return 1; }
    entry=$(entries JOB_ID="$id")
    [ "$(wc -l <<<"$entry")" = 1 ] || { WHY="$(wc -l <<<"$entry") entries for $id"; return 1; }
    for f in JOB_ID:"$id" WORKER:w1 ACTION:echo RESULT:completed CLIENT_UID:0 PRIORITY:6 SYSLOG_IDENTIFIER:loopd \
        MESSAGE_ID:"$(mid jobFinished)"; do
        v=$(jget "${f%%:*}" "$entry")
        [ "$v" = "${f#*:}" ] || { WHY="${f%%:*}='$v', want '${f#*:}' in $entry"; return 1; }
    done
    for f in DURATION_USEC CODE_LINE; do
        [[ $(jget "$f" "$entry") =~ ^[0-9]+$ ]] || { WHY="$f not a number in $entry"; return 1; }
    done
    for f in CODE_FILE CODE_FUNC MESSAGE; do
        [ -n "$(jget "$f" "$entry")" ] || { WHY="no $f in $entry"; return 1; }
    done
    note "$(jget MESSAGE "$entry") [CODE_FILE=$(jget CODE_FILE "$entry") DURATION_USEC=$(jget DURATION_USEC "$entry")]"
}
check "journalctl -u loopd JOB_ID=<id> -o json: the job's entry with its fields" t_journal_fields

t_journal_failed() {
    local entry
    wait_for 5 has_entry JOB_ID="$FAIL_JOB" || { WHY="no entry for failed job $FAIL_JOB"; return 1; }
    entry=$(entries JOB_ID="$FAIL_JOB")
    [ "$(jget MESSAGE_ID "$entry")" = "$(mid jobFailed)" ] || { WHY="MESSAGE_ID $(jget MESSAGE_ID "$entry")"; return 1; }
    [ "$(jget PRIORITY "$entry")" -le 4 ] || { WHY="PRIORITY $(jget PRIORITY "$entry")"; return 1; }
    [ "$(jget RESULT "$entry")" = job_failed ] || { WHY="RESULT $(jget RESULT "$entry")"; return 1; }
    [ "$(jget ACTION "$entry")" = fail ] || { WHY="ACTION $(jget ACTION "$entry")"; return 1; }
}
check "a failed job: MESSAGE_ID=job failed, PRIORITY<=warning, RESULT=job_failed" t_journal_failed

t_catalog_text() {
    local out
    out=$(journal -x -u loopd.service JOB_ID="$FAIL_JOB" 2>/dev/null)
    grep -q "Subject: loopd job $FAIL_JOB failed" <<<"$out" && grep -q 'Defined-By: loopd' <<<"$out" &&
        grep -q "loopctl status $FAIL_JOB" <<<"$out" ||
        { WHY="no catalog text: $(tr '\n' ' ' <<<"$out" | cut -c 1-300)"; return 1; }
    note "$(grep -m 1 'Subject:' <<<"$out" | sed 's/^[^S]*//')"
}
check "journalctl -x shows the installed catalog's explanation of the failed job" t_catalog_text

t_journal_worker() {
    has_entry WORKER=w2 JOB_ID="$W2_JOB" || { WHY="journalctl -u loopd WORKER=w2 lacks job $W2_JOB"; return 1; }
    has_entry WORKER=w2 ACTION=echo && { WHY="WORKER=w2 also matched w1's echo job"; return 1; }
    return 0
}
check "journalctl -u loopd WORKER=w2 selects w2's jobs only" t_journal_worker

# ---- the watchdog ----------------------------------------------------------------

DURABLE_JOB="" OLD_PID="" OLD_INVOCATION="" NEW_PID="" STALL_JOB="" STALL_AT=0
t_watchdog() {
    local out restarts end state
    OLD_PID=$(prop MainPID)
    OLD_INVOCATION=$(prop InvocationID)
    restarts=$(prop NRestarts)
    # Acknowledged (journaled) before the stall; still sleeping when loopd dies.
    out=$(ctl submit --json --no-wait --durable --worker w3 sleep 15000 2>&1) || { WHY="durable submit: $out"; return 1; }
    DURABLE_JOB=$(job_of "$out")
    out=$(ctl submit --json --no-wait --worker w1 stall 60000 2>&1) || { WHY="stall submit: $out"; return 1; }
    STALL_JOB=$(job_of "$out")
    STALL_AT=$SECONDS
    # While loopd is down, a client connects: it waits in the socket's backlog.
    end=$((SECONDS + WATCHDOG_SEC + 10))
    while [ "$(prop MainPID)" = "$OLD_PID" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
    state="$(prop ActiveState)/$(prop SubState)"
    (ctl submit --worker w1 echo served after restart >"$WORK/queued.out" 2>&1; echo $? >"$WORK/queued.rc") &
    CLIENT_PID=$!
    echo "$state" >"$WORK/queued.state"
    wait_for $((end - SECONDS)) active_pid ||
        { WHY="not active again within WatchdogSec+10 s: $(prop ActiveState)/$(prop SubState)"; return 1; }
    NEW_PID=$(prop MainPID)
    [ "$NEW_PID" != "$OLD_PID" ] || { WHY="MainPID unchanged ($OLD_PID)"; return 1; }
    [ "$(prop NRestarts)" -gt "$restarts" ] || { WHY="NRestarts $(prop NRestarts)"; return 1; }
    note "stall at +0 s; loopd active again as pid $NEW_PID after $((SECONDS - STALL_AT)) s (bound $((WATCHDOG_SEC + 10)) s)"
}
check "a stall job: systemd kills loopd and restarts it within WatchdogSec+10 s" t_watchdog

t_watchdog_recorded() {
    local sysmsgs
    sysmsgs=$(systemd_about_loopd -o cat)
    grep -q 'Watchdog timeout' <<<"$sysmsgs" || { WHY="no 'Watchdog timeout' from systemd: $(tail -n 5 <<<"$sysmsgs")"; return 1; }
    grep -q "Failed with result 'watchdog'" <<<"$sysmsgs" || { WHY="no \"Failed with result 'watchdog'\""; return 1; }
    grep -q 'Scheduled restart job' <<<"$sysmsgs" || { WHY="no 'Scheduled restart job'"; return 1; }
}
check "systemd recorded the watchdog failure (Watchdog timeout, result 'watchdog', restart)" t_watchdog_recorded

t_stall_logged() {
    local entry stall_us wd_us
    entry=$(entries _PID="$OLD_PID" MESSAGE_ID="$(mid workerStalled)")
    [ -n "$entry" ] || { WHY="no 'worker stalled' entry from pid $OLD_PID"; return 1; }
    [ "$(jget WORKER "$entry")" = w1 ] || { WHY="WORKER '$(jget WORKER "$entry")'"; return 1; }
    [ "$(jget JOB_ID "$entry")" = "$STALL_JOB" ] || { WHY="JOB_ID '$(jget JOB_ID "$entry")', want $STALL_JOB"; return 1; }
    stall_us=$(jget __REALTIME_TIMESTAMP "$entry")
    wd_us=$(jget __REALTIME_TIMESTAMP "$(systemd_about_loopd -o json -g 'Watchdog timeout')")
    [ -n "$wd_us" ] && [ "$stall_us" -lt "$wd_us" ] || { WHY="stall entry ($stall_us) not before the watchdog timeout ($wd_us)"; return 1; }
    note "$(jget MESSAGE "$entry") ($(((wd_us - stall_us) / 1000)) ms before systemd's timeout)"
}
check "before pings stopped loopd logged the stalled worker and job (MESSAGE_ID=worker stalled)" t_stall_logged

# The backtrace comes from the runtime's helper process (its own _PID), on
# loopd's stderr stream: read everything the unit wrote before the restart.
t_backtrace() {
    local out
    out=$(journal -u loopd.service _SYSTEMD_INVOCATION_ID="$OLD_INVOCATION" -o cat 2>/dev/null)
    grep -q 'Program crashed: Aborted' <<<"$out" && grep -q 'Thread [0-9]* "loopd-w1"' <<<"$out" &&
        grep -q 'Backtrace took' <<<"$out" ||
        { WHY="no complete backtrace; lines: $(grep -E 'Backtrac|crashed|error' <<<"$out" | head -n 3 | tr '\n' ' ')"; return 1; }
    note "$(grep -m 1 'Program crashed' <<<"$out") ... $(grep -m 1 'Backtrace took' <<<"$out")"
}
check "the Swift runtime's SIGABRT backtrace (every thread, w1's too) is in the journal" t_backtrace

# The runtime's handler returns after the backtrace and the process would go
# on; TimeoutAbortSec= must end it.
t_abort_prompt() {
    local abort_sec wd_us gone_us
    abort_sec=$(prop TimeoutAbortUSec)
    wd_us=$(jget __REALTIME_TIMESTAMP "$(systemd_about_loopd -o json -g 'Watchdog timeout')")
    gone_us=$(jget __REALTIME_TIMESTAMP "$(systemd_about_loopd -o json -g "Failed with result 'watchdog'")")
    [ -n "$wd_us" ] && [ -n "$gone_us" ] || { WHY="no watchdog timeout / failure entries"; return 1; }
    local ms=$(((gone_us - wd_us) / 1000)) bound_ms
    [[ $abort_sec =~ ^([0-9]+)s$ ]] || { WHY="unexpected TimeoutAbortUSec '$abort_sec'"; return 1; }
    bound_ms=$((BASH_REMATCH[1] * 1000 + 1000))
    [ "$ms" -le "$bound_ms" ] || { WHY="the process took $ms ms to die after SIGABRT (TimeoutAbortSec=$abort_sec)"; return 1; }
    note "gone $ms ms after SIGABRT (TimeoutAbortSec=$abort_sec)"
}
check "after the watchdog's SIGABRT the process is gone within TimeoutAbortSec" t_abort_prompt

t_queued() {
    wait "$CLIENT_PID" 2>/dev/null || true
    CLIENT_PID=""
    local rc out state
    rc=$(cat "$WORK/queued.rc" 2>/dev/null || echo none)
    out=$(cat "$WORK/queued.out" 2>/dev/null)
    state=$(cat "$WORK/queued.state")
    [ "$rc" = 0 ] && [ "$out" = "served after restart" ] || { WHY="client status $rc, output '$out'"; return 1; }
    case "$state" in active/running) WHY="the client connected while loopd was $state: nothing was tested"; return 1 ;; esac
    note "connected while loopd.service was $state"
}
check "a client that connected while loopd was down is served after the restart" t_queued

t_durable() {
    local state entry
    state=$(job_state "$DURABLE_JOB")
    case "$state" in pending | running) ;; *) WHY="after the restart job $DURABLE_JOB is '$state'"; return 1 ;; esac
    has_entry _PID="$OLD_PID" JOB_ID="$DURABLE_JOB" MESSAGE_ID="$(mid jobFinished)" &&
        { WHY="it had finished before the kill: nothing was replayed"; return 1; }
    durable_done() { [ "$(job_state "$DURABLE_JOB")" = completed ]; }
    wait_for 25 durable_done ||
        { WHY="job $DURABLE_JOB is '$(job_state "$DURABLE_JOB")' 25 s after the restart"; return 1; }
    wait_for 5 has_entry _PID="$NEW_PID" JOB_ID="$DURABLE_JOB" MESSAGE_ID="$(mid jobFinished)" ||
        { WHY="no finish entry from the new pid $NEW_PID"; return 1; }
    entry=$(entries _PID="$NEW_PID" JOB_ID="$DURABLE_JOB" MESSAGE_ID="$(mid jobFinished)")
    [ "$(jget RESULT "$entry")" = completed ] || { WHY="RESULT $(jget RESULT "$entry")"; return 1; }
}
check "the durable job acknowledged before the stall completes after the restart" t_durable

t_after_restart() {
    socket_node_ok || { WHY="$SOCK is gone or changed after the restart"; return 1; }
    local out
    out=$(ctl submit --worker w1 echo again 2>&1) || { WHY="w1 after restart: $out"; return 1; }
    [ "$out" = again ] || { WHY="output '$out'"; return 1; }
}
check "after the restart the socket node is intact and w1 runs jobs again" t_after_restart

# ---- reload ------------------------------------------------------------------------

greet_ok() { [ "$(ctl submit --worker w2 greet 2>/dev/null)" = "hello from reload" ]; }
t_reload() {
    local pid out
    pid=$(prop MainPID)
    out=$(ctl submit --json --worker w2 greet 2>&1) && { WHY="greet exists before the reload: $out"; return 1; }
    grep -q unknown_action <<<"$out" || { WHY="before the reload: $out"; return 1; }
    printf '\n[actions.greet]\nargv = ["/bin/echo", "hello from reload"]\nallow_users = ["*"]\n' >>"$WORK/loopd.toml"
    ns install -m 0644 "$WORK/loopd.toml" /etc/loopd/loopd.toml
    out=$(ns systemctl reload loopd 2>&1) || { WHY="systemctl reload: $out"; return 1; }
    wait_for 5 greet_ok || { WHY="greet after reload: $(ctl submit --worker w2 greet 2>&1)"; return 1; }
    [ "$(prop MainPID)" = "$pid" ] || { WHY="MainPID changed: reload restarted loopd"; return 1; }
    wait_for 5 has_entry _PID="$pid" MESSAGE_ID="$(mid reloaded)" || { WHY="no 'reloaded' entry"; return 1; }
    wait_for 5 active_pid || { WHY="after reload: $(prop ActiveState)/$(prop SubState)"; return 1; }
}
check "systemctl reload loopd applies a changed action (same pid)" t_reload

t_reload_invalid() {
    local pid
    pid=$(prop MainPID)
    cp "$WORK/loopd.toml" "$WORK/loopd.good.toml"
    sed -i 's/^max_line_bytes = .*/max_line_bytes = "lots"/' "$WORK/loopd.toml"
    grep -q '^max_line_bytes = "lots"$' "$WORK/loopd.toml" || { WHY="could not break the config"; return 1; }
    ns install -m 0644 "$WORK/loopd.toml" /etc/loopd/loopd.toml
    ns systemctl reload loopd >/dev/null 2>&1 || true
    wait_for 5 has_entry _PID="$pid" MESSAGE_ID="$(mid reloadFailed)" || { WHY="no 'reload refused' entry"; return 1; }
    wait_for 5 active_pid || { WHY="after a bad reload: $(prop ActiveState)/$(prop SubState)"; return 1; }
    [ "$(prop MainPID)" = "$pid" ] || { WHY="loopd restarted"; return 1; }
    greet_ok || { WHY="the old config's greet action is gone"; return 1; }
    note "$(jget MESSAGE "$(entries _PID="$pid" MESSAGE_ID="$(mid reloadFailed)" | tail -n 1)")"
    cp "$WORK/loopd.good.toml" "$WORK/loopd.toml"
    ns install -m 0644 "$WORK/loopd.toml" /etc/loopd/loopd.toml
}
check "an invalid config on reload is refused and logged; loopd keeps the old one" t_reload_invalid

# ---- upgrade -------------------------------------------------------------------------

# dpkg -i over the installed package (what an upgrade runs: the postinst with
# the old version) restarts loopd on the new files; a durable job held
# before comes back, and the edited conffile stays.
t_upgrade() {
    local pid out job
    pid=$(prop MainPID)
    out=$(ctl mode w2 maintenance 2>&1) || { WHY="mode: $out"; return 1; }
    out=$(ctl submit --json --no-wait --durable --worker w2 echo kept across the upgrade 2>&1) || { WHY="submit: $out"; return 1; }
    job=$(job_of "$out")
    [ "$(jget state "$out")" = held ] || { WHY="the durable job is not held: $out"; return 1; }
    ns 180 dpkg -i "$DEB" >"$WORK/dpkg-upgrade.log" 2>&1 ||
        { WHY="dpkg -i over the installed package failed: $(tail -n 5 "$WORK/dpkg-upgrade.log" | tr '\n' ' ')"; return 1; }
    wait_for 15 active_pid || { WHY="after the upgrade loopd is $(prop ActiveState)/$(prop SubState)"; return 1; }
    [ "$(prop MainPID)" != "$pid" ] || { WHY="loopd was not restarted (MainPID $pid)"; return 1; }
    job_done() { [ "$(job_state "$job")" = completed ]; }
    wait_for 15 job_done || { WHY="job $job is '$(job_state "$job")' after the upgrade"; return 1; }
    out=$(ctl status --json "$job" 2>&1)
    grep -q '"output":"kept across the upgrade"' <<<"$out" || { WHY="status: $out"; return 1; }
    ns grep -q '^debug_actions = true$' /etc/loopd/loopd.toml || { WHY="the upgrade replaced the edited /etc/loopd/loopd.toml"; return 1; }
    note "loopd restarted as pid $(prop MainPID) (was $pid); job $job replayed"
}
check "dpkg -i over the installed package restarts loopd; a held durable job runs after it; the edited config stays" t_upgrade

# ---- stop --------------------------------------------------------------------------

t_stop() {
    local pid out job t0 took entry
    pid=$(prop MainPID)
    out=$(ctl submit --json --no-wait --worker w2 sleep 2000 2>&1) || { WHY="submit: $out"; return 1; }
    job=$(job_of "$out")
    sleep 0.3
    t0=$(date +%s%N)
    out=$(ns $((GRACE_MS / 1000 + 15)) systemctl stop loopd 2>&1) || { WHY="systemctl stop: $out"; return 1; }
    took=$((($(date +%s%N) - t0) / 1000000))
    [ "$(prop ActiveState)" = inactive ] || { WHY="after stop: $(prop ActiveState)"; return 1; }
    [ "$(prop ExecMainStatus)" = 0 ] && [ "$(prop ExecMainCode)" = 1 ] ||
        { WHY="ExecMainCode=$(prop ExecMainCode) ExecMainStatus=$(prop ExecMainStatus)"; return 1; }
    [ "$(prop Result)" = success ] || { WHY="Result=$(prop Result)"; return 1; }
    [ "$took" -le $((GRACE_MS + 1000)) ] || { WHY="stop took $took ms, grace is $GRACE_MS ms"; return 1; }
    has_entry _PID="$pid" MESSAGE_ID="$(mid stopping)" || { WHY="no 'stopping' entry"; return 1; }
    wait_for 5 has_entry _PID="$pid" JOB_ID="$job" MESSAGE_ID="$(mid jobFinished)"
    entry=$(entries _PID="$pid" JOB_ID="$job" MESSAGE_ID="$(mid jobFinished)")
    [ "$(jget RESULT "$entry")" = completed ] || { WHY="the running sleep job did not finish during the drain"; return 1; }
    note "stopped in $took ms with a 2000 ms job running (grace $GRACE_MS ms); Result=success, status 0"
}
check "systemctl stop loopd: drains the running job, exits 0 within the grace period" t_stop

t_metrics_stopped() {
    local out
    out=$(ns 30 systemctl start loopd-metrics.service 2>&1) || { WHY="loopd-metrics.service: $out"; return 1; }
    ns test ! -e "$TEXTFILE" || { WHY="$TEXTFILE still there with loopd stopped"; return 1; }
    [ "$(prop ActiveState)" = inactive ] || { WHY="the metrics run started loopd: $(prop ActiveState)"; return 1; }
}
check "with loopd stopped, loopd-metrics.service removes loopd.prom and does not start loopd" t_metrics_stopped

t_reactivate() {
    [ "$(prop ActiveState loopd.socket)" = listening ] || [ "$(prop SubState loopd.socket)" = listening ] ||
        { WHY="loopd.socket is $(prop SubState loopd.socket)"; return 1; }
    socket_node_ok || { WHY="loopd unlinked $SOCK when it stopped"; return 1; }
    local out
    out=$(ctl ping 2>&1) || { WHY="ping after stop: $out"; return 1; }
    wait_for 10 active_pid || { WHY="not reactivated"; return 1; }
}
check "after the stop the socket still listens (node kept) and the next client starts loopd again" t_reactivate

# ---- the web dashboard ---------------------------------------------------------------
# After the stop checks: the dashboard reads loopd every 2 s, which would
# start it again through its socket. The package left loopd-web.socket
# disabled and stopped (t_web_installed); the admin starts it.

WEB_PID=""
web_active() { [ "$(prop ActiveState loopd-web.service)" = active ] && [ "$(prop MainPID loopd-web.service)" != 0 ]; }
# The overview, as loopd-web.service's user sees it: 200 with its heading
# once loopd answers.
overview_ok() {
    local out
    out=$(http_get /) || return 1
    [ "$(head -n 1 <<<"$out")" = 200 ] && grep -q '<h1>Overview</h1>' <<<"$out"
}
# web_started PID LINE: whether the dashboard process PID logged LINE as its start line.
web_started() {
    [ "$(journal -u loopd-web.service -o cat _PID="$1" 2>/dev/null | grep -m 1 '^loopd-web listening on')" = "$2" ]
}
t_web_activation() {
    local out want
    out=$(ns systemctl start loopd-web.socket 2>&1) || { WHY="systemctl start loopd-web.socket: $out"; return 1; }
    [ "$(prop ActiveState loopd-web.service)" = inactive ] ||
        { WHY="loopd-web.service is $(prop ActiveState loopd-web.service) before any request"; return 1; }
    wait_for 15 overview_ok || { WHY="GET /: $(http_get / | head -c 300 | tr '\n' ' ')"; return 1; }
    web_active || { WHY="loopd-web.service is $(prop ActiveState loopd-web.service)/$(prop SubState loopd-web.service)"; return 1; }
    WEB_PID=$(prop MainPID loopd-web.service)
    want="loopd-web listening on $WEB_ADDR, loopd at $SOCK, read-only"
    wait_for 5 web_started "$WEB_PID" "$want" ||
        { WHY="its start line: '$(journal -u loopd-web.service -o cat 2>/dev/null | grep -m 1 'listening')'"; return 1; }
    note "$want (pid $WEB_PID)"
}
check "systemctl start loopd-web.socket; a GET of / starts loopd-web.service, which answers 200 with the overview" t_web_activation

# The process: the static user, in group loopd, and no network of its own
# (PrivateNetwork=yes): the socket it serves came from systemd.
t_web_identity() {
    local uids web groups gid
    # Real, effective, saved and file-system uid.
    uids=$(ns awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$WEB_PID/status")
    web=$(ns id -u loopd-web)
    [ "$uids" = "$web $web $web $web" ] || { WHY="its uids are '$uids', loopd-web is $web"; return 1; }
    gid=$(ns getent group loopd | cut -d: -f3)
    groups=$(ns sed -n 's/^Groups:\s*//p' "/proc/$WEB_PID/status" | sed 's/ *$//')
    [[ " $groups " == *" $gid "* ]] || { WHY="its groups are '$groups', not loopd's $gid"; return 1; }
    [ "$(ns readlink "/proc/$WEB_PID/ns/net")" != "$(ns readlink /proc/1/ns/net)" ] ||
        { WHY="it shares systemd's network namespace"; return 1; }
    [ "$(ns sed -n 's/^CapEff:\s*//p' "/proc/$WEB_PID/status")" = 0000000000000000 ] ||
        { WHY="it has capabilities"; return 1; }
    note "user loopd-web, groups $groups, a network namespace of its own, no capabilities;" \
        "$(ns sed -n 's/^VmRSS:\s*//p' "/proc/$WEB_PID/status") resident"
}
check "loopd-web.service runs as loopd-web (group loopd), without capabilities, in a network namespace of its own" t_web_identity

# The live updates: server-sent events under the sandbox, marked for nginx.
t_web_live() {
    local out
    out=$(ns 20 python3 -c '
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=15) as r:
    print(r.status, r.headers.get("Content-Type"), r.headers.get("X-Accel-Buffering"))
    print(r.readline().decode().strip())
' "http://$WEB_ADDR/live?page=/" 2>&1) || { WHY="GET /live: $(tail -n 1 <<<"$out")"; return 1; }
    [ "$out" = "$(printf '200 text/event-stream; charset=utf-8 no\nevent: update')" ] ||
        { WHY="GET /live: $(tr '\n' ' ' <<<"$out")"; return 1; }
}
check "GET /live streams server-sent events (text/event-stream, X-Accel-Buffering: no)" t_web_live

t_web_readonly() {
    local out
    out=$(http_get /login) || { WHY="GET /login: no answer"; return 1; }
    [ "$(head -n 1 <<<"$out")" = 404 ] || { WHY="GET /login: $(head -n 1 <<<"$out")"; return 1; }
    grep -q 'type="password"' <<<"$out" && { WHY="a password form without a password"; return 1; }
    return 0
}
check "without a password the dashboard is read-only: GET /login answers 404" t_web_readonly

# The documented way to give it a password: a credential in a drop-in.
WEB_DROPIN=/etc/systemd/system/loopd-web.service.d/password.conf
login_ok() {
    local out
    out=$(http_get /login) || return 1
    [ "$(head -n 1 <<<"$out")" = 200 ] && grep -q '<input id="password" name="password" type="password"' <<<"$out"
}
t_web_password() {
    local out pid want
    ns sh -c 'umask 077 && echo "correct horse battery staple" >/etc/loopd/web-password'
    printf '[Service]\nLoadCredential=password:/etc/loopd/web-password\n' >"$WORK/web-password.conf"
    ns install -D -m 0644 "$WORK/web-password.conf" "$WEB_DROPIN"
    ns systemctl daemon-reload
    out=$(ns systemctl restart loopd-web.service 2>&1) || { WHY="restart: $out"; return 1; }
    wait_for 10 login_ok || { WHY="GET /login: $(http_get /login | head -c 300 | tr '\n' ' ')"; return 1; }
    pid=$(prop MainPID loopd-web.service)
    [ "$pid" != "$WEB_PID" ] || { WHY="loopd-web.service was not restarted"; return 1; }
    want="loopd-web listening on $WEB_ADDR, loopd at $SOCK, operator login enabled"
    wait_for 5 web_started "$pid" "$want" || { WHY="no start line '$want'"; return 1; }
    overview_ok || { WHY="GET / after the restart: $(http_get / | head -n 1)"; return 1; }
    WEB_PID=$pid
}
check "with a drop-in LoadCredential=password:FILE and a restart, GET /login answers 200 with a password form" t_web_password

# Under the sandbox the Swift runtime's crash handler writes its backtrace
# to the journal (SWIFT_BACKTRACE= names the shipped static backtracer).
# A SIGABRT from outside shows it; the handler then returns and the process
# goes on, as it does not after a crash of its own. A process that dies is
# started again (Restart=).
t_web_backtrace() {
    local invocation out pid
    invocation=$(prop InvocationID loopd-web.service)
    ns systemctl kill -s ABRT --kill-whom=main loopd-web.service
    crashed() {
        out=$(journal -u loopd-web.service _SYSTEMD_INVOCATION_ID="$invocation" -o cat 2>/dev/null)
        grep -q 'Program crashed: Aborted' <<<"$out" && grep -q 'Thread [0-9]* "NIO-' <<<"$out" && grep -q 'Backtrace took' <<<"$out"
    }
    wait_for 10 crashed || { WHY="no complete backtrace: $(grep -E 'crashed|Backtrac|rror' <<<"$out" | head -n 3 | tr '\n' ' ')"; return 1; }
    note "$(grep -m 1 'Program crashed' <<<"$out") ... $(grep -m 1 'Backtrace took' <<<"$out")"
    pid=$(prop MainPID loopd-web.service)
    ns systemctl kill -s KILL --kill-whom=main loopd-web.service
    restarted() { web_active && [ "$(prop InvocationID loopd-web.service)" != "$invocation" ]; }
    wait_for 15 restarted || { WHY="not restarted after SIGKILL: $(prop ActiveState loopd-web.service)/$(prop SubState loopd-web.service)"; return 1; }
    wait_for 10 login_ok || { WHY="GET /login after the restart: $(http_get /login | head -n 1)"; return 1; }
    WEB_PID=$(prop MainPID loopd-web.service)
    note "killed pid $pid; restarted as pid $WEB_PID"
}
check "loopd-web's backtrace on SIGABRT is in the journal; killed, it is started again (Restart=)" t_web_backtrace

# An upgrade restarts a running dashboard on the new binary, and leaves its
# socket as the admin set it: started, still not enabled.
t_web_upgrade() {
    local enabled rss
    rss=$(ns sed -n 's/^VmRSS:\s*//p' "/proc/$WEB_PID/status")
    ns 180 dpkg -i "$DEB" >"$WORK/dpkg-upgrade-web.log" 2>&1 ||
        { WHY="dpkg -i: $(tail -n 5 "$WORK/dpkg-upgrade-web.log" | tr '\n' ' ')"; return 1; }
    wait_for 15 web_active || { WHY="loopd-web.service is $(prop ActiveState loopd-web.service) after the upgrade"; return 1; }
    [ "$(prop MainPID loopd-web.service)" != "$WEB_PID" ] || { WHY="loopd-web.service was not restarted"; return 1; }
    enabled=$(ns systemctl is-enabled loopd-web.socket 2>&1)
    [ "$enabled" = disabled ] || { WHY="loopd-web.socket is '$enabled' after the upgrade"; return 1; }
    wait_for 10 login_ok || { WHY="GET /login after the upgrade: $(http_get /login | head -n 1)"; return 1; }
    note "loopd-web restarted as pid $(prop MainPID loopd-web.service) (was $WEB_PID, $rss resident)"
    # The admin's files, which the package does not own: gone before the
    # removal, which must leave /etc/loopd empty.
    ns rm -f "$WEB_DROPIN" /etc/loopd/web-password
    ns rmdir "$(dirname "$WEB_DROPIN")"
    ns systemctl daemon-reload
}
check "dpkg -i over the installed package restarts a running loopd-web; loopd-web.socket stays disabled" t_web_upgrade

# ---- remove and purge ----------------------------------------------------------------

t_dpkg_remove() {
    local f status
    ns 120 dpkg -r loopd >"$WORK/dpkg-remove.log" 2>&1 ||
        { WHY="dpkg -r failed: $(tail -n 5 "$WORK/dpkg-remove.log" | tr '\n' ' ')"; return 1; }
    for f in /usr/bin/loopd /usr/bin/loopctl /usr/bin/loopd-web $UNITS/loopd.service $UNITS/loopd.socket \
        $UNITS/loopd-metrics.service $UNITS/loopd-metrics.timer $UNITS/loopd-web.service $UNITS/loopd-web.socket \
        /usr/lib/loopd /usr/lib/systemd/catalog/loopd.catalog /usr/share/man/man1/loopctl.1.gz \
        /usr/share/man/man8/loopd-web.8.gz $SOCK; do
        ns test ! -e "$f" || { WHY="$f still there"; return 1; }
    done
    [ "$(prop ActiveState loopd.socket)" = inactive ] && [ "$(prop ActiveState)" = inactive ] ||
        { WHY="loopd.socket $(prop ActiveState loopd.socket), loopd.service $(prop ActiveState)"; return 1; }
    web_idle || return 1
    status=$(ns dpkg-query -W -f '${Status}' loopd 2>&1)
    [ "$status" = "deinstall ok config-files" ] || { WHY="dpkg-query: $status"; return 1; }
    ns test -f /etc/loopd/loopd.toml || { WHY="dpkg -r removed the config"; return 1; }
    ns test -f /var/lib/private/loopd/journal.log || { WHY="dpkg -r removed the durable jobs"; return 1; }
    ns getent group loopd >/dev/null || { WHY="dpkg -r removed the group"; return 1; }
    journal --list-catalog 2>/dev/null | grep -q ' loopd:' && { WHY="the catalog still knows loopd"; return 1; }
    return 0
}
check "dpkg -r: stops loopd, the dashboard and their sockets, removes the programs and the catalog; config, durable jobs and group stay" t_dpkg_remove

t_dpkg_purge() {
    local f
    ns 120 dpkg -P loopd >"$WORK/dpkg-purge.log" 2>&1 ||
        { WHY="dpkg -P failed: $(tail -n 5 "$WORK/dpkg-purge.log" | tr '\n' ' ')"; return 1; }
    for f in $(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }'); do
        ns test ! -e "$f" || { WHY="$f (from the package) still there"; return 1; }
    done
    ns test ! -e /etc/loopd || { WHY="/etc/loopd still there"; return 1; }
    grep -q warning "$WORK/dpkg-purge.log" && { WHY="dpkg -P warned: $(grep warning "$WORK/dpkg-purge.log")"; return 1; }
    no_loopd "after dpkg -P"
}
check "dpkg -P: nothing of loopd or loopd-web is left (files, config, state, group, users, units and their state, catalog, package)" t_dpkg_purge

t_host_unchanged() {
    host_state >"$WORK/host-after.txt"
    cmp -s "$WORK/host-before.txt" "$WORK/host-after.txt" ||
        { WHY="$(diff "$WORK/host-before.txt" "$WORK/host-after.txt" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"; return 1; }
}
check "the host's own install paths, state and group are as they were before the test" t_host_unchanged

note "test part took $((SECONDS - started_at)) s (budget ${TEST_BUDGET} s)"
