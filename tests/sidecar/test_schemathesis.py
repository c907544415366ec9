"""The HTTP control API against its own OpenAPI document: schemathesis (from PyPI, its CLI) runs
every documented operation of a live `mockbroker serve --admin-port` with generated valid and
invalid input and checks every answer: no 5xx, status codes, content types and bodies as
documented, invalid input refused with 4xx, valid input accepted (tests/sidecar/schemathesis.toml
says which refusals of valid input are legitimate: 404, 409, 422), the bearer token enforced, an
undocumented method answered 405 with the right Allow header.

Bounded: at most 10 examples per operation with a fixed seed (about half a minute). Two
kinds of operations are left out because they block by design: the waits (GET .../wait, up to
their timeout) and GET /events/stream (an endless Server-Sent Events stream); tests/sidecar/
test_admin_http.py covers them. The broker runs on a manual clock so that POST /clock/advance
has something to advance, with three brokers so that broker down/up and leader moves have room.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sidecar.support import Sidecar

CONFIG = Path(__file__).with_name("schemathesis.toml")
TOKEN = "schemathesis-token"
RUN_DEADLINE_S = 300.0
EXCLUDED = r"/wait$|/events/stream$"  # they block by design (up to a timeout; forever)  # a guard against a hang, never a speed assertion


def test_the_live_server_conforms_to_its_own_openapi_document(sidecar: Any, tmp_path: Path) -> None:
    side: Sidecar = sidecar("--brokers", "3", "--topic", "orders:3", "--manual-clock", "--admin-token", TOKEN)
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is not installed (it is in the test extra: pip install -e '.[test]')"
    result = subprocess.run(
        [
            st, "--config-file", str(CONFIG), "run", f"{side.admin}/openapi.json",
            "--header", f"Authorization: Bearer {TOKEN}",
            "--checks", "all",
            "--max-examples", "10",
            "--seed", "20260101",
            "--exclude-path-regex", EXCLUDED,
            "--generation-database", "none",
            "--workers", "1",
            "--no-color",
            "--report", "junit", "--report-dir", str(tmp_path / "report"),
        ],
        capture_output=True, text=True, timeout=RUN_DEADLINE_S, cwd=tmp_path,
    )  # fmt: skip
    tail = "\n".join(result.stdout.splitlines()[-150:])
    assert result.returncode == 0, f"schemathesis found problems (exit {result.returncode}):\n{tail}\n{result.stderr[-2000:]}"
    # It really exercised the API: every operation but the blocking ones was selected and tested.
    doc = side.client(TOKEN).request("GET", "/openapi.json")
    operations = [(m, p) for p, methods in doc["paths"].items() for m in methods]
    expected = sum(1 for _, p in operations if not re.search(EXCLUDED, p))
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", result.stdout)
    assert selected, tail
    # Schemathesis sometimes leaves out the operation that serves the schema it loaded.
    count = int(selected[1])
    assert count in (expected, expected - 1) and int(selected[2]) in (len(operations), len(operations) - 1), tail
    for phase in ("Coverage", "Fuzzing"):  # each phase passed every selected operation
        assert re.search(rf"{phase} \(in [^)]*\)\s+✅ {count} passed", result.stdout), tail
    side.served.proc.terminate()
    assert side.served.proc.wait(30) == 0


def test_the_document_declares_the_token_only_when_one_is_set(sidecar: Any) -> None:
    open_side: Sidecar = sidecar()
    doc = open_side.client().request("GET", "/openapi.json")
    assert "security" not in doc and "securitySchemes" not in doc["components"]
    closed: Sidecar = sidecar("--admin-token", TOKEN)
    from mockbroker.ctl import CtlError

    with pytest.raises(CtlError, match="HTTP 401"):
        closed.client().request("GET", "/openapi.json")
    doc = closed.client(TOKEN).request("GET", "/openapi.json")
    assert doc["security"] == [{"bearer": []}]
    assert doc["paths"]["/healthz"]["get"]["security"] == []
    assert doc["paths"]["/readyz"]["get"]["security"] == []
    assert "401" in doc["paths"]["/topics"]["get"]["responses"]
