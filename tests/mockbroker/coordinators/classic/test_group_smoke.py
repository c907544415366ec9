"""Smoke test with a real client: three kafka-python KafkaConsumers in one group on a 12-partition
topic end up with disjoint assignments that cover all 12 partitions, and leave cleanly.

The consumers run in threads (asyncio.to_thread) while the broker runs on the test's loop; every
wait is bounded by a deadline (poll timeouts, Event.wait with a timeout), never a sleep.

Two kafka-python 3.0.12 habits are worked around, both client-side (the broker's answers are right,
the event log shows it): a leader without topic metadata assigns nothing and rejoins once metadata
arrives, and if a poll() times out while that rejoin is in flight, the leader's own assignment from
the finished SyncGroup is never applied (join_group_async re-checks need_rejoin() before reading
the finished join task). So each consumer loads the topic's metadata before it subscribes, and
polls with a timeout longer than a rebalance here takes.
"""

from __future__ import annotations

import asyncio
import threading
import time

from kafka import KafkaConsumer

from mockbroker import MockCluster

TOPIC, GROUP, PARTITIONS, CONSUMERS = "smoke", "smoke-group", 12, 3
DEADLINE_S = 60.0


async def test_three_kafka_python_consumers_share_twelve_partitions(cluster: MockCluster) -> None:
    cluster.create_topic(TOPIC, PARTITIONS)
    assignments: dict[int, frozenset[int]] = {}
    lock = threading.Lock()
    converged = threading.Event()
    release = threading.Event()
    failures: list[BaseException] = []

    def is_converged() -> bool:
        with lock:
            if len(assignments) != CONSUMERS or not all(assignments.values()):
                return False
            union = frozenset().union(*assignments.values())
            return union == frozenset(range(PARTITIONS)) and sum(len(a) for a in assignments.values()) == PARTITIONS

    def consume(i: int) -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=GROUP,
            client_id=f"smoke-{i}",
            heartbeat_interval_ms=100,
            session_timeout_ms=10_000,
        )
        try:
            deadline = time.monotonic() + DEADLINE_S
            while not consumer.partitions_for_topic(TOPIC) and time.monotonic() < deadline:
                consumer.poll(timeout_ms=100)
            consumer.subscribe([TOPIC])
            while time.monotonic() < deadline and not release.is_set():
                consumer.poll(timeout_ms=1_000)
                with lock:
                    assignments[i] = frozenset(tp.partition for tp in consumer.assignment())
                if is_converged():
                    converged.set()
        except BaseException as exc:  # surfaced by the test below
            failures.append(exc)
        finally:
            consumer.close()

    threads = [asyncio.create_task(asyncio.to_thread(consume, i)) for i in range(CONSUMERS)]
    try:
        assert await asyncio.to_thread(converged.wait, DEADLINE_S), f"no convergence: {assignments}"
        group = cluster.groups.groups[GROUP]
        assert group.state.value == "Stable" and len(group.members) == CONSUMERS
        assert {m.client_id for m in group.members.values()} == {f"smoke-{i}" for i in range(CONSUMERS)}
    finally:
        release.set()
        await asyncio.gather(*threads)
    assert failures == []
    with lock:
        parts = sorted(p for a in assignments.values() for p in a)
    assert parts == list(range(PARTITIONS))
    # Closing consumers leave the group (LeaveGroup): it ends Empty.
    assert cluster.groups.groups[GROUP].state.value == "Empty"
    assert cluster.events.filter("member.left", GROUP)
