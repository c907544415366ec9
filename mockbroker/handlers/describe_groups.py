"""DescribeGroups (key 15), v0-6: state, protocol and members of classic groups.

v1: throttle time. v3: IncludeAuthorizedOperations (KIP-430). v4: member GroupInstanceId.
v5: flexible. v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND with a message instead of a
"Dead" placeholder with NONE.

A classic group is described by the coordinator (GroupMetadataManager.describeGroups,
kafka-group-semantics §8.5): its state, ProtocolType (or ""), ProtocolData (the selected protocol
only when Stable), and every member with its client id, host ("/127.0.0.1") and stored assignment;
MemberMetadata only when Stable. A group the coordinator does not have (GroupIdNotFoundException):
- v0-5: ErrorCode NONE, GroupState "Dead", ProtocolType/ProtocolData "", no members.
- v6+: GROUP_ID_NOT_FOUND, GroupState "Dead", ErrorMessage "Group <id> not found.".
- AuthorizedOperations: left at INT32_MIN unless requested (v3+); when requested it is filled in
  only for groups answered with NONE (KafkaApis.handleDescribeGroupsRequest), so a v3-5 Dead
  placeholder gets the group operations and a v6 GROUP_ID_NOT_FOUND does not.
- "" is looked up like any other id (only a null id is INVALID_GROUP_ID, and the codec cannot
  carry a null here: GroupIds are non-nullable strings).
- NOT_COORDINATOR, per group, on a broker that does not lead the group's __consumer_offsets
  partition (the runtime's NotCoordinatorException, mapped by
  DescribeGroupsRequest.getErrorDescribedGroupList: every other field at its default).

Differs from Kafka on purpose: groups come back in request order; Kafka answers them bucketed by
__consumer_offsets partition (clients match answers by group id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import (
    GROUP_OPERATIONS,
    AclOperation,
    ResourceType,
    authorized,
    authorized_operations,
)
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_groups import (
    DescribedGroup,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_GROUPS
VERSIONS = (0, 6)

DEAD = "Dead"  # ClassicGroupState.DEAD, the placeholder state of an unknown group
GROUP_ID_NOT_FOUND_MIN_VERSION = 6  # KIP-1043
AUTHORIZED_OPERATIONS_MIN_VERSION = 3  # KIP-430
NOT_REQUESTED = -2147483648  # AuthorizedOperations default: INT32_MIN


def describe_group(ctx: RequestContext, group_id: str, version: int) -> DescribedGroup:
    """The coordinator's description of the group, or the answer for a group it does not have."""
    described = ctx.cluster.groups.describe_group(group_id)
    if described is not None:
        return described
    if version >= GROUP_ID_NOT_FOUND_MIN_VERSION:
        return DescribedGroup(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND,
            error_message=f"Group {group_id} not found.",
            group_id=group_id,
            group_state=DEAD,
        )
    return DescribedGroup(error_code=ErrorCode.NONE, group_id=group_id, group_state=DEAD)


async def handle(ctx: RequestContext, req: DescribeGroupsRequest) -> DescribeGroupsResponse:
    include_operations = ctx.api_version >= AUTHORIZED_OPERATIONS_MIN_VERSION and req.include_authorized_operations
    groups: list[DescribedGroup] = []
    refused: list[DescribedGroup] = []  # KafkaApis answers the groups it may not describe first
    for group_id in req.groups:
        if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            refused.append(DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=group_id))
            continue
        if not is_group_coordinator(ctx, group_id):
            groups.append(DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=group_id))
            continue
        group = describe_group(ctx, group_id, ctx.api_version)
        if include_operations and group.error_code == ErrorCode.NONE:
            group.authorized_operations = authorized_operations(ctx, ResourceType.GROUP, group_id, GROUP_OPERATIONS)
        groups.append(group)
    return DescribeGroupsResponse(groups=refused + groups)
