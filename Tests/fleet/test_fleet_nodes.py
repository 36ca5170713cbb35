"""A fleet's nodes (docs/FLEET.md): joining, the schema's migrations,
heartbeats, a dead node declared once, a clean stop, a database restart,
and the refusals an operator meets (a newer schema, a schema left to
--fleet-migrate, a name held elsewhere, a password in the config file).
Every node is a real loopd on a database of a private PostgreSQL cluster."""

import os
import subprocess

from fleet import LOOPD, WAIT, wait_for


def all_alive(node, names):
    listed = node.nodes()
    return all(listed.get(n, {}).get("state") == "alive" for n in names) and listed


def log_count(nodes, phrase):
    return sum(n.log().count(phrase) for n in nodes)


def test_three_nodes_join_one_migrates_and_each_lists_all(pg, database, nodes):
    # Started together against an empty database: the advisory lock lets one migrate.
    fleet = [nodes(name, database, start=False) for name in "abc"]
    for node in fleet:
        node.launch()
    for node in fleet:
        node.wait_ready()
    for node in fleet:
        listed = wait_for(f"{node.name} to list a, b and c alive", lambda: all_alive(node, "abc"))
        assert listed[node.name]["lanes"] == [
            {"mode": "default", "name": "w1", "placement": "auto"},
            {"mode": "maint", "name": "w2", "placement": "auto"},
        ]
        assert listed[node.name]["pid"] == node.process.pid
        assert node.fleet()["node"] == node.name
    db = database.split("dbname='")[1].split("'")[0]
    rows = pg.psql("SELECT version, applied_by FROM loopd.schema_migrations ORDER BY version", db=db).split()
    assert [r.split("|")[0] for r in rows] == ["1", "2", "3"], rows
    assert rows[0].split("|")[1] in "abc" and all(r.split("|")[1] == rows[0].split("|")[1] for r in rows)
    assert log_count(fleet, "migrated the database's schema from version 0 to 3") == 1
    assert log_count(fleet, "joined the fleet") == 3

    # loopctl fleet: one line per node, this one marked; --json is the reply as sent.
    out = fleet[0].loopctl("fleet")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["NODE", "HOST", "STATE", "HEARTBEAT", "RUNNING", "LANES", "(MODE)", "VERSION"]
    assert lines[1].startswith("a *") and "alive" in lines[1] and "w1 (default), w2 (maint)" in lines[1]
    assert lines[2].startswith("b ") and lines[3].startswith("c ")
    assert lines[4] == "* this node (a)"
    assert lines[5] == "fleet jobs queued: 0"
    raw = fleet[0].loopctl("fleet", "--json")
    assert raw.returncode == 0 and '"ok":true' in raw.stdout and '"node":"a"' in raw.stdout


