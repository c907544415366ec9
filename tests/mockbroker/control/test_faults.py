"""Pushed errors at their fault points (mockbroker/control/faults.py): partition-level errors placed
by the per-partition handlers themselves, whole-request answers built per API
(mockbroker/control/error_answers.py), and nothing left on the request path once they are used."""

from __future__ import annotations

import dataclasses

import pytest

from mockbroker import MockCluster
from mockbroker.control.error_answers import ERROR_ANSWERS
from mockbroker.control.intercept import Respond, error_codes
from mockbroker.dispatch.table import HANDLERS
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from mockbroker_protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup
from mockbroker_protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from mockbroker_protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from tests.mockbroker.datapath import batch, connect_to, fetch, fetch_request, partitions_of


def _one_broker_topic(cluster: MockCluster, name: str, partitions: int) -> None:
    """Every partition led by broker 1, so that one request carries them all."""
    cluster.create_topic(name, partitions, replication_factor=1)
    for p in cluster.topics[name].partitions:
        p.leader_id, p.replica_ids = 1, [1]


@pytest.mark.parametrize("version", [12, 13])  # topics by name, then by id (KIP-516)
async def test_fetch_partition_error_answers_that_partition_and_reads_the_others(cluster: MockCluster, version: int) -> None:
    _one_broker_topic(cluster, "t", 2)
    await cluster.control.produce("t", [b"a"], partition=0)
    await cluster.control.produce("t", [b"b"], partition=1)
    await cluster.control.push_errors("Fetch", "KAFKA_STORAGE_ERROR", topic="t", partition=1)
    client = await connect_to(cluster, 1)
    request = fetch_request(cluster, [("t", 0, 0), ("t", 1, 0)], version=version, max_wait_ms=5000)
    answer = {p.partition_index: p for p in partitions_of(await fetch(client, request, version=version))}
    assert (answer[0].error_code, answer[0].high_watermark) == (0, 1)
    assert (answer[1].error_code, answer[1].high_watermark) == (ErrorCode.KAFKA_STORAGE_ERROR, -1)
    answer = {p.partition_index: p for p in partitions_of(await fetch(client, request, version=version))}
    assert [answer[0].error_code, answer[1].error_code] == [0, 0]
    await client.close()


async def test_offset_commit_partition_error_commits_nothing_there(cluster: MockCluster) -> None:
    _one_broker_topic(cluster, "t", 2)
    group = "g"
    await cluster.control.push_errors("OffsetCommit", "OFFSET_METADATA_TOO_LARGE", topic="t", partition=0)
    client = await connect_to(cluster, cluster.coordinator_for(group).node_id)
    request = OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=-1, member_id="",
        topics=[OffsetCommitRequestTopic("t", partitions=[OffsetCommitRequestPartition(0, 5), OffsetCommitRequestPartition(1, 7)])],
    )  # fmt: skip
    response = await client.request(ApiKey.OFFSET_COMMIT, 8, request)
    assert {(p.partition_index, p.error_code) for t in response.topics for p in t.partitions} == {
        (0, ErrorCode.OFFSET_METADATA_TOO_LARGE),
        (1, 0),
    }
    assert await cluster.control.committed_offsets(group) == {"t": {1: 7}}
    await client.close()


async def test_delete_records_and_offset_for_leader_epoch_partition_errors(cluster: MockCluster) -> None:
    _one_broker_topic(cluster, "t", 2)
    await cluster.control.produce("t", [b"a", b"b"], partition=0)
    await cluster.control.produce("t", [b"a", b"b"], partition=1)
    await cluster.control.push_errors("DeleteRecords", "NOT_LEADER_OR_FOLLOWER", topic="t", partition=0)
    await cluster.control.push_errors("OffsetForLeaderEpoch", "UNKNOWN_LEADER_EPOCH", topic="t", partition=1)
    client = await connect_to(cluster, 1)
    deleted = await client.request(
        ApiKey.DELETE_RECORDS, 2,
        DeleteRecordsRequest(topics=[DeleteRecordsTopic("t", [DeleteRecordsPartition(0, 1), DeleteRecordsPartition(1, 1)])]),
    )  # fmt: skip
    assert {(p.partition_index, p.error_code, p.low_watermark) for p in deleted.topics[0].partitions} == {
        (0, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1),
        (1, 0, 1),
    }
    assert [p.log.log_start_offset for p in cluster.topics["t"].partitions] == [0, 1]
    ends = await client.request(
        ApiKey.OFFSET_FOR_LEADER_EPOCH, 4,
        OffsetForLeaderEpochRequest(topics=[OffsetForLeaderTopic("t", [OffsetForLeaderPartition(0, -1, 0), OffsetForLeaderPartition(1, -1, 0)])]),
    )  # fmt: skip
    assert {(p.partition, p.error_code, p.end_offset) for p in ends.topics[0].partitions} == {
        (0, 0, 2),
        (1, ErrorCode.UNKNOWN_LEADER_EPOCH, -1),
    }
    await client.close()


async def test_request_level_produce_error_fails_every_partition_and_appends_nothing(cluster: MockCluster) -> None:
    _one_broker_topic(cluster, "t", 2)
    await cluster.control.enable_request_log()
    await cluster.control.push_errors("Produce", "NOT_ENOUGH_REPLICAS", broker=1)
    client = await connect_to(cluster, 1)
    request = ProduceRequest(
        acks=-1, timeout_ms=1000,
        topic_data=[TopicProduceData(name="t", partition_data=[PartitionProduceData(0, batch(b"a")), PartitionProduceData(1, batch(b"b"))])],
    )  # fmt: skip
    response = await client.request(ApiKey.PRODUCE, 9, request)
    assert {(p.index, p.error_code, p.base_offset) for t in response.responses for p in t.partition_responses} == {
        (0, ErrorCode.NOT_ENOUGH_REPLICAS, -1),
        (1, ErrorCode.NOT_ENOUGH_REPLICAS, -1),
    }
    assert await cluster.control.log_end_offsets("t") == {0: 0, 1: 0}
    (record,) = await cluster.control.requests("Produce")
    assert (record.outcome, record.errors) == ("intercepted", ("NOT_ENOUGH_REPLICAS",))
    await client.close()


