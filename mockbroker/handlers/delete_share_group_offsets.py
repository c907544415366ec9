"""DeleteShareGroupOffsets (key 92), v0: drop an empty share group's share-partition state for
whole topics (KIP-932; kafka-share-groups.sh --delete-offsets).

As KafkaApis.handleDeleteShareGroupOffsetsRequest and GroupCoordinatorService.
deleteShareGroupOffsets: "" is INVALID_GROUP_ID and a group this broker does not coordinate
NOT_COORDINATOR (top level); an unknown group (or one of another kind) GROUP_ID_NOT_FOUND, one with
members NON_EMPTY_GROUP; a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.coordinators.errors import GroupError
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker.handlers.describe_share_group_offsets import error_message
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DELETE_SHARE_GROUP_OFFSETS
VERSIONS = (0, 0)


async def handle(ctx: RequestContext, req: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse:
    cluster = ctx.cluster
    if not req.group_id:
        code = ErrorCode.INVALID_GROUP_ID
        return DeleteShareGroupOffsetsResponse(error_code=code, error_message=error_message(code))
    if not is_group_coordinator(ctx, req.group_id):
        code = ErrorCode.NOT_COORDINATOR
        return DeleteShareGroupOffsetsResponse(error_code=code, error_message=error_message(code))
    answers: list[DeleteShareGroupOffsetsResponseTopic] = []
    valid: list[str] = []
    for topic in req.topics:
        known = cluster.topics.get(topic.topic_name)
        if known is None:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            answers.append(
                DeleteShareGroupOffsetsResponseTopic(
                    topic.topic_name, error_code=code, error_message=error_message(code)
                )
            )
        else:
            valid.append(topic.topic_name)
            answers.append(DeleteShareGroupOffsetsResponseTopic(topic.topic_name, known.topic_id))
    try:
        cluster.groups.share_offsets.delete(ctx.now_ms, req.group_id, valid)
    except GroupError as exc:
        return DeleteShareGroupOffsetsResponse(error_code=exc.code, error_message=exc.message)
    return DeleteShareGroupOffsetsResponse(responses=answers)
