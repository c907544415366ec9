"""kafka-python produces with every codec to a 3-broker cluster and fetches back exactly what it
produced: keys (null ones too), values, headers, CreateTime timestamps, order per partition.

No consumer group: the consumer is assigned its partitions (group_id=None)."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

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
CREATE_TIME = 0  # ConsumerRecord.timestamp_type


@pytest.mark.parametrize("codec", CODECS)
def test_produce_and_fetch_back(broker_thread: BrokerThread, codec: str) -> None:
    topic = f"kafka-python-{codec}"
    assert_leaders_span_brokers(broker_thread.create_topic(topic, PARTITIONS), broker_thread.broker_ids)
    sent = make_messages(codec, COUNT)

    producer = KafkaProducer(
        bootstrap_servers=broker_thread.bootstrap_servers,
        client_id="it-kafka-python-producer",
        compression_type=None if codec == "none" else codec,
        linger_ms=20,
        acks="all",
    )
    try:
        futures = [
            producer.send(
                topic,
                value=m.value,
                key=m.key,
                headers=list(m.headers),
                partition=m.partition,
                timestamp_ms=m.timestamp,
            )
            for m in sent
        ]
        producer.flush(timeout=DEADLINE_S)
        metadata = [f.get(timeout=DEADLINE_S) for f in futures]
    finally:
        producer.close(timeout=DEADLINE_S)
    # The acks name the partition and the offset each record got, in send order per partition.
    next_offset = dict.fromkeys(range(PARTITIONS), 0)
    for m, md in zip(sent, metadata, strict=True):
        assert (md.partition, md.offset) == (m.partition, next_offset[m.partition])
        next_offset[m.partition] += 1

    batches = broker_thread.stored_batches(topic)
    assert_stored_codec(batches, codec)
    assert_stored_exactly(batches, sent)

    consumer = KafkaConsumer(
        bootstrap_servers=broker_thread.bootstrap_servers,
        client_id="it-kafka-python-consumer",
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    consumed: list[Message] = []
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        deadline = time.monotonic() + DEADLINE_S
        while len(consumed) < COUNT and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                for r in records:
                    assert r.timestamp_type == CREATE_TIME, r
                    consumed.append(
                        Message(
                            r.partition, r.key, r.value, normalise_headers(r.headers), r.timestamp, r.offset
                        )
                    )
        # Nothing beyond what was produced: the consumer's positions are the log ends.
        positions = {p: consumer.position(TopicPartition(topic, p)) for p in range(PARTITIONS)}
    finally:
        consumer.close(autocommit=False)
    assert_consumed_exactly(sent, consumed)
    assert positions == next_offset