async def test_an_interceptor_that_answers_leaves_the_pushed_error_for_the_next_request(cluster: MockCluster) -> None:
    await cluster.control.push_errors("FindCoordinator", "COORDINATOR_NOT_AVAILABLE")
    own = registry.APIS[ApiKey.FIND_COORDINATOR].response(node_id=1, host="h", port=1)
    await cluster.control.intercept("FindCoordinator", lambda _: Respond(own))
    client = await connect_to(cluster, 1)
    first = await client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    second = await client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    assert (first.error_code, second.error_code) == (0, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    await client.close()


async def test_used_errors_leave_the_request_path_fast(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    assert not cluster.intercepting
    await cluster.control.push_errors("ListOffsets", "OFFSET_NOT_AVAILABLE", topic="t", partition=0)
    assert cluster.intercepting  # dispatch's slow path, where the fault points are
    client = await connect_to(cluster, cluster.topics["t"].partitions[0].leader_id)
    request = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic("t", [ListOffsetsPartition(0, -1, -1)])])
    await client.request(ApiKey.LIST_OFFSETS, 7, request)
    assert await cluster.control.pending_errors() == {}
    assert not cluster.intercepting
    await client.close()


# Requests naming two partitions (or keys, or groups), for the whole-request answers below.
_REQUESTS = {
    ApiKey.PRODUCE: ProduceRequest(topic_data=[TopicProduceData(name="t", partition_data=[PartitionProduceData(0), PartitionProduceData(1)])]),
    ApiKey.FETCH: fetch_request(MockCluster(), [("t", 0, 0), ("t", 1, 0)]),
    ApiKey.LIST_OFFSETS: ListOffsetsRequest(topics=[ListOffsetsTopic("t", [ListOffsetsPartition(0), ListOffsetsPartition(1)])]),
    ApiKey.OFFSET_COMMIT: OffsetCommitRequest(
        group_id="g", topics=[OffsetCommitRequestTopic("t", partitions=[OffsetCommitRequestPartition(0), OffsetCommitRequestPartition(1)])]
    ),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: OffsetForLeaderEpochRequest(
        topics=[OffsetForLeaderTopic("t", [OffsetForLeaderPartition(0), OffsetForLeaderPartition(1)])]
    ),
    ApiKey.DELETE_RECORDS: DeleteRecordsRequest(topics=[DeleteRecordsTopic("t", [DeleteRecordsPartition(0), DeleteRecordsPartition(1)])]),
    ApiKey.FIND_COORDINATOR: FindCoordinatorRequest(key="a", coordinator_keys=["a", "b"]),
    ApiKey.OFFSET_FETCH: OffsetFetchRequest(group_id="a", groups=[OffsetFetchRequestGroup("a"), OffsetFetchRequestGroup("b")]),
    ApiKey.DESCRIBE_GROUPS: registry.APIS[ApiKey.DESCRIBE_GROUPS].request(groups=["a", "b"]),
    ApiKey.TXN_OFFSET_COMMIT: TxnOffsetCommitRequest(
        topics=[TxnOffsetCommitRequestTopic("t", [TxnOffsetCommitRequestPartition(0), TxnOffsetCommitRequestPartition(1)])]
    ),
    ApiKey.ADD_PARTITIONS_TO_TXN: AddPartitionsToTxnRequest(v3_and_below_topics=[AddPartitionsToTxnTopic("t", [0, 1])]),
}
_PER_ENTRY = {ApiKey.FIND_COORDINATOR: 4, ApiKey.OFFSET_FETCH: 8}  # from these versions, per key/group
_TOP_LEVEL_FROM = {ApiKey.ADD_PARTITIONS_TO_TXN: 4}  # from these versions, one top-level error (KIP-890)


@pytest.mark.parametrize("api_key", sorted(ERROR_ANSWERS), ids=lambda k: registry.APIS[k].name)
def test_every_whole_request_answer_carries_the_error_everywhere_at_every_served_version(api_key: ApiKey) -> None:
    request = _REQUESTS.get(api_key) or registry.APIS[api_key].request()
    lo, hi = HANDLERS[api_key].versions
    for version in range(lo, hi + 1):
        answer = ERROR_ANSWERS[api_key](version, request, ErrorCode.NOT_COORDINATOR)
        assert error_codes(answer) == (ErrorCode.NOT_COORDINATOR,)
        registry.encode_response(api_key, version, 0, answer)  # encodable as served
        if api_key in _REQUESTS and _PER_ENTRY.get(api_key, 0) <= version < _TOP_LEVEL_FROM.get(api_key, 1 << 15):
            top = 1 if api_key == ApiKey.FETCH else 0  # Fetch has it at the top too (KIP-227)
            assert _carrying(answer, ErrorCode.NOT_COORDINATOR) == 2 + top, version


def _carrying(obj: object, code: int) -> int:
    """How many messages in ``obj`` carry ``code`` (each partition, key or group entry)."""
    if not dataclasses.is_dataclass(obj):
        return 0
    count = sum(1 for f in dataclasses.fields(obj) if f.name.endswith("error_code") and getattr(obj, f.name) == code)
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        for item in value if isinstance(value, list) else [value]:
            count += _carrying(item, code)
    return count
