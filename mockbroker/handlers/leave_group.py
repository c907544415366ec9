"""LeaveGroup (key 13), v0-5: members leave a classic group (or an admin removes static members).

v0-2: one top-level MemberId. v1: throttle time. v3 (KIP-345): a Members array of {MemberId,
GroupInstanceId}, answered per member. v4: flexible. v5 (KIP-800): a Reason per member (logged).

The broker turns v0-2 into a one-member list (LeaveGroupRequest.normalizedData) and answers them
with one top-level error: a non-zero group error as it is, otherwise the member's
(LeaveGroupResponse). INVALID_GROUP_ID comes before NOT_COORDINATOR; the rest is
kafka-group-semantics §6, in the coordinator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.leave_group import (
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    MemberResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.LEAVE_GROUP
VERSIONS = (0, 5)

BATCH_MIN_VERSION = 3  # KIP-345: Members[]


async def handle(ctx: RequestContext, req: LeaveGroupRequest) -> LeaveGroupResponse:
    batched = ctx.api_version >= BATCH_MIN_VERSION
    answers: list[MemberResponse]
    members = req.members if batched else [MemberIdentity(member_id=req.member_id, group_instance_id=None)]
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        error, answers = ErrorCode.GROUP_AUTHORIZATION_FAILED, []  # KafkaApis.handleLeaveGroupRequest
    elif not req.group_id:
        error, answers = ErrorCode.INVALID_GROUP_ID, []
    elif not is_group_coordinator(ctx, req.group_id):
        error, answers = ErrorCode.NOT_COORDINATOR, []
    else:
        error, answers = ctx.cluster.groups.leave_group(ctx.now_ms, req.group_id, members)
    if batched:
        return LeaveGroupResponse(error_code=error, members=answers)
    if error == ErrorCode.NONE and answers:
        error = ErrorCode(answers[0].error_code)
    return LeaveGroupResponse(error_code=error)
