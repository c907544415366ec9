"""Heartbeat on classic groups (kafka-group-semantics §5), and the control API's session expiry and
forced rebalance, which take the same paths as the real thing. Kafka's
GroupMetadataManager.classicGroupHeartbeat.
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.coordinators.classic.base import (
    NONE_ANSWER,
    REBALANCE_IN_PROGRESS_ANSWER,
    ClassicCoordinatorBase,
    heartbeat_key,
    raise_if,
)
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker_protocol.errors import ErrorCode


class HeartbeatRules(ClassicCoordinatorBase):
    """Heartbeat (GroupMetadataManager.classicGroupHeartbeat) and the control entries."""

    # -- Heartbeat and session expiry (§5) ----------------------------------------------------------

    def heartbeat(
        self, now_ms: int, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None = None
    ) -> ErrorCode:
        """GroupMetadataManager.classicGroupHeartbeat (the hot path: the rules raise only when
        they refuse, and a ``try`` costs nothing otherwise)."""
        try:
            if not group_id:
                raise GroupError(ErrorCode.INVALID_GROUP_ID, "Group id can not be empty.")
            group = self.groups.get(group_id)
            if group is None:  # a consumer group's, or none (the router's hook, §10.8)
                return self.heartbeat_other_kind(now_ms, group_id, member_id, generation_id, group_instance_id)
            state = group.state
            if state is DEAD:
                raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Group {group_id} is Dead.")
            if group_instance_id is None:  # validate_member without a static id: membership only
                member = group.members.get(member_id)
                if member is None:
                    raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not in group {group_id}.")
            else:
                raise_if(group.validate_member(member_id, group_instance_id), f"member {member_id} is refused")
                member = group.members[member_id]
            if generation_id != group.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {generation_id} is not {group.generation_id}.")
            if state is EMPTY:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} is Empty.")
        except GroupError as exc:
            return exc.code
        # Every accepted heartbeat re-arms the session (§5); the common case only moves the
        # armed timer's deadline (_reschedule_classic_group_member_heartbeat, inlined).
        timer = member.session_timer
        if timer is None or not self.timers.postpone(timer, now_ms + member.session_timeout_ms, now_ms):
            self._reschedule_classic_group_member_heartbeat(group, member, now_ms)
        if state is PREPARING_REBALANCE:
            return REBALANCE_IN_PROGRESS_ANSWER  # the member must rejoin
        return NONE_ANSWER

    def expire_member_session(
        self, group_id: str, member_id: str, now_ms: int, accepted: Callable[[], None] | None = None
    ) -> None:
        """Expire a member's session now (for the control API): its heartbeat timer is cancelled
        and the timer's own callback runs, so the events (``member.expired``) and the rebalance
        are those of a real expiry. ValueError for an unknown group or member, or a member parked
        in JoinGroup/SyncGroup, whose session Kafka does not expire either (§5). ``accepted``
        runs once the checks passed, before any effect (the control API records its cause there)."""
        group = self.groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if member is None:
            raise ValueError(f"classic group {group_id!r} has no member {member_id!r}")
        if member.has_satisfied_heartbeat():
            raise ValueError(f"member {member_id} is waiting in JoinGroup/SyncGroup; its session cannot expire now")
        if accepted is not None:
            accepted()
        self.timers.cancel(heartbeat_key(group_id, member_id))
        self._expire_classic_group_member_heartbeat(group_id, member_id, now_ms)

    def force_rebalance(self, group_id: str, now_ms: int, reason: str, accepted: Callable[[], None] | None = None) -> None:
        """Start a rebalance now (for the control API), as a member joining or changing its
        metadata would (prepareRebalance, §3.6-§3.8): a Stable or CompletingRebalance group goes
        to PreparingRebalance, heartbeats answer REBALANCE_IN_PROGRESS and every member must
        rejoin within the rebalance timeout. ValueError for an unknown group or another state;
        ``accepted`` as for expire_member_session."""
        group = self.groups.get(group_id)
        if group is None:
            raise ValueError(f"no classic group {group_id!r}")
        if group.state not in (STABLE, COMPLETING_REBALANCE):
            raise ValueError(
                f"group {group_id} is {group.state.value}; only a Stable or CompletingRebalance group can be made to rebalance"
            )
        if accepted is not None:
            accepted()
        self._prepare_rebalance(group, now_ms, reason)

