"""Busy workers: `workers` tells every client that a worker runs a job, its
action and since when, and the job's id only to its owner (and the
administrators). The other user is a child process that becomes `nobody`."""

import os
import time

import pytest

import loopd
from conftest import as_nobody


def _view(workers):
    return {w.name: {"running": w.running, "busy": w.busy, "running_action": w.running_action,
                     "running_since": w.running_since.isoformat() if w.running_since else None}
            for w in workers}


def _workers_as_nobody(socket_path):
    """The `workers` reply as `nobody` sees it, in the shape of `_view`."""
    def view():
        with loopd.Client(socket_path, timeout=10) as c:
            return _view(c.workers())
    return as_nobody(view)


def test_an_idle_worker_is_not_busy(client):
    w = {w.name: w for w in client.workers()}["ops"]
    assert not w.busy and w.running is None and w.running_action is None and w.running_since is None


def test_the_owner_sees_its_running_job_with_its_action_and_start(client):
    job = client.submit("sleep", ["60000"], worker="ops", wait=False).job
    try:
        mine = None
        deadline = time.monotonic() + 30  # only stops a hung test
        while time.monotonic() < deadline:
            mine = {w.name: w for w in client.workers()}["ops"]
            if mine.running == job:
                break
            time.sleep(0.01)
        assert mine is not None and mine.running == job and mine.busy
        assert mine.running_action == "sleep" and mine.running_since == client.status(job).started_at
    finally:
        client.cancel(job)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another uid")
def test_another_users_running_job_shows_as_busy_without_its_id(make_daemon):
    d = make_daemon(server='socket_mode = "0666"')
    with loopd.Client(d.socket_path, timeout=30) as c:
        job = c.submit("sleep", ["60000"], worker="w1", wait=False).job
        try:
            deadline = time.monotonic() + 30  # only stops a hung test
            while c.status(job).state != "running" and time.monotonic() < deadline:
                time.sleep(0.01)
            mine = _view(c.workers())
            theirs = _workers_as_nobody(d.socket_path)
        finally:
            c.cancel(job)
    assert mine["w1"]["running"] == job and mine["w1"]["busy"] and mine["w1"]["running_action"] == "sleep"
    assert theirs["w1"] == dict(mine["w1"], running=None)
    assert theirs["w2"] == mine["w2"] == {"running": None, "busy": False, "running_action": None,
                                          "running_since": None}
