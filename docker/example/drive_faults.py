"""The example test runner: drives faults over mockbroker's HTTP control API (standard library
only) while the example consumer consumes, and checks that the consumer came through them.

1. wait for /readyz; turn the request log on; produce 10 records over HTTP;
2. wait until the group is Stable with the consumer in it and has committed all 10;
3. push two NOT_COORDINATOR errors for OffsetCommit and expire the consumer's session;
4. produce 10 more; wait until the group is Stable again in a later generation, with a new
   member id for the consumer, and has committed all 20;
5. check the story in the logs: the member.expired event, the two refused commits.
Exit 0 when all holds, 1 (with the reason on stderr) otherwise.

Environment: ADMIN_URL, ADMIN_TOKEN (optional), TOPIC, GROUP_ID, CLIENT_ID, DEADLINE_S (120).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

ADMIN = os.environ.get("ADMIN_URL", "http://mockbroker:8092").rstrip("/")
TOKEN = os.environ.get("ADMIN_TOKEN")
TOPIC = os.environ.get("TOPIC", "orders")
GROUP = os.environ.get("GROUP_ID", "example-consumers")
CLIENT = os.environ.get("CLIENT_ID", "example-consumer")
DEADLINE = time.monotonic() + float(os.environ.get("DEADLINE_S", "120"))


class Failed(Exception):
    pass


def call(method: str, path: str, body: Any = None, **query: Any) -> Any:
    url = ADMIN + path + ("?" + urllib.parse.urlencode(query) if query else "")
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method)
    request.add_header("Content-Type", "application/json")
    if TOKEN:
        request.add_header("Authorization", f"Bearer {TOKEN}")
    try:
        with urllib.request.urlopen(request, timeout=max(1.0, DEADLINE - time.monotonic())) as response:
            data = response.read()
    except urllib.error.HTTPError as exc:
        raise Failed(f"{method} {path}: HTTP {exc.code}: {exc.read().decode(errors='replace')}") from None
    return json.loads(data) if data else None


def wait(what: str, check: Callable[[], Any]) -> Any:
    """Poll ``check`` until it returns something truthy; fail at the deadline naming ``what``."""
    last: Any = None
    while time.monotonic() < DEADLINE:
        try:
            last = check()
            if last:
                return last
        except (Failed, OSError) as exc:
            last = exc
        time.sleep(0.1)
    raise Failed(f"gave up waiting for {what}; last saw: {last}")


def produce(first: int, count: int) -> None:
    call("POST", f"/topics/{TOPIC}/records", {"records": [{"key": f"order-{i}", "value": f"order {i}"} for i in range(first, first + count)]})


def committed_everything() -> bool:
    ends = {str(p["index"]): p["log_end_offset"] for p in call("GET", f"/topics/{TOPIC}")["partitions"]}
    committed = call("GET", f"/groups/{GROUP}/offsets", topic=TOPIC)["offsets"].get(TOPIC, {})
    return all(committed.get(p, 0) == end for p, end in ends.items())


def stable_group(**query: Any) -> Any:
    return call("GET", f"/groups/{GROUP}/wait", state="Stable", members=1, timeout=5, **query)


def main() -> int:
    try:
        wait("the broker to be ready", lambda: call("GET", "/readyz")["ready"])
        call("PUT", "/requests/log", {"enabled": True})
        produce(0, 10)
        before = wait("the consumer to join", stable_group)
        member = before["members"][0]
        if member["client_id"] != CLIENT:
            raise Failed(f"unexpected member {member}")
        wait("the first 10 records to be committed", committed_everything)
        seq = call("GET", "/events", limit=1)["last_seq"]

        call("POST", "/faults/errors", {"api": "OffsetCommit", "errors": ["NOT_COORDINATOR", "NOT_COORDINATOR"]})
        expired = call("POST", f"/groups/{GROUP}/expire", {"client_id": CLIENT})["member_id"]
        produce(10, 10)
        after = wait("the consumer to rejoin", lambda: stable_group(generation_at_least=before["generation_id"] + 1))
        if after["members"][0]["member_id"] == expired:
            raise Failed(f"member {expired} is still in the group after its session expired")
        wait("all 20 records to be committed", committed_everything)

        events = call("GET", "/events", group_id=GROUP, since_seq=seq)["events"]
        if not any(e["type"] == "member.expired" and e.get("member_id") == expired for e in events):
            raise Failed(f"no member.expired event for {expired}: {[e['type'] for e in events]}")
        refused = call("GET", "/requests", api="OffsetCommit", error="NOT_COORDINATOR")["requests"]
        if len(refused) != 2:
            raise Failed(f"expected 2 OffsetCommits answered NOT_COORDINATOR, the request log has {len(refused)}")
        if call("GET", "/faults")["pending_errors"]:
            raise Failed("pushed errors left unused")
    except Failed as exc:
        print(f"drive_faults: FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps({"result": "passed", "expired_member": expired, "generations": [before["generation_id"], after["generation_id"]]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