def test_a_mode_switch_reaches_the_other_nodes(database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    assert b.request({"op": "mode", "worker": "w1", "mode": "drain"})["ok"]
    wait_for("a to see b's w1 in mode drain",
             lambda: a.nodes().get("b", {}).get("lanes", [{}])[0].get("mode") == "drain")


def test_a_killed_node_is_declared_dead_once(database, nodes):
    a, b, c = (nodes(n, database) for n in "abc")
    wait_for("all alive", lambda: all_alive(a, "abc"))
    c.kill()
    listed = wait_for("c declared dead", lambda: a.nodes().get("c", {}).get("state") == "dead" and a.nodes())
    assert "dead_at" in listed["c"] and listed["a"]["state"] == "alive"
    # Both survivors sweep; the row lock lets one declare it.
    assert log_count([a, b], "node c (host") == 1
    assert log_count([a, b], "FLEET_NODE=c") == 1
    assert a.metric("loopd_fleet_nodes_declared_dead_total") + b.metric("loopd_fleet_nodes_declared_dead_total") == 1


def test_a_stopped_node_leaves_and_is_never_declared_dead(database, nodes):
    a, b = nodes("a", database, dead_after_ms=600), nodes("b", database, dead_after_ms=600)
    wait_for("both alive", lambda: all_alive(a, "ab"))
    assert b.stop() == 0
    assert "node b left the fleet" in b.log()
    assert a.nodes()["b"]["state"] == "left"
    # Well past dead_after_ms, a's sweeps have run many times.
    beats = a.metric("loopd_fleet_database_round_trip_seconds_count")
    wait_for("a to sweep ten more times", lambda: a.metric("loopd_fleet_database_round_trip_seconds_count") > beats + 20)
    assert a.nodes()["b"]["state"] == "left"
    assert "declared dead" not in a.log()


def test_a_restarted_node_takes_its_row_back_at_once(database, nodes):
    # With an hour before anyone declares it dead, only the same host's claim explains a prompt rejoin.
    a = nodes("a", database, dead_after_ms=3_600_000)
    first = a.nodes()["a"]
    a.kill()
    a.start()
    again = wait_for("a alive again", lambda: a.nodes().get("a", {}).get("pid") == a.process.pid and a.nodes()["a"])
    assert again["state"] == "alive" and again["started_at"] > first["started_at"]


def test_a_name_held_by_a_live_node_elsewhere_is_refused(pg, database, nodes):
    db = database.split("dbname='")[1].split("'")[0]
    holder = nodes("holder", database)
    # The row now says another host holds the name, heartbeating (its heartbeat kept fresh below).
    pg.psql("UPDATE loopd.nodes SET host = 'elsewhere', incarnation = 1, heartbeat_at = now() + interval '1 hour' "
            "WHERE name = 'holder'", db=db)
    holder.kill()
    holder.start()  # not joined: refused
    reply = wait_for("the refusal", lambda: (r := holder.fleet()) and not r["ok"] and "held" in r["error"]["message"] and r)
    assert reply["error"]["code"] == "fleet_unavailable"
    assert "held by a live node on elsewhere" in reply["error"]["message"]
    # Local jobs go on.
    assert holder.request({"op": "submit", "action": "echo", "args": ["local"]})["ok"]
    out = holder.loopctl("fleet")
    assert out.returncode == 5 and "fleet_unavailable" in out.stderr


def test_the_database_restarting_refuses_fleet_requests_then_nodes_return(pg, database, nodes):
    a, b = nodes("a", database), nodes("b", database)
    wait_for("both alive", lambda: all_alive(a, "ab"))
    pg.stop()
    reply = wait_for("a to notice", lambda: (r := a.fleet()) and not r["ok"] and r)
    assert reply["error"]["code"] == "fleet_unavailable" and "unreachable" in reply["error"]["message"]
    assert a.metric("loopd_fleet_database_connected") == 0
    # Local work does not wait for the database.
    assert a.request({"op": "submit", "action": "echo", "args": ["still here"]})["result"]["output"] == "still here"
    pg.start()
    for node in (a, b):
        wait_for(f"{node.name} back", lambda: all_alive(node, "ab"))
        assert node.metric("loopd_fleet_database_connected") == 1
        assert node.metric("loopd_fleet_database_connects_total") >= 2
        assert "is back in the fleet" in node.log()
    # An immediate (crash) restart, under the nodes' heartbeats.
    pg.restart(mode="immediate")
    for node in (a, b):
        wait_for(f"{node.name} back after the crash", lambda: all_alive(node, "ab"))
    # Each outage outlasted dead_after_ms; the first node back waited for the other instead of burying it.
    assert "declared dead" not in a.log() + b.log()


def test_a_node_brings_an_older_schema_up_to_date(pg, database, nodes):
    # A database left at version 2 by an earlier loopd: the next node to start applies 3 and joins.
    db = database.split("dbname='")[1].split("'")[0]
    a = nodes("a", database)
    a.stop()
    pg.psql("ALTER FUNCTION loopd.claim(text, bigint, text[], text[], boolean[], text[], integer, bigint) RESET enable_sort;"
            " ALTER FUNCTION loopd.claim(text, bigint, text[], text[], boolean[], text[], integer, bigint) RESET enable_seqscan;"
            " DELETE FROM loopd.schema_migrations WHERE version = 3", db=db)
    b = nodes("b", database)
    assert "migrated the database's schema from version 2 to 3" in b.log()
    settings = pg.psql("SELECT proconfig FROM pg_proc WHERE oid = 'loopd.claim'::regproc", db=db)
    assert all(f"enable_{what}=off" in settings for what in ("sort", "seqscan", "bitmapscan")), settings
    assert b.request({"op": "submit", "action": "echo", "args": ["after"], "fleet": True, "wait": True})["ok"]


def test_a_newer_schema_is_refused(pg, database, nodes):
    db = database.split("dbname='")[1].split("'")[0]
    a = nodes("a", database)
    pg.psql("INSERT INTO loopd.schema_migrations (version, applied_by) VALUES (999, 'a newer loopd')", db=db)
    b = nodes("b", database, joined=False)
    reply = wait_for("b's refusal", lambda: (r := b.fleet()) and not r["ok"] and "newer" in r["error"]["message"] and r)
    assert "version 999, newer than this loopd knows (3)" in reply["error"]["message"]
    assert "takes no part in the fleet" in b.log()
    assert b.request({"op": "submit", "action": "echo", "args": ["local"]})["ok"]
    out = subprocess.run([LOOPD, "--config", a.config, "--fleet-migrate"], capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 1 and "newer than this loopd knows" in out.stderr


def test_a_schema_left_to_fleet_migrate(pg, database, nodes):
    a = nodes("a", database, fleet="migrate = false", joined=False)
    reply = wait_for("a's refusal", lambda: (r := a.fleet()) and not r["ok"] and "--fleet-migrate" in r["error"]["message"] and r)
    assert "run loopd --fleet-migrate" in reply["error"]["message"]
    db = database.split("dbname='")[1].split("'")[0]
    assert pg.psql("SELECT to_regclass('loopd.nodes') IS NULL", db=db) == "t\n"
    out = subprocess.run([LOOPD, "--config", a.config, "--fleet-migrate"], capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "fleet schema: migrated from version 0 to 3\n"
    again = subprocess.run([LOOPD, "--config", a.config, "--fleet-migrate"], capture_output=True, text=True, timeout=WAIT)
    assert again.stdout == "fleet schema: already at version 3\n"
    # The node retries at its heartbeats and joins.
    wait_for("a to join", lambda: all_alive(a, "a"))


def test_passwords_come_from_a_file_never_the_config(pg, nodes, workdir):
    pg.create_role("fleetuser", "s3cret 'pw'")
    pg.create_database("fleetpw", owner="fleetuser")
    tcp = pg.conninfo("fleetpw", "fleetuser", tcp=True)
    pwfile = os.path.join(workdir, "password")
    with open(pwfile, "w") as f:
        f.write("s3cret 'pw'\n")
    a = nodes("a", tcp, fleet=f'password_file = "{pwfile}"')
    wait_for("a to join over TCP", lambda: all_alive(a, "a"))

    with open(pwfile, "w") as f:
        f.write("wrong\n")
    b = nodes("b", tcp, fleet=f'password_file = "{pwfile}"', joined=False)
    # Until its first attempt ends the node says only that the database is
    # unreachable; then it adds why.
    wait_for("b's refusal", lambda: (r := b.fleet()) and not r["ok"]
             and "password authentication failed" in r["error"]["message"])
    assert b.request({"op": "submit", "action": "echo", "args": ["local"]})["ok"]

    c = nodes("c", pg.conninfo("fleetpw", "fleetuser", "s3cret", tcp=True), start=False)
    out = subprocess.run([LOOPD, "--config", c.config], capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 1
    assert "fleet.database carries a password" in out.stderr and "s3cret" not in out.stderr


def test_without_a_fleet_table_no_fleet_and_no_libpq(nodes):
    a = nodes("a", None)
    reply = a.fleet()
    assert not reply["ok"] and reply["error"]["code"] == "fleet_unavailable"
    assert "no [fleet] table" in reply["error"]["message"]
    with open(f"/proc/{a.process.pid}/maps") as f:
        assert "libpq" not in f.read()
