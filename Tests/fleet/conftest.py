"""Fixtures of the fleet's tests: one private PostgreSQL cluster for the
module, a fresh database for each test, and the nodes a test started,
stopped at its end (their logs shown when it fails)."""

import itertools
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from fleet import Node  # noqa: E402
from pgcluster import Cluster  # noqa: E402

_databases = itertools.count(1)


@pytest.fixture(scope="module")
def pg():
    with Cluster() as cluster:
        yield cluster


@pytest.fixture
def database(pg):
    """An empty database of its own, owned by the superuser: its conninfo over the socket."""
    name = f"fleet{next(_databases)}"
    pg.create_database(name)
    return pg.conninfo(name)


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="loopd-fleet.")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def nodes(workdir, request):
    """make(name, database, **options) -> a started Node, which has joined
    the fleet unless joined=False; all are killed at the end."""
    made: list[Node] = []

    def make(name, database, start=True, joined=True, **options):
        node = Node(workdir, name, database, **options)
        made.append(node)
        if start:
            node.start()
            if joined and database is not None:
                node.wait_joined()
        return node

    yield make
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for node in made:
        node.kill()
        if failed:
            sys.stderr.write(f"--- node {node.name}'s log ---\n{node.log()}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
