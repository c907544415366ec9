"""The HTTP control API against its own OpenAPI document: schemathesis (from PyPI, its CLI) runs
every documented operation of a live `mockbroker serve --admin-port` with generated valid and
invalid input and checks every answer: no 5xx, status codes, content types and bodies as
documented, invalid input refused with 4xx, valid input accepted (tests/sidecar/schemathesis.toml
says which refusals of valid input are legitimate: 404, 409, 422), the bearer token enforced, an
undocumented method answered 405 with the right Allow header.

Bounded: at most 10 examples per operation with a fixed seed (about half a minute). Two
kinds of operations are left out because they block by design: the waits (GET .../wait, up to
their timeout) and GET /events/stream (an endless Server-Sent Events stream); tests/mockbroker/
http/test_app.py covers them. The broker runs on a manual clock so that POST /clock/advance
has something to advance, with three brokers so that broker down/up and leader moves have room.

Two groups live through the run, with real confluent-kafka members (their own processes): a
KIP-848 consumer group (group.protocol=consumer) and a classic group. schemathesis.toml binds half
of the generated group ids to them, so describing, listing, expiring and rebalancing groups of
both kinds is checked against the document while the members react (the HAR report shows it was).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.integration.groups_support import Members
from tests.integration.support import DEADLINE_S, wait_for
from tests.sidecar.support import Sidecar

CONFIG = Path(__file__).with_name("schemathesis.toml")
TOKEN = "schemathesis-token"
RUN_DEADLINE_S = 300.0
EXCLUDED = r"/wait$|/events/stream$"  # they block by design (up to a timeout; forever)  # a guard against a hang, never a speed assertion


def test_the_live_server_conforms_to_its_own_openapi_document(sidecar: Any, tmp_path: Path) -> None:
    side: Sidecar = sidecar("--brokers", "3", "--topic", "orders:3", "--manual-clock", "--admin-token", TOKEN)
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is not installed (it is in the test extra: pip install -e '.[test]')"
    consumer_group, classic_group = tomllib.loads(CONFIG.read_text())["dictionaries"]["live-groups"]["values"]
    bootstrap = SimpleNamespace(bootstrap_servers=side.bootstrap)
    with Members(bootstrap, consumer_group, "orders") as consumers, Members(bootstrap, classic_group, "orders") as classics:  # type: ignore[arg-type]
        started = [consumers.start("confluent", f"kip848-{i}", group_protocol="consumer") for i in range(2)]
        started.append(classics.start("confluent", "classic-0"))
        api = side.client(TOKEN)
        api.timeout = DEADLINE_S + 30
        for group, kind in ((consumer_group, "consumer"), (classic_group, "classic")):
            ready = api.request("GET", f"/groups/{group}/wait", query={"type": kind, "timeout": int(DEADLINE_S)})
            assert ready["state"] == "Stable", ready
        # Committed offsets keep a group that the run empties (POST /clock/advance expires every
        # session) from being removed by the cleanup cycle, so there is a group to describe.
        api.request("POST", "/topics/orders/records", {"records": [{"value": f"v{p}", "partition": p} for p in range(3)]})
        wait_for(lambda: len(started[0].records()) + len(started[1].records()) == 3 and len(started[2].records()) == 3,
                 "every record consumed in both groups", lambda: consumers.explain() + classics.explain())  # fmt: skip
        for member in started:
            assert member.commit()["event"] == "committed", member.explain()
        result = _run(st, side, tmp_path)
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
    # And it described the live groups, one of each kind, and got them (validated by its checks).
    described = _described_groups(tmp_path / "report")
    history = [
        (e["seq"], e["type"], e.get("reason", ""))
        for group in (consumer_group, classic_group)
        for e in side.client(TOKEN).request("GET", "/events", query={"group_id": group})["events"]
    ]  # fmt: skip
    (tmp_path / "history.txt").write_text("\n".join(map(str, sorted(history))))
    assert {consumer_group: "consumer", classic_group: "classic"}.items() <= described.items(), (described, "\n".join(map(str, sorted(history))))
    side.served.proc.terminate()
    assert side.served.proc.wait(30) == 0


def _run(st: str, side: Sidecar, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
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
            "--report", "junit,har", "--report-dir", str(tmp_path / "report"),
        ],
        capture_output=True, text=True, timeout=RUN_DEADLINE_S, cwd=tmp_path,
    )  # fmt: skip


def _described_groups(report: Path) -> dict[str, str]:
    """{group id: type} of every GET /groups/{id} that schemathesis got a 200 for (its HAR report)."""
    found: dict[str, str] = {}
    for har in report.glob("har-*.json"):
        for entry in json.loads(har.read_text())["log"]["entries"]:
            request, response = entry["request"], entry["response"]
            match = re.search(r"/groups/([^/?]+)(\?|$)", request["url"])
            if request["method"] == "GET" and match and response["status"] == 200:
                found[match[1]] = json.loads(response["content"]["text"])["type"]
    return found


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
