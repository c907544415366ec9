"""Fetch over loopback: reads, sizes (KIP-74), errors, long polls, read_committed, sessions (KIP-227)."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.log.fetch_sessions import FetchSessionCache
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ForgottenTopic,
    PartitionData,
)
from mockbroker_protocol.records import (
    build_end_txn_marker,
    parse_batch_header,
    patch_base_offset,
    patch_partition_leader_epoch,
)
from tests.mockbroker.datapath import (
    PRODUCE,
    batch,
    connect_to,
    fetch,
    fetch_request,
    leader_client,
    not_leader_of,
    only_partition,
    parked_on,
    partitions_of,
    produce,
    produce_request,
    records_bytes,
    wait_until,
)


def place_on(cluster: MockCluster, topic: str, partition: int, node_id: int) -> None:
    p = cluster.topics[topic].partitions[partition]
    p.leader_id, p.replica_ids = node_id, [node_id]


def stored_form(original: bytes, base_offset: int) -> bytes:
    """What the broker keeps and serves: the client's batch with its base offset and the leader
    epoch (0) written in; everything else byte for byte."""
    expected = bytearray(original)
    patch_base_offset(expected, base_offset)
    patch_partition_leader_epoch(expected, 0)
    return bytes(expected)


async def test_fetch_returns_the_produced_bytes_with_offsets_patched(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    first, second = batch(b"a", b"b"), batch(b"c")
    assert (await produce(client, cluster, "t", first)).base_offset == 0
    assert (await produce(client, cluster, "t", second)).base_offset == 2
    for version in (4, 7, 11, 12, 13, 16, 18):
        p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 0)]), version=version))
        log_start = 0 if version >= 5 else -1  # log_start_offset is v5+
        assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (0, 3, 3, log_start), version
        assert records_bytes(p) == stored_form(first, 0) + stored_form(second, 2), version
        assert p.preferred_read_replica == -1 or version < 11
        assert p.aborted_transactions is None  # read_uncommitted: null, as Kafka sends it
    # From an offset inside the second batch: that whole batch (the client skips what it did not ask for).
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 2)])))
    assert records_bytes(p) == stored_form(second, 2)
    # At the end: nothing, no error.
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 3)])))
    assert (p.error_code, records_bytes(p)) == (ErrorCode.NONE, b"")
    await client.close()


async def test_fetch_by_topic_id_from_v13(cluster: MockCluster) -> None:
    topic = cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", batch(b"a"))
    resp = await fetch(client, fetch_request(cluster, [("t", 0, 0)]), version=13)
    assert resp.responses[0].topic_id == topic.topic_id
    req = FetchRequest(topics=[FetchTopic(topic_id=uuid.uuid4(), partitions=[FetchPartition(partition=0)])], max_bytes=1000)
    assert only_partition(await fetch(client, req, version=13)).error_code == ErrorCode.UNKNOWN_TOPIC_ID
    await client.close()


async def test_fetch_errors(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", batch(b"a"))
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 5)])))
    assert (p.error_code, p.high_watermark, p.log_start_offset) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1)
    assert only_partition(await fetch(client, fetch_request(cluster, [("t", 3, 0)]))).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert only_partition(await fetch(client, fetch_request(cluster, [("nope", 0, 0)]))).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    fenced = fetch_request(cluster, [("t", 0, 0)], current_leader_epoch=5)
    assert only_partition(await fetch(client, fenced)).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    cluster.topics["t"].partitions[0].log.leader_epoch = 1
    stale = fetch_request(cluster, [("t", 0, 0)], current_leader_epoch=0)
    assert only_partition(await fetch(client, stale)).error_code == ErrorCode.FENCED_LEADER_EPOCH
    follower = await connect_to(cluster, not_leader_of(cluster, "t"))
    resp = await fetch(follower, fetch_request(cluster, [("t", 0, 0)]), version=16)
    p = only_partition(resp)
    leader = cluster.topics["t"].partitions[0].leader_id
    assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (leader, 1)  # KIP-951, v16+
    assert [n.node_id for n in resp.node_endpoints] == [leader]
    await client.close()
    await follower.close()


async def test_max_bytes_and_the_first_batch_rule(cluster: MockCluster) -> None:
    cluster.create_topic("t", 2)
    leader = cluster.topics["t"].partitions[0].leader_id
    place_on(cluster, "t", 1, leader)  # both partitions on one broker, for one request
    client = await connect_to(cluster, leader)
    big = batch(b"x" * 1000)
    for partition in (0, 1):
        await produce(client, cluster, "t", big, partition=partition)
        await produce(client, cluster, "t", big, partition=partition)
    # Limits smaller than one batch: the first partition still returns one batch (KIP-74), the
    # second nothing, since the response limit is used up.
    req = fetch_request(cluster, [("t", 0, 0), ("t", 1, 0)], max_bytes=10, partition_max_bytes=10)
    p0, p1 = partitions_of(await fetch(client, req))
    assert records_bytes(p0) == stored_form(big, 0)
    assert records_bytes(p1) == b"" and p1.high_watermark == 2
    # partition_max_bytes bounds each partition; max_bytes the whole response.
    size = len(big)
    req = fetch_request(cluster, [("t", 0, 0), ("t", 1, 0)], partition_max_bytes=size)
    assert [len(records_bytes(p)) for p in partitions_of(await fetch(client, req))] == [size, size]
    req = fetch_request(cluster, [("t", 0, 0), ("t", 1, 0)], max_bytes=3 * size)
    assert [len(records_bytes(p)) for p in partitions_of(await fetch(client, req))] == [2 * size, size]
    await client.close()


async def test_fetch_max_bytes_caps_what_one_fetch_may_ask_for() -> None:
    """fetch.max.bytes (KafkaApis.handleFetchRequest): a Fetch's max_bytes is capped by it (the
    first batch still comes, KIP-74), and so is its min_bytes: a fetch asking for 2 GiB with a
    long max_wait_ms is answered as soon as fetch.max.bytes are readable, not parked to its end."""
    big = batch(b"x" * 1000)
    cluster = MockCluster(brokers=1, fetch_max_bytes=len(big))
    await cluster.start()
    try:
        cluster.create_topic("t", 1)
        client = await connect_to(cluster, cluster.topics["t"].partitions[0].leader_id)
        for _ in range(3):
            await produce(client, cluster, "t", big)
        huge = 2**31 - 1
        req = fetch_request(cluster, [("t", 0, 0)], max_bytes=huge, partition_max_bytes=huge)
        assert len(records_bytes(only_partition(await fetch(client, req)))) == len(big)
        req = fetch_request(
            cluster, [("t", 0, 0)], max_bytes=huge, partition_max_bytes=huge, min_bytes=huge, max_wait_ms=600_000
        )
        resp = await fetch(client, req, timeout=10)  # parked, it would answer in 10 minutes
        assert len(records_bytes(only_partition(resp))) == len(big)
        await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


def test_fetch_max_bytes_is_a_broker_setting_with_kafkas_bounds() -> None:
    from mockbroker.config.cluster import ClusterConfig

    assert ClusterConfig().fetch_max_bytes == 55 * 1024 * 1024  # Kafka's default
    for value in (1023, 2**31):
        with pytest.raises(ValueError, match=r"fetch\.max\.bytes"):
            ClusterConfig.from_kafka({"fetch.max.bytes": str(value)})
    assert ClusterConfig.from_kafka({"fetch.max.bytes": "1024"}).fetch_max_bytes == 1024


async def test_long_poll_returns_when_data_arrives(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    consumer = await leader_client(cluster, "t")
    producer = await leader_client(cluster, "t")
    waiting = asyncio.ensure_future(fetch(consumer, fetch_request(cluster, [("t", 0, 0)], max_wait_ms=30_000, min_bytes=1)))
    await wait_until(lambda: parked_on(cluster, "t"), "the fetch to park")
    assert not waiting.done()
    sent = batch(b"arrived")
    await produce(producer, cluster, "t", sent)
    p = only_partition(await asyncio.wait_for(waiting, 10))
    assert records_bytes(p) == stored_form(sent, 0)
    assert not parked_on(cluster, "t")  # listeners removed on return
    assert not [k for k in cluster.timers._live if isinstance(k, tuple) and k[0] == "fetch"]  # deadline cancelled
    await consumer.close()
    await producer.close()


async def test_long_poll_waits_for_min_bytes(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    consumer = await leader_client(cluster, "t")
    producer = await leader_client(cluster, "t")
    small = batch(b"s")
    waiting = asyncio.ensure_future(
        fetch(consumer, fetch_request(cluster, [("t", 0, 0)], max_wait_ms=30_000, min_bytes=len(small) + 1))
    )
    await wait_until(lambda: parked_on(cluster, "t"), "the fetch to park")
    await produce(producer, cluster, "t", small)
    # Not enough bytes yet: still parked (the broker has answered the produce, so it has seen the append).
    assert not waiting.done() and parked_on(cluster, "t")
    await produce(producer, cluster, "t", small)
    p = only_partition(await asyncio.wait_for(waiting, 10))
    assert records_bytes(p) == stored_form(small, 0) + stored_form(small, 1)
    await consumer.close()
    await producer.close()


async def test_long_poll_returns_empty_at_the_deadline(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 0)], max_wait_ms=50, min_bytes=1)))
    assert (p.error_code, records_bytes(p), p.high_watermark) == (ErrorCode.NONE, b"", 0)
    assert not parked_on(cluster, "t")
    await client.close()


async def test_long_poll_deadline_on_a_manual_clock() -> None:
    clock = ManualClock()
    async with MockCluster(brokers=1, clock=clock) as cluster:
        cluster.create_topic("t", 1)
        client = await leader_client(cluster, "t")
        # A partition of an unknown topic is answered, but does not end the long poll (KafkaApis).
        req = fetch_request(cluster, [("t", 0, 0), ("gone", 0, 0)], max_wait_ms=500)
        waiting = asyncio.ensure_future(fetch(client, req))
        await wait_until(lambda: parked_on(cluster, "t"), "the fetch to park")
        clock.advance(499)
        assert parked_on(cluster, "t")  # the deadline is not yet reached...
        clock.advance(1)  # ...now it is, and the timer fires inside advance()
        p, gone = partitions_of(await asyncio.wait_for(waiting, 10))
        assert (p.error_code, records_bytes(p)) == (ErrorCode.NONE, b"")
        assert gone.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        await client.close()
        assert cluster.internal_errors == []


async def test_read_committed_stops_at_the_last_stable_offset(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    log = cluster.topics["t"].partitions[0].log
    plain = batch(b"plain")
    await produce(client, cluster, "t", plain)
    # A producer that began a transaction on t-0 (Produce verifies it with the coordinator, KIP-890).
    pid = cluster.transactions.init_producer_id(cluster.clock.now_ms(), "tx", 60000).producer_id
    cluster.transactions.add_partitions(cluster.clock.now_ms(), "tx", pid, 0, [("t", 0)])
    txn = batch(b"in-txn", producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True)
    req = fetch_request(cluster, [("t", 0, 0)])
    txn_req = produce_request(cluster, "t", txn)
    txn_req.transactional_id = "tx"
    assert (await client.request(PRODUCE, 9, txn_req)).responses[0].partition_responses[0].base_offset == 1
    committed = fetch_request(cluster, [("t", 0, 0)], isolation_level=1)
    p = only_partition(await fetch(client, committed))
    assert (p.high_watermark, p.last_stable_offset) == (2, 1)
    assert records_bytes(p) == stored_form(plain, 0) and p.aborted_transactions == []
    assert len(records_bytes(only_partition(await fetch(client, req)))) > len(stored_form(plain, 0))
    # The coordinator aborts: the marker closes the transaction, which read_committed readers
    # are told to drop (the broker's transaction marker path appends it like this).
    marker = bytearray(build_end_txn_marker(commit=False, producer_id=pid, producer_epoch=0, coordinator_epoch=0, timestamp=1))
    log.append(marker, parse_batch_header(marker))
    p = only_partition(await fetch(client, committed))
    assert (p.high_watermark, p.last_stable_offset) == (3, 3)
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions or []] == [(pid, 1)]
    await client.close()


async def full_session(client: object, cluster: MockCluster, wanted: list[tuple[str, int, int]], version: int = 12) -> tuple[int, list[object]]:
    resp = await fetch(client, fetch_request(cluster, wanted, session_id=0, session_epoch=0), version=version)  # type: ignore[arg-type]
    assert resp.error_code == ErrorCode.NONE and resp.session_id != 0
    return resp.session_id, partitions_of(resp)  # type: ignore[return-value]


async def test_fetch_session_full_then_incremental(cluster: MockCluster) -> None:
    cluster.create_topic("a", 1)
    cluster.create_topic("b", 1)
    leader = cluster.topics["a"].partitions[0].leader_id
    place_on(cluster, "b", 0, leader)
    client = await connect_to(cluster, leader)
    await produce(client, cluster, "a", batch(b"a0"))
    session_id, parts = await full_session(client, cluster, [("a", 0, 0), ("b", 0, 0)])
    assert len(parts) == 2  # a full fetch answers every partition
    # Incremental: the client moves "a" past what it consumed; nothing is new, nothing answered.
    move = fetch_request(cluster, [("a", 0, 1)], session_id=session_id, session_epoch=1)
    resp = await fetch(client, move)
    assert (resp.error_code, resp.session_id, partitions_of(resp)) == (ErrorCode.NONE, session_id, [])
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=2))
    assert partitions_of(resp) == []
    # New data on "b": only "b" is answered.
    sent = batch(b"b0")
    await produce(client, cluster, "b", sent)
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=3))
    (p,) = partitions_of(resp)
    assert resp.responses[0].topic == "b" and records_bytes(p) == stored_form(sent, 0) and p.high_watermark == 1
    # The client moves "b" on: no records, the same high watermark as last told: not answered.
    resp = await fetch(client, fetch_request(cluster, [("b", 0, 1)], session_id=session_id, session_epoch=4))
    assert partitions_of(resp) == []
    await client.close()


async def test_fetch_session_forgotten_topics_and_closing(cluster: MockCluster) -> None:
    cluster.create_topic("a", 1)
    cluster.create_topic("b", 1)
    leader = cluster.topics["a"].partitions[0].leader_id
    place_on(cluster, "b", 0, leader)
    client = await connect_to(cluster, leader)
    session_id, _ = await full_session(client, cluster, [("a", 0, 0), ("b", 0, 0)])
    cache = cluster.fetch_sessions[leader]
    forget = fetch_request(cluster, [], session_id=session_id, session_epoch=1)
    forget.forgotten_topics_data = [ForgottenTopic(topic="b", partitions=[0])]
    assert partitions_of(await fetch(client, forget)) == []
    assert [k for k in cache.sessions[session_id].partitions] == [("a", 0)]
    await produce(client, cluster, "b", batch(b"b0"))
    assert partitions_of(await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=2))) == []
    # Forgetting the last partition closes the session: a sessionless answer.
    forget = fetch_request(cluster, [], session_id=session_id, session_epoch=3)
    forget.forgotten_topics_data = [ForgottenTopic(topic="a", partitions=[0])]
    resp = await fetch(client, forget)
    assert (resp.error_code, resp.session_id) == (ErrorCode.NONE, 0) and session_id not in cache.sessions
    # Epoch -1: a full fetch without a session.
    resp = await fetch(client, fetch_request(cluster, [("b", 0, 0)], session_epoch=-1))
    assert resp.session_id == 0 and len(partitions_of(resp)) == 1
    # A full fetch naming a session closes it and opens another.
    old, _ = await full_session(client, cluster, [("a", 0, 0)])
    resp = await fetch(client, fetch_request(cluster, [("a", 0, 0)], session_id=old, session_epoch=0))
    assert resp.session_id not in (0, old) and old not in cache.sessions
    await client.close()


async def test_fetch_session_errors(cluster: MockCluster) -> None:
    cluster.create_topic("a", 1)
    client = await leader_client(cluster, "a")
    session_id, _ = await full_session(client, cluster, [("a", 0, 0)])
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=7))
    assert (resp.error_code, resp.session_id, resp.responses) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id + 1, session_epoch=1))
    assert resp.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    resp = await fetch(client, fetch_request(cluster, [], session_id=0, session_epoch=1))
    assert resp.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    # A session created with topic names cannot go on with topic ids (v13+).
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=1), version=13)
    assert resp.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
    # The errors did not move the session on: epoch 1 still works.
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=1))
    assert (resp.error_code, resp.session_id) == (ErrorCode.NONE, session_id)
    await client.close()


async def test_fetch_session_by_topic_id_answers_errors_once_changed(cluster: MockCluster) -> None:
    topic = cluster.create_topic("a", 1)
    client = await leader_client(cluster, "a")
    session_id, _ = await full_session(client, cluster, [("a", 0, 0)], version=13)
    await produce(client, cluster, "a", batch(b"x"))
    resp = await fetch(client, fetch_request(cluster, [], session_id=session_id, session_epoch=1), version=13)
    assert resp.responses[0].topic_id == topic.topic_id and only_partition(resp).high_watermark == 1
    # An error is always answered (and answered again while it lasts).
    for epoch in (2, 3):
        req = fetch_request(cluster, [("a", 0, 9)], session_id=session_id, session_epoch=epoch)
        assert only_partition(await fetch(client, req, version=13)).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    await client.close()


def test_fetch_session_cache_evicts_the_least_recently_used() -> None:
    cache = FetchSessionCache(max_sessions=2, rng=random.Random(7))
    full = FetchRequest(session_id=0, session_epoch=0, topics=[FetchTopic(topic="t", partitions=[FetchPartition(partition=0)])])
    read = [(("t", 0), PartitionData(partition_index=0, high_watermark=0, log_start_offset=0))]
    ids = []
    for now in (1, 2):
        context = cache.new_context(full, 12, now)
        ids.append(context.update_and_generate(read)[1])
    # Use the first session, so that the second is now the least recently used.
    touch = FetchRequest(session_id=ids[0], session_epoch=1)
    assert cache.new_context(touch, 12, 3).kind == "incremental"
    context = cache.new_context(full, 12, 4)
    third = context.update_and_generate(read)[1]
    assert set(cache.sessions) == {ids[0], third} and len(cache) == 2
