"""ConsumerGroupDescribe (key 69), v0-1: KIP-848 consumer groups, their epochs, members, current and
target assignments.

v0 (KIP-848): flexible. v1: MemberType per member (1: consumer protocol; classic members inside a
consumer group would be 0, and are not served here).

Each group is answered on its own (kafka-group-semantics §10.5): "" is INVALID_GROUP_ID; a group
this broker does not coordinate is NOT_COORDINATOR; an unknown group, or a classic one, is
GROUP_ID_NOT_FOUND (the Java admin then falls back to DescribeGroups). AuthorizedOperations
(KIP-430), when asked for, as handlers/_authz.py computes it. Under an authorizer a group whose
assignments name a topic the client may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED (KafkaApis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import describe_authorized_groups, refuse_groups_with_undescribable_topics
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.CONSUMER_GROUP_DESCRIBE
VERSIONS = (0, 1)


def describe(ctx: RequestContext, group_id: str) -> DescribedGroup:
    if group_id and not is_group_coordinator(ctx, group_id):
        return DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id)
    return ctx.cluster.groups.consumer_group_describe(group_id)


async def handle(ctx: RequestContext, req: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    groups = describe_authorized_groups(
        ctx, req.group_ids, req.include_authorized_operations, lambda group_id: describe(ctx, group_id), _refused
    )
    groups = refuse_groups_with_undescribable_topics(ctx, groups, _topics, _topics_refused)
    return ConsumerGroupDescribeResponse(groups=groups)


def _topics(group: DescribedGroup) -> list[str]:
    """The topics of the members' current and target assignments (KafkaApis checks them all)."""
    return [
        tp.topic_name
        for member in group.members
        for assignment in (member.assignment, member.target_assignment)
        for tp in assignment.topic_partitions
    ]


def _topics_refused(group: DescribedGroup) -> DescribedGroup:
    return DescribedGroup(
        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, group_id=group.group_id,
        error_message="The group has described topic(s) that the client is not authorized to describe.",
    )  # fmt: skip


def _refused(group_id: str) -> DescribedGroup:
    return DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None, group_id=group_id)  # no message (KafkaApis)
