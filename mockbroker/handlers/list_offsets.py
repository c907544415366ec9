"""ListOffsets (key 2), v1-11: offsets by timestamp, and the special earliest/latest lookups.

v1: one offset and its timestamp per partition. v2: isolation_level (read_committed answers
"latest" with the last stable offset). v4 (KIP-320): current_leader_epoch checked, leader_epoch
answered. v5: OFFSET_NOT_AVAILABLE possible (never here: one replica). v6: flexible.
v7 (KIP-734): -3, the record with the largest timestamp. v8 (KIP-405): -4, earliest local
(the log start: no tiered storage). v9 (KIP-1005): -5, latest tiered: -1 without tiered storage.
v10 (KIP-1075): timeout_ms. v11 (KIP-1023): -6, earliest pending upload: -1 likewise.
v0 (old_style_offsets) was removed by KIP-896 and is not served; dispatch closes the connection,
as Kafka 4 does.

As ReplicaManager.fetchOffset: a partition named twice is INVALID_REQUEST; a negative timestamp
that is not a sentinel of this version is UNSUPPORTED_VERSION; replica_id -2 (a debugging tool)
may ask any replica and reads up to the log end; consumers (-1) read up to the high watermark,
or the last stable offset at read_committed, and a lookup that lands beyond that is answered
with offset and timestamp -1.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.log.replica_manager import partition_error
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import Topic

API_KEY = ApiKey.LIST_OFFSETS
VERSIONS = (1, 11)

# ListOffsetsRequest sentinels
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6
# ReplicaManager.timestampMinSupportedVersion
SENTINEL_MIN_VERSION = {
    LATEST_TIMESTAMP: 1,
    EARLIEST_TIMESTAMP: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
READ_COMMITTED = 1
UNKNOWN = -1  # UNKNOWN_OFFSET, UNKNOWN_TIMESTAMP, UNKNOWN_EPOCH


async def handle(ctx: RequestContext, req: ListOffsetsRequest) -> ListOffsetsResponse:
    counts = Counter((t.name, p.partition_index) for t in req.topics for p in t.partitions)
    answered: set[tuple[str, int]] = set()
    topics = []
    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    for wanted in req.topics:
        topic = ctx.cluster.topics.get(wanted.name)
        # KafkaApis.handleListOffsetRequest: DESCRIBE on the topic, before it is known to exist
        denied = ctx.cluster.authorizer is not None and not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted.name)
        partitions = []
        for p in wanted.partitions:
            key = (wanted.name, p.partition_index)
            if key in answered:
                continue  # Kafka answers each partition once (a map by partition)
            answered.add(key)
            fault = None if faults is None else faults.partition(wanted.name, p.partition_index)
            if fault is not None:
                partitions.append(_error(p, fault))
            elif denied:
                partitions.append(_error(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif counts[key] > 1:
                partitions.append(_error(p, ErrorCode.INVALID_REQUEST))
            else:
                partitions.append(_list_offset(ctx, req, topic, p))
        topics.append(ListOffsetsTopicResponse(name=wanted.name, partitions=partitions))
    return ListOffsetsResponse(topics=topics)


def _list_offset(
    ctx: RequestContext, req: ListOffsetsRequest, topic: Topic | None, p: ListOffsetsPartition
) -> ListOffsetsPartitionResponse:
    ts = p.timestamp
    if ts < 0 and ctx.api_version < SENTINEL_MIN_VERSION.get(ts, 1 << 15):
        return _error(p, ErrorCode.UNSUPPORTED_VERSION)
    if topic is None or not 0 <= p.partition_index < len(topic.partitions):
        return _error(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    partition = topic.partitions[p.partition_index]
    error = partition_error(
        ctx.broker, partition, p.current_leader_epoch, require_leader=req.replica_id != DEBUGGING_REPLICA_ID
    )
    if error != ErrorCode.NONE:
        return _error(p, error)
    log = partition.log
    if req.replica_id != CONSUMER_REPLICA_ID:
        last_fetchable = log.log_end_offset
    elif req.isolation_level == READ_COMMITTED:
        last_fetchable = log.last_stable_offset
    else:
        last_fetchable = log.high_watermark
    if ts == LATEST_TIMESTAMP:
        return _found(p, UNKNOWN, last_fetchable, log.leader_epoch)
    if ts in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        return _found(p, UNKNOWN, log.log_start_offset, log.epoch_for_offset(log.log_start_offset))
    if ts in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
        return _found(p, UNKNOWN, UNKNOWN, UNKNOWN)  # UnifiedLog: no remote storage
    found = log.max_timestamp_offset() if ts == MAX_TIMESTAMP else log.offset_for_timestamp(ts)
    if found is None or found[0] >= last_fetchable:
        return _found(p, UNKNOWN, UNKNOWN, UNKNOWN)
    offset, timestamp = found
    return _found(p, timestamp, offset, log.epoch_for_offset(offset))


def _found(p: ListOffsetsPartition, timestamp: int, offset: int, leader_epoch: int | None) -> ListOffsetsPartitionResponse:
    return ListOffsetsPartitionResponse(
        partition_index=p.partition_index,
        error_code=ErrorCode.NONE,
        timestamp=timestamp,
        offset=offset,
        leader_epoch=UNKNOWN if leader_epoch is None else leader_epoch,
    )


def _error(p: ListOffsetsPartition, code: ErrorCode) -> ListOffsetsPartitionResponse:
    return ListOffsetsPartitionResponse(
        partition_index=p.partition_index, error_code=code, timestamp=UNKNOWN, offset=UNKNOWN
    )
