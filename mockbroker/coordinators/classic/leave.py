"""LeaveGroup on classic groups (kafka-group-semantics §6): members by id, pending members, and
admin removal by instance id (KIP-345). Kafka's GroupMetadataManager.classicGroupLeave.
"""

from __future__ import annotations

from collections.abc import Iterable

from mockbroker.coordinators.classic.base import (
    ClassicCoordinatorBase,
    heartbeat_key,
    raise_if,
)
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse


class LeaveGroupRules(ClassicCoordinatorBase):
    """LeaveGroup (GroupMetadataManager.classicGroupLeave)."""

    # -- LeaveGroup (§6) ----------------------------------------------------------------------------

    def leave_group(
        self, now_ms: int, group_id: str, members: Iterable[MemberIdentity]
    ) -> tuple[ErrorCode, list[MemberResponse]]:
        """GroupMetadataManager.classicGroupLeave, once the router found no consumer group of
        that id: (top-level error, one answer per identity)."""
        identities = list(members)
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        if group is None:
            # GroupCoordinatorService.leaveGroup: NONE at the top, UNKNOWN_MEMBER_ID for each member.
            return ErrorCode.NONE, [
                MemberResponse(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID) for m in identities
            ]
        if group.state is DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        responses: list[MemberResponse] = []
        for identity in identities:
            error = ErrorCode.NONE
            try:
                self._leave_member(group, identity, now_ms)
            except GroupError as exc:
                error = exc.code
            responses.append(MemberResponse(identity.member_id, identity.group_instance_id, error))

        left = [r.member_id for r in responses if r.error_code == ErrorCode.NONE]
        if left:
            reason = f"explicit `LeaveGroup` request for ({', '.join(left)}) members."
            if group.state in (STABLE, COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group, now_ms, reason)
            elif group.state is PREPARING_REBALANCE:
                self._maybe_complete_join_phase(group, now_ms)
        return ErrorCode.NONE, responses

    def _leave_member(self, group: ClassicGroup, identity: MemberIdentity, now_ms: int) -> None:
        """One identity of a LeaveGroup (§6.2): an admin removal by instance id (KIP-345), a
        pending member, or a validated member; GroupError for one the group refuses."""
        client_reason = identity.reason if identity.reason is not None else "not provided"
        if identity.member_id == UNKNOWN_MEMBER_ID:
            instance_id = identity.group_instance_id
            target = group.static_members.get(instance_id) if instance_id is not None else None
            if target is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            self._remove_current_member_from_classic_group(group, target, now_ms, client_reason)
        elif group.is_pending_member(identity.member_id):
            group.remove(identity.member_id)
            self.timers.cancel(heartbeat_key(group.group_id, identity.member_id))
            self._record("member.left", group, now_ms, member_id=identity.member_id, reason=client_reason, pending=True)
        else:
            raise_if(group.validate_member(identity.member_id, identity.group_instance_id), "member refused")
            self._remove_current_member_from_classic_group(group, identity.member_id, now_ms, client_reason)

    def _remove_current_member_from_classic_group(
        self, group: ClassicGroup, member_id: str, now_ms: int, client_reason: str
    ) -> None:
        member = group.members[member_id]
        self.timers.cancel(heartbeat_key(group.group_id, member_id))
        self._record(
            "member.left", group, now_ms, member_id=member_id, reason=client_reason,
            group_instance_id=member.group_instance_id, pending=False,
        )  # fmt: skip
        # Its parked JoinGroup (if any) is answered before it goes (§6.2).
        group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id)


