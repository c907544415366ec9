"""The event log as the internal topic __mockbroker_events (docs/events.md "As a topic"), read by
a real client (aiokafka) while a real consumer group forms and shrinks: one record per event, the
same JSON objects as the file sink, keyed by group, CreateTime on the cluster clock, readable from
any offset; listed in Metadata with is_internal, so the client leaves it out unless asked."""

from __future__ import annotations

import json
from pathlib import Path

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from mockbroker import MockCluster
from mockbroker.model import EVENTS_TOPIC
from tests.integration.support import BROKERS, DEADLINE_S, async_wait_until

TOPIC = "orders"


async def _read_events(bootstrap: str, offset: int, count: int) -> list[ConsumerRecord[bytes, bytes]]:
    """``count`` records of the events topic from ``offset`` on, by a consumer with no group."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(EVENTS_TOPIC, 0)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        out: list[ConsumerRecord[bytes, bytes]] = []
        while len(out) < count:
            batch = await consumer.getmany(tp, timeout_ms=int(DEADLINE_S * 1000))
            records = batch.get(tp, [])
            assert records, f"no events after offset {offset + len(out)} within {DEADLINE_S}s"
            out.extend(records)
        return out
    finally:
        await consumer.stop()


async def test_events_topic_matches_the_file_and_memory(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    cluster = MockCluster(brokers=BROKERS, events_topic=True, events_path=str(path))
    await cluster.start()
    try:
        await cluster.control.create_topic(TOPIC, partitions=3)
        members = [
            AIOKafkaConsumer(TOPIC, bootstrap_servers=cluster.bootstrap_servers, group_id="g", client_id=f"m{i}")
            for i in range(2)
        ]
        for m in members:
            await m.start()
        await async_wait_until(
            lambda: sum(len(m.assignment()) for m in members) == 3 and all(m.assignment() for m in members),
            "both members assigned",
        )
        await members[0].stop()  # leaves: the group rebalances onto the other
        await async_wait_until(lambda: len(members[1].assignment()) == 3, "the survivor owns all partitions")
        await members[1].stop()
        await async_wait_until(
            lambda: any(e.type == "group.transition" and e.details.get("to_state") == "Empty" for e in cluster.events.filter(group_id="g")),
            "the group empty",
        )

        expected = [e.to_json() for e in cluster.events]
        assert len(expected) > 10
        records = await _read_events(cluster.bootstrap_servers, 0, len(expected))
        assert [json.loads(r.value) for r in records] == expected
        file_lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [json.loads(r.value) for r in records] == file_lines
        assert [r.offset for r in records] == [e["seq"] - 1 for e in expected]
        assert [r.key for r in records] == [e["group_id"].encode() if "group_id" in e else None for e in expected]
        assert [r.timestamp for r in records] == [e["time_ms"] for e in expected]
        assert {r.timestamp_type for r in records} == {0}  # CreateTime

        # From any offset: the middle of the log on.
        middle = len(expected) // 2
        tail = await _read_events(cluster.bootstrap_servers, middle, len(expected) - middle)
        assert [json.loads(r.value)["seq"] for r in tail] == [e["seq"] for e in expected[middle:]]

        # Metadata lists it as internal: the client's topics() leaves it out unless asked.
        probe = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
        await probe.start()
        try:
            meta = await probe._client.fetch_all_metadata()
            assert EVENTS_TOPIC in meta.topics(exclude_internal_topics=False)
            assert EVENTS_TOPIC not in meta.topics()
            assert TOPIC in meta.topics()
        finally:
            await probe.stop()
    finally:
        await cluster.stop()
    assert not cluster.internal_errors


async def test_events_topic_is_off_by_default() -> None:
    cluster = MockCluster(brokers=1)
    await cluster.start()
    try:
        assert EVENTS_TOPIC not in await cluster.control.topics(include_internal=True)
    finally:
        await cluster.stop()
