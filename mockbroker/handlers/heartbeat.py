"""Heartbeat (key 12), v0-4: a member of a classic group says it is alive.

v1: throttle time. v3 (KIP-345): GroupInstanceId. v4: flexible.

INVALID_GROUP_ID (GroupCoordinatorService.heartbeat) comes before NOT_COORDINATOR; the answers by
group state are the coordinator's (kafka-group-semantics §5): REBALANCE_IN_PROGRESS tells the
member to rejoin, and every accepted heartbeat re-arms its session timer.

The answer holds nothing but the error code, so unless interceptors or the request log will see
it (``ctx.inspected``) it is sent from a table of encoded answers per version and error code.

A member's heartbeats repeat byte for byte but the correlation id, so the request path keeps the
decoded request and calls ``fast`` for the same bytes again (mockbroker.dispatch.dispatch, "requests kept by
their bytes"): the common case of ``handle`` (a group id, this broker its coordinator) without a
context or a coroutine, answered from the same table, framed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.dispatch.context import framed_answer
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from mockbroker_protocol.registry import Encoded

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import BrokerNode
    from mockbroker.state import ClusterState

API_KEY = ApiKey.HEARTBEAT
VERSIONS = (0, 4)

# (version, error code) -> the answer encoded; a handful of entries (5 versions, the few codes
# a heartbeat can get). Encoded is immutable: one object serves every request.
_ENCODED: dict[tuple[int, int], Encoded] = {}
# The same answers framed for ``fast``: (size prefix, all after the correlation id).
_FRAMED: dict[tuple[int, int], tuple[bytes, bytes]] = {}


async def handle(ctx: RequestContext, req: HeartbeatRequest) -> HeartbeatResponse | Encoded:
    group_id = req.group_id
    if not group_id:
        error = ErrorCode.INVALID_GROUP_ID
    elif ctx.cluster.authorizer is not None and not authorized(ctx, AclOperation.READ, ResourceType.GROUP, group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED  # KafkaApis.handleHeartbeatRequest
    elif not is_group_coordinator(ctx, group_id):
        error = ErrorCode.NOT_COORDINATOR
    else:
        # The hot path: straight to the classic coordinator (router.py, "Heartbeat").
        error = ctx.cluster.groups.classic.heartbeat(
            ctx.now_ms, group_id, req.member_id, req.generation_id, req.group_instance_id
        )
    if ctx.inspected:  # interceptors and the request log see (and edit) real objects
        return HeartbeatResponse(error_code=error)
    return _encoded(ctx.api_version, error)


def _encoded(version: int, error: int) -> Encoded:
    key = (version, error)
    answer = _ENCODED.get(key)
    if answer is None:
        answer = _ENCODED[key] = Encoded(HeartbeatResponse(error_code=error).encode(version))
    return answer


def fast(cluster: ClusterState, broker: BrokerNode, version: int, req: HeartbeatRequest) -> tuple[bytes, bytes] | None:
    """``handle`` for a request the path has seen before, when no one inspects it: the answer
    framed, or None (nothing done) where ``handle`` would not reach the coordinator's heartbeat."""
    group_id = req.group_id
    if not group_id or cluster.coordinator_for(group_id).node_id != broker.node_id:
        return None  # INVALID_GROUP_ID, NOT_COORDINATOR: the general path answers them
    error = cluster.groups.classic.heartbeat(  # the hot path (router.py, "Heartbeat")
        cluster.clock.now_ms(), group_id, req.member_id, req.generation_id, req.group_instance_id
    )
    key = (version, error)
    answer = _FRAMED.get(key)
    if answer is None:
        answer = _FRAMED[key] = framed_answer(API_KEY, version, _encoded(version, error))
    return answer
