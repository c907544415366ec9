"""The data path end to end: raw produce/fetch on every partition leader of a 3-broker cluster,
and kafka-python producing and consuming through it."""

from __future__ import annotations

import asyncio
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from mockbroker import MockCluster
from mockbroker_protocol.records import decode_batches
from tests.mockbroker.datapath import (
    DEADLINE_S,
    batch,
    fetch,
    fetch_request,
    leader_client,
    list_offset,
    only_partition,
    produce,
    records_bytes,
)


async def test_every_leader_stores_and_serves_its_partitions(cluster: MockCluster) -> None:
    cluster.create_topic("spread", 3)
    assert {p.leader_id for p in cluster.topics["spread"].partitions} == {1, 2, 3}
    for partition in range(3):
        client = await leader_client(cluster, "spread", partition)
        for i in range(3):
            sent = batch(f"p{partition}-{i}".encode(), key=str(i).encode())
            p = await produce(client, cluster, "spread", sent, partition=partition, version=9 + i)
            assert (p.error_code, p.base_offset) == (0, i)
        resp = await fetch(client, fetch_request(cluster, [("spread", partition, 0)]), version=13)
        decoded = decode_batches(records_bytes(only_partition(resp)))
        assert [(r.offset, r.key, r.value) for _, records in decoded for r in records] == [
            (i, str(i).encode(), f"p{partition}-{i}".encode()) for i in range(3)
        ]
        assert (await list_offset(client, "spread", -1, partition=partition)).offset == 3
        await client.close()


def _produce_and_consume_with_kafka_python(bootstrap: str, topic: str, count: int) -> list[tuple[int, int, bytes, bytes]]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="smoke-producer", acks="all", linger_ms=5)
    try:
        futures = [producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode()) for i in range(count)]
        producer.flush(timeout=DEADLINE_S)
        for f in futures:
            f.get(timeout=DEADLINE_S)
    finally:
        producer.close(timeout=DEADLINE_S)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="smoke-consumer", group_id=None, enable_auto_commit=False)
    try:
        partitions = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        seen: list[tuple[int, int, bytes, bytes]] = []
        deadline = time.monotonic() + DEADLINE_S
        while len(seen) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200).values():
                seen.extend((r.partition, r.offset, r.key, r.value) for r in records)
        return seen
    finally:
        consumer.close()


async def test_kafka_python_produces_and_consumes_100_messages(cluster: MockCluster) -> None:
    cluster.create_topic("smoke", 3)
    count = 100
    seen = await asyncio.to_thread(_produce_and_consume_with_kafka_python, cluster.bootstrap_servers, "smoke", count)
    assert sorted((key, value) for _, _, key, value in seen) == sorted(
        (f"k{i}".encode(), f"v{i}".encode()) for i in range(count)
    )
    # Keyed records spread over the partitions, and each partition's offsets run from 0 without gaps.
    by_partition: dict[int, list[int]] = {}
    for partition, offset, _, _ in seen:
        by_partition.setdefault(partition, []).append(offset)
    assert len(by_partition) > 1
    for offsets in by_partition.values():
        assert offsets == list(range(len(offsets)))
    assert sum(cluster.topics["smoke"].partitions[p].log.log_end_offset for p in range(3)) == count
