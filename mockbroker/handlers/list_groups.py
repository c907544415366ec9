"""ListGroups (key 16), v0-5: the groups this broker coordinates.

v1: throttle time. v3: flexible. v4 (KIP-518): StatesFilter, and GroupState in the answer.
v5 (KIP-848): TypesFilter, and GroupType in the answer. Empty filters mean "all".

Every broker answers for the __consumer_offsets partitions it leads and skips the others silently
(GroupCoordinatorService.listGroups maps NotCoordinatorException to an empty list), so ListGroups
never answers NOT_COORDINATOR; the admin clients ask every broker and concatenate.

The coordinator lists every group on this broker's partitions, Empty and simple groups included
(GroupMetadataManager.listGroups, kafka-group-semantics §8.6): ProtocolType is the group's or ""
(simple groups), GroupState its state (v4+), GroupType "classic" (v5+); a KIP-848 consumer group
has ProtocolType "consumer", its own states (Empty, Assigning, Reconciling, Stable) and GroupType
"consumer". States match
case-insensitively after trimming; types case-insensitively, an unknown type matching nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, cluster_authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.list_groups import ListedGroup, ListGroupsRequest, ListGroupsResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.LIST_GROUPS
VERSIONS = (0, 5)


def listed_groups(ctx: RequestContext, states_filter: list[str], types_filter: list[str]) -> list[ListedGroup]:
    """The groups on the partitions this broker leads that pass the filters."""
    if ctx.cluster.authorizer is not None and not cluster_authorized(ctx, AclOperation.DESCRIBE, log_denial=False):
        # KafkaApis.handleListGroupsRequest: without DESCRIBE on the cluster, the groups it may describe
        return ctx.cluster.groups.list_groups(
            states_filter,
            types_filter,
            include=lambda group_id: is_group_coordinator(ctx, group_id)
            and authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id, log_denial=False),
        )
    return ctx.cluster.groups.list_groups(
        states_filter, types_filter, include=lambda group_id: is_group_coordinator(ctx, group_id)
    )


async def handle(ctx: RequestContext, req: ListGroupsRequest) -> ListGroupsResponse:
    # StatesFilter exists from v4 and TypesFilter from v5; below that the codec leaves them empty.
    groups = listed_groups(ctx, req.states_filter, req.types_filter)
    return ListGroupsResponse(error_code=ErrorCode.NONE, groups=groups)
