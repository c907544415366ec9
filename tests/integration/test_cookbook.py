"""docs/cookbook.md, recipe by recipe: each is a test with the real client it names, and each
fault is seen by that client (its error, its retry or its callback), not only by the broker.

Keep docs/cookbook.md and this file in step: the cookbook quotes these tests.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from confluent_kafka import Consumer, KafkaError, KafkaException
from kafka import ConsumerRebalanceListener as KafkaPythonListener
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from mockbroker.testing import KafkaCluster
from tests.integration.support import DEADLINE_S, wait_for

FAST_GROUP = {"group_initial_rebalance_delay_ms": 0, "group_min_session_timeout_ms": 1000}


# -- 1. My consumer survives a rebalance (kafka-python) --------------------------------------------


class Recorder(KafkaPythonListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append(("revoked", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append(("assigned", sorted(tp.partition for tp in assigned)))


@pytest.mark.kafka_cluster(topics={"billing": 3}, **FAST_GROUP)
def test_consumer_survives_a_rebalance(kafka_cluster: KafkaCluster) -> None:
    listener = Recorder()
    consumer = KafkaConsumer(
        bootstrap_servers=kafka_cluster.bootstrap_servers, group_id="billing-app", client_id="billing-1",
        auto_offset_reset="earliest", heartbeat_interval_ms=100,
    )  # fmt: skip
    # Metadata first: kafka-python's leader assigns nothing for a topic it has no metadata for yet
    # (and occasionally stalls after the rejoin that follows, a client quirk not under test here).
    consumer.partitions_for_topic("billing")
    consumer.subscribe(["billing"], listener=listener)
    try:
        kafka_cluster.produce("billing", [b"before"], partition=0)
        got: list[bytes] = []

        def consume(until: Any) -> Any:
            for records in consumer.poll(100).values():
                got.extend(r.value for r in records)
            return until()

        wait_for(lambda: consume(lambda: b"before" in got), "the first record")
        generation = kafka_cluster.wait_for_group("billing-app", members=1).generation_id
        mark = len(listener.calls)

        kafka_cluster.force_rebalance("billing-app")  # as a new member or a metadata change would

        # The client is told by its heartbeat, revokes, rejoins and is assigned again...
        wait_for(lambda: consume(lambda: listener.calls[mark:][-2:] == [("revoked", [0, 1, 2]), ("assigned", [0, 1, 2])]),
                 "the listener to see the partitions revoked and assigned again")
        kafka_cluster.wait_for_group("billing-app", members=1, generation_at_least=generation + 1)
        # ...and goes on consuming.
        kafka_cluster.produce("billing", [b"after"], partition=1)
        wait_for(lambda: consume(lambda: b"after" in got), "a record produced after the rebalance")
    finally:
        consumer.close()


# -- 2. My consumer retries on COORDINATOR_NOT_AVAILABLE (aiokafka) ---------------------------------


@pytest.mark.kafka_cluster(topics={"audit": 1}, **FAST_GROUP)
async def test_consumer_retries_coordinator_not_available(kafka_cluster: KafkaCluster) -> None:
    # The next two FindCoordinator requests fail, whoever sends them.
    await kafka_cluster.aio.push_errors("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_NOT_AVAILABLE")
    consumer = AIOKafkaConsumer(
        "audit", bootstrap_servers=kafka_cluster.bootstrap_servers, group_id="auditors", client_id="auditor",
        retry_backoff_ms=20,
    )  # fmt: skip
    await consumer.start()
    try:
        await kafka_cluster.aio.wait_for_group("auditors", members=1, timeout=DEADLINE_S)
    finally:
        await consumer.stop()
    lookups = await kafka_cluster.aio.requests("FindCoordinator", client_id="auditor")
    assert [r.errors for r in lookups[:3]] == [("COORDINATOR_NOT_AVAILABLE",), ("COORDINATOR_NOT_AVAILABLE",), ()]


# -- 3. My consumer handles REBALANCE_IN_PROGRESS on commit (confluent-kafka) -----------------------


@pytest.mark.kafka_cluster(topics={"ledger": 1}, **FAST_GROUP)
def test_consumer_handles_rebalance_in_progress_on_commit(kafka_cluster: KafkaCluster) -> None:
    kafka_cluster.produce("ledger", [b"entry-1"])
    consumer = Consumer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers, "group.id": "ledger-app",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })  # fmt: skip
    consumer.subscribe(["ledger"])
    try:
        message = wait_for(lambda: _message(consumer), "a record")
        kafka_cluster.push_errors("OffsetCommit", "REBALANCE_IN_PROGRESS")

        with pytest.raises(KafkaException) as failed:
            consumer.commit(message=message, asynchronous=False)
        assert failed.value.args[0].code() == KafkaError.REBALANCE_IN_PROGRESS

        # The application's answer: keep polling (the client rejoins) and commit again.
        def commit_again() -> bool:
            consumer.poll(0.1)
            try:
                consumer.commit(message=message, asynchronous=False)
            except KafkaException:
                return False
            return True

        wait_for(commit_again, "a commit that succeeds")
        assert kafka_cluster.committed_offsets("ledger-app") == {"ledger": {0: 1}}
    finally:
        consumer.close()


def _message(consumer: Consumer) -> Any:
    message = consumer.poll(0.1)
    return message if message is not None and message.error() is None else None


# -- 4. My consumer keeps its assignment over a restart with static membership (confluent-kafka) ----


def _static_consumer(bootstrap: str, instance: str, assigned: list[list[int]], revoked: list[list[int]]) -> Consumer:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "static-app", "group.instance.id": instance,
        "session.timeout.ms": 10000, "heartbeat.interval.ms": 200, "partition.assignment.strategy": "range",
    })  # fmt: skip
    consumer.subscribe(
        ["inventory"],
        on_assign=lambda c, ps: assigned.append(sorted(p.partition for p in ps)),
        on_revoke=lambda c, ps: revoked.append(sorted(p.partition for p in ps)),
    )
    return consumer


@pytest.mark.kafka_cluster(topics={"inventory": 4}, **FAST_GROUP)
def test_static_member_keeps_its_assignment_over_a_restart(kafka_cluster: KafkaCluster) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    b_assigned: list[list[int]] = []
    b_revoked: list[list[int]] = []
    a_assigned: list[list[int]] = []
    b = _static_consumer(bootstrap, "app-b", b_assigned, b_revoked)
    a = _static_consumer(bootstrap, "app-a", a_assigned, [])
    restarted: Consumer | None = None
    try:
        def both_polled() -> Any:
            a.poll(0.05)
            b.poll(0.05)
            view = kafka_cluster.describe_group("static-app")
            if view is None or view.state != "Stable" or len(view.members) != 2 or not (a_assigned and b_assigned):
                return None
            # each client's own callback reports what the broker stored for it
            stored = {m.group_instance_id: list(m.partitions("inventory")) for m in view.members}
            return view if stored == {"app-a": a_assigned[-1], "app-b": b_assigned[-1]} else None

        before = wait_for(both_polled, "two static members, Stable, each told its assignment")
        a_before = before.member(instance_id="app-a")
        b_revocations = len(b_revoked)
        a.close()  # a static member leaves no LeaveGroup behind (KIP-345): no rebalance
        a_again: list[list[int]] = []
        restarted = _static_consumer(bootstrap, "app-a", a_again, [])

        def restarted_assigned() -> bool:
            restarted.poll(0.05)
            b.poll(0.05)
            return bool(a_again)

        wait_for(restarted_assigned, "the restarted member's assignment")
        # The client is handed exactly what it had...
        assert a_again[-1] == list(a_before.partitions("inventory")) == a_assigned[-1]
        after = kafka_cluster.describe_group("static-app")
        # ...without a rebalance: same generation, the other member never revoked anything.
        assert after.generation_id == before.generation_id and after.state == "Stable"
        assert after.member(instance_id="app-a").member_id != a_before.member_id
        assert b_revoked[b_revocations:] == []
    finally:
        b.close()
        if restarted is not None:
            restarted.close()


# -- 5. My consumer continues after the partition leader moves mid-stream (kafka-python) -----------


@pytest.mark.kafka_cluster(brokers=3, topics={"prices": {"partitions": 1, "replication_factor": 3}})
def test_consumer_continues_after_the_leader_moves(kafka_cluster: KafkaCluster) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="prices-producer", acks="all", retries=10)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="prices-consumer", auto_offset_reset="earliest")
    consumer.assign([TopicPartition("prices", 0)])
    got: list[bytes] = []

    def send(values: range) -> None:
        for f in [producer.send("prices", str(i).encode()) for i in values]:
            f.get(DEADLINE_S)

    def consumed(n: int) -> bool:
        for records in consumer.poll(100).values():
            got.extend(r.value for r in records)
        return len(got) >= n

    try:
        send(range(20))
        wait_for(lambda: consumed(20), "the first 20 records")
        since = kafka_cluster.requests()[-1].seq
        old_leader = kafka_cluster.topic("prices").leaders()[0]

        epoch = kafka_cluster.move_leader("prices", 0)  # to the next in-sync replica

        send(range(20, 40))  # the producer is turned away by the old leader, refreshes, retries
        wait_for(lambda: consumed(40), "all 40 records")
        assert got == [str(i).encode() for i in range(40)]
        new_leader = kafka_cluster.topic("prices").leaders()[0]
        assert new_leader != old_leader and epoch == 1
        refused = kafka_cluster.requests(broker=old_leader, since_seq=since, error="NOT_LEADER_OR_FOLLOWER")
        assert {r.client_id for r in refused} >= {"prices-producer"}
    finally:
        producer.close(DEADLINE_S)
        consumer.close()


# -- 6. My consumer sees its session expire (aiokafka, manual clock) --------------------------------


class Lost(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append("revoked")

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append("assigned")


@pytest.mark.kafka_cluster(manual_clock=True, topics={"sessions": 1})
async def test_consumer_sees_its_session_expire(kafka_cluster: KafkaCluster) -> None:
    listener = Lost()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka_cluster.bootstrap_servers, group_id="sessions-app", client_id="sessions-1",
        session_timeout_ms=10_000, heartbeat_interval_ms=100,
    )  # fmt: skip
    consumer.subscribe(["sessions"], listener=listener)
    await consumer.start()
    try:
        joined = await kafka_cluster.aio.wait_for_group("sessions-app", members=1, timeout=DEADLINE_S)
        since = (await kafka_cluster.aio.requests())[-1].seq

        # Ten seconds pass on the broker's clock, none on the client's: its session is over.
        await kafka_cluster.aio.advance(10_000)

        # The client's next heartbeat is refused; it rejoins as a new member...
        refused = await kafka_cluster.aio.wait_for_request(
            "Heartbeat", error="UNKNOWN_MEMBER_ID", client_id="sessions-1", since_seq=since, timeout=DEADLINE_S
        )
        assert refused.broker_id == await kafka_cluster.aio.coordinator("sessions-app")
        rejoined = await kafka_cluster.aio.wait_for_group(
            "sessions-app", members=1, generation_at_least=joined.generation_id + 2, timeout=DEADLINE_S
        )
        assert rejoined.members[0].member_id != joined.members[0].member_id
        # ...and its rebalance listener saw the partitions go and come back.
        deadline = time.monotonic() + DEADLINE_S
        while listener.calls[-2:] != ["revoked", "assigned"] and time.monotonic() < deadline:
            await consumer.getmany(timeout_ms=10)
        assert listener.calls.count("assigned") >= 2 and "revoked" in listener.calls
        expired = await kafka_cluster.aio.events("member.expired", "sessions-app")
        assert [e.member_id for e in expired] == [joined.members[0].member_id]
    finally:
        await consumer.stop()


# -- 7. Three brokers, one down: producers and consumers carry on; up again restores it -------------


@pytest.mark.kafka_cluster(brokers=3, topics={"orders": {"partitions": 6, "replication_factor": 3}}, **FAST_GROUP)
def test_producers_and_consumers_carry_on_when_a_broker_goes_down(kafka_cluster: KafkaCluster) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    # A group whose coordinator is broker 2, the one going down, so the coordinator moves too.
    group = next(g for g in (f"order-app-{i}" for i in range(200)) if kafka_cluster.coordinator(g) == 2)
    leaders_before = kafka_cluster.topic("orders").leaders()
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="orders-producer", acks="all", retries=20)
    consumer = KafkaConsumer(
        "orders", bootstrap_servers=bootstrap, group_id=group, client_id="orders-consumer",
        auto_offset_reset="earliest", heartbeat_interval_ms=100,
    )  # fmt: skip
    consumer.partitions_for_topic("orders")  # metadata before the first join (see recipe 1)
    got: set[bytes] = set()

    def send(label: str) -> set[bytes]:
        values = {f"{label}-{i}".encode() for i in range(30)}
        for f in [producer.send("orders", v, partition=i % 6) for i, v in enumerate(sorted(values))]:
            f.get(DEADLINE_S)
        return values

    def consumed(wanted: set[bytes]) -> bool:
        for records in consumer.poll(100).values():
            got.update(r.value for r in records)
        return wanted <= got

    try:
        first = send("first")
        wait_for(lambda: consumed(first), "records before the broker goes down")

        moved = kafka_cluster.broker_down(2)
        assert moved and 2 not in kafka_cluster.topic("orders").leaders().values()
        assert kafka_cluster.coordinator(group) != 2

        second = send("second")
        wait_for(lambda: consumed(second), "records produced while broker 2 is down")
        consumer.commit()
        assert sum(kafka_cluster.committed_offsets(group)["orders"].values()) == 60

        kafka_cluster.broker_up(2)
        assert kafka_cluster.topic("orders").leaders() == leaders_before  # preferred leaders are back
        assert kafka_cluster.coordinator(group) == 2

        third = send("third")
        wait_for(lambda: consumed(third), "records produced after broker 2 is back")
        consumer.commit()
        assert sum(kafka_cluster.wait_for_commit(group, "orders", offset=15).values()) == 90
    finally:
        producer.close(DEADLINE_S)
        consumer.close()
