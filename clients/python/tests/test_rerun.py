"""retry and discard through the client: one failed job and in bulk, the
links between old and new, and a discarded job gone."""
import loopd
import pytest


def test_retry_and_discard(make_daemon):
    d = make_daemon()
    with loopd.Client(d.socket_path, timeout=60) as client:
        _retry_and_discard(client)


def _retry_and_discard(client):
    old = client.submit("fail", ["broken"], wait=False).job
    with pytest.raises(loopd.JobFailedError):
        client.wait(old)
    one = client.retry(old)
    assert one.retry_of == old and one.job and one.job != old
    with pytest.raises(loopd.JobFailedError):
        client.wait(one.job)
    assert client.status(old).raw.get("retried_as") == one.job

    bulk = client.retry(state="failed", action="fail", limit=1000)
    # The old job was retried already: a bulk retry leaves it out.
    assert [o for o, _ in bulk.retried] == [one.job] and not bulk.refused and not bulk.more

    gone = client.discard(old)
    assert gone.discarded == [old]
    with pytest.raises(loopd.UnknownJobError):
        client.status(old)
