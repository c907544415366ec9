"""DeleteRecords (key 21), v0-2: move partitions' log start offset (low watermark) forward.

v1: the same as v0 (responses sent before throttling). v2: flexible.

Per partition, as KafkaApis.handleDeleteRecordsRequest and Partition.deleteRecordsOnLeader do:
an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION; an internal topic is
INVALID_TOPIC_EXCEPTION; a broker other than the leader answers NOT_LEADER_OR_FOLLOWER (clients
send each partition to its leader); a topic whose cleanup.policy lacks "delete" is
POLICY_VIOLATION; offset -1 means the high watermark; an offset below 0 or above the high
watermark is OFFSET_OUT_OF_RANGE. An offset at or below the current log start changes nothing.
Failed partitions report low watermark -1. With one in-sync copy per partition here, the new
low watermark is final at once (Kafka waits for the followers, up to timeout_ms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.config.topics import effective_value
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._topic_admin import is_internal
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DELETE_RECORDS
VERSIONS = (0, 2)

HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK
INVALID_LOW_WATERMARK = -1  # DeleteRecordsResponse.INVALID_LOW_WATERMARK


def _delete(ctx: RequestContext, topic_name: str, wanted: DeleteRecordsPartition) -> DeleteRecordsPartitionResult:
    def failed(code: ErrorCode) -> DeleteRecordsPartitionResult:
        return DeleteRecordsPartitionResult(wanted.partition_index, INVALID_LOW_WATERMARK, code)

    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    fault = None if faults is None else faults.partition(topic_name, wanted.partition_index)
    if fault is not None:
        return failed(fault)  # nothing deleted
    if not authorized(ctx, AclOperation.DELETE, ResourceType.TOPIC, topic_name):  # KafkaApis: DELETE on the topic
        return failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    topic = ctx.cluster.topics.get(topic_name)
    partition = ctx.cluster.partition(topic_name, wanted.partition_index)
    if topic is None or partition is None:
        return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if is_internal(topic):
        return failed(ErrorCode.INVALID_TOPIC_EXCEPTION)
    if partition.leader_id != ctx.broker.node_id:
        return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    policy = effective_value("cleanup.policy", topic.configs, ctx.cluster.config)
    if not isinstance(policy, list) or "delete" not in [p.lower() for p in policy]:
        return failed(ErrorCode.POLICY_VIOLATION)
    log = partition.log
    offset = log.high_watermark if wanted.offset == HIGH_WATERMARK else wanted.offset
    if offset < 0 or offset > log.high_watermark:
        return failed(ErrorCode.OFFSET_OUT_OF_RANGE)
    log.delete_records_before(offset)
    return DeleteRecordsPartitionResult(wanted.partition_index, log.log_start_offset, ErrorCode.NONE)


async def handle(ctx: RequestContext, req: DeleteRecordsRequest) -> DeleteRecordsResponse:
    return DeleteRecordsResponse(
        throttle_time_ms=0,
        topics=[
            DeleteRecordsTopicResult(topic.name, [_delete(ctx, topic.name, p) for p in topic.partitions])
            for topic in req.topics
        ],
    )
