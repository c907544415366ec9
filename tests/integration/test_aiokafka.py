"""aiokafka produces with every codec to a 3-broker cluster and fetches back exactly what it
produced: keys (null ones too), values, headers, CreateTime timestamps, order per partition.
And a long-poll Fetch: a consumer waiting on an empty partition gets the record once another
producer writes it.

The cluster runs on the test's own loop, so its state is read directly. No consumer group: the
consumer is assigned its partitions (group_id=None). aiokafka's snappy, lz4 and zstd codecs come
from cramjam, which mockbroker itself depends on."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from mockbroker import MockCluster
from mockbroker.log.partition import PartitionLog
from tests.integration.support import (
    CODECS,
    DEADLINE_S,
    PARTITIONS,
    Message,
    assert_consumed_exactly,
    assert_leaders_span_brokers,
    assert_stored_codec,
    assert_stored_exactly,
    async_wait_until,
    make_messages,
    normalise_headers,
    stored_batches,
)

COUNT = 600
CREATE_TIME = 0  # ConsumerRecord.timestamp_type


@pytest.mark.parametrize("codec", CODECS)
async def test_produce_and_fetch_back(cluster: MockCluster, codec: str) -> None:
    topic = f"aiokafka-{codec}"
    created = cluster.create_topic(topic, PARTITIONS)
    assert_leaders_span_brokers({p.index: p.leader_id for p in created.partitions}, cluster.brokers)
    sent = make_messages(codec, COUNT)

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        client_id="it-aiokafka-producer",
        compression_type=None if codec == "none" else codec,
        linger_ms=20,
        acks="all",
    )
    await producer.start()
    try:
        futures = [
            await producer.send(
                topic,
                value=m.value,
                key=m.key,
                partition=m.partition,
                timestamp_ms=m.timestamp,
                headers=list(m.headers),
            )
            for m in sent
        ]
        metadata = await asyncio.wait_for(asyncio.gather(*futures), DEADLINE_S)
    finally:
        await producer.stop()
    next_offset = dict.fromkeys(range(PARTITIONS), 0)
    for m, md in zip(sent, metadata, strict=True):
        assert (md.partition, md.offset) == (m.partition, next_offset[m.partition])
        next_offset[m.partition] += 1

    batches = stored_batches(cluster, topic)
    assert_stored_codec(batches, codec)
    assert_stored_exactly(batches, sent)

    consumer = AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        client_id="it-aiokafka-consumer",
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    consumed: list[Message] = []
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        deadline = asyncio.get_running_loop().time() + DEADLINE_S
        while len(consumed) < COUNT and asyncio.get_running_loop().time() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                for r in records:
                    assert r.timestamp_type == CREATE_TIME, r
                    consumed.append(
                        Message(
                            r.partition, r.key, r.value, normalise_headers(r.headers), r.timestamp, r.offset
                        )
                    )
        positions = {tp.partition: await consumer.position(tp) for tp in tps}
    finally:
        await consumer.stop()
    assert_consumed_exactly(sent, consumed)
    assert positions == next_offset


async def test_long_poll_fetch_returns_when_data_arrives(cluster: MockCluster) -> None:
    """A consumer parked in a long-poll Fetch on an empty partition is answered by the produce.

    The consumer asks the broker to hold each Fetch for up to ten minutes. The produce happens
    only once the broker holds that Fetch (a condition on the broker's state), and the consumer
    must get the record well before the hold would have expired: a broker that never woke the
    parked Fetch would answer it empty only after ten minutes, past the test's deadline."""
    topic = "long-poll"
    cluster.create_topic(topic, 1)
    log = cluster.topics[topic].partitions[0].log
    max_wait_ms = 600_000
    consumer = AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        client_id="it-long-poll-consumer",
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=max_wait_ms,
        request_timeout_ms=max_wait_ms + 60_000,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, client_id="it-long-poll-producer"
    )
    await consumer.start()
    await producer.start()
    waiting: asyncio.Future[ConsumerRecord[bytes, bytes]] | None = None
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        waiting = asyncio.ensure_future(consumer.getone(tp))
        # The broker holds a Fetch for the partition: it is parked waiting for the log to grow.
        await async_wait_until(lambda: fetch_parked_on(log), "the broker to park the consumer's Fetch")
        assert not waiting.done(), "getone() returned before anything was produced"

        await producer.send_and_wait(topic, b"arrived", key=b"k", partition=0, timestamp_ms=1_700_000_000_000)
        try:
            record = await asyncio.wait_for(waiting, DEADLINE_S)
        except TimeoutError:
            pytest.fail(
                f"the parked Fetch was not answered within {DEADLINE_S:.0f}s of the produce (max_wait_ms {max_wait_ms})"
            )
    finally:
        if waiting is not None and not waiting.done():
            waiting.cancel()
        await producer.stop()
        await consumer.stop()
    assert (record.partition, record.offset, record.key, record.value, record.timestamp) == (
        0,
        0,
        b"k",
        b"arrived",
        1_700_000_000_000,
    )


def fetch_parked_on(log: PartitionLog) -> bool:
    """True while a parked Fetch listens for appends to ``log``: the fetch handler parks by
    PartitionLog.add_listener and removes its listener when it answers (handlers/fetch.py)."""
    return bool(log._listeners)
