"""confluent-kafka (librdkafka) produces with every codec to a 3-broker cluster and fetches back
exactly what it produced: keys (null ones too), values, headers, CreateTime timestamps, order per
partition. And the idempotent producer: 100,000 messages with no duplicate and no gap.

No consumer group: the consumer is assigned its partitions. The Python binding insists on a
group.id even then; nothing joins or commits with it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_CREATE_TIME,
    Consumer,
    KafkaError,
    Producer,
    TopicPartition,
)
from confluent_kafka import Message as KafkaMessage

from mockbroker_protocol.records import decode_batch
from tests.integration.support import (
    CODECS,
    DEADLINE_S,
    PARTITIONS,
    BrokerThread,
    Message,
    assert_consumed_exactly,
    assert_leaders_span_brokers,
    assert_stored_codec,
    assert_stored_exactly,
    make_messages,
    normalise_headers,
)

COUNT = 600
IDEMPOTENT_COUNT = 100_000
IDEMPOTENT_PARTITIONS = 3


class Deliveries:
    """Delivery reports in the order librdkafka gives them: (partition, offset, value) or errors."""

    def __init__(self) -> None:
        self.acked: list[tuple[int | None, int | None, bytes | None]] = []
        self.errors: list[str] = []

    def __call__(self, err: KafkaError | None, msg: KafkaMessage) -> None:
        if err is not None:
            self.errors.append(f"{err} (partition {msg.partition()})")
        else:
            self.acked.append((msg.partition(), msg.offset(), msg.value()))


def produce_all(producer: Producer, send: list[Callable[[], None]]) -> None:
    """Queue every message (serving delivery reports while librdkafka's queue is full), then flush."""
    deadline = time.monotonic() + DEADLINE_S
    for produce in send:
        while True:
            try:
                produce()
                break
            except BufferError:
                if time.monotonic() > deadline:
                    pytest.fail("librdkafka's queue stayed full: the broker is not acknowledging")
                producer.poll(0.1)
    remaining = producer.flush(DEADLINE_S)
    assert remaining == 0, f"{remaining} messages still undelivered"


def consume(bootstrap: str, topic: str, partitions: int, count: int, client_id: str) -> list[Message]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "group.id": f"{client_id}-unused",  # required by the binding; assign() needs no group
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
    )
    consumed: list[Message] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        deadline = time.monotonic() + DEADLINE_S
        while len(consumed) < count and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                err = msg.error()
                assert err is None, f"consumer error: {err}"
                ts_type, ts = msg.timestamp()
                assert ts_type == TIMESTAMP_CREATE_TIME, (ts_type, ts)
                partition, headers = msg.partition(), msg.headers()
                assert partition is not None and not isinstance(headers, dict)
                consumed.append(
                    Message(
                        partition,
                        msg.key(),
                        msg.value(),
                        normalise_headers(headers),
                        ts,
                        msg.offset(),
                    )
                )
        # Nothing beyond what was produced: each partition's position is its log end.
        positions = consumer.position([TopicPartition(topic, p) for p in range(partitions)])
    finally:
        consumer.close()
    ends = {p: len([m for m in consumed if m.partition == p]) for p in range(partitions)}
    assert {tp.partition: tp.offset for tp in positions} == ends
    return consumed


