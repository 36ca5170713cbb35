"""The fleet's PostgreSQL fixture (pgcluster.py) itself: a private cluster
owned by an unprivileged user, reached with a password over TCP and
without one over its socket, surviving an immediate restart."""

import os
import pwd
import subprocess

import pytest

from pgcluster import Cluster, ClusterError, pid_alive

PASSWORD = "fleet's p@ss word"


@pytest.fixture
def pg():
    with Cluster() as cluster:
        yield cluster


def test_cluster(pg):
    if os.geteuid() == 0:
        assert os.stat(pg.datadir).st_uid == pwd.getpwnam("nobody").pw_uid
    assert pg.server_pids()[0] == pg.postmaster_pid()
    pg.create_role("fleet", PASSWORD)
    pg.create_database("fleetdb", owner="fleet")

    who = "select current_user || ' ' || current_database()"
    assert pg.psql(who, db="fleetdb", user="fleet", password=PASSWORD, tcp=True) == "fleet fleetdb\n"
    assert pg.psql(who, db="fleetdb", user="fleet") == "fleet fleetdb\n"
    with pytest.raises(ClusterError, match="password authentication failed"):
        pg.psql("select 1", db="fleetdb", user="fleet", password="wrong", tcp=True)
    # What a client is given: the conninfo string and the URL, each way.
    for dsn in (pg.conninfo("fleetdb", "fleet", PASSWORD, tcp=True), pg.url("fleetdb", "fleet", PASSWORD, tcp=True),
                pg.conninfo("fleetdb", "fleet"), pg.url("fleetdb", "fleet")):
        out = subprocess.run([pg.psql_bin, "-X", "-A", "-t", "-d", dsn, "-c", who], env=pg._env(),
                             capture_output=True, text=True, check=True).stdout
        assert out == "fleet fleetdb\n", dsn

    pg.psql("create table jobs (id int primary key); insert into jobs values (1), (2);", db="fleetdb", user="fleet")
    before = pg.postmaster_pid()
    pg.restart(mode="immediate")
    assert pg.postmaster_pid() != before
    # Committed rows survive the crash; both ways in work again.
    assert pg.psql("select count(*) from jobs", db="fleetdb", user="fleet", password=PASSWORD, tcp=True) == "2\n"
    assert pg.psql("select count(*) from jobs", db="fleetdb", user="fleet") == "2\n"

    pids = pg.server_pids()
    assert len(pids) > 1 and pids[0] == pg.postmaster_pid()
    assert pg.cpu_seconds() >= 0


def test_kill_start_cleanup():
    cluster = Cluster()
    with cluster:
        cluster.psql("create table t (x int); insert into t values (7);")
        cluster.kill()
        assert not cluster.running()
        cluster.start()
        assert cluster.psql("select x from t") == "7\n"
        pids = cluster.server_pids()
    assert not os.path.exists(cluster.dir)
    assert not any(pid_alive(pid) for pid in pids)
