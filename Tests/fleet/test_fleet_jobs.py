"""Fleet jobs (docs/FLEET.md): a job submitted on one node runs on another,
once; lanes and modes decide what a node claims; delays, retries and
cancels hold fleet-wide; a killed node's jobs are rescued within the
bound; a cut-off node's late end is fenced; a database restart loses no
acknowledged job; owners see only their own jobs. Real loopd nodes, a
private PostgreSQL cluster."""

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time

from fleet import LOOPCTL, WAIT, Proxy, wait_for


def submit(via, **fields):
    return via.request({"op": "submit", "fleet": True, **fields})


def db_of(database):
    return database.split("dbname='")[1].split("'")[0]


def test_a_job_submitted_on_one_node_runs_on_another(database, nodes):
    a, b, c = (nodes(n, database) for n in "abc")
    reply = submit(a, action="echo", args=["from a"], node="b")
    assert reply["ok"] and reply["job"].startswith("f-") and reply["fleet"] is True
    assert reply["node"] == "b" and reply["result"] == {"output": "from a"} and reply["state"] == "completed"
    status = c.request({"op": "status", "job": reply["job"]})
    assert status["ok"] and status["state"] == "completed" and status["node"] == "b"
    assert status["submitted_on"] == "a" and status["owner"] == "root" and status["args"] == ["from a"]
    assert status["worker"] == "w1" and status["attempt"] == 1
    assert "started_at" in status and "finished_at" in status
    # loopctl reads it from any node like a local job.
    out = subprocess.run([LOOPCTL, "status", reply["job"], "--socket", c.socket, "--server-uid", "any"],
                         capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0 and "completed" in out.stdout, out.stdout + out.stderr
    # A pin needs the fleet; an action this node lacks is refused here.
    assert a.request({"op": "submit", "action": "echo", "node": "b"})["error"]["code"] == "bad_request"
    assert submit(a, action="no-such-action")["error"]["code"] == "unknown_action"


def test_each_job_runs_once(pg, database, nodes):
    fleet = [nodes(n, database) for n in "abc"]
    ids = []
    for i in range(300):
        reply = submit(fleet[i % 3], action="noop", wait=False)
        assert reply["ok"], reply
        ids.append(reply["job"])
    db = db_of(database)
    wait_for("every job to end", lambda: pg.psql("SELECT count(*) FROM loopd.jobs WHERE finished_at IS NULL", db=db) == "0\n")
    rows = pg.psql("SELECT state, attempt, count(*) FROM loopd.jobs GROUP BY 1, 2", db=db).split()
    assert rows == ["completed|1|300"], rows
    claimed = sum(n.metric("loopd_fleet_jobs_claimed_total") for n in fleet)
    assert claimed == 300
    # The fleet's families are valid exposition text, as promtool reads it (where the test setup put it).
    if shutil.which("promtool"):
        text = fleet[0].request({"op": "metrics"})["text"]
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    assert sum(n.metric("loopd_fleet_ends_fenced_total") for n in fleet) == 0


def test_lanes_and_modes_decide_what_a_node_claims(pg, database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    # w2 runs in mode maint on every node: a maint job lands there.
    reply = submit(a, action="echo", args=["m"], mode="maint")
    assert reply["ok"] and reply["worker"] == "w2"
    # A job for a lane by name.
    assert submit(b, action="echo", worker="w2", mode="maint")["worker"] == "w2"
    # No lane runs mode drain: held, anywhere, until one does.
    held = submit(a, action="echo", args=["held"], mode="drain", wait=False)["job"]
    beats = a.metric("loopd_fleet_database_round_trip_seconds_count")
    wait_for("a few claim polls", lambda: a.metric("loopd_fleet_database_round_trip_seconds_count") > beats + 30)
    assert b.request({"op": "status", "job": held})["state"] == "queued"
    assert b.request({"op": "mode", "worker": "w1", "mode": "drain"})["ok"]
    done = a.request({"op": "wait", "job": held})
    assert done["ok"] and done["node"] == "b" and done["worker"] == "w1"


def test_a_delay_is_never_early_and_priorities_order_the_queue(pg, database, nodes):
    a = nodes("a", database)
    reply = submit(a, action="echo", delay_ms=1000)
    status = a.request({"op": "status", "job": reply["job"]})
    assert status["queue_ms"] >= 1000, status
    # With the only default lane busy, the lower priority number runs first.
    # The blocker runs until both are queued behind it, however slow this test is.
    blocker = submit(a, action="sleep", args=["600000"], worker="w1", wait=False)["job"]
    wait_for("the blocker to run", lambda: a.request({"op": "status", "job": blocker})["state"] == "running")
    low = submit(a, action="sleep", args=["50"], worker="w1", priority=9, wait=False)["job"]
    high = submit(a, action="sleep", args=["50"], worker="w1", priority=1, wait=False)["job"]
    assert a.request({"op": "cancel", "job": blocker})["cancelled"]
    assert a.request({"op": "wait", "job": low})["ok"]
    high_status = a.request({"op": "status", "job": high})
    assert high_status["finished_at"] <= a.request({"op": "status", "job": low})["started_at"]


def test_retries_count_attempts_fleet_wide(database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    reply = submit(a, action="fail", retries=2, retry_backoff_ms=10)
    assert not reply["ok"] and reply["error"]["code"] == "job_failed" and reply["attempt"] == 3
    status = b.request({"op": "status", "job": reply["job"]})
    assert status["attempt"] == 3 and status["retries"] == 2 and status["state"] == "failed"
    assert [x["attempt"] for x in status["attempts"]] == [1, 2, 3]
    assert all(x["code"] == "job_failed" and x["node"] in "ab" for x in status["attempts"])


def test_cancel_from_another_node(database, nodes):
    a, b, c = (nodes(n, database) for n in "abc")
    queued = submit(a, action="echo", delay_ms=600_000, wait=False)["job"]
    reply = c.request({"op": "cancel", "job": queued})
    assert reply == {"id": None, "ok": True, "job": queued, "cancelled": True, "state": "cancelled", "started": False}
    assert a.request({"op": "wait", "job": queued})["error"]["code"] == "cancelled"
    # Running on b, cancelled from c: b stops it; the reply comes once it ended.
    running = submit(a, action="sleep", args=["60000"], node="b", wait=False)["job"]
    # Claimed is running to the fleet; wait until b's lane has started it, so the cancel stops a started job.
    wait_for("b's lane to start it", lambda: any(w["running"] == f"{running}.1"
                                                 for w in b.request({"op": "workers"})["workers"]))
    reply = c.request({"op": "cancel", "job": running})
    assert reply["ok"] and reply["cancelled"] is True and reply["state"] == "cancelled" and reply["started"] is True
    # b's journal record of the end may reach its log after c's reply: the end travels by the database first.
    wait_for("b to log the cancelled end", lambda: "RESULT=cancelled" in b.log())


def test_a_killed_nodes_jobs_are_rescued_within_the_bound(pg, database, nodes):
    heartbeat, dead_after = 200, 1_500
    a, b, c = (nodes(n, database, heartbeat_ms=heartbeat, dead_after_ms=dead_after) for n in "abc")
    # Only b runs mode special, so b claims the job.
    assert b.request({"op": "mode", "worker": "w1", "mode": "special"})["ok"]
    job = submit(a, action="sleep", args=["2000"], mode="special", retries=1, wait=False)["job"]
    wait_for("b to run it", lambda: a.request({"op": "status", "job": job}).get("node") == "b"
             and a.request({"op": "status", "job": job})["state"] == "running")
    b.kill()
    assert a.request({"op": "mode", "worker": "w1", "mode": "special"})["ok"]
    done = c.request({"op": "wait", "job": job})
    assert done["ok"] and done["node"] == "a" and done["attempt"] == 2
    status = c.request({"op": "status", "job": job})
    lost = status["attempts"][0]
    assert lost["node"] == "b" and "node b was lost" in lost["message"]
    assert sum(n.metric("loopd_fleet_jobs_rescued_total") for n in (a, c)) == 1
    # The documented bound, by the database's clock: from b's last renewal to the rescue,
    # at most dead_after_ms and one heartbeat of the sweeping node (plus scheduling slack).
    db = db_of(database)
    gap = float(pg.psql("SELECT extract(epoch FROM (attempts->0->>'finished_at')::timestamptz - "
                        "(SELECT heartbeat_at FROM loopd.nodes WHERE name = 'b')) FROM loopd.jobs "
                        f"WHERE id = {job[2:]}", db=db))
    assert gap <= (dead_after + heartbeat) / 1000 + 5, gap


def test_a_cut_off_nodes_late_end_is_fenced(pg, nodes, workdir):
    pg.create_database("partition")
    proxy = Proxy(pg.port)
    pwfile = os.path.join(workdir, "pw")
    with open(pwfile, "w") as f:
        f.write(pg.password + "\n")
    via_proxy = pg.conninfo("partition", tcp=True).replace(f"port='{pg.port}'", f"port='{proxy.port}'")
    a = nodes("a", pg.conninfo("partition"))
    b = nodes("b", via_proxy, fleet=f'password_file = "{pwfile}"')
    try:
        assert b.request({"op": "mode", "worker": "w1", "mode": "special"})["ok"]
        job = submit(a, action="sleep", args=["3000"], mode="special", retries=1, wait=False)["job"]
        wait_for("b to run it", lambda: a.request({"op": "status", "job": job})["state"] == "running")
        claimed = b.metric("loopd_fleet_jobs_claimed_total")
        proxy.freeze()
        # Cut off, b refuses fleet requests instead of hanging, and keeps its local work.
        wait_for("b to notice", lambda: not b.fleet()["ok"])
        # (b's w1 runs mode special: a local job for w2's mode.)
        local = b.request({"op": "submit", "action": "echo", "args": ["local"], "mode": "maint"})
        assert local["result"] == {"output": "local"}
        assert a.request({"op": "mode", "worker": "w1", "mode": "special"})["ok"]
        done = a.request({"op": "wait", "job": job})
        assert done["ok"] and done["node"] == "a" and done["attempt"] == 2
        # b's own run ended meanwhile; healed, its end is refused, not applied.
        wait_for("b's run to end", lambda: f"JOB_ID={job}.1 RESULT=completed" in b.log())
        assert b.metric("loopd_fleet_jobs_claimed_total") == claimed
        proxy.heal()
        wait_for("b's late end to be fenced", lambda: b.metric("loopd_fleet_ends_fenced_total") == 1)
        assert f"the end of job {job} attempt 1 (completed) was refused" in b.log()
        status = a.request({"op": "status", "job": job})
        assert status["state"] == "completed" and status["node"] == "a" and status["attempt"] == 2
        wait_for("b back", lambda: b.fleet()["ok"])
    finally:
        proxy.close()


def test_a_database_restart_loses_no_acknowledged_job(pg, database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    acknowledged, refused = [], []
    stop = threading.Event()

    def producer(via):
        while not stop.is_set():
            reply = submit(via, action="noop", wait=False)
            (acknowledged if reply["ok"] else refused).append(reply)

    producers = [threading.Thread(target=producer, args=(via,)) for via in (a, b)]
    for p in producers:
        p.start()
    wait_for("jobs before the crash", lambda: len(acknowledged) > 100)
    pg.restart(mode="immediate")
    for via in (a, b):
        via.wait_joined()
    before = len(acknowledged)
    wait_for("jobs after it", lambda: len(acknowledged) > before + 100)
    stop.set()
    for p in producers:
        p.join(WAIT)
    assert all(r["error"]["code"] == "fleet_unavailable" for r in refused)
    acknowledged = [r["job"] for r in acknowledged]
    db = db_of(database)
    wait_for("every job to end", lambda: pg.psql("SELECT count(*) FROM loopd.jobs WHERE finished_at IS NULL", db=db) == "0\n")
    ids = ",".join(j[2:] for j in acknowledged)
    done = pg.psql(f"SELECT count(*) FROM loopd.jobs WHERE state = 'completed' AND id IN ({ids})", db=db)
    assert int(done) == len(acknowledged)
    # The outage was the database's: no node took another's jobs, or declared it dead, for it.
    assert a.metric("loopd_fleet_jobs_rescued_total") + b.metric("loopd_fleet_jobs_rescued_total") == 0
    assert "declared dead" not in a.log() + b.log()


def test_fleet_is_the_default_when_configured(database, nodes):
    a = nodes("a", database, fleet='jobs = "fleet"')
    assert a.request({"op": "submit", "action": "echo"})["job"].startswith("f-")
    local = a.request({"op": "submit", "action": "echo", "fleet": False})
    assert local["ok"] and not local["job"].startswith("f-")


def test_a_fleet_job_is_its_owners(pg, database, nodes):
    a = nodes("a", database, socket_mode="0666")
    b = nodes("b", database, socket_mode="0666")
    mine = submit(a, action="echo", args=["root's"])["job"]

    def as_nobody(via, command, *args):
        return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", LOOPCTL, command,
                               "--socket", via.socket, "--server-uid", "any", "--json", *args],
                              capture_output=True, text=True, timeout=WAIT)

    # Another user: the same reply as for an id never given out.
    for op in (["status", mine], ["wait", mine], ["cancel", mine]):
        out = as_nobody(b, *op)
        assert out.returncode == 5 and json.loads(out.stdout)["error"]["code"] == "unknown_job", out
    assert json.loads(as_nobody(b, "status", mine).stdout) == json.loads(as_nobody(b, "status", "f-999999").stdout)
    # nobody's own fleet job, submitted on b: nobody sees it from a; root, an administrator, too.
    out = as_nobody(b, "submit", "--fleet", "echo", "nobody's")
    assert out.returncode == 0, out.stderr
    theirs = json.loads(out.stdout)["job"]
    seen = json.loads(as_nobody(a, "status", theirs).stdout)
    assert seen["ok"] and seen["owner"] == "nobody"
    assert a.request({"op": "status", "job": theirs})["owner"] == "nobody"


def test_the_python_client_submits_fleet_jobs(database, nodes):
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
    import loopd

    a, b = nodes("a", database), nodes("b", database)
    with loopd.Client(a.socket) as client:
        reply = client.submit("echo", ["py"], fleet=True, node="b")
        assert reply.job.startswith("f-") and reply.result == {"output": "py"}
        queued = client.submit("echo", ["later"], fleet=True, wait=False, delay_ms=60_000)
        with loopd.Client(b.socket) as other:
            assert other.cancel(queued.job).cancelled
        try:
            client.submit("echo", fleet=True, mode="no-such-mode", node="no-such-node", worker="w1", retries=5000)
            raise AssertionError("retries past the limit were accepted")
        except loopd.BadRequestError:
            pass


def test_an_application_enqueues_inside_its_own_transaction(pg, database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    db = db_of(database)
    # Rolled back: the job never existed, and nothing ran it.
    made = pg.psql("BEGIN; SELECT loopd.submit_job('echo', ARRAY['rolled back'], owner_name => 'root'); ROLLBACK;", db=db)
    gone = made.strip()
    assert gone.startswith("f-")
    assert not a.request({"op": "status", "job": gone})["ok"]
    # Committed: it runs, and any node answers for it.
    job = pg.psql("SELECT loopd.submit_job('echo', ARRAY['committed'], owner_name => 'root', node => 'b');", db=db).strip()
    done = a.request({"op": "wait", "job": job})
    assert done["ok"] and done["result"] == {"output": "committed"} and done["node"] == "b"
    status = b.request({"op": "status", "job": job})
    assert status["owner"] == "root" and status["submitted_on"] == "sql:postgres" and "submitted_by" not in status
    # A unique key names the owner's job, from SQL as from any node; a key orders as a submit's does.
    keyed = pg.psql("SELECT loopd.submit_job('echo', owner_name => 'root', unique_key => 'etl-1', key => 'etl', "
                    "delay_ms => 600000);", db=db).strip()
    again = pg.psql("SELECT loopd.submit_job('echo', owner_name => 'root', unique_key => 'etl-1');", db=db).strip()
    assert again == keyed
    duplicate = submit(a, action="echo", unique_key="etl-1", wait=False)
    assert duplicate["job"] == keyed and duplicate["duplicate"] is True
    assert b.request({"op": "status", "job": keyed})["key"] == "etl"
    # The checks a submit makes that SQL can.
    for call, phrase in [
        ("loopd.submit_job('no-such-action', owner_name => 'root')", 'no live node of the fleet has an action named "no-such-action"'),
        ("loopd.submit_job('echo')", "owner_name is required"),
        ("loopd.submit_job('echo', owner_name => 'root', priority => -1)", "priority must be between"),
        ("loopd.submit_job('echo', owner_name => 'root', retries => 1001)", "retries must be between"),
        ("loopd.submit_job('echo', ARRAY['a', NULL], owner_name => 'root')", "none of them NULL"),
    ]:
        try:
            pg.psql(f"SELECT {call};", db=db)
            raise AssertionError(f"accepted {call}")
        except Exception as error:  # ClusterError carries psql's message
            assert phrase in str(error), error


def test_loopctl_fleet_counts_what_runs_where(database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    job = submit(a, action="sleep", args=["60000"], node="b", wait=False)["job"]
    wait_for("b to run it", lambda: a.nodes().get("b", {}).get("running") == 1)
    reply = a.fleet()
    assert reply["queued"] == 0 and reply["nodes"][0]["running"] == 0
    out = a.loopctl("fleet")
    row = [line for line in out.stdout.splitlines() if line.startswith("b ")][0]
    assert re.match(r"b\s+\S+\s+alive\s+\S+ ago\s+1\s+w1 \(default\)", row), row
    assert a.request({"op": "cancel", "job": job})["cancelled"]


def test_a_node_that_only_polls(database, nodes):
    # As behind PgBouncer in transaction mode: no LISTEN; new work, ends and cancels found at each heartbeat.
    a = nodes("a", database)
    p = nodes("p", database, fleet="listen = false")
    assert p.request({"op": "mode", "worker": "w1", "mode": "special"})["ok"]
    done = submit(a, action="echo", args=["polled"], mode="special")
    assert done["ok"] and done["node"] == "p"
    waited = submit(p, action="echo", args=["waited"], node="a")
    assert waited["ok"] and waited["result"] == {"output": "waited"}
    running = submit(a, action="sleep", args=["60000"], node="p", mode="special", wait=False)["job"]
    wait_for("p to run it", lambda: a.request({"op": "status", "job": running})["state"] == "running")
    reply = a.request({"op": "cancel", "job": running})
    assert reply["ok"] and reply["cancelled"] is True


def test_jobs_of_one_key_run_one_at_a_time_in_order_fleet_wide(pg, database, nodes):
    a, b, c = (nodes(n, database) for n in "abc")
    # The key's first job runs until it is cancelled: while it does, the
    # key's other jobs wait and another key's job runs to its end.
    first = submit(a, action="sleep", args=["300000"], key="invoice-7", wait=False)["job"]
    wait_for("the key's first job to run", lambda: a.request({"op": "status", "job": first})["state"] == "running")
    ids = [submit((a, b, c)[i % 3], action="sleep", args=["100"], key="invoice-7", wait=False)["job"] for i in range(5)]
    other = submit(a, action="sleep", args=["100"], key="invoice-8", wait=False)["job"]
    waited = a.request({"op": "wait", "job": other, "timeout_ms": int(WAIT * 1000)})
    assert waited["state"] == "completed", waited
    assert a.request({"op": "status", "job": first})["state"] == "running"
    assert all(a.request({"op": "status", "job": job})["state"] == "queued" for job in ids)
    assert a.request({"op": "cancel", "job": first})["ok"]
    for job in ids:
        assert a.request({"op": "wait", "job": job})["ok"]
    runs = [a.request({"op": "status", "job": job}) for job in [first] + ids]
    # Each started after the one before it ended, whichever node ran them.
    for earlier, later in zip(runs, runs[1:]):
        assert later["started_at"] >= earlier["finished_at"], (earlier, later)


def test_racing_submits_of_one_unique_key_make_one_job(pg, database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    replies = []

    def submitter(via):
        for _ in range(10):
            replies.append(submit(via, action="sleep", args=["300"], unique_key="nightly-export", wait=False))

    threads = [threading.Thread(target=submitter, args=(via,)) for via in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert len(replies) == 40 and all(r["ok"] for r in replies), replies
    assert len({r["job"] for r in replies}) == 1
    assert sum(1 for r in replies if r.get("duplicate")) == 39
    db = db_of(database)
    assert pg.psql("SELECT count(*) FROM loopd.jobs WHERE unique_key = 'nightly-export'", db=db) == "1\n"
    # Waited, a duplicate answers with the one job's end; another owner's key is another job.
    done = submit(b, action="sleep", args=["300"], unique_key="nightly-export")
    assert done["ok"] and done["duplicate"] is True and done["job"] == replies[0]["job"]


def test_a_batch_claimed_for_one_idle_lane_of_a_mode_goes_where_that_mode_runs(pg, database, nodes):
    # Two jobs of mode maint claimed at once by a node whose idle lanes are w1 (default) and w2 (maint):
    # both must run on w2, one after the other, never be held on w1.
    db = db_of(database)
    a = nodes("a", database)
    assert a.request({"op": "mode", "worker": "w2", "mode": "other"})["ok"]
    jobs = [pg.psql("SELECT loopd.submit_job('echo', owner_name => 'root', mode => 'maint');", db=db).strip()
            for _ in range(2)]
    # Held until w2 runs maint again; then one claim takes both.
    assert a.request({"op": "mode", "worker": "w2", "mode": "maint"})["ok"]
    for job in jobs:
        done = a.request({"op": "wait", "job": job})
        assert done["ok"] and done["worker"] == "w2", done


def test_the_fleets_jobs_are_listed_from_any_node(pg, database, nodes):
    a, b = nodes("a", database, socket_mode="0666"), nodes("b", database, socket_mode="0666")
    made = [submit((a, b)[i % 2], action="echo", args=[str(i)], wait=False)["job"] for i in range(5)]
    failed = submit(a, action="fail")["job"]
    queued = submit(b, action="echo", delay_ms=600_000, wait=False)["job"]
    for job in made:
        a.request({"op": "wait", "job": job})
    # Pages, oldest first, from either node.
    first = b.request({"op": "jobs", "fleet": True, "limit": 4})
    assert [j["job"] for j in first["jobs"]] == made[:4] and first["next_cursor"] == made[3]
    rest = a.request({"op": "jobs", "fleet": True, "limit": 4, "cursor": first["next_cursor"]})
    assert [j["job"] for j in rest["jobs"]] == [made[4], failed, queued] and rest["next_cursor"] is None
    entry = rest["jobs"][1]
    assert entry["state"] == "failed" and entry["fleet"] is True and "result" not in entry and "node" in entry
    # Filters: state (a delayed job is queued), action.
    assert [j["job"] for j in a.request({"op": "jobs", "fleet": True, "state": "failed"})["jobs"]] == [failed]
    assert [j["job"] for j in a.request({"op": "jobs", "fleet": True, "state": "delayed"})["jobs"]] == [queued]
    assert [j["job"] for j in a.request({"op": "jobs", "fleet": True, "action": "fail"})["jobs"]] == [failed]
    # loopctl jobs --fleet; another user sees none of root's.
    out = a.loopctl("jobs", "--fleet")
    assert out.returncode == 0 and all(job in out.stdout for job in made), out.stdout
    other = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", LOOPCTL, "jobs",
                            "--socket", b.socket, "--server-uid", "any", "--json", "--fleet"],
                           capture_output=True, text=True, timeout=WAIT)
    assert json.loads(other.stdout)["jobs"] == []
    # Local listing stays local; retry and discard take no fleet.
    assert all(not j["job"].startswith("f-") or "." in j["job"] for j in a.request({"op": "jobs"})["jobs"])
    assert a.request({"op": "retry", "fleet": True})["error"]["code"] == "bad_request"


def test_host_and_fleet_jobs_are_listed_together(database, nodes):
    # jobs with with_fleet: this host's jobs and the fleet's in one list, by submission, paged by one cursor.
    a = nodes("a", database)
    made = []
    for i in range(6):
        made.append(submit(a, action="echo", args=[str(i)], fleet=i % 2 == 1)["job"])
        time.sleep(0.005)  # a millisecond apart at least: the list orders by submission time
    assert [job.startswith("f-") for job in made] == [False, True] * 3
    pages, cursor = [], None
    while True:
        page = a.request({"op": "jobs", "with_fleet": True, "limit": 4, **({"cursor": cursor} if cursor else {})})
        assert page["ok"], page
        pages.append([j["job"] for j in page["jobs"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    # The attempts a ran of its fleet jobs (f-N.1) are listed once, as their fleet jobs.
    assert pages == [made[:4], made[4:]], pages
    filtered = a.request({"op": "jobs", "with_fleet": True, "action": "echo", "state": "completed", "limit": 1000})
    assert [j["job"] for j in filtered["jobs"]] == made
    out = a.loopctl("jobs", "--with-fleet", "--all", "--limit", "2")
    assert out.returncode == 0 and all(job in out.stdout for job in made), out.stdout
    both = a.request({"op": "jobs", "with_fleet": True, "fleet": True})
    assert both["error"]["code"] == "bad_request"
    assert a.request({"op": "jobs", "with_fleet": True, "cursor": "nonsense"})["error"]["code"] == "bad_request"


def test_concurrent_submits_each_get_their_own_job(database, nodes):
    # Many clients' submits in one pass are one insert; each client must get its own job back.
    a, b = nodes("a", database), nodes("b", database)
    replies = {}

    def client(i):
        via = (a, b)[i % 2]
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(via.socket)
            reader = s.makefile("rb")
            for k in range(5):
                # Pipelined: several submits of this client in flight at once.
                s.sendall((json.dumps({"op": "submit", "fleet": True, "action": "echo", "args": [f"{i}-{k}"], "id": k})
                           + "\n").encode())
            for _ in range(5):
                reply = json.loads(reader.readline())
                replies[(i, reply["id"])] = reply

    threads = [threading.Thread(target=client, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert len(replies) == 100
    for (i, k), reply in replies.items():
        assert reply["ok"] and reply["result"] == {"output": f"{i}-{k}"}, reply
    assert len({r["job"] for r in replies.values()}) == 100
