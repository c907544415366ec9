"""OffsetDelete (key 47), v0: delete a group's committed offsets for topics it no longer consumes.

As KafkaApis.handleOffsetDeleteRequest and GroupCoordinatorService.deleteOffsets
(kafka-group-semantics §8.4): unknown topics and partitions are UNKNOWN_TOPIC_OR_PARTITION (broker
level); INVALID_GROUP_ID for "", NOT_COORDINATOR on the wrong broker, GROUP_ID_NOT_FOUND and
NON_EMPTY_GROUP from the coordinator. A top-level error replaces every partition answer
(OffsetDeleteResponse.Builder.merge); otherwise broker-level answers come first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.OFFSET_DELETE
VERSIONS = (0, 0)


async def handle(ctx: RequestContext, req: OffsetDeleteRequest) -> OffsetDeleteResponse:
    cluster = ctx.cluster
    answers: dict[str, OffsetDeleteResponseTopic] = {}

    def add(name: str, partitions: list[OffsetDeleteResponsePartition]) -> None:
        answers.setdefault(name, OffsetDeleteResponseTopic(name, [])).partitions.extend(partitions)

    # KafkaApis.handleOffsetDeleteRequest: DELETE on the group (the whole request), READ on each topic
    if not authorized(ctx, AclOperation.DELETE, ResourceType.GROUP, req.group_id):
        return OffsetDeleteResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    valid: list[tuple[str, list[int]]] = []
    for topic in req.topics:
        indexes = [p.partition_index for p in topic.partitions]
        if cluster.authorizer is not None and not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, topic.name):
            add(topic.name, [OffsetDeleteResponsePartition(i, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in indexes])
            continue
        if topic.name not in cluster.topics:
            add(topic.name, [OffsetDeleteResponsePartition(i, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for i in indexes])
            continue
        bad = [i for i in indexes if cluster.partition(topic.name, i) is None]
        good = [i for i in indexes if cluster.partition(topic.name, i) is not None]
        if bad:
            add(topic.name, [OffsetDeleteResponsePartition(i, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for i in bad])
        if good:
            valid.append((topic.name, good))

    if not req.group_id:
        return OffsetDeleteResponse(error_code=ErrorCode.INVALID_GROUP_ID)
    if not is_group_coordinator(ctx, req.group_id):
        return OffsetDeleteResponse(error_code=ErrorCode.NOT_COORDINATOR)
    error, deleted = cluster.groups.delete_offsets(ctx.now_ms, req.group_id, valid)
    if error != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=error)
    for answered in deleted:
        add(answered.name, answered.partitions)
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=list(answers.values()))
