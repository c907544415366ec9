"""Whole-request error answers for pushed errors (``push_errors`` without ``topic=``): the answer
a broker gives when a request fails as a whole, built per API with that API's generated classes,
as Kafka's ``AbstractRequest.getErrorResponse`` builds it for each request type.

The handler does not run (a failed OffsetCommit commits nothing, a failed JoinGroup joins nobody).
Where the error goes:
- APIs with a top-level ``error_code`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups,
  InitProducerId, FindCoordinator v0-3, OffsetFetch v1-7, OffsetDelete, ...) get it there.
- Per-partition APIs (Produce, Fetch, ListOffsets, OffsetCommit, OffsetForLeaderEpoch,
  DeleteRecords, TxnOffsetCommit, AddPartitionsToTxn v0-3) get it in every partition the request named, with Kafka's unknown values (-1)
  in the partition's offsets; Fetch also at the top (KIP-227 sessions).
- Per-key APIs get it in every entry: FindCoordinator v4+ (each key), DescribeGroups (each
  group), OffsetFetch v8+ (each group).
Metadata is not here: its handler runs (brokers are still listed) and puts the error in every
topic entry (mockbroker/handlers/metadata.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    api_versions,
    consumer_group_heartbeat,
    delete_records,
    describe_cluster,
    describe_groups,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
    txn_offset_commit,
)

UNKNOWN = -1  # Kafka's unknown offset, timestamp, epoch and node
FIND_COORDINATOR_KEYS_MIN_VERSION = 4  # KIP-699: batched coordinator keys
OFFSET_FETCH_GROUPS_MIN_VERSION = 8  # KIP-709: batched groups
ADD_PARTITIONS_TO_TXN_BATCHED_MIN_VERSION = 4  # KIP-890: batched transactions, one top-level error

# (api version, decoded request, error code) -> the API's response
ErrorAnswer = Callable[[int, Any, int], Any]


def _produce(version: int, req: produce.ProduceRequest, code: int) -> produce.ProduceResponse:
    return produce.ProduceResponse(
        responses=[
            produce.TopicProduceResponse(
                name=t.name,
                topic_id=t.topic_id,
                partition_responses=[
                    produce.PartitionProduceResponse(
                        index=p.index, error_code=code, base_offset=UNKNOWN, log_append_time_ms=UNKNOWN, log_start_offset=UNKNOWN
                    )
                    for p in t.partition_data
                ],
            )
            for t in req.topic_data
        ]
    )


def _fetch(version: int, req: fetch.FetchRequest, code: int) -> fetch.FetchResponse:
    return fetch.FetchResponse(
        error_code=code,
        responses=[
            fetch.FetchableTopicResponse(
                topic=t.topic,
                topic_id=t.topic_id,
                partitions=[
                    fetch.PartitionData(
                        partition_index=p.partition,
                        error_code=code,
                        high_watermark=UNKNOWN,
                        last_stable_offset=UNKNOWN,
                        log_start_offset=UNKNOWN,
                        records=None,
                    )
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ],
    )


def _list_offsets(version: int, req: list_offsets.ListOffsetsRequest, code: int) -> list_offsets.ListOffsetsResponse:
    return list_offsets.ListOffsetsResponse(
        topics=[
            list_offsets.ListOffsetsTopicResponse(
                name=t.name,
                partitions=[
                    list_offsets.ListOffsetsPartitionResponse(
                        partition_index=p.partition_index, error_code=code, timestamp=UNKNOWN, offset=UNKNOWN, leader_epoch=UNKNOWN
                    )
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def _offset_commit(version: int, req: offset_commit.OffsetCommitRequest, code: int) -> offset_commit.OffsetCommitResponse:
    return offset_commit.OffsetCommitResponse(
        topics=[
            offset_commit.OffsetCommitResponseTopic(
                name=t.name,
                topic_id=t.topic_id,
                partitions=[offset_commit.OffsetCommitResponsePartition(p.partition_index, code) for p in t.partitions],
            )
            for t in req.topics
        ]
    )


def _offset_for_leader_epoch(
    version: int, req: offset_for_leader_epoch.OffsetForLeaderEpochRequest, code: int
) -> offset_for_leader_epoch.OffsetForLeaderEpochResponse:
    return offset_for_leader_epoch.OffsetForLeaderEpochResponse(
        topics=[
            offset_for_leader_epoch.OffsetForLeaderTopicResult(
                topic=t.topic,
                partitions=[
                    offset_for_leader_epoch.EpochEndOffset(
                        error_code=code, partition=p.partition, leader_epoch=UNKNOWN, end_offset=UNKNOWN
                    )
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def _delete_records(version: int, req: delete_records.DeleteRecordsRequest, code: int) -> delete_records.DeleteRecordsResponse:
    return delete_records.DeleteRecordsResponse(
        topics=[
            delete_records.DeleteRecordsTopicResult(
                t.name, [delete_records.DeleteRecordsPartitionResult(p.partition_index, UNKNOWN, code) for p in t.partitions]
            )
            for t in req.topics
        ]
    )


def _find_coordinator(
    version: int, req: find_coordinator.FindCoordinatorRequest, code: int
) -> find_coordinator.FindCoordinatorResponse:
    if version >= FIND_COORDINATOR_KEYS_MIN_VERSION:
        return find_coordinator.FindCoordinatorResponse(
            coordinators=[
                find_coordinator.Coordinator(key=k, node_id=UNKNOWN, host="", port=UNKNOWN, error_code=code)
                for k in req.coordinator_keys
            ]
        )
    return find_coordinator.FindCoordinatorResponse(error_code=code, error_message=None, node_id=UNKNOWN, host="", port=UNKNOWN)


def _offset_fetch(version: int, req: offset_fetch.OffsetFetchRequest, code: int) -> offset_fetch.OffsetFetchResponse:
    if version >= OFFSET_FETCH_GROUPS_MIN_VERSION:
        return offset_fetch.OffsetFetchResponse(
            groups=[offset_fetch.OffsetFetchResponseGroup(group_id=g.group_id, error_code=code) for g in req.groups]
        )
    return offset_fetch.OffsetFetchResponse(error_code=code)


def _describe_groups(
    version: int, req: describe_groups.DescribeGroupsRequest, code: int
) -> describe_groups.DescribeGroupsResponse:
    return describe_groups.DescribeGroupsResponse(
        groups=[describe_groups.DescribedGroup(error_code=code, group_id=g) for g in req.groups]
    )


def _txn_offset_commit(
    version: int, req: txn_offset_commit.TxnOffsetCommitRequest, code: int
) -> txn_offset_commit.TxnOffsetCommitResponse:
    return txn_offset_commit.TxnOffsetCommitResponse(
        topics=[
            txn_offset_commit.TxnOffsetCommitResponseTopic(
                name=t.name,
                partitions=[txn_offset_commit.TxnOffsetCommitResponsePartition(p.partition_index, code) for p in t.partitions],
            )
            for t in req.topics
        ]
    )


def _add_partitions_to_txn(
    version: int, req: add_partitions_to_txn.AddPartitionsToTxnRequest, code: int
) -> add_partitions_to_txn.AddPartitionsToTxnResponse:
    """AddPartitionsToTxnRequest.getErrorResponse: v4+ (KIP-890's batched form) at the top, v0-3
    in every partition the request named."""
    if version >= ADD_PARTITIONS_TO_TXN_BATCHED_MIN_VERSION:
        return add_partitions_to_txn.AddPartitionsToTxnResponse(error_code=code)
    return add_partitions_to_txn.AddPartitionsToTxnResponse(
        results_by_topic_v3_and_below=[
            add_partitions_to_txn.AddPartitionsToTxnTopicResult(
                name=t.name,
                results_by_partition=[add_partitions_to_txn.AddPartitionsToTxnPartitionResult(p, code) for p in t.partitions],
            )
            for t in req.v3_and_below_topics
        ]
    )


ERROR_ANSWERS: dict[ApiKey, ErrorAnswer] = {
    ApiKey.PRODUCE: _produce,
    ApiKey.FETCH: _fetch,
    ApiKey.LIST_OFFSETS: _list_offsets,
    ApiKey.OFFSET_COMMIT: _offset_commit,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: _offset_for_leader_epoch,
    ApiKey.DELETE_RECORDS: _delete_records,
    ApiKey.FIND_COORDINATOR: _find_coordinator,
    ApiKey.OFFSET_FETCH: _offset_fetch,
    ApiKey.DESCRIBE_GROUPS: _describe_groups,
    # A top-level error_code and nothing else to fill:
    ApiKey.JOIN_GROUP: lambda v, r, c: join_group.JoinGroupResponse(error_code=c),
    ApiKey.HEARTBEAT: lambda v, r, c: heartbeat.HeartbeatResponse(error_code=c),
    ApiKey.LEAVE_GROUP: lambda v, r, c: leave_group.LeaveGroupResponse(error_code=c),
    ApiKey.SYNC_GROUP: lambda v, r, c: sync_group.SyncGroupResponse(error_code=c),
    ApiKey.LIST_GROUPS: lambda v, r, c: list_groups.ListGroupsResponse(error_code=c),
    ApiKey.API_VERSIONS: lambda v, r, c: api_versions.ApiVersionsResponse(error_code=c),
    ApiKey.INIT_PRODUCER_ID: lambda v, r, c: init_producer_id.InitProducerIdResponse(error_code=c),
    ApiKey.OFFSET_DELETE: lambda v, r, c: offset_delete.OffsetDeleteResponse(error_code=c),
    ApiKey.DESCRIBE_CLUSTER: lambda v, r, c: describe_cluster.DescribeClusterResponse(error_code=c),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: lambda v, r, c: consumer_group_heartbeat.ConsumerGroupHeartbeatResponse(error_code=c),
    # Transactions (KIP-98): the coordinator's answers.
    ApiKey.TXN_OFFSET_COMMIT: _txn_offset_commit,
    ApiKey.ADD_PARTITIONS_TO_TXN: _add_partitions_to_txn,
    ApiKey.ADD_OFFSETS_TO_TXN: lambda v, r, c: add_offsets_to_txn.AddOffsetsToTxnResponse(error_code=c),
    ApiKey.END_TXN: lambda v, r, c: end_txn.EndTxnResponse(error_code=c),
    ApiKey.LIST_TRANSACTIONS: lambda v, r, c: list_transactions.ListTransactionsResponse(error_code=c),
}


def _metadata(version: int, req: metadata.MetadataRequest, code: int) -> metadata.MetadataResponse:
    """MetadataRequest.getErrorResponse: each topic asked for with the error, no brokers (and the
    top-level error from v13, KIP-1102)."""
    topics = [
        metadata.MetadataResponseTopic(error_code=code, name=t.name or "", topic_id=t.topic_id, partitions=[])
        for t in req.topics or ()
    ]
    return metadata.MetadataResponse(topics=topics, error_code=code if version >= 13 else 0)


def request_error_answer(api_key: int, version: int, request: Any, code: int) -> Any | None:
    """A request's ``AbstractRequest.getErrorResponse`` when no handler runs at all (a non-SASL
    request during a SASL exchange, SaslServerAuthenticator): None for an API not built here."""
    if api_key == ApiKey.METADATA:
        return _metadata(version, request, code)
    build = ERROR_ANSWERS.get(ApiKey(api_key)) if api_key in ApiKey._value2member_map_ else None
    return None if build is None else build(version, request, code)
