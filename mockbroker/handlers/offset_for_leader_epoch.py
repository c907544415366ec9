"""OffsetForLeaderEpoch (key 23), v2-4: where a leader epoch ended, for truncation checks.

Consumers ask after a leader change whether their position still exists (KIP-320), followers
before truncating (KIP-101). v2: current_leader_epoch checked (FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH). v3: replica_id. v4: flexible. v0-1 were removed by KIP-896 and are not
served (dispatch closes the connection, as Kafka 4 does).

Answers as Partition.lastOffsetForLeaderEpoch with fetchOnlyFromLeader = true (ReplicaManager):
the current epoch ends at the log end offset; an older epoch at the start of the next one; an
unknown or newer epoch, or UNDEFINED_EPOCH, gets leader_epoch -1 and end_offset -1 with no error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.log.replica_manager import partition_error
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopicResult,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH
VERSIONS = (2, 4)


async def handle(ctx: RequestContext, req: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    return OffsetForLeaderEpochResponse(
        topics=[
            OffsetForLeaderTopicResult(
                topic=wanted.topic,
                partitions=[_end_offset(ctx, wanted.topic, p) for p in wanted.partitions],
            )
            for wanted in req.topics
        ]
    )


def _end_offset(ctx: RequestContext, name: str, p: OffsetForLeaderPartition) -> EpochEndOffset:
    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    fault = None if faults is None else faults.partition(name, p.partition)
    if fault is not None:
        return EpochEndOffset(error_code=fault, partition=p.partition)
    if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name):  # KafkaApis: DESCRIBE for a client
        return EpochEndOffset(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition=p.partition)
    topic = ctx.cluster.topics.get(name)
    if topic is None or not 0 <= p.partition < len(topic.partitions):
        return EpochEndOffset(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partition=p.partition)
    partition = topic.partitions[p.partition]
    error = partition_error(ctx.broker, partition, p.current_leader_epoch)
    if error != ErrorCode.NONE:
        return EpochEndOffset(error_code=error, partition=p.partition)
    epoch, end_offset = partition.log.end_offset_for_epoch(p.leader_epoch)
    return EpochEndOffset(error_code=ErrorCode.NONE, partition=p.partition, leader_epoch=epoch, end_offset=end_offset)
