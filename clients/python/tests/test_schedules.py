"""Schedules through the client: ``schedules`` lists them, an administrator
triggers, pauses and resumes one, and an unknown name is its own error."""
import loopd
import pytest

TICK = '[schedules.tick]\naction = "noop"\nevery = "1h"\njitter = "1m"\n'


def test_schedules_list_trigger_pause_resume(make_daemon):
    d = make_daemon(tables=TICK)
    with loopd.Client(d.socket_path, timeout=60) as c:
        [tick] = c.schedules()
        assert (tick.name, tick.action, tick.when, tick.catch_up, tick.overlap) == ("tick", "noop", "every 1h", "one", "skip")
        assert 0 <= tick.delay_ms < 60_000 and tick.next_run is not None and not tick.paused

        triggered = c.schedule("trigger", "tick")
        assert triggered.job
        assert c.wait(triggered.job).state == "completed"
        [tick] = c.schedules()
        assert tick.last_job == triggered.job and tick.last_state == "completed" and tick.fired == 1

        assert c.schedule("pause", "tick").paused
        [tick] = c.schedules()
        assert tick.paused and tick.next_run is None
        assert not c.schedule("resume", "tick").paused

        with pytest.raises(loopd.UnknownScheduleError):
            c.schedule("trigger", "nope")
