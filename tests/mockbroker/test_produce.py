"""Produce and InitProducerId over loopback: validation in Kafka's order, acks, idempotence."""

from __future__ import annotations

import re
import time
import uuid

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.framing import DIRECT_FRAME_SIZE, OwnedFrame
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from mockbroker_protocol.messages.metadata import MetadataRequest
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from mockbroker_protocol.records import Compression, TimestampType, decode_batch
from tests.mockbroker.datapath import (
    INIT_PRODUCER_ID,
    PRODUCE,
    batch,
    connect_to,
    leader_client,
    leader_of,
    not_leader_of,
    produce,
    produce_request,
)
from tests.mockbroker.wire import WireClient

HOUR_MS = 3_600_000


async def test_api_versions_advertises_produce_from_v0_but_serves_v3(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    resp = await client.request(18, 3, ApiVersionsRequest("mockbroker-test", "1.0"))
    served = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert served[PRODUCE] == (0, 13)  # KAFKA-18659: librdkafka needs min 0 advertised
    assert served[1] == (4, 18)
    assert served[2] == (1, 11)
    assert served[INIT_PRODUCER_ID] == (0, 5)
    assert served[23] == (2, 4)
    # ...but, like Kafka 4 (KIP-896), a v0-2 request closes the connection.
    await client.send_raw(
        registry.encode_request(
            RequestHeader(PRODUCE, 2, 7, "old"), produce_request(cluster, "t", batch(b"v"))
        )
    )
    assert await client.closed_by_peer()
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 0


async def test_produce_appends_and_answers_offsets(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    for version in (3, 7, 8, 9, 12, 13):
        p = await produce(client, cluster, "t", batch(b"a", b"b"), version=version)
        assert p.error_code == ErrorCode.NONE, version
    log = cluster.topics["t"].partitions[0].log
    assert log.log_end_offset == 12
    p = await produce(client, cluster, "t", batch(b"c"), version=9)
    assert (p.base_offset, p.log_append_time_ms, p.log_start_offset, p.error_message) == (12, -1, 0, None)
    await client.close()


async def test_acks_zero_sends_nothing_and_the_connection_goes_on(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    req = produce_request(cluster, "t", batch(b"fire-and-forget"), acks=0)
    await client.send_raw(registry.encode_request(RequestHeader(PRODUCE, 9, 1000, "c"), req))
    # The next request on the connection is answered, and its answer is the first frame back.
    resp = await client.request(3, 12, MetadataRequest(topics=None))
    assert [t.name for t in resp.topics] == ["t"]
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 1
    await client.close()


async def test_acks_zero_failure_closes_the_connection(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await connect_to(cluster, not_leader_of(cluster, "t"))
    req = produce_request(cluster, "t", batch(b"lost"), acks=0)
    await client.send_raw(registry.encode_request(RequestHeader(PRODUCE, 9, 1, "c"), req))
    # KafkaApis: an acks=0 producer cannot read an error, so the broker hangs up on it.
    assert await client.closed_by_peer()


async def test_not_leader_and_current_leader_hint(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    leader = leader_of(cluster, "t")
    client = await connect_to(cluster, not_leader_of(cluster, "t"))
    p = await produce(client, cluster, "t", batch(b"x"), version=9)
    assert (p.error_code, p.base_offset, p.log_start_offset) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1)
    resp = await client.request(PRODUCE, 12, produce_request(cluster, "t", batch(b"x")))
    p = resp.responses[0].partition_responses[0]
    assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (leader, 0)  # KIP-951
    node = cluster.brokers[leader]
    assert [(n.node_id, n.host, n.port) for n in resp.node_endpoints] == [
        (leader, node.advertised_host, node.advertised_port)
    ]
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 0
    await client.close()


async def test_unknown_topics_and_partitions(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    assert (
        await produce(client, cluster, "t", batch(b"x"), partition=5)
    ).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    req = ProduceRequest(
        acks=1,
        topic_data=[TopicProduceData(name="nope", partition_data=[PartitionProduceData(0, batch(b"x"))])],
    )
    resp = await client.request(PRODUCE, 9, req)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # v13 (KIP-516) names topics by id.
    req = ProduceRequest(
        acks=1,
        topic_data=[
            TopicProduceData(topic_id=uuid.uuid4(), partition_data=[PartitionProduceData(0, batch(b"x"))])
        ],
    )
    resp = await client.request(PRODUCE, 13, req)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
    assert "nope" not in cluster.topics  # produce never auto-creates
    await client.close()


async def test_corrupt_crc_is_corrupt_message(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    corrupt = bytearray(batch(b"some value"))
    corrupt[-3] ^= 0xFF  # inside the last record: covered by the CRC
    p = await produce(client, cluster, "t", bytes(corrupt))
    assert p.error_code == ErrorCode.CORRUPT_MESSAGE
    assert p.error_message is None  # as Kafka: ensureValid's exception is answered without its message
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 0
    await client.close()


async def test_message_too_large_uses_the_topic_config_then_the_cluster_setting(cluster: MockCluster) -> None:
    cluster.create_topic("small", 1, configs={"max.message.bytes": "100"})
    cluster.create_topic("big", 1)
    client = await leader_client(cluster, "small")
    assert (await produce(client, cluster, "small", batch(b"x" * 30))).error_code == ErrorCode.NONE
    p = await produce(client, cluster, "small", batch(b"x" * 200))
    assert p.error_code == ErrorCode.MESSAGE_TOO_LARGE
    big_client = await leader_client(cluster, "big")
    assert (await produce(big_client, cluster, "big", batch(b"x" * 200))).error_code == ErrorCode.NONE
    cluster.config.message_max_bytes = 150
    assert (
        await produce(big_client, cluster, "big", batch(b"x" * 200))
    ).error_code == ErrorCode.MESSAGE_TOO_LARGE
    await client.close()
    await big_client.close()


async def test_invalid_records_are_rejected_as_kafka_does(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    # Two batches in one partition (ProduceRequest.validateRecords: exactly one).
    assert (
        await produce(client, cluster, "t", batch(b"a") + batch(b"b"))
    ).error_code == ErrorCode.INVALID_RECORD
    # No batch at all.
    assert (await produce(client, cluster, "t", b"")).error_code == ErrorCode.INVALID_RECORD
    # A legacy (magic 1) message set: Kafka 4 only takes magic 2.
    legacy = bytearray(batch(b"a"))
    legacy[16] = 1
    assert (await produce(client, cluster, "t", bytes(legacy))).error_code == ErrorCode.INVALID_RECORD
    # A base offset other than 0 (UnifiedLog.analyzeAndValidateRecords).
    assert (
        await produce(client, cluster, "t", batch(b"a", base_offset=5))
    ).error_code == ErrorCode.INVALID_RECORD
    # A record count that does not match the offset range (LogValidator.validateBatch).
    assert (
        await produce(client, cluster, "t", batch(b"a", b"b", last_offset_delta=5))
    ).error_code == ErrorCode.INVALID_RECORD
    # zstd before v7 (KIP-110).
    zstd = batch(b"a", compression=Compression.ZSTD)
    assert (
        await produce(client, cluster, "t", zstd, version=6)
    ).error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert (await produce(client, cluster, "t", zstd, version=7)).error_code == ErrorCode.NONE
    # Invalid acks.
    assert (
        await produce(client, cluster, "t", batch(b"a"), acks=2)
    ).error_code == ErrorCode.INVALID_REQUIRED_ACKS
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 1
    await client.close()


async def test_internal_topics_and_min_insync_replicas(cluster: MockCluster) -> None:
    cluster.create_topic("__internal", 1, internal=True)
    cluster.create_topic("strict", 1, replication_factor=2, configs={"min.insync.replicas": "3"})
    client = await leader_client(cluster, "__internal")
    assert (
        await produce(client, cluster, "__internal", batch(b"a"))
    ).error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    client2 = await leader_client(cluster, "strict")
    assert (
        await produce(client2, cluster, "strict", batch(b"a"), acks=-1)
    ).error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert (await produce(client2, cluster, "strict", batch(b"a"), acks=1)).error_code == ErrorCode.NONE
    await client.close()
    await client2.close()


async def test_log_append_time_topics_stamp_the_broker_clock(cluster: MockCluster) -> None:
    cluster.create_topic("lat", 1, configs={"message.timestamp.type": "LogAppendTime"})
    client = await leader_client(cluster, "lat")
    p = await produce(client, cluster, "lat", batch(b"a", b"b", timestamp=1000))
    assert p.error_code == ErrorCode.NONE and p.log_append_time_ms > 1000
    (stored,) = cluster.topics["lat"].partitions[0].log.batches
    header, records = decode_batch(stored.data)  # the CRC was recomputed: it decodes
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in records] == [p.log_append_time_ms] * 2
    await client.close()


def _big_batch() -> bytes:
    # 80 records of 1 KiB: a Produce frame above mockbroker_protocol.framing.DIRECT_FRAME_SIZE.
    return batch(*[bytes([i]) * 1024 for i in range(80)])


async def test_a_large_produce_frame_is_kept_in_the_log_as_it_was_read(cluster: MockCluster) -> None:
    """A large frame is read into a buffer of its own (OwnedFrame); its one batch is kept there,
    base offset and leader epoch patched in place, rather than copied."""
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    sent = _big_batch()
    assert len(sent) >= DIRECT_FRAME_SIZE
    for expected_base in (0, 80):
        p = await produce(client, cluster, "t", sent)
        assert (p.error_code, p.base_offset) == (ErrorCode.NONE, expected_base)
    first, second = cluster.topics["t"].partitions[0].log.batches
    for stored, base in ((first, 0), (second, 80)):
        assert isinstance(stored.data, memoryview) and isinstance(stored.data.obj, OwnedFrame)
        assert len(stored.data.obj) - len(sent) < 100  # the frame is the batch and a small header
        header, records = decode_batch(stored.data)
        assert (header.base_offset, header.partition_leader_epoch, len(records)) == (base, 0, 80)
        assert bytes(stored.data[8:12]) == sent[8:12] and bytes(stored.data[16:]) == sent[16:]
    assert first.data.obj is not second.data.obj
    await client.close()


async def test_a_large_frame_is_copied_while_the_request_log_is_on(cluster: MockCluster) -> None:
    """The request log keeps the request, whose records are a view of the frame: the log copies
    the batch, so what the request log shows is what the client sent (base offset 0)."""
    cluster.create_topic("t", 1)
    await cluster.control.enable_request_log()
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", _big_batch())
    p = await produce(client, cluster, "t", _big_batch())
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 80)
    stored = cluster.topics["t"].partitions[0].log.batches[1]
    assert type(stored.data) is bytearray
    (logged, _) = await cluster.control.requests("Produce")
    records = logged.request.topic_data[0].partition_data[0].records
    assert bytes(records) == _big_batch()
    await client.close()


async def test_a_batch_that_is_a_small_part_of_a_large_frame_is_copied(cluster: MockCluster) -> None:
    """Several partitions in one large frame: each batch is copied, so that the log never holds
    much more than the batches themselves (a kept batch pins its whole frame)."""
    topic = cluster.create_topic("t", 2)
    leader = topic.partitions[0].leader_id
    topic.partitions[1].leader_id, topic.partitions[1].replica_ids = leader, [leader]  # both on one broker
    client = await leader_client(cluster, "t")
    partitions = [PartitionProduceData(i, _big_batch()) for i in range(2)]
    req = ProduceRequest(
        acks=-1, timeout_ms=5000, topic_data=[TopicProduceData("t", partition_data=partitions)]
    )
    resp = await client.request(PRODUCE, 9, req)
    assert [p.error_code for p in resp.responses[0].partition_responses] == [ErrorCode.NONE] * 2
    for partition in cluster.topics["t"].partitions:
        (stored,) = partition.log.batches
        assert type(stored.data) is bytearray and bytes(stored.data[16:]) == _big_batch()[16:]
    await client.close()


async def init_producer_id(
    client: WireClient, producer_id: int = -1, producer_epoch: int = -1
) -> InitProducerIdResponse:
    req = InitProducerIdRequest(transactional_id=None, producer_id=producer_id, producer_epoch=producer_epoch)
    resp: InitProducerIdResponse = await client.request(INIT_PRODUCER_ID, 4, req)
    return resp


async def test_init_producer_id_hands_out_new_ids(cluster: MockCluster) -> None:
    client = await connect_to(cluster, 1)
    first = await init_producer_id(client)
    second = await init_producer_id(client, producer_id=first.producer_id, producer_epoch=0)
    assert first.error_code == second.error_code == ErrorCode.NONE
    assert second.producer_id != first.producer_id and second.producer_epoch == first.producer_epoch == 0
    assert (await init_producer_id(client, producer_id=5)).error_code == ErrorCode.INVALID_REQUEST
    for version in (0, 1, 2, 3, 5):
        resp = await client.request(INIT_PRODUCER_ID, version, InitProducerIdRequest(transactional_id=None))
        assert resp.error_code == ErrorCode.NONE
    await client.close()


async def test_init_producer_id_with_a_transactional_id(cluster: MockCluster) -> None:
    from mockbroker.handlers._coordinator import transaction_coordinator

    coordinator = transaction_coordinator(cluster, "txn-1").node_id
    other = next(n for n in cluster.brokers if n != coordinator)
    wrong = await connect_to(cluster, other)
    req = InitProducerIdRequest(transactional_id="txn-1", transaction_timeout_ms=60000)
    assert (await wrong.request(INIT_PRODUCER_ID, 4, req)).error_code == ErrorCode.NOT_COORDINATOR
    client = await connect_to(cluster, coordinator)
    first = await client.request(INIT_PRODUCER_ID, 4, req)
    again = await client.request(INIT_PRODUCER_ID, 4, req)
    assert (first.producer_epoch, again.producer_epoch) == (0, 1) and first.producer_id == again.producer_id
    stale = InitProducerIdRequest(
        transactional_id="txn-1",
        transaction_timeout_ms=60000,
        producer_id=first.producer_id,
        producer_epoch=0,
    )
    assert (await client.request(INIT_PRODUCER_ID, 4, stale)).error_code == ErrorCode.PRODUCER_FENCED
    bad_timeout = InitProducerIdRequest(transactional_id="txn-1", transaction_timeout_ms=0)
    assert (
        await client.request(INIT_PRODUCER_ID, 4, bad_timeout)
    ).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    empty = InitProducerIdRequest(transactional_id="", transaction_timeout_ms=1000)
    assert (await client.request(INIT_PRODUCER_ID, 4, empty)).error_code == ErrorCode.INVALID_REQUEST
    await client.close()
    await wrong.close()


async def test_idempotent_producer_sequences(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    pid = (await init_producer_id(client)).producer_id

    def idem(seq: int, *values: bytes, epoch: int = 0) -> bytes:
        return batch(*values, producer_id=pid, producer_epoch=epoch, base_sequence=seq)

    first = idem(0, b"a", b"b", b"c")
    assert (await produce(client, cluster, "t", first)).base_offset == 0
    assert (await produce(client, cluster, "t", idem(3, b"d"))).base_offset == 3
    # A retry of an acknowledged batch: NONE with the original offset, nothing appended.
    dup = await produce(client, cluster, "t", first)
    assert (dup.error_code, dup.base_offset) == (ErrorCode.NONE, 0)
    log = cluster.topics["t"].partitions[0].log
    assert log.log_end_offset == 4
    # A gap in the sequence.
    assert (
        await produce(client, cluster, "t", idem(9, b"x"))
    ).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # A new epoch must start at sequence 0...
    assert (
        await produce(client, cluster, "t", idem(4, b"x", epoch=1))
    ).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert (await produce(client, cluster, "t", idem(0, b"e", epoch=1))).error_code == ErrorCode.NONE
    # ...and then the old epoch is fenced.
    assert (
        await produce(client, cluster, "t", idem(4, b"x", epoch=0))
    ).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    # An unknown producer id is accepted at any sequence since Kafka 2.5 (KIP-360).
    stranger = batch(b"s", producer_id=pid + 1000, producer_epoch=0, base_sequence=42)
    assert (await produce(client, cluster, "t", stranger)).error_code == ErrorCode.NONE
    # Only the last five batches are remembered.
    for seq in range(1, 7):
        assert (await produce(client, cluster, "t", idem(seq, b"n", epoch=1))).error_code == ErrorCode.NONE
    old = await produce(client, cluster, "t", idem(1, b"n", epoch=1))
    assert old.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    recent = await produce(client, cluster, "t", idem(6, b"n", epoch=1))
    assert (recent.error_code, recent.base_offset) == (ErrorCode.NONE, log.log_end_offset - 1)
    # A producer id with no sequence is invalid.
    assert (
        await produce(client, cluster, "t", batch(b"z", producer_id=pid, producer_epoch=1))
    ).error_code == ErrorCode.INVALID_RECORD
    await client.close()


async def test_transactional_records_need_a_transactional_id(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    # A producer that began a transaction on t-0 (KIP-890 verification checks it; see
    # tests/mockbroker/handlers/test_transactions_wire.py).
    pid = cluster.transactions.init_producer_id(cluster.clock.now_ms(), "txn", 60000).producer_id
    cluster.transactions.add_partitions(cluster.clock.now_ms(), "txn", pid, 0, [("t", 0)])
    txn = batch(b"a", producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True)
    assert (
        await produce(client, cluster, "t", txn)
    ).error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    req = produce_request(cluster, "t", txn)
    req.transactional_id = "txn"
    resp = await client.request(PRODUCE, 9, req)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    log = cluster.topics["t"].partitions[0].log
    assert (log.high_watermark, log.last_stable_offset) == (1, 0)  # the open transaction holds the LSO
    # A plain write from the same producer while its transaction is open.
    plain = batch(b"b", producer_id=pid, producer_epoch=0, base_sequence=1)
    assert (await produce(client, cluster, "t", plain)).error_code == ErrorCode.INVALID_TXN_STATE
    await client.close()


async def test_create_time_bounds(cluster: MockCluster) -> None:
    """KIP-937 against the broker's clock: a record more than message.timestamp.after.max.ms ahead,
    or (when set) before.max.ms behind, is refused with INVALID_TIMESTAMP, a RecordError per refused
    record and nothing appended. (Margins of half an hour and more: the clock is real.)"""
    cluster.create_topic("t", 1)
    cluster.create_topic("old", 1, configs={"message.timestamp.before.max.ms": "60000"})
    client = await leader_client(cluster, "t")
    now = int(time.time() * 1000)
    p = await produce(client, cluster, "t", batch(b"a", b"b", timestamp=now + 2 * HOUR_MS))
    assert p.error_code == ErrorCode.INVALID_TIMESTAMP
    assert p.error_message == "One or more records have been rejected due to invalid timestamp"
    assert [e.batch_index for e in p.record_errors] == [0, 1]
    window = re.fullmatch(
        rf"Timestamp {now + 2 * HOUR_MS} of message with offset 0 is out of range\. "
        r"The timestamp should be within \[(-?\d+), (-?\d+)\]",
        p.record_errors[0].batch_index_error_message or "",
    )
    assert window is not None and int(window[2]) - int(window[1]) == HOUR_MS + (1 << 63) - 1  # [now - Long.MAX, now + 1 h]
    assert (await produce(client, cluster, "t", batch(b"a", timestamp=now + HOUR_MS // 2))).error_code == ErrorCode.NONE
    old_client = await leader_client(cluster, "old")
    p = await produce(old_client, cluster, "old", batch(b"a", timestamp=now - HOUR_MS))
    assert p.error_code == ErrorCode.INVALID_TIMESTAMP and len(p.record_errors) == 1
    assert cluster.topics["old"].partitions[0].log.log_end_offset == 0
    assert cluster.topics["t"].partitions[0].log.log_end_offset == 1
    await client.close()
    await old_client.close()


async def test_under_a_manual_clock_records_in_bounds_of_the_wall_clock_are_accepted() -> None:
    """A manual clock reads 2026-01-01 until advanced, while real clients stamp records with real
    time: a record in bounds of either the broker's clock or the wall clock is accepted; one out of
    bounds of both is refused."""
    clock = ManualClock()
    cluster = MockCluster(brokers=1, clock=clock)
    await cluster.start()
    try:
        cluster.create_topic("t", 1)
        client = await leader_client(cluster, "t")
        wall = int(time.time() * 1000)
        assert (await produce(client, cluster, "t", batch(b"real", timestamp=wall))).error_code == ErrorCode.NONE
        assert (await produce(client, cluster, "t", batch(b"broker", timestamp=clock.now_ms()))).error_code == ErrorCode.NONE
        later = max(wall, clock.now_ms()) + 2 * HOUR_MS
        assert (await produce(client, cluster, "t", batch(b"future", timestamp=later))).error_code == ErrorCode.INVALID_TIMESTAMP
        await client.close()
    finally:
        await cluster.stop()


async def test_compacted_topics_refuse_records_without_a_key(cluster: MockCluster) -> None:
    cluster.create_topic("c", 1, configs={"cleanup.policy": "compact"})
    client = await leader_client(cluster, "c")
    p = await produce(client, cluster, "c", batch(b"a", b"b", key=None))
    assert p.error_code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in p.record_errors] == [0, 1]
    assert p.error_message is not None and p.error_message.startswith(
        "One or more records have been rejected due to 2 record errors"
    )
    assert (await produce(client, cluster, "c", batch(b"a"))).error_code == ErrorCode.NONE
    await client.close()


def test_the_record_checks_fast_path_reads_kafka_defaults() -> None:
    """replica_manager skips the record checks for a topic without overrides, taking Kafka's
    defaults; that holds while none of the configs it reads takes a cluster-level default."""
    from mockbroker.config import topics
    from mockbroker.log.replica_manager import RECORD_CHECK_CONFIGS

    assert not set(RECORD_CHECK_CONFIGS) & set(topics._CLUSTER_DEFAULTS)
