"""ListOffsets, OffsetForLeaderEpoch and retention over loopback."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.config.cluster import RETENTION_CHECK_INTERVAL_MS
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from mockbroker_protocol.records import SimpleRecord, build_batch
from tests.mockbroker.datapath import (
    LIST_OFFSETS,
    OFFSET_FOR_LEADER_EPOCH,
    PRODUCE,
    batch,
    connect_to,
    fetch,
    fetch_request,
    leader_client,
    list_offset,
    not_leader_of,
    only_partition,
    produce,
    produce_request,
)

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5


async def test_earliest_latest_and_by_timestamp(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    empty = await list_offset(client, "t", LATEST)
    assert (empty.error_code, empty.offset, empty.timestamp, empty.leader_epoch) == (0, 0, -1, 0)
    # Three records at 1000, 5000, 3000 in one batch, then one at 2000.
    await produce(client, cluster, "t", build_batch([SimpleRecord(b"k", b"a", timestamp=t) for t in (1000, 5000, 3000)]))
    await produce(client, cluster, "t", build_batch([SimpleRecord(b"k", b"b", timestamp=2000)]))
    assert (await list_offset(client, "t", EARLIEST)).offset == 0
    assert (await list_offset(client, "t", EARLIEST_LOCAL)).offset == 0
    assert (await list_offset(client, "t", LATEST)).offset == 4
    # The first record with a timestamp at or after the target: exact within a batch.
    found = await list_offset(client, "t", 4000)
    assert (found.offset, found.timestamp, found.leader_epoch) == (1, 5000, 0)
    assert ((await list_offset(client, "t", 1500)).offset, (await list_offset(client, "t", 1500)).timestamp) == (1, 5000)
    assert (await list_offset(client, "t", 0)).offset == 0
    missing = await list_offset(client, "t", 9000)
    assert (missing.error_code, missing.offset, missing.timestamp) == (0, -1, -1)
    # KIP-734: the record with the largest timestamp.
    top = await list_offset(client, "t", MAX_TIMESTAMP, version=7)
    assert (top.offset, top.timestamp) == (1, 5000)
    tiered = await list_offset(client, "t", LATEST_TIERED, version=9)
    assert (tiered.error_code, tiered.offset, tiered.timestamp, tiered.leader_epoch) == (0, -1, -1, -1)
    await client.close()


async def test_list_offsets_versions_and_errors(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", batch(b"a"))
    for version in (1, 2, 4, 6, 10, 11):
        assert (await list_offset(client, "t", LATEST, version=version)).offset == 1, version
    # A sentinel newer than the request version.
    assert (await list_offset(client, "t", MAX_TIMESTAMP, version=6)).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert (await list_offset(client, "t", -7, version=11)).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert (await list_offset(client, "t", LATEST, partition=4)).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    follower = await connect_to(cluster, not_leader_of(cluster, "t"))
    assert (await list_offset(follower, "t", LATEST)).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # A partition asked for twice is INVALID_REQUEST, answered once.
    twice = ListOffsetsRequest(
        replica_id=-1,
        topics=[ListOffsetsTopic("t", [ListOffsetsPartition(partition_index=0, timestamp=-1)] * 2)],
    )
    resp = await client.request(LIST_OFFSETS, 9, twice)
    assert [p.error_code for p in resp.topics[0].partitions] == [ErrorCode.INVALID_REQUEST]
    # KIP-320: the client's leader epoch is checked.
    fenced = ListOffsetsRequest(
        replica_id=-1,
        topics=[ListOffsetsTopic("t", [ListOffsetsPartition(partition_index=0, current_leader_epoch=3, timestamp=-1)])],
    )
    assert (await client.request(LIST_OFFSETS, 9, fenced)).topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    await client.close()
    await follower.close()


async def test_latest_is_the_last_stable_offset_at_read_committed(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", batch(b"a"))
    # A producer that began a transaction on t-0 (Produce verifies it with the coordinator, KIP-890).
    pid = cluster.transactions.init_producer_id(cluster.clock.now_ms(), "tx", 60000).producer_id
    cluster.transactions.add_partitions(cluster.clock.now_ms(), "tx", pid, 0, [("t", 0)])
    req = produce_request(cluster, "t", batch(b"txn", producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True))
    req.transactional_id = "tx"
    assert (await client.request(PRODUCE, 9, req)).responses[0].partition_responses[0].error_code == 0
    assert (await list_offset(client, "t", LATEST, isolation_level=0)).offset == 2
    assert (await list_offset(client, "t", LATEST, isolation_level=1)).offset == 1
    await client.close()


async def test_offset_for_leader_epoch(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    client = await leader_client(cluster, "t")
    await produce(client, cluster, "t", batch(b"a", b"b"))

    async def ask(epoch: int, current: int = -1, version: int = 4) -> tuple[int, int, int]:
        req = OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[OffsetForLeaderTopic("t", [OffsetForLeaderPartition(partition=0, current_leader_epoch=current, leader_epoch=epoch)])],
        )
        p = (await client.request(OFFSET_FOR_LEADER_EPOCH, version, req)).topics[0].partitions[0]
        return p.error_code, p.leader_epoch, p.end_offset

    assert await ask(0) == (0, 0, 2)  # the current epoch ends at the log end
    assert await ask(0, version=2) == (0, 0, 2)
    assert await ask(5) == (0, -1, -1)  # unknown: UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET
    assert (await ask(0, current=1))[0] == ErrorCode.UNKNOWN_LEADER_EPOCH
    # A new leader epoch: epoch 0 now ends where epoch 1 began.
    log = cluster.topics["t"].partitions[0].log
    log.leader_epoch = 1
    await produce(client, cluster, "t", batch(b"c"))
    assert await ask(0) == (0, 0, 2)
    assert await ask(1) == (0, 1, 3)
    assert (await ask(1, current=0))[0] == ErrorCode.FENCED_LEADER_EPOCH
    await client.close()


async def test_retention_bytes_moves_the_log_start_offset(cluster: MockCluster) -> None:
    one = batch(b"x" * 100)
    cluster.create_topic("t", 1, configs={"retention.bytes": str(2 * len(one))})
    client = await leader_client(cluster, "t")
    for _ in range(5):
        await produce(client, cluster, "t", one)
    log = cluster.topics["t"].partitions[0].log
    assert (log.log_start_offset, log.log_end_offset) == (3, 5)
    assert log.size_bytes == 2 * len(one)
    assert (await list_offset(client, "t", EARLIEST)).offset == 3
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 0)])))
    assert p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    p = only_partition(await fetch(client, fetch_request(cluster, [("t", 0, 3)])))
    assert (p.error_code, p.log_start_offset) == (ErrorCode.NONE, 3)
    await client.close()


async def test_retention_ms_applies_on_kafkas_check_interval() -> None:
    clock = ManualClock()
    async with MockCluster(brokers=1, clock=clock) as cluster:
        cluster.create_topic("t", 1, configs={"retention.ms": "60000"})
        client = await leader_client(cluster, "t")
        now = clock.now_ms()
        old = batch(b"old", timestamp=now - 3_600_000)
        await produce(client, cluster, "t", old)
        await produce(client, cluster, "t", old)
        log = cluster.topics["t"].partitions[0].log
        # Like Kafka, records past retention.ms are deleted by the periodic check, not on append.
        assert log.log_start_offset == 0
        # The check at the interval deletes the first old batch; the second is the active one
        # (Kafka never deletes the active segment).
        clock.advance(RETENTION_CHECK_INTERVAL_MS)
        assert log.log_start_offset == 1
        # A new batch makes the second old one inactive; it goes at the next check, not at once.
        await produce(client, cluster, "t", batch(b"new", timestamp=clock.now_ms()))
        assert (log.log_start_offset, log.log_end_offset) == (1, 3)
        clock.advance(RETENTION_CHECK_INTERVAL_MS)
        assert (log.log_start_offset, log.log_end_offset) == (2, 3)
        await client.close()
        assert cluster.internal_errors == []
