"""Fixtures of the sidecar tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mockbroker.test_cli import Served, clean_env
from tests.sidecar.support import Sidecar, start_serve, stop


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Any]:
    """``sidecar(*serve_args, env=...)`` starts `python -m mockbroker serve --port 0 --admin-port 0 ...`."""
    started: list[Served] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Sidecar:
        argv = [sys.executable, "-m", "mockbroker", "serve", "--port", "0", "--admin-port", "0", *args]
        served = start_serve(argv, clean_env(**(env or {})), tmp_path / f"serve-{len(started)}.log", tmp_path)
        started.append(served)
        return Sidecar(served)

    yield start
    for served in started:
        stop(served.proc)
        err = served.stderr()
        assert "broker bug" not in err and "Traceback" not in err, err
