"""Heartbeat (key 12), v0-4: a member of a classic group says it is alive.

v1: throttle time. v3 (KIP-345): GroupInstanceId. v4: flexible.

INVALID_GROUP_ID (GroupCoordinatorService.heartbeat) comes before NOT_COORDINATOR; the answers by
group state are the coordinator's (kafka-group-semantics §5): REBALANCE_IN_PROGRESS tells the
member to rejoin, and every accepted heartbeat re-arms its session timer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import is_group_coordinator
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse

if TYPE_CHECKING:
    from mockbroker.dispatch import RequestContext

API_KEY = 12
VERSIONS = (0, 4)


async def handle(ctx: RequestContext, req: HeartbeatRequest) -> HeartbeatResponse:
    if not req.group_id:
        return HeartbeatResponse(error_code=ErrorCode.INVALID_GROUP_ID)
    if not is_group_coordinator(ctx, req.group_id):
        return HeartbeatResponse(error_code=ErrorCode.NOT_COORDINATOR)
    error = ctx.cluster.groups.heartbeat(
        ctx.now_ms, req.group_id, req.member_id, req.generation_id, req.group_instance_id
    )
    return HeartbeatResponse(error_code=error)
