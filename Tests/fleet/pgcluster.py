"""A private PostgreSQL cluster for the fleet's tests: its own data directory,
Unix socket and TCP port on 127.0.0.1, started and stopped by the test.

    with Cluster() as pg:                      # initdb, then start
        pg.create_role("fleet", "secret")
        pg.create_database("fleet", owner="fleet")
        dsn = pg.conninfo("fleet", "fleet", "secret", tcp=True)
        ...
        pg.restart()                           # pg_ctl restart -m immediate
    # stopped, and its directory removed

The server's binaries are Debian's postgresql-15 taken out of its package
into .build/tools/postgresql by `make setup-test` (.ci/packages/test), else
the newest installed /usr/lib/postgresql/*/bin; PG_BINDIR= names another.
psql and pg_isready come from postgresql-client-15.

PostgreSQL refuses to run as root: as root the cluster belongs to `nobody`
(initdb, pg_ctl and postgres run as it through setpriv), otherwise to the
user running the tests. Clients (psql here, loopd in the tests) may be
anyone: local connections are trusted, TCP ones need a password
(scram-sha-256).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from urllib.parse import quote

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The bound on every wait for the server: generous, for a loaded CI machine.
WAIT = 120.0
SUPERUSER = "postgres"


class ClusterError(RuntimeError):
    """A step of the cluster's failed; the message says which, with its output."""


def _newest_first(pattern: str) -> list[str]:
    """The directories matching .../VERSION/bin, the highest version first."""
    def version(path: str) -> tuple[int, ...]:
        name = os.path.basename(os.path.dirname(path))
        return tuple(int(p) for p in name.split(".") if p.isdigit())
    return sorted(glob.glob(pattern), key=version, reverse=True)


def find_bindir() -> str:
    """The directory of initdb, pg_ctl and postgres (see the module's doc)."""
    server = ("initdb", "pg_ctl", "postgres")
    candidates = ([os.environ["PG_BINDIR"]] if os.environ.get("PG_BINDIR") else
                  _newest_first(os.path.join(REPO, ".build/tools/postgresql/usr/lib/postgresql/*/bin"))
                  + _newest_first("/usr/lib/postgresql/*/bin"))
    for d in candidates:
        if all(os.access(os.path.join(d, p), os.X_OK) for p in server):
            # Through links to an installed package, the real place: fewer
            # directories that the cluster's user must be able to enter.
            return os.path.realpath(d)
    raise ClusterError(f"no PostgreSQL server ({', '.join(server)}) in {' or '.join(candidates) or '/usr/lib/postgresql'}: "
                       "`make setup-test` puts Debian's in .build/tools/postgresql; PG_BINDIR= names another")


def find_client(name: str, bindir: str) -> str:
    """psql or pg_isready: beside the server, else postgresql-client's, else on PATH."""
    for d in [bindir] + _newest_first("/usr/lib/postgresql/*/bin"):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    found = shutil.which(name)
    if not found:
        raise ClusterError(f"no {name}: `make setup-test` installs postgresql-client-15")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command's name: [state, ppid, ...]; None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rindex(")") + 2:].split()


