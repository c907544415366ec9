"""The event log as JSON Lines: --event-log / MOCKBROKER_EVENT_LOG reach the cluster, and every
recorded event is one versioned JSON object per line."""

from __future__ import annotations

import json
from pathlib import Path

from mockbroker import MockCluster
from mockbroker.config.settings import Flags, resolve
from mockbroker.events import SCHEMA_VERSION


def test_event_log_path_from_flag_and_environment() -> None:
    assert resolve(Flags(), {}).cluster.events_path is None
    assert resolve(Flags(), {"MOCKBROKER_EVENT_LOG": "/tmp/e.jsonl"}).cluster.events_path == "/tmp/e.jsonl"
    flagged = resolve(Flags(events_path="/tmp/f.jsonl"), {"MOCKBROKER_EVENT_LOG": "/tmp/e.jsonl"})
    assert flagged.cluster.events_path == "/tmp/f.jsonl"
    assert flagged.sources["events_path"] == "--event-log"


async def test_events_are_appended_as_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    cluster = MockCluster(events_path=str(path))
    await cluster.start()
    try:
        cluster.events.record("test.one", group_id="g", reason="first")
        cluster.events.record("test.two", group_id="g", generation_id=3, detail=[1, 2])
    finally:
        await cluster.stop()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    tail = [e for e in lines if e["type"].startswith("test.")]
    assert [e["type"] for e in tail] == ["test.one", "test.two"]
    assert all(e["v"] == SCHEMA_VERSION for e in lines)
    assert tail[1]["generation_id"] == 3 and tail[1]["details"] == {"detail": [1, 2]}
    assert tail[0]["seq"] < tail[1]["seq"]
