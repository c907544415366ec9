"""ShareGroupDescribe (key 77), v1: KIP-932 share groups, their epochs, members and assignments.

Each group is answered on its own: "" is INVALID_GROUP_ID; a group this broker does not coordinate
is NOT_COORDINATOR; an unknown group, or one of another kind, is GROUP_ID_NOT_FOUND.
AuthorizedOperations stays at INT32_MIN: there is no authorizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.share_group_describe import (
    DescribedGroup,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_DESCRIBE
VERSIONS = (1, 1)


def describe(ctx: RequestContext, group_id: str) -> DescribedGroup:
    if group_id and not is_group_coordinator(ctx, group_id):
        return DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id)
    return ctx.cluster.groups.share_group_describe(group_id)


async def handle(ctx: RequestContext, req: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    return ShareGroupDescribeResponse(groups=[describe(ctx, group_id) for group_id in req.group_ids])
