"""KIP-932 share groups with a real client: confluent-kafka's ShareConsumer (librdkafka's share
consumer, pinned confluent-kafka 2.16.1) against the mock cluster over loopback.

Shows what issue #20 asks: three consumers of one partition each receive records and never hold
the same record at once; acknowledgements move the share-partition start offset; a released or
lock-expired record comes back with its delivery count raised; a rejected record, or one delivered
up to group.share.delivery.count.limit, is archived and never delivered again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import AcknowledgeType, Message, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from tests.integration.support import BROKERS, BrokerThread, wait_until

GROUP = "sg"


@pytest.fixture
def share_broker(request: pytest.FixtureRequest) -> Iterator[BrokerThread]:
    settings: dict[str, Any] = getattr(request, "param", {})
    broker = BrokerThread(brokers=BROKERS, **settings)
    broker.start()
    try:
        # share.auto.offset.reset=earliest for the group (Kafka's default, latest, would skip what
        # was produced before the first fetch), set as users do against Kafka: the AdminClient's
        # IncrementalAlterConfigs on the GROUP config resource, before the group exists.
        set_group_config(broker, "share.auto.offset.reset", "earliest")
        yield broker
    finally:
        errors = broker.stop()
    assert not errors, errors


def set_group_config(broker: BrokerThread, name: str, value: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    [future] = admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, GROUP, incremental_configs=[entry])]).values()
    assert future.result(10) is None
    [described] = admin.describe_configs([ConfigResource(ResourceType.GROUP, GROUP)]).values()
    assert described.result(10)[name].value == value


def produce(broker: BrokerThread, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(10) == 0


def consumer(broker: BrokerThread, **extra: Any) -> ShareConsumer:
    c = ShareConsumer({
        "bootstrap.servers": broker.bootstrap_servers, "group.id": GROUP,
        "share.acknowledgement.mode": "explicit", **extra,
    })  # fmt: skip
    c.subscribe(["q"])
    return c


def poll(c: ShareConsumer, timeout: float = 0.5) -> list[Message]:
    got = c.poll(timeout)
    if got is None:
        return []
    messages: list[Message] = [got] if isinstance(got, Message) else list(got)
    for m in messages:
        assert m.error() is None, m.error()
    return messages


def polled_into(c: ShareConsumer, into: list[Message], count: int = 1) -> bool:
    """Poll once into ``into``; whether it holds ``count`` messages now (a wait_until predicate)."""
    into.extend(poll(c))
    return len(into) >= count


def start_offset(broker: BrokerThread) -> int:
    def read() -> int:
        names = {t.topic_id: t.name for t in broker.cluster.topics.values()}
        parts = broker.cluster.groups.share_partitions.snapshot(GROUP, names)
        return int(parts[0]["start_offset"]) if parts else -1

    return broker.call(read)


def test_three_consumers_share_one_partition_without_holding_a_record_twice(share_broker: BrokerThread) -> None:
    share_broker.create_topic("q", 1)
    produce(share_broker, "q", 30)
    consumers = [consumer(share_broker, **{"max.poll.records": 4}) for _ in range(3)]
    seen: dict[int, list[int]] = {i: [] for i in range(3)}
    try:
        deadline = time.monotonic() + 30
        while sum(map(len, seen.values())) < 30 and time.monotonic() < deadline:
            held: dict[int, set[int]] = {}
            batches: dict[int, list[Message]] = {}
            for i, c in enumerate(consumers):  # each polls while the others still hold theirs
                batches[i] = poll(c)
                held[i] = {int(m.offset() or 0) for m in batches[i]}
            for i in held:
                for j in held:
                    assert i == j or not held[i] & held[j], (held, "a record held by two consumers")
            for i, c in enumerate(consumers):
                for m in batches[i]:
                    assert m.delivery_count() == 1
                    c.acknowledge(m, AcknowledgeType.ACCEPT)
                    seen[i].append(int(m.offset() or 0))
                if batches[i]:
                    c.commit_sync()
        offsets = sorted(o for s in seen.values() for o in s)
        assert offsets == list(range(30))
        assert all(seen.values()), f"every consumer received records: {seen}"
        wait_until(lambda: start_offset(share_broker) == 30, "the acknowledgements move the start offset to 30")
    finally:
        for c in consumers:
            c.close()


def test_release_redelivers_reject_and_the_limit_archive(share_broker: BrokerThread) -> None:
    set_group_config(share_broker, "share.delivery.count.limit", "2")  # the group's, not the broker's 5
    share_broker.create_topic("q", 1)
    produce(share_broker, "q", 3)
    c = consumer(share_broker)
    try:
        first: list[Message] = []
        wait_until(lambda: polled_into(c, first, 3), "the three records")
        assert [(m.offset(), m.delivery_count()) for m in first] == [(0, 1), (1, 1), (2, 1)]
        c.acknowledge(first[0], AcknowledgeType.RELEASE)
        c.acknowledge(first[1], AcknowledgeType.REJECT)
        c.acknowledge(first[2], AcknowledgeType.ACCEPT)
        c.commit_sync()
        again: list[Message] = []
        wait_until(lambda: polled_into(c, again), "the released record again")
        assert [(m.offset(), m.delivery_count()) for m in again] == [(0, 2)]
        c.acknowledge(again[0], AcknowledgeType.RELEASE)  # at the limit: archived
        c.commit_sync()
        wait_until(lambda: start_offset(share_broker) == 3, "everything archived or acknowledged")
        assert poll(c, 1.0) == []
    finally:
        c.close()


@pytest.mark.parametrize("share_broker", [{"group_share_record_lock_duration_ms": 1000}], indirect=True)
def test_an_expired_lock_redelivers_to_another_consumer(share_broker: BrokerThread) -> None:
    share_broker.create_topic("q", 1)
    produce(share_broker, "q", 1)
    holder, other = consumer(share_broker), consumer(share_broker)
    try:
        held: list[Message] = []
        wait_until(lambda: polled_into(holder, held), "the record, first delivery")
        assert held[0].delivery_count() == 1
        redelivered: list[Message] = []
        wait_until(lambda: polled_into(other, redelivered), "the record after the lock expired")
        assert [(m.offset(), m.delivery_count()) for m in redelivered] == [(0, 2)]
        other.acknowledge(redelivered[0], AcknowledgeType.ACCEPT)
        other.commit_sync()
        wait_until(lambda: start_offset(share_broker) == 1, "the start offset past the accepted record")
    finally:
        other.close()
        holder.close()


def test_control_shows_in_flight_records_and_expires_a_lock_and_a_session(share_broker: BrokerThread) -> None:
    """#20's observation half with a real client: the snapshot shows the record Acquired by the
    holder; expire_acquisition_lock makes it Available at once (no waiting for the 30 s lock), so
    the other consumer gets it with its delivery count raised; expire_session fences the holder."""
    share_broker.create_topic("q", 1)
    produce(share_broker, "q", 1)
    holder, other = consumer(share_broker, **{"client.id": "holder"}), consumer(share_broker, **{"client.id": "other"})
    try:
        held: list[Message] = []
        wait_until(lambda: polled_into(holder, held), "the record, first delivery")
        group = share_broker.wait_for_group(GROUP, members=2, group_type="share")
        holder_id = group.member(client_id="holder").member_id
        part = group.partition("q", 0)
        assert part is not None and part.record(0) is not None
        record = part.record(0)
        assert (record.state, record.delivery_count, record.member_id) == ("Acquired", 1, holder_id)
        assert record.lock_deadline_ms is not None and record.lock_deadline_ms > share_broker.now_ms()
        assert share_broker.expire_acquisition_lock(GROUP, "q", 0, [0]) == [0]
        redelivered: list[Message] = []
        wait_until(lambda: polled_into(other, redelivered), "the record after its lock was expired")
        assert [(m.offset(), m.delivery_count()) for m in redelivered] == [(0, 2)]
        assert share_broker.expire_session(GROUP, client_id="holder") == holder_id
        events = [e.type for e in share_broker.events(group_id=GROUP)]
        assert "control.acquisition_lock_expired" in events and "share_group.member_fenced" in events
    finally:
        other.close()
        holder.close()


def test_a_share_consumer_follows_a_coordinator_move_under_latency(share_broker: BrokerThread) -> None:
    """The faults of cluster.control reach share groups as the other kinds: the group's coordinator
    moves (the old one answers ShareGroupHeartbeat with NOT_COORDINATOR, the client finds the new
    one) while every request takes 100 ms more; records produced afterwards still arrive once and
    their acknowledgements move the start offset."""
    share_broker.create_topic("q", 1)
    produce(share_broker, "q", 2)
    c = consumer(share_broker)
    try:
        first: list[Message] = []
        wait_until(lambda: polled_into(c, first, 2), "the first two records")
        for m in first:
            c.acknowledge(m, AcknowledgeType.ACCEPT)
        c.commit_sync()
        share_broker.enable_request_log(True)
        old = share_broker.coordinator(GROUP)
        new = next(b for b in share_broker.broker_ids if b != old)
        assert share_broker.move_coordinator(GROUP, new) == old
        share_broker.set_latency(100)
        produce(share_broker, "q", 2)
        later: list[Message] = []
        wait_until(lambda: polled_into(c, later, 2), "the two records produced after the move")
        assert [(m.offset(), m.delivery_count()) for m in later] == [(2, 1), (3, 1)]
        for m in later:
            c.acknowledge(m, AcknowledgeType.ACCEPT)
        c.commit_sync()
        wait_until(
            lambda: any(r.broker_id == new and not r.error_codes for r in share_broker.requests("ShareGroupHeartbeat")),
            "a heartbeat answered by the new coordinator",
        )
        wait_until(lambda: start_offset(share_broker) == 4, "the acknowledgements move the start offset to 4")
    finally:
        c.close()
