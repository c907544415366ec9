"""Heartbeat (key 12), v0-4: a member of a classic group says it is alive.

v1: throttle time. v3 (KIP-345): GroupInstanceId. v4: flexible.

INVALID_GROUP_ID (GroupCoordinatorService.heartbeat) comes before NOT_COORDINATOR; the answers by
group state are the coordinator's (kafka-group-semantics §5): REBALANCE_IN_PROGRESS tells the
member to rejoin, and every accepted heartbeat re-arms its session timer.

The answer holds nothing but the error code, so unless interceptors or the request log will see
it (``ctx.inspected``) it is sent from a table of encoded answers per version and error code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import is_group_coordinator
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.registry import Encoded

if TYPE_CHECKING:
    from mockbroker.dispatch import RequestContext

API_KEY = 12
VERSIONS = (0, 4)

# (version, error code) -> the answer encoded; a handful of entries (5 versions, the few codes
# a heartbeat can get). Encoded is immutable: one object serves every request.
_ENCODED: dict[tuple[int, int], Encoded] = {}


async def handle(ctx: RequestContext, req: HeartbeatRequest) -> HeartbeatResponse | Encoded:
    group_id = req.group_id
    if not group_id:
        error = ErrorCode.INVALID_GROUP_ID
    elif not is_group_coordinator(ctx, group_id):
        error = ErrorCode.NOT_COORDINATOR
    else:
        error = ctx.cluster.groups.heartbeat(
            ctx.now_ms, group_id, req.member_id, req.generation_id, req.group_instance_id
        )
    if ctx.inspected:  # interceptors and the request log see (and edit) real objects
        return HeartbeatResponse(error_code=error)
    key = (ctx.api_version, error)
    answer = _ENCODED.get(key)
    if answer is None:
        answer = _ENCODED[key] = Encoded(HeartbeatResponse(error_code=error).encode(ctx.api_version))
    return answer
