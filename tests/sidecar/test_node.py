"""Another language drives the sidecar: a kafkajs consumer (node) while plain `fetch` calls from
the same node process push a fault and expire the member over the HTTP control API
(tests/integration/clients/node/kafkajs-http-faults.js), and kafkajs shows the effect: it rejoins
with the same member id after the pushed REBALANCE_IN_PROGRESS, with a new one after its
session was expired, and consumes every record produced around both.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.integration.clients.driver import NODE_DIR, SUBPROCESS_TIMEOUT_S, kafkajs_script, missing
from tests.integration.support import DEADLINE_S
from tests.sidecar.support import Sidecar

TOKEN = "node-token"


def test_kafkajs_sees_the_faults_that_fetch_calls_push_over_http(sidecar: Any) -> None:
    node, _ = kafkajs_script()  # node and kafkajs (npm ci from the lockfile when needed)
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 18:
        missing(f"node 18+ (for the global fetch; this is {version})", "Node.js 18 or later")
    side: Sidecar = sidecar("--topic", "events:2", "--admin-token", TOKEN)
    result = subprocess.run(
        [
            node, str(NODE_DIR / "kafkajs-http-faults.js"),
            "--brokers", side.bootstrap, "--admin", side.admin, "--token", TOKEN,
            "--topic", "events", "--group", "node-group", "--timeout-ms", str(int(DEADLINE_S * 1000)),
        ],
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
    )  # fmt: skip
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    tail = "\n".join(result.stderr.splitlines()[-30:])
    assert result.returncode == 0, f"kafkajs-http-faults exited {result.returncode}:\n{result.stdout[-3000:]}\n{tail}"
    assert lines[-1] == {"event": "done"}

    joins = [e["member_id"] for e in lines if e["event"] == "joined"]
    calls = {e["call"]: e for e in lines if e["event"] == "http"}
    assert len(joins) >= 3, joins
    assert joins[1] == joins[0], "after REBALANCE_IN_PROGRESS kafkajs rejoins as the same member"
    expired = calls["POST /groups/node-group/expire"]["body"]["member_id"]
    assert expired == joins[1] and joins[2] != expired, "after its session expired kafkajs rejoins as a new member"
    assert calls["POST /faults/errors"]["body"]["pending_errors"] == {"Heartbeat": ["REBALANCE_IN_PROGRESS"]}
    consumed = {(e["partition"], e["offset"]) for e in lines if e["event"] == "consumed"}
    assert len(consumed) == 15

    # The broker's side of the story, over the same API.
    http = side.client(TOKEN)
    assert http.request("GET", "/faults")["pending_errors"] == {}  # the pushed error was used
    events = http.request("GET", "/events", query={"group_id": "node-group"})["events"]
    assert any(e["type"] == "member.expired" and e.get("member_id") == expired for e in events)
    rebalances = [e for e in events if e["type"] == "group.transition" and e["details"]["to_state"] == "PreparingRebalance"]
    assert len(rebalances) >= 3  # the first join, the rejoin after the error, the expiry
