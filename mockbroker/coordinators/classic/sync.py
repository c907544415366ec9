"""SyncGroup on classic groups (kafka-group-semantics §4): the checks, parking followers until the
leader's assignment, storing and handing it out. Kafka's GroupMetadataManager.classicGroupSync.
"""

from __future__ import annotations

from mockbroker.coordinators.classic.base import (
    ClassicCoordinatorBase,
    describe_assignment,
    raise_if,
)
from mockbroker.coordinators.classic.group import (
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    ClassicGroupMember,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

SYNC_PROTOCOL_FIELDS_MIN_VERSION = 5  # SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent (KIP-559)


class SyncGroupRules(ClassicCoordinatorBase):
    """SyncGroup (GroupMetadataManager.classicGroupSync)."""

    # -- SyncGroup (§4) -----------------------------------------------------------------------------

    def check_sync_request(self, request: SyncGroupRequest, api_version: int) -> ErrorCode | None:
        """Checks made before the group is looked up (and before NOT_COORDINATOR), §4.1 steps 1-2."""
        if api_version >= SYNC_PROTOCOL_FIELDS_MIN_VERSION and (
            request.protocol_type is None or request.protocol_name is None
        ):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if not request.group_id:
            return ErrorCode.INVALID_GROUP_ID
        return None

    def sync_group(
        self, now_ms: int, request: SyncGroupRequest, *, api_version: int
    ) -> SyncGroupResponse | Parked[SyncGroupResponse]:
        """GroupMetadataManager.classicGroupSync, once ``check_sync_request`` passed and the
        router found no non-empty consumer group of that id: answers at once, or parks a
        SyncGroup in CompletingRebalance until the leader's assignment arrives."""
        try:
            group, member = self._validate_sync_group(request)
        except GroupError as exc:
            return SyncGroupResponse(error_code=exc.code)
        member_id = member.member_id
        if group.state is STABLE:
            # Followers that sync after the leader get the stored assignment at once (§4.2).
            self._remove_pending_sync_member(group, member_id)
            self._record("member.synced", group, now_ms, member_id=member_id, leader=group.is_leader(member_id))
            return SyncGroupResponse(
                error_code=ErrorCode.NONE,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                assignment=member.assignment,
            )
        # CompletingRebalance: park it; the leader's assignment answers everyone.
        parked: Parked[SyncGroupResponse] = Parked(f"SyncGroup {group.group_id}/{member_id}")
        member.awaiting_sync = parked
        self._remove_pending_sync_member(group, member_id)
        is_leader = group.is_leader(member_id)
        self._record("member.synced", group, now_ms, member_id=member_id, leader=is_leader)
        if is_leader:
            self._store_leader_assignment(group, request, now_ms)
        return parked.result() if parked.done() else parked

    def _store_leader_assignment(self, group: ClassicGroup, request: SyncGroupRequest, now_ms: int) -> None:
        """The leader's SyncGroup: store and hand out every member's assignment, then Stable.
        A member missing from the leader's list gets empty bytes; unknown ids are ignored (§4.2)."""
        assignment = {a.member_id: a.assignment for a in request.assignments}
        missing = [mid for mid in group.members if mid not in assignment]
        for mid in missing:
            assignment[mid] = b""
        if self.assignment_checks is not None:  # may replace it with a broker-side assignment
            assignment = self.assignment_checks.assignment_to_store(group, assignment, now_ms, self._record)
        self._set_and_propagate_assignment(group, assignment, now_ms)
        for assigned in group.members.values():
            self._record(
                "member.assigned", group, now_ms, member_id=assigned.member_id,
                assignment=describe_assignment(group.protocol_type, assigned.assignment),
                assignment_bytes=len(assigned.assignment), missing_from_leader=assigned.member_id in missing,
            )  # fmt: skip
        self._transition(
            group, STABLE, now_ms, f"leader {request.member_id} sent the assignment for generation {group.generation_id}"
        )

    def _validate_sync_group(self, request: SyncGroupRequest) -> tuple[ClassicGroup, ClassicGroupMember]:
        """classicGroupSync's checks (§4.1 steps 3-8): the group and the member, or GroupError."""
        group = self.groups.get(request.group_id)
        if group is None or group.state is EMPTY:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {request.group_id} has no members.")
        if group.state is DEAD:
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Group {group.group_id} is Dead.")
        raise_if(group.validate_member(request.member_id, request.group_instance_id), f"member {request.member_id} is refused")
        if request.generation_id != group.generation_id:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {request.generation_id} is not {group.generation_id}.")
        if is_protocol_inconsistent(request.protocol_type, group.protocol_type) or is_protocol_inconsistent(
            request.protocol_name, group.protocol_name
        ):
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "The protocol type or name is not the group's.")
        if group.state is PREPARING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"Group {group.group_id} is rebalancing.")
        return group, group.members[request.member_id]


def is_protocol_inconsistent(requested: str | None, groups: str | None) -> bool:
    """GroupMetadataManager.isProtocolInconsistent: only when both sides are known (v5+)."""
    return requested is not None and groups is not None and requested != groups


