"""AlterShareGroupOffsets (key 91), v0: set an empty share group's share-partition start offsets
(KIP-932; kafka-share-groups.sh --reset-offsets).

As KafkaApis.handleAlterShareGroupOffsetsRequest and GroupCoordinatorService.alterShareGroupOffsets:
"" is INVALID_GROUP_ID and a group this broker does not coordinate NOT_COORDINATOR (top level); a
topic or partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION for its partitions; a group
with members is NON_EMPTY_GROUP; an unknown group id becomes an empty share group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.coordinators.errors import GroupError
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker.handlers.describe_share_group_offsets import error_message
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    AlterShareGroupOffsetsResponsePartition,
    AlterShareGroupOffsetsResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.ALTER_SHARE_GROUP_OFFSETS
VERSIONS = (0, 0)


def _top_level(code: ErrorCode, message: str) -> AlterShareGroupOffsetsResponse:
    return AlterShareGroupOffsetsResponse(error_code=code, error_message=message)


async def handle(ctx: RequestContext, req: AlterShareGroupOffsetsRequest) -> AlterShareGroupOffsetsResponse:
    cluster = ctx.cluster
    if not req.group_id:
        return _top_level(ErrorCode.INVALID_GROUP_ID, error_message(ErrorCode.INVALID_GROUP_ID))
    if not is_group_coordinator(ctx, req.group_id):
        return _top_level(ErrorCode.NOT_COORDINATOR, error_message(ErrorCode.NOT_COORDINATOR))
    # Topics that do not exist are answered first, then the others in the request's order (Kafka 4.3.1).
    unknown: list[AlterShareGroupOffsetsResponseTopic] = []
    answers: list[AlterShareGroupOffsetsResponseTopic] = []
    valid: dict[str, dict[int, int]] = {}
    missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    for topic in req.topics:
        known = cluster.topics.get(topic.topic_name)
        if known is None:
            unknown.append(AlterShareGroupOffsetsResponseTopic(topic.topic_name, partitions=[
                AlterShareGroupOffsetsResponsePartition(p.partition_index, missing, error_message(missing)) for p in topic.partitions
            ]))  # fmt: skip
            continue
        answer = AlterShareGroupOffsetsResponseTopic(topic.topic_name, known.topic_id)
        answers.append(answer)
        for p in topic.partitions:
            if cluster.partition(topic.topic_name, p.partition_index) is None:
                answer.partitions.append(AlterShareGroupOffsetsResponsePartition(p.partition_index, missing, error_message(missing)))
            else:
                valid.setdefault(topic.topic_name, {})[p.partition_index] = p.start_offset
                answer.partitions.append(AlterShareGroupOffsetsResponsePartition(p.partition_index))
    try:
        cluster.groups.share_offsets.alter(ctx.now_ms, req.group_id, valid)
    except GroupError as exc:
        return _top_level(exc.code, exc.message)
    return AlterShareGroupOffsetsResponse(responses=unknown + answers)
