"""Transactions with aiokafka and kafka-python against a 3-broker cluster: a committed and an
aborted transaction as read_committed and read_uncommitted consumers see them, offsets committed
through the transaction, and a zombie producer fenced by its successor."""

from __future__ import annotations

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AioTopicPartition
from aiokafka.errors import KafkaError as AioKafkaError
from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata
from kafka import TopicPartition as KpTopicPartition
from kafka.errors import KafkaError as KpKafkaError

from mockbroker import MockCluster
from tests.integration.support import DEADLINE_S, BrokerThread, async_wait_until, wait_until

# -- aiokafka ---------------------------------------------------------------------------------------


async def aio_read(cluster: MockCluster, topic: str, isolation: str, expected: int) -> list[bytes]:
    """``expected`` values of partition 0, then a last poll to show there are no more."""
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, isolation_level=isolation, group_id=None)
    await consumer.start()
    try:
        tp = AioTopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        values: list[bytes] = []

        async def got_all() -> bool:
            for records in (await consumer.getmany(timeout_ms=100)).values():
                values.extend(r.value or b"" for r in records)
            return len(values) >= expected

        for _ in range(int(DEADLINE_S * 10)):
            if await got_all():
                break
        for records in (await consumer.getmany(timeout_ms=300)).values():
            values.extend(r.value or b"" for r in records)
        return values
    finally:
        await consumer.stop()


async def test_aiokafka_commit_abort_and_offsets(cluster: MockCluster) -> None:
    cluster.create_topic("aio-txn", 1)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id="aio-app")
    await producer.start()
    try:
        async with producer.transaction():
            await producer.send_and_wait("aio-txn", b"committed-1", partition=0)
            await producer.send_offsets_to_transaction({AioTopicPartition("aio-txn", 0): 1}, "aio-group")
        await producer.begin_transaction()
        await producer.send_and_wait("aio-txn", b"aborted", partition=0)
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send_and_wait("aio-txn", b"committed-2", partition=0)
    finally:
        await producer.stop()
    assert await aio_read(cluster, "aio-txn", "read_committed", 2) == [b"committed-1", b"committed-2"]
    assert await aio_read(cluster, "aio-txn", "read_uncommitted", 3) == [b"committed-1", b"aborted", b"committed-2"]
    offsets = await cluster.control.committed_offsets("aio-group")
    assert offsets == {"aio-txn": {0: 1}}


async def test_aiokafka_zombie_is_fenced(cluster: MockCluster) -> None:
    cluster.create_topic("aio-zombie", 1)
    zombie = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id="aio-z")
    successor = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id="aio-z")
    await zombie.start()
    try:
        await zombie.begin_transaction()
        await zombie.send_and_wait("aio-zombie", b"zombie", partition=0)
        await successor.start()  # InitProducerId: aborts the zombie's transaction, bumps the epoch
        async with successor.transaction():
            await successor.send_and_wait("aio-zombie", b"successor", partition=0)
        with pytest.raises(AioKafkaError) as raised:
            await zombie.commit_transaction()
        assert type(raised.value).__name__ in ("ProducerFenced", "InvalidProducerEpoch"), raised.value
    finally:
        await successor.stop()
        await zombie.stop()
    await async_wait_until(
        lambda: cluster.transactions.describe("aio-z") is not None, "the transactional id to exist"
    )
    assert await aio_read(cluster, "aio-zombie", "read_committed", 1) == [b"successor"]


# -- kafka-python -----------------------------------------------------------------------------------


def kp_read(broker: BrokerThread, topic: str, isolation: str, expected: int) -> list[bytes]:
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers, isolation_level=isolation, auto_offset_reset="earliest",
        enable_auto_commit=False,
    )  # fmt: skip
    try:
        consumer.assign([KpTopicPartition(topic, 0)])
        values: list[bytes] = []

        def got_all() -> bool:
            for records in consumer.poll(100).values():
                values.extend(r.value for r in records)
            return len(values) >= expected

        wait_until(got_all, f"{expected} records with {isolation}")
        for records in consumer.poll(300).values():
            values.extend(r.value for r in records)
        return values
    finally:
        consumer.close()


def test_kafka_python_commit_abort_and_offsets(broker_thread: BrokerThread) -> None:
    broker_thread.create_topic("kp-txn", 1)
    producer = KafkaProducer(bootstrap_servers=broker_thread.bootstrap_servers, transactional_id="kp-app")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("kp-txn", b"committed-1", partition=0)
        producer.send_offsets_to_transaction({KpTopicPartition("kp-txn", 0): OffsetAndMetadata(1, "", -1)}, "kp-group")
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send("kp-txn", b"aborted", partition=0).get(DEADLINE_S)
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send("kp-txn", b"committed-2", partition=0)
        producer.commit_transaction()
    finally:
        producer.close()
    assert kp_read(broker_thread, "kp-txn", "read_committed", 2) == [b"committed-1", b"committed-2"]
    assert kp_read(broker_thread, "kp-txn", "read_uncommitted", 3) == [b"committed-1", b"aborted", b"committed-2"]
    assert broker_thread.committed_offsets("kp-group") == {"kp-txn": {0: 1}}


def test_kafka_python_zombie_is_fenced(broker_thread: BrokerThread) -> None:
    broker_thread.create_topic("kp-zombie", 1)
    zombie = KafkaProducer(bootstrap_servers=broker_thread.bootstrap_servers, transactional_id="kp-z")
    successor = KafkaProducer(bootstrap_servers=broker_thread.bootstrap_servers, transactional_id="kp-z")
    try:
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send("kp-zombie", b"zombie", partition=0).get(DEADLINE_S)
        successor.init_transactions()
        successor.begin_transaction()
        successor.send("kp-zombie", b"successor", partition=0)
        successor.commit_transaction()
        with pytest.raises(KpKafkaError) as raised:
            zombie.commit_transaction()
        assert type(raised.value).__name__ in ("ProducerFencedError", "InvalidProducerEpochError"), raised.value
    finally:
        successor.close()
        zombie.close(timeout=1)
    assert kp_read(broker_thread, "kp-zombie", "read_committed", 1) == [b"successor"]