def pid_alive(pid: int) -> bool:
    """Whether PID runs (a zombie does not)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


class Cluster:
    """One PostgreSQL cluster in a temporary directory (under workdir, if
    given; every directory above it must be open to the cluster's user):
    data/ (the cluster), socket/ (its Unix socket), postgres.log."""

    def __init__(self, workdir: str | None = None, *, password: str = "postgres-password",
                 os_user: str = "nobody") -> None:
        self.bindir = find_bindir()
        self.psql_bin = find_client("psql", self.bindir)
        self.pg_isready_bin = find_client("pg_isready", self.bindir)
        self.superuser = SUPERUSER
        self.password = password
        if os.geteuid() == 0:
            entry = pwd.getpwnam(os_user)
            self.uid, self.gid = entry.pw_uid, entry.pw_gid
            self._as_owner = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups", "--"]
        else:
            self.uid, self.gid = os.geteuid(), os.getegid()
            self._as_owner = []
        self.dir = tempfile.mkdtemp(prefix="loopd-pg.", dir=workdir)
        self.datadir = os.path.join(self.dir, "data")
        self.socketdir = os.path.join(self.dir, "socket")
        self.logfile = os.path.join(self.dir, "postgres.log")
        self.port = free_port()
        try:
            self._prepare()
            self._initdb()
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    # The server's side.

    def _env(self) -> dict[str, str]:
        """This environment without PG* variables (PGHOST and the like would
        redirect the tools), in the C locale."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return env

    def _run(self, argv: list[str], *, as_owner: bool = False, input: str | None = None,
             env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
        argv = (self._as_owner if as_owner else []) + argv
        # The cluster's user may not enter the caller's directory; initdb and pg_ctl need theirs.
        result = subprocess.run(argv, input=input, env=env or self._env(), cwd=self.dir,
                                capture_output=True, text=True, timeout=WAIT + 30)
        if check and result.returncode != 0:
            raise ClusterError(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
                               + self._log_note())
        return result

    def _log_note(self) -> str:
        tail = self.log_tail()
        return f"\n--- {self.logfile}, its end:\n{tail}" if tail else ""

    def _prepare(self) -> None:
        os.chmod(self.dir, 0o755)
        os.mkdir(self.socketdir, 0o755)
        open(self.logfile, "a").close()
        if os.geteuid() == 0:
            for path in (self.dir, self.socketdir, self.logfile):
                os.chown(path, self.uid, self.gid)
        if len(os.path.join(self.socketdir, f".s.PGSQL.{self.port}")) > 100:
            raise ClusterError(f"{self.socketdir}: too long for a Unix socket's path; give a shorter workdir")
        if self._as_owner:
            user = pwd.getpwuid(self.uid).pw_name
            if self._run([os.path.join(self.bindir, "postgres"), "--version"], as_owner=True, check=False).returncode:
                raise ClusterError(f"{user} cannot run {self.bindir}/postgres: a directory above it is closed to "
                                   "others (put the checkout where others may enter, or PG_BINDIR= another server)")
            if self._run(["test", "-w", self.socketdir], as_owner=True, check=False).returncode:
                raise ClusterError(f"{user} cannot enter {self.dir}: a directory above it is closed to others "
                                   "(give a workdir that others may enter)")

    def _initdb(self) -> None:
        pwfile = os.path.join(self.dir, "pwfile")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        os.chown(pwfile, self.uid, self.gid)
        os.chmod(pwfile, 0o600)
        try:
            self._run([os.path.join(self.bindir, "initdb"), "-D", self.datadir, "-U", self.superuser,
                       f"--pwfile={pwfile}", "--auth-local=trust", "--auth-host=scram-sha-256",
                       "--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions"], as_owner=True)
        finally:
            os.unlink(pwfile)
        settings = {
            "listen_addresses": "'127.0.0.1'",       # the port is pg_ctl's -p, kept by restart
            "unix_socket_directories": quote_literal(self.socketdir),
            "max_connections": "100",
            # A test crashes the server, never the machine: what the server
            # wrote is in the kernel's cache, so nothing needs to reach the
            # disk. synchronous_commit stays on: a commit is written before
            # it is acknowledged, so restart(mode="immediate") loses none.
            "fsync": "off",
            "full_page_writes": "off",
            "jit": "off",                            # LLVM (libllvm14) is not needed
            "timezone": "'UTC'",
            "log_timezone": "'UTC'",
            "log_min_messages": "warning",
            "log_line_prefix": "'%m [%p] %q%u@%d '",
        }
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("\n# The fleet's tests (Tests/fleet/pgcluster.py)\n")
            f.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _pg_ctl(self, action: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self._run([os.path.join(self.bindir, "pg_ctl"), action, "-D", self.datadir,
                          "-w", "-t", str(int(WAIT)), *args], as_owner=True, check=check)

    def _server_args(self) -> list[str]:
        return ["-l", self.logfile, "-o", f"-p {self.port}"]

    def start(self) -> None:
        """Starts the server and waits until it takes connections on its
        socket and on 127.0.0.1:port (a no-op if it runs)."""
        if self.running():
            return
        self._remove_stale_locks()
        for attempt in range(3):
            log_start = os.path.getsize(self.logfile)
            if self._pg_ctl("start", *self._server_args(), check=False).returncode == 0:
                break
            with open(self.logfile, errors="replace") as f:
                f.seek(log_start)
                taken = "Address already in use" in f.read()
            if not taken or attempt == 2:
                raise ClusterError("PostgreSQL did not start" + self._log_note())
            self.port = free_port()   # taken since free_port() found it free
        self._wait_ready()

    def _remove_stale_locks(self) -> None:
        """After kill(), the lock files of a postmaster that is gone or is a
        zombie not yet reaped (its parent is init, which may be slow to):
        PostgreSQL takes a zombie's pid for a running server's."""
        if self.postmaster_pid() is None:
            stale = glob.glob(os.path.join(self.socketdir, ".s.PGSQL.*"))
            for path in stale + [os.path.join(self.datadir, "postmaster.pid")]:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + WAIT
        for host in (self.socketdir, "127.0.0.1"):
            while self._run([self.pg_isready_bin, "-q", "-h", host, "-p", str(self.port),
                             "-U", self.superuser, "-d", "postgres"],
                            check=False).returncode != 0:
                if time.monotonic() > deadline or not self.running():
                    raise ClusterError(f"PostgreSQL does not take connections on {host} port {self.port}"
                                       + self._log_note())
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        """pg_ctl stop -m MODE (smart, fast or immediate); a no-op if it is not running."""
        if self.running():
            self._pg_ctl("stop", "-m", mode)

    def restart(self, mode: str = "immediate") -> None:
        """pg_ctl restart -m MODE, on the same socket and port; immediate is a
        crash of the server, from which it recovers on start."""
        self._remove_stale_locks()
        self._pg_ctl("restart", "-m", mode, *self._server_args())
        self._wait_ready()

    def kill(self) -> None:
        """SIGKILL to the postmaster, then to its children; returns when all are gone."""
        pids = self.server_pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + WAIT
        while any(pid_alive(pid) for pid in pids):
            if time.monotonic() > deadline:
                raise ClusterError(f"PostgreSQL's processes {pids} outlived SIGKILL")
            time.sleep(0.05)

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid (postmaster.pid's first line), or None."""
        try:
            with open(os.path.join(self.datadir, "postmaster.pid")) as f:
                pid = int(f.readline())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def running(self) -> bool:
        return self.postmaster_pid() is not None

    def server_pids(self) -> list[int]:
        """The postmaster's pid and its children's (backends, checkpointer,
        WAL writer, autovacuum...); [] when it is not running."""
        pm = self.postmaster_pid()
        if pm is None:
            return []
        children = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                fields = _stat_fields(int(entry))
                if fields and fields[1] == str(pm) and fields[0] not in ("Z", "X"):
                    children.append(int(entry))
        return [pm] + sorted(children)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server has used since it started:
        that of the postmaster and its running children, and that of the
        children it has already reaped (backends of closed connections,
        counted in the postmaster's cutime and cstime)."""
        ticks = 0
        pm = self.postmaster_pid()
        for pid in self.server_pids():
            fields = _stat_fields(pid)
            if fields:
                # Fields 14 to 17 of /proc/PID/stat: utime, stime, cutime, cstime.
                ticks += int(fields[11]) + int(fields[12])
                if pid == pm:
                    ticks += int(fields[13]) + int(fields[14])
        return ticks / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 40) -> str:
        try:
            with open(self.logfile, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def cleanup(self) -> None:
        """Stops the server (immediately: nothing of it is kept) and removes its directory."""
        try:
            if self.running():
                try:
                    self.stop("immediate")
                except ClusterError:
                    self.kill()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        try:
            self.start()
        except BaseException:
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    # The clients' side.

    def conninfo(self, db: str = "postgres", user: str = SUPERUSER, password: str | None = None,
                 tcp: bool = False) -> str:
        """A libpq connection string: over the Unix socket, or 127.0.0.1 with tcp=True."""
        def value(v: str) -> str:
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        parts = {"host": "127.0.0.1" if tcp else self.socketdir, "port": str(self.port),
                 "dbname": db, "user": user}
        if password is not None:
            parts["password"] = password
        return " ".join(f"{k}={value(v)}" for k, v in parts.items())

    def url(self, db: str = "postgres", user: str = SUPERUSER, password: str | None = None,
            tcp: bool = False) -> str:
        """The same as a postgresql:// URL (the socket's directory as ?host=)."""
        auth = quote(user, safe="") + (":" + quote(password, safe="") if password is not None else "")
        if tcp:
            return f"postgresql://{auth}@127.0.0.1:{self.port}/{quote(db, safe='')}"
        return f"postgresql://{auth}@/{quote(db, safe='')}?host={quote(self.socketdir, safe='')}&port={self.port}"

    def psql(self, sql: str, db: str = "postgres", user: str = SUPERUSER, password: str | None = None,
             tcp: bool = False) -> str:
        """Runs SQL (one or more statements) with psql, by default over the
        socket (trusted); returns its output: rows unaligned, fields split by
        |, no headers. Over TCP the password goes in PGPASSWORD (the
        superuser's by default). Raises ClusterError on any error."""
        if password is None and tcp and user == self.superuser:
            password = self.password
        env = self._env()
        if password is not None:
            env["PGPASSWORD"] = password
        return self._run([self.psql_bin, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                          "-d", self.conninfo(db, user, tcp=tcp), "-f", "-"], input=sql, env=env).stdout

    def create_role(self, name: str, password: str | None, login: bool = True) -> None:
        sql = f"CREATE ROLE {quote_ident(name)} {'LOGIN' if login else 'NOLOGIN'}"
        if password is not None:
            sql += f" PASSWORD {quote_literal(password)}"
        self.psql(sql + ";")

    def create_database(self, name: str, owner: str = SUPERUSER) -> None:
        self.psql(f"CREATE DATABASE {quote_ident(name)} OWNER {quote_ident(owner)};")