@pytest.mark.parametrize("codec", CODECS)
def test_produce_and_fetch_back(broker_thread: BrokerThread, codec: str) -> None:
    topic = f"confluent-{codec}"
    assert_leaders_span_brokers(broker_thread.create_topic(topic, PARTITIONS), broker_thread.broker_ids)
    sent = make_messages(codec, COUNT)

    producer = Producer(
        {
            "bootstrap.servers": broker_thread.bootstrap_servers,
            "client.id": "it-confluent-producer",
            "compression.type": codec,
            "linger.ms": 20,
            "acks": "all",
        }
    )
    # librdkafka's own view of the topic: six partitions, led by all three brokers.
    described = producer.list_topics(topic, timeout=DEADLINE_S).topics[topic]
    assert described.error is None, described.error
    assert_leaders_span_brokers(
        {p.id: p.leader for p in described.partitions.values()}, broker_thread.broker_ids
    )

    deliveries = Deliveries()
    produce_all(
        producer,
        [
            lambda m=m: producer.produce(  # type: ignore[misc]
                topic,
                value=m.value,
                key=m.key,
                partition=m.partition,
                timestamp=m.timestamp,
                headers=list(m.headers),
                on_delivery=deliveries,
            )
            for m in sent
        ],
    )
    assert deliveries.errors == []
    # Per partition, the acks come in send order with consecutive offsets.
    for p in range(PARTITIONS):
        acked = [(offset, value) for part, offset, value in deliveries.acked if part == p]
        assert acked == [(i, m.value) for i, m in enumerate(m for m in sent if m.partition == p)]

    batches = broker_thread.stored_batches(topic)
    assert_stored_codec(batches, codec)
    assert_stored_exactly(batches, sent)

    consumed = consume(broker_thread.bootstrap_servers, topic, PARTITIONS, COUNT, "it-confluent-consumer")
    assert_consumed_exactly(sent, consumed)


def test_idempotent_producer_no_duplicate_no_gap(broker_thread: BrokerThread) -> None:
    topic = "confluent-idempotent"
    broker_thread.create_topic(topic, IDEMPOTENT_PARTITIONS)
    values = [f"m{i:06d}".encode() for i in range(IDEMPOTENT_COUNT)]

    producer = Producer(
        {
            "bootstrap.servers": broker_thread.bootstrap_servers,
            "client.id": "it-confluent-idempotent",
            "enable.idempotence": True,
            "linger.ms": 5,
        }
    )
    deliveries = Deliveries()
    produce_all(
        producer,
        [
            lambda i=i, v=v: producer.produce(
                topic, value=v, partition=i % IDEMPOTENT_PARTITIONS, on_delivery=deliveries
            )  # type: ignore[misc]
            for i, v in enumerate(values)
        ],
    )
    assert deliveries.errors == []
    assert len(deliveries.acked) == IDEMPOTENT_COUNT
    sent = {p: values[p::IDEMPOTENT_PARTITIONS] for p in range(IDEMPOTENT_PARTITIONS)}

    # The stored log, batch by batch: one producer id; per partition sequences start at 0 and
    # continue from batch to batch, offsets from 0 without holes, values exactly those sent, in order.
    producer_ids = set()
    for p, datas in broker_thread.stored_batches(topic).items():
        next_sequence = next_offset = 0
        stored: list[bytes | None] = []
        for data in datas:
            header, records = decode_batch(data)
            producer_ids.add((header.producer_id, header.producer_epoch))
            assert header.base_sequence == next_sequence, (
                f"partition {p}: batch at {header.base_offset} has sequence {header.base_sequence}, want {next_sequence}"
            )
            assert header.base_offset == next_offset, (
                f"partition {p}: batch at {header.base_offset}, want {next_offset}"
            )
            assert [r.offset for r in records] == list(range(next_offset, next_offset + header.records_count))
            next_sequence += header.records_count
            next_offset += header.records_count
            stored.extend(r.value for r in records)
        assert stored == sent[p], (
            f"partition {p}: {len(stored)} values stored, {len(sent[p])} sent; duplicates or gaps"
        )
    assert len(producer_ids) == 1, f"batches from several producer ids/epochs: {producer_ids}"
    ((producer_id, producer_epoch),) = producer_ids
    assert producer_id >= 0 and producer_epoch >= 0, "batches were not written by an idempotent producer"

    # Read back by a consumer too: every value once, per partition in send order.
    consumed = consume(
        broker_thread.bootstrap_servers,
        topic,
        IDEMPOTENT_PARTITIONS,
        IDEMPOTENT_COUNT,
        "it-confluent-idem-consumer",
    )
    for p in range(IDEMPOTENT_PARTITIONS):
        mine = [m for m in consumed if m.partition == p]
        assert [m.offset for m in mine] == list(range(len(sent[p])))
        assert [m.value for m in mine] == sent[p]
    assert len({m.value for m in consumed}) == IDEMPOTENT_COUNT
