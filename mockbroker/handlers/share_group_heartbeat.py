"""ShareGroupHeartbeat (key 76), v1: a KIP-932 share-group member joins, heartbeats and leaves, the
broker assigning the partitions (which members of a share group may share).

v0 was Kafka 4.0's early access and is gone from 4.1; v1 is the stable version. As
GroupCoordinatorService.shareGroupHeartbeat: the request checks (INVALID_REQUEST) come before
NOT_COORDINATOR; the rest is the coordinator's (mockbroker/coordinators/share/coordinator.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, topics_authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_HEARTBEAT
VERSIONS = (1, 1)


async def handle(ctx: RequestContext, req: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse:
    groups = ctx.cluster.groups
    # KafkaApis authorizes before the group coordinator checks the request: READ on the group,
    # then DESCRIBE on every subscribed topic (clients may not learn of topics they cannot describe)
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message="Group authorization failed.")
    if not topics_authorized(ctx, AclOperation.DESCRIBE, req.subscribed_topic_names):
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    refused = groups.check_share_group_heartbeat_request(req)
    if refused is not None:
        return refused
    if not is_group_coordinator(ctx, req.group_id):
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.NOT_COORDINATOR)
    return groups.share_group_heartbeat(
        ctx.now_ms, req, client_id=ctx.client_id, client_host=f"/{ctx.client_host}"  # InetAddress.toString()
    )
