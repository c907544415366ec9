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


def test_events_topic_from_flag_and_environment() -> None:
    assert resolve(Flags(events_topic="true"), {}).cluster.events_topic is True
    assert resolve(Flags(), {"MOCKBROKER_EVENTS_TOPIC": "true"}).cluster.events_topic is True
    assert resolve(Flags(), {}).cluster.events_topic is False


def test_events_topic_partitions_by_group_and_retention() -> None:
    from mockbroker.model import EVENTS_TOPIC
    from mockbroker.state import ClusterState
    from mockbroker_protocol.hashing import murmur2, to_positive
    from mockbroker_protocol.records import decode_batch

    state = ClusterState(events_topic=True, events_topic_partitions=3, events_topic_retention_bytes=2000)
    topic = state.topics[EVENTS_TOPIC]
    assert topic.is_internal and topic.configs["retention.bytes"] == "2000"
    for i in range(60):
        state.events.record("group.created", group_id=f"g{i % 4}", generation_id=0, now_ms=1000 + i, state="Empty")
    state.events.record("control.broker_down", broker_id=1, now_ms=2000, leaders_moved={})
    logs = [p.log for p in topic.partitions]
    # Unkeyed (no group, no transactional id): partition 0.
    assert sum(log.log_end_offset for log in logs) == 61
    for index, log in enumerate(logs):
        assert log.size_bytes <= 2000  # retention.bytes enforced on append
        for stored in log.batches:
            _, records = decode_batch(bytes(stored.data))
            for r in records:
                event = json.loads(r.value or b"")
                assert r.timestamp == event["time_ms"]
                if r.key is None:
                    assert index == 0 and event["type"] == "control.broker_down"
                else:
                    assert r.key.decode() == event["group_id"]
                    assert index == to_positive(murmur2(r.key)) % 3
    assert any(log.log_start_offset > 0 for log in logs)
