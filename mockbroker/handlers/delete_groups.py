"""DeleteGroups (key 42), v0-2: delete empty groups and their committed offsets.

v1: throttle time after the answer on quota violation (nothing else). v2: flexible. (Kafka trunk
has v3, which adds GROUP_DELETION_FAILED and per-group ErrorMessage; the codec's specs stop at v2.)

Duplicate names are answered once (KafkaApis.handleDeleteGroupsRequest: GroupsNames.distinct).
Per group, on its coordinator (GroupCoordinatorShard.deleteGroups, kafka-group-semantics §8.7):
GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP unless it is Empty, otherwise the group
and all its committed (and pending transactional) offsets go. NOT_COORDINATOR for each group whose
__consumer_offsets partition another broker leads. "" is looked up like any other id (only a null
id is INVALID_GROUP_ID, and GroupsNames cannot carry a null here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_groups import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DELETE_GROUPS
VERSIONS = (0, 2)


def delete_group(ctx: RequestContext, group_id: str) -> ErrorCode:
    """Delete a group this broker coordinates."""
    return ctx.cluster.groups.delete_group(ctx.now_ms, group_id)


async def handle(ctx: RequestContext, req: DeleteGroupsRequest) -> DeleteGroupsResponse:
    results = []
    for group_id in dict.fromkeys(req.groups_names):  # distinct, first occurrence first
        if not authorized(ctx, AclOperation.DELETE, ResourceType.GROUP, group_id):
            error = ErrorCode.GROUP_AUTHORIZATION_FAILED  # KafkaApis.handleDeleteGroupsRequest
        else:
            error = delete_group(ctx, group_id) if is_group_coordinator(ctx, group_id) else ErrorCode.NOT_COORDINATOR
        results.append(DeletableGroupResult(group_id=group_id, error_code=error))
    return DeleteGroupsResponse(results=results)
