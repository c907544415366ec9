"""JoinGroup (key 11), v0-9: join a classic group, or rejoin it for the next generation.

v0: no RebalanceTimeoutMs (the broker uses SessionTimeoutMs). v1: RebalanceTimeoutMs. v2: throttle
time. v4 (KIP-394): a dynamic member with an empty id gets MEMBER_ID_REQUIRED and an id to rejoin
with. v5 (KIP-345): GroupInstanceId (static membership). v6: flexible. v7 (KIP-559): ProtocolType in
the answer; ProtocolName nullable, and "" goes out as null. v8 (KIP-800): Reason. v9 (KIP-814):
SkipAssignment for a static leader replaced without a rebalance.

Checks in Kafka's order (kafka-group-semantics §3.2): INVALID_GROUP_ID and INVALID_SESSION_TIMEOUT
(GroupCoordinatorService.joinGroup) come before NOT_COORDINATOR (the runtime's), which comes with
an empty MemberId. The rest is the coordinator's (``cluster.groups``, mockbroker/coordinators/router.py,
which hands it to classic/coordinator.py or, for a consumer group, migration/mixed.py); a JoinGroup
that waits for the join phase parks, holding only its own connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.coordinators.parked import Parked, wait
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.JOIN_GROUP
VERSIONS = (0, 9)

NULLABLE_PROTOCOL_NAME_MIN_VERSION = 7  # KIP-559


def shape(response: JoinGroupResponse, version: int) -> JoinGroupResponse:
    """JoinGroupResponse's constructor: below v7 a null protocol name is sent as "", from v7 an
    empty one as null."""
    if version < NULLABLE_PROTOCOL_NAME_MIN_VERSION and response.protocol_name is None:
        response.protocol_name = ""
    elif version >= NULLABLE_PROTOCOL_NAME_MIN_VERSION and response.protocol_name == "":
        response.protocol_name = None
    return response


async def handle(ctx: RequestContext, req: JoinGroupRequest) -> JoinGroupResponse:
    groups = ctx.cluster.groups
    error = groups.check_join_request(req)
    # KafkaApis.handleJoinGroupRequest: READ on the group before the coordinator's checks.
    if error is None and not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    if error is not None:
        return shape(JoinGroupResponse(error_code=error, member_id=req.member_id), ctx.api_version)
    if not is_group_coordinator(ctx, req.group_id):
        return shape(JoinGroupResponse(error_code=ErrorCode.NOT_COORDINATOR), ctx.api_version)
    result = groups.join_group(
        ctx.now_ms,
        req,
        api_version=ctx.api_version,
        client_id=ctx.client_id,
        # InetAddress.toString(), as DescribeGroups shows it: "/127.0.0.1".
        client_host=f"/{ctx.client_host}",
    )
    if isinstance(result, Parked):
        result = await wait(result)
    return shape(result, ctx.api_version)
