"""The command line for a new user (#26): a bare ``mockbroker`` shows its commands (exit 2), and the
start-up log counts partitions in good English."""

from __future__ import annotations

import signal
from typing import Any

from tests.mockbroker.test_cli import EXIT_DEADLINE_S, Served, run_cli, serve  # noqa: F401 (serve: a fixture)


def test_a_bare_mockbroker_prints_usage_and_exits_2() -> None:
    result = run_cli([])
    assert result.returncode == 2
    assert result.stderr.startswith("usage: mockbroker ")
    for command in ("serve", "conformance", "health", "ctl", "analyze", "assignor-lab"):
        assert f"    {command}" in result.stderr, command
    assert result.stderr.rstrip().endswith("mockbroker: error: the following arguments are required: COMMAND")


def test_the_start_up_log_says_1_partition(serve: Any) -> None:  # noqa: F811 (the imported fixture)
    served: Served = serve("--port", "0", "--topic", "one:1", "--topic", "three:3")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(EXIT_DEADLINE_S) == 0
    log = served.stderr()
    assert "one (1 partition)" in log and "three (3 partitions)" in log, log
