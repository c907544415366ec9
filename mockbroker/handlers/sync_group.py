"""SyncGroup (key 14), v0-5: the leader hands in the assignment; every member gets its own.

v1: throttle time. v3 (KIP-345): GroupInstanceId. v4: flexible. v5 (KIP-559): ProtocolType and
ProtocolName in the request (mandatory: null is INCONSISTENT_GROUP_PROTOCOL, checked first, in
KafkaApis) and echoed in the answer.

Checks in Kafka's order (kafka-group-semantics §4.1): the v5 protocol fields, then INVALID_GROUP_ID,
then NOT_COORDINATOR, then the coordinator's. A SyncGroup in CompletingRebalance parks until the
leader's assignment arrives (or a rebalance answers it REBALANCE_IN_PROGRESS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.coordinators.parked import Parked, wait
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SYNC_GROUP
VERSIONS = (0, 5)


async def handle(ctx: RequestContext, req: SyncGroupRequest) -> SyncGroupResponse:
    groups = ctx.cluster.groups
    error = groups.check_sync_request(req, ctx.api_version)
    if error is None and not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED  # KafkaApis.handleSyncGroupRequest
    if error is not None:
        return SyncGroupResponse(error_code=error)
    if not is_group_coordinator(ctx, req.group_id):
        return SyncGroupResponse(error_code=ErrorCode.NOT_COORDINATOR)
    result = groups.sync_group(ctx.now_ms, req, api_version=ctx.api_version)
    if isinstance(result, Parked):
        result = await wait(result)
    return result
