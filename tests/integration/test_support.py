"""The integration helpers' own rules: a missing tool skips a test on a user's machine and fails
it under CI; the broker thread runs the cluster off the test's thread and reports broker bugs."""

from __future__ import annotations

import threading

import pytest

from tests.integration.support import BrokerThread, require_tool

MISSING = "mockbroker-no-such-tool"


def test_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=MISSING):
        require_tool(MISSING)


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_missing_tool_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, ci: str | None) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=MISSING):
        require_tool(MISSING)


def test_present_tool_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_tool("sh").endswith("/sh")


def test_broker_thread_owns_the_cluster() -> None:
    broker = BrokerThread(brokers=3)
    try:
        broker.start()
        leaders = broker.create_topic("t", 6)
        assert sorted(leaders) == list(range(6))
        assert set(leaders.values()) == set(broker.broker_ids) == {1, 2, 3}
        assert broker.call(threading.current_thread) is not threading.current_thread()
        assert broker.log_end_offsets("t") == dict.fromkeys(range(6), 0)
        assert len(broker.bootstrap_servers.split(",")) == 3
    finally:
        errors = broker.stop()
    assert errors == []
