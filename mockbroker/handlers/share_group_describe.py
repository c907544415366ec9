"""ShareGroupDescribe (key 77), v1: KIP-932 share groups, their epochs, members and assignments.

Each group is answered on its own: "" is INVALID_GROUP_ID; a group this broker does not coordinate
is NOT_COORDINATOR; an unknown group, or one of another kind, is GROUP_ID_NOT_FOUND.
AuthorizedOperations (KIP-430), when asked for, as handlers/_authz.py computes it. Under an
authorizer a group whose assignments name a topic the client may not DESCRIBE is
TOPIC_AUTHORIZATION_FAILED (KafkaApis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import describe_authorized_groups, refuse_groups_with_undescribable_topics
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
    groups = describe_authorized_groups(
        ctx, req.group_ids, req.include_authorized_operations, lambda group_id: describe(ctx, group_id), _refused
    )
    groups = refuse_groups_with_undescribable_topics(ctx, groups, _topics, _topics_refused)
    return ShareGroupDescribeResponse(groups=groups)


def _topics(group: DescribedGroup) -> list[str]:
    """The topics of the members' assignments (KafkaApis checks DESCRIBE on each)."""
    return [tp.topic_name for member in group.members for tp in member.assignment.topic_partitions]


def _topics_refused(group: DescribedGroup) -> DescribedGroup:
    return DescribedGroup(
        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, group_id=group.group_id,
        error_message="The group has described topic(s) that the client is not authorized to describe.",
    )  # fmt: skip


def _refused(group_id: str) -> DescribedGroup:
    return DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None, group_id=group_id)  # no message (KafkaApis)
