"""The benchmark scripts still start: `--help` for each, and librdkafka's mock serves (bench/ is not
run by CI, so a moved module would otherwise break it unnoticed, as the restructure once did)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_starts(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_rdkafka_mock_serves_until_stdin_closes() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / "rdkafka_mock.py"), "--brokers", "2"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()  # blocks until the mock serves or the process dies (EOF)
        assert line.startswith("MOCK READY bootstrap="), (line, proc.stderr.read() if proc.stderr else "")
        assert len(line.split("=", 1)[1].strip().split(",")) == 2
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
