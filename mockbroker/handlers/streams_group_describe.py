"""StreamsGroupDescribe (key 89), v0: KIP-1071 streams groups, their epochs, topology, members, current
and target task assignments.

Each group is answered on its own: "" is INVALID_GROUP_ID (with no message); a group this broker
does not coordinate is NOT_COORDINATOR; an unknown group, or one of another kind, is
GROUP_ID_NOT_FOUND ("Group g not found." / "Group g is not a streams group."). AuthorizedOperations
(KIP-430), when asked for, as handlers/_authz.py computes it. Under an authorizer a group whose
topology names a topic the client may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED (KafkaApis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import describe_authorized_groups, refuse_groups_with_undescribable_topics
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.streams_group_describe import (
    DescribedGroup,
    StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.STREAMS_GROUP_DESCRIBE
VERSIONS = (0, 0)


def describe(ctx: RequestContext, group_id: str) -> DescribedGroup:
    if not group_id:  # GroupCoordinatorService.streamsGroupDescribe: no message (Kafka 4.3.1)
        return DescribedGroup(error_code=ErrorCode.INVALID_GROUP_ID, group_id=group_id)
    if not is_group_coordinator(ctx, group_id):
        return DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id)
    return ctx.cluster.groups.streams_group_describe(group_id)


async def handle(ctx: RequestContext, req: StreamsGroupDescribeRequest) -> StreamsGroupDescribeResponse:
    groups = describe_authorized_groups(
        ctx, req.group_ids, req.include_authorized_operations, lambda group_id: describe(ctx, group_id), _refused
    )
    groups = refuse_groups_with_undescribable_topics(ctx, groups, _topics, _topics_refused)
    return StreamsGroupDescribeResponse(groups=groups)


def _topics(group: DescribedGroup) -> list[str]:
    """Every topic of the topology: source, repartition sink and source, changelog (KafkaApis
    checks DESCRIBE on each; a group without a topology names none)."""
    if group.topology is None:
        return []
    return [
        name
        for s in group.topology.subtopologies or ()
        for name in (
            *s.source_topics, *s.repartition_sink_topics,
            *(t.name for t in s.repartition_source_topics), *(t.name for t in s.state_changelog_topics),
        )
    ]  # fmt: skip


def _topics_refused(group: DescribedGroup) -> DescribedGroup:
    return DescribedGroup(
        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, group_id=group.group_id,
        error_message="The described group uses topics that the client is not authorized to describe.",
    )  # fmt: skip


def _refused(group_id: str) -> DescribedGroup:
    return DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None, group_id=group_id)  # no message (KafkaApis)
