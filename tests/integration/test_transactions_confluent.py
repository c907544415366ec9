"""confluent-kafka (librdkafka) transactions against a 3-broker cluster: commit and abort seen by
read_committed and read_uncommitted consumers, offsets sent to the transaction, and a zombie
producer fenced by a newer one with the same transactional.id, and a manual clock expiring a
transaction (transaction.timeout.ms) so its producer is fenced."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from mockbroker.testing import KafkaCluster
from tests.integration.support import DEADLINE_S, BrokerThread


def transactional_producer(broker: BrokerThread, transactional_id: str, **extra: object) -> Producer:
    return Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": 60000,
            "linger.ms": 0,
            **extra,
        }
    )


def read_all(broker: BrokerThread, topic: str, partitions: int, isolation: str, expected: int) -> list[bytes]:
    """Every value of ``topic`` a consumer with ``isolation`` reads until it has ``expected`` of them
    and then reaches the end of every partition (so extra records would be seen)."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{isolation}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        values: list[bytes] = []
        at_end: set[int] = set()
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition() or 0)
                    if len(values) >= expected and len(at_end) == partitions:
                        return values
                    continue
                raise KafkaException(error)
            at_end.discard(msg.partition() or 0)
            value = msg.value()
            assert value is not None
            values.append(value)
        raise AssertionError(f"read {len(values)} of {expected} records with {isolation} before the deadline")
    finally:
        consumer.close()


@pytest.fixture
def topic(broker_thread: BrokerThread) -> Iterator[str]:
    broker_thread.create_topic("txn-out", 3)
    yield "txn-out"


def test_commit_and_abort_by_isolation_level(broker_thread: BrokerThread, topic: str) -> None:
    producer = transactional_producer(broker_thread, "txn-app-1")
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    for i in range(6):
        producer.produce(topic, value=f"committed-{i}".encode(), partition=i % 3)
    producer.commit_transaction(DEADLINE_S)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, value=f"aborted-{i}".encode(), partition=i % 3)
    producer.flush(DEADLINE_S)
    producer.abort_transaction(DEADLINE_S)
    producer.begin_transaction()
    producer.produce(topic, value=b"committed-last", partition=0)
    producer.commit_transaction(DEADLINE_S)

    committed = read_all(broker_thread, topic, 3, "read_committed", 7)
    assert sorted(committed) == sorted([f"committed-{i}".encode() for i in range(6)] + [b"committed-last"])
    everything = read_all(broker_thread, topic, 3, "read_uncommitted", 10)
    assert sorted(everything) == sorted(committed + [f"aborted-{i}".encode() for i in range(3)])

    def describe() -> tuple[str, int, list[tuple[str, int]]]:
        txn = broker_thread.cluster.transactions.describe("txn-app-1")
        assert txn is not None
        return txn.state.value, txn.producer_epoch, txn.sorted_partitions()

    assert broker_thread.call(describe) == ("CompleteCommit", 0, [])


def test_offsets_commit_with_the_transaction(broker_thread: BrokerThread, topic: str) -> None:
    broker_thread.create_topic("txn-in", 1)
    producer = transactional_producer(broker_thread, "txn-app-2")
    producer.init_transactions(DEADLINE_S)
    consumer = Consumer(
        {"bootstrap.servers": broker_thread.bootstrap_servers, "group.id": "txn-group", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition("txn-in", 0, 0)])
        metadata = consumer.consumer_group_metadata()
        producer.begin_transaction()
        producer.produce(topic, value=b"out", partition=0)
        producer.send_offsets_to_transaction([TopicPartition("txn-in", 0, 5)], metadata, DEADLINE_S)
        producer.abort_transaction(DEADLINE_S)
        assert consumer.committed([TopicPartition("txn-in", 0)], DEADLINE_S)[0].offset < 0
        producer.begin_transaction()
        producer.produce(topic, value=b"out", partition=0)
        producer.send_offsets_to_transaction([TopicPartition("txn-in", 0, 7)], metadata, DEADLINE_S)
        producer.commit_transaction(DEADLINE_S)
        assert consumer.committed([TopicPartition("txn-in", 0)], DEADLINE_S)[0].offset == 7
    finally:
        consumer.close()


def test_zombie_producer_is_fenced(broker_thread: BrokerThread, topic: str) -> None:
    zombie = transactional_producer(broker_thread, "txn-app-3")
    zombie.init_transactions(DEADLINE_S)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie", partition=0)
    zombie.flush(DEADLINE_S)

    successor = transactional_producer(broker_thread, "txn-app-3")
    successor.init_transactions(DEADLINE_S)  # aborts the zombie's transaction, bumps the epoch
    successor.begin_transaction()
    successor.produce(topic, value=b"successor", partition=0)
    successor.commit_transaction(DEADLINE_S)

    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(DEADLINE_S)
    error = raised.value.args[0]
    assert error.fatal(), error
    assert error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH), error
    assert read_all(broker_thread, topic, 3, "read_committed", 1) == [b"successor"]


@pytest.mark.kafka_cluster(manual_clock=True, topics={"expiring": 1})
def test_manual_clock_expires_a_transaction_and_fences_its_producer(kafka_cluster: KafkaCluster) -> None:
    producer = Producer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers, "transactional.id": "slow-app",
        "transaction.timeout.ms": 10000, "linger.ms": 0,
    })  # fmt: skip
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce("expiring", value=b"too slow", partition=0)
    producer.flush(DEADLINE_S)

    kafka_cluster.advance(10_001)  # the broker's clock only: transaction.timeout.ms has passed

    def state() -> str:
        txn = kafka_cluster.cluster.transactions.describe("slow-app")
        assert txn is not None
        return txn.state.value

    assert kafka_cluster.call(state) == "CompleteAbort"
    with pytest.raises(KafkaException) as raised:
        producer.commit_transaction(DEADLINE_S)
    error = raised.value.args[0]
    assert error.fatal() and error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH), error
    assert [e.type for e in kafka_cluster.events("txn.timed_out")] == ["txn.timed_out"]
    producer.purge()  # a fatal producer: nothing left for close() to wait for
