"""The classic group coordinator's shared core: its state, the door every transition goes
through, the event log, the timers, and the rebalance machinery every API drives.

``ClassicCoordinatorBase`` holds what JoinGroup, SyncGroup, Heartbeat and LeaveGroup all use
(Kafka's GroupMetadataManager: prepareRebalance, completeClassicGroupJoin, the initial-rebalance
delay, the pending-sync and session timers, propagateAssignment); the rules of each API are the
mixins beside it (join.py, sync.py, heartbeat.py, leave.py, admin.py), put together in
coordinator.py as ``ClassicGroupCoordinator``. Every change of group state goes through one door,
``_transition``, checked against ``VALID_PREVIOUS_STATES`` (group.py) and recorded with its reason.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any
from typing import Protocol as TypingProtocol

from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    CONSUMER_PROTOCOL_TYPE,
    DEAD,
    EMPTY,
    NO_LEADER,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    VALID_PREVIOUS_STATES,
    ClassicGroup,
    ClassicGroupMember,
    ClassicGroupState,
    IllegalStateTransition,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.offsets.manager import OffsetMetadataManager
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.timers import Timer
from mockbroker_protocol.consumer_protocol import decode_assignment
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse
from mockbroker_protocol.messages.sync_group import SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.coordinators.classic.assignment_checks import AssignmentChecks


log = logging.getLogger("mockbroker.groups")


# A steady heartbeat's answers, read as module globals: on CPython 3.11 reading an enum member as
# a class attribute (ErrorCode.NONE) costs about 1k instructions, a quarter of such a heartbeat.
NONE_ANSWER = ErrorCode.NONE
REBALANCE_IN_PROGRESS_ANSWER = ErrorCode.REBALANCE_IN_PROGRESS


class HeartbeatToOtherKind(TypingProtocol):
    """What answers a classic Heartbeat for a group id that is no classic group (the router wires
    the migration package's: a classic member inside a consumer group, §10.8)."""

    def __call__(
        self, now_ms: int, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None
    ) -> ErrorCode: ...


def _unknown_group_heartbeat(
    now_ms: int, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None
) -> ErrorCode:
    return ErrorCode.UNKNOWN_MEMBER_ID


def heartbeat_key(group_id: str, member_id: str) -> Hashable:
    return ("classic-group-heartbeat", group_id, member_id)


def join_key(group_id: str) -> Hashable:
    return ("classic-group-join", group_id)


def sync_key(group_id: str) -> Hashable:
    return ("classic-group-sync", group_id)


def join_reason(reason: str | None) -> str:
    """JoinGroupRequest.joinReason."""
    return reason if reason else "not provided"



def raise_if(error: ErrorCode | None, message: str) -> None:
    """ClassicGroup.validateMember and friends answer a code; the rules raise it (one style)."""
    if error is not None:
        raise GroupError(error, message)


def describe_assignment(protocol_type: str | None, assignment: bytes) -> dict[str, list[int]] | None:
    """For the event log: a consumer assignment decoded as {topic: [partitions]}; None otherwise."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    try:
        _, decoded = decode_assignment(assignment)
    except DecodeError:
        return None
    return {tp.topic: list(tp.partitions) for tp in decoded.assigned_partitions}


class ClassicCoordinatorBase:
    """Every classic group of the cluster (``groups``) and the machinery the APIs share."""

    def __init__(
        self,
        services: CoordinatorServices,
        offsets: OffsetMetadataManager,
        *,
        new_uuid: Callable[[], str] | None = None,
        assignment_checks: AssignmentChecks | None = None,
    ) -> None:
        self.services = services
        # Attributes, not properties over ``services``: the hot paths read them (a property call
        # costs a steady heartbeat a few hundred instructions, bench/heartbeat_cost.py).
        self.config: GroupConfig = services.config
        self.timers = services.timers
        self.offsets = offsets
        # Validation, reference check and broker-side assignment of SyncGroup assignments (#5).
        self.assignment_checks = assignment_checks
        self.groups: dict[str, ClassicGroup] = {}
        self.new_uuid: Callable[[], str] = new_uuid or (lambda: str(uuid.uuid4()))
        self.heartbeat_other_kind: HeartbeatToOtherKind = _unknown_group_heartbeat

    # -- the door -----------------------------------------------------------------------------------

    def _transition(self, group: ClassicGroup, target: ClassicGroupState, now_ms: int, reason: str) -> None:
        """The only place a group changes state: checked against VALID_PREVIOUS_STATES (§2),
        stamped with now_ms (the base of offset expiry for Empty groups, §8.2) and recorded."""
        if group.state not in VALID_PREVIOUS_STATES[target]:
            raise IllegalStateTransition(
                f"group {group.group_id} cannot move from {group.state.value} to {target.value} ({reason})"
            )
        previous = group.state
        group.previous_state, group.state, group.state_timestamp_ms = previous, target, now_ms
        details: dict[str, Any] = {"from_state": previous.value, "to_state": target.value}
        if target is COMPLETING_REBALANCE:
            details.update(
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=group.leader_id,
                members=list(group.members),
            )
        log.debug("group %s: %s -> %s (%s)", group.group_id, previous.value, target.value, reason)
        self._record("group.transition", group, now_ms, reason=reason, **details)


    def _record(
        self, type: str, group: ClassicGroup | str, now_ms: int, *, member_id: str | None = None,
        reason: str | None = None, **details: Any,
    ) -> None:  # fmt: skip
        if isinstance(group, str):
            self.services.record(type, group, None, now_ms, member_id=member_id, reason=reason, **details)
        else:
            self.services.record(
                type, group.group_id, group.generation_id, now_ms, member_id=member_id, reason=reason, **details
            )

    def _schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[int], None]) -> Timer:
        return self.services.schedule(key, deadline_ms, callback)

    def _create_group(self, group_id: str, now_ms: int, reason: str) -> ClassicGroup:
        group = ClassicGroup(group_id, now_ms)
        self.groups[group_id] = group
        self._record("group.created", group, now_ms, reason=reason, state=group.state.value)
        return group

    def _join_response(self, group: ClassicGroup, member_id: str, members: list[Any]) -> JoinGroupResponse:
        return JoinGroupResponse(
            error_code=ErrorCode.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or NO_LEADER,
            skip_assignment=False,
            member_id=member_id,
            members=members,
        )

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, now_ms, reason)
        else:
            self._maybe_complete_join_phase(group, now_ms)

    def _prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        """GroupMetadataManager.prepareRebalance (§3.6-§3.8)."""
        if group.state is COMPLETING_REBALANCE:
            # Parked SyncGroups get REBALANCE_IN_PROGRESS and assignments are reset (§3.8).
            self._reset_and_propagate_assignment_with_error(group, ErrorCode.REBALANCE_IN_PROGRESS, now_ms)
        self._remove_sync_expiration(group)
        is_initial_rebalance = group.state is EMPTY
        if is_initial_rebalance:
            # §3.6: wait group.initial.rebalance.delay.ms for more members; each newcomer extends
            # the wait by up to the delay again, within the group rebalance timeout.
            delay_ms = self.config.group_initial_rebalance_delay_ms
            remaining_ms = max(group.rebalance_timeout_ms() - delay_ms, 0)
            group_id = group.group_id
            self._schedule(
                join_key(group_id),
                now_ms + delay_ms,
                lambda t: self._try_complete_initial_rebalance_else_schedule(group_id, delay_ms, remaining_ms, t),
            )
        self._transition(group, PREPARING_REBALANCE, now_ms, reason)
        if not is_initial_rebalance:
            self._maybe_complete_join_else_schedule(group, now_ms)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup, now_ms: int) -> None:
        if group.has_all_members_joined():
            self._complete_classic_group_join(group, now_ms)
        else:
            # §3.7: the group rebalance timeout, measured from the start of the rebalance.
            group_id = group.group_id
            self._schedule(
                join_key(group_id),
                now_ms + group.rebalance_timeout_ms(),
                lambda t: self._complete_classic_group_join_by_id(group_id, t),
            )

    def _try_complete_initial_rebalance_else_schedule(
        self, group_id: str, delay_ms: int, remaining_ms: int, now_ms: int
    ) -> None:
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay_ms = min(self.config.group_initial_rebalance_delay_ms, remaining_ms)
            new_remaining_ms = max(remaining_ms - delay_ms, 0)
            self._record(
                "group.initial_rebalance_extended", group, now_ms,
                reason="a new member joined during the initial rebalance delay",
                delay_ms=new_delay_ms, remaining_ms=new_remaining_ms,
            )  # fmt: skip
            self._schedule(
                join_key(group_id),
                now_ms + new_delay_ms,
                lambda t: self._try_complete_initial_rebalance_else_schedule(group_id, new_delay_ms, new_remaining_ms, t),
            )
        else:
            self._complete_classic_group_join(group, now_ms)

    def _maybe_complete_join_phase(self, group: ClassicGroup, now_ms: int) -> None:
        """Complete the join phase when every member has rejoined, except during an initial
        rebalance, which always waits for its timer (§3.6)."""
        if group.state is not PREPARING_REBALANCE:
            return
        if group.previous_state is EMPTY:
            return
        if not group.has_all_members_joined():
            return
        self._complete_classic_group_join(group, now_ms)

    def _complete_classic_group_join_by_id(self, group_id: str, now_ms: int) -> None:
        group = self.groups.get(group_id)
        if group is not None:
            self._complete_classic_group_join(group, now_ms)

    def _complete_classic_group_join(self, group: ClassicGroup, now_ms: int) -> None:
        """GroupMetadataManager.completeClassicGroupJoin (§3.7)."""
        self.timers.cancel(join_key(group.group_id))
        if group.state is not PREPARING_REBALANCE:  # Kafka would throw on the transition below
            raise IllegalStateTransition(f"group {group.group_id} completes a join phase in {group.state.value}")
        # 1. Dynamic members that did not rejoin are removed; absent static members stay.
        for member in [m for m in group.not_yet_rejoined_members() if not m.is_static]:
            group.remove(member.member_id)
            self.timers.cancel(heartbeat_key(group.group_id, member.member_id))
            self._record(
                "member.removed", group, now_ms, member_id=member.member_id,
                reason="did not rejoin before the join phase completed", cause="not_rejoined",
            )  # fmt: skip
        # 2. Leader: keep it if it rejoined, else the first member that did; nobody rejoined but
        # (static) members remain: postpone by another rebalance timeout.
        if not group.maybe_elect_new_joined_leader() and group.members:
            group_id = group.group_id
            self._record(
                "group.join_postponed", group, now_ms,
                reason="no member rejoined; waiting another rebalance timeout", remaining_members=list(group.members),
            )  # fmt: skip
            self._schedule(
                join_key(group_id),
                now_ms + group.rebalance_timeout_ms(),
                lambda t: self._complete_classic_group_join_by_id(group_id, t),
            )
            return
        # 3. ClassicGroup.initNextGeneration: generation + 1, select the protocol.
        group.generation_id += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            group.subscribed_topics = group.compute_subscribed_topics()
            self._transition(
                group, COMPLETING_REBALANCE, now_ms,
                f"join phase completed: generation {group.generation_id} with {len(group.members)} members",
            )  # fmt: skip
        else:
            group.protocol_name = None
            group.subscribed_topics = group.compute_subscribed_topics()
            self._transition(
                group, EMPTY, now_ms, f"join phase completed with no members: generation {group.generation_id} is empty"
            )
        group.pending_sync_members.clear()
        if group.state is not COMPLETING_REBALANCE:
            return
        # 4-5. Answer every parked JoinGroup (only the leader gets the member list), re-arm every
        # member's session, clear "new", and expect a SyncGroup from everyone.
        for member in list(group.members.values()):
            members = group.current_members() if group.is_leader(member.member_id) else []
            group.complete_join(member, self._join_response(group, member.member_id, members))
            self._reschedule_classic_group_member_heartbeat(group, member, now_ms)
            member.is_new = False
            group.pending_sync_members[member.member_id] = None
        self._schedule_pending_sync(group, now_ms)

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.pop(member_id, None)
        if group.state in (DEAD, EMPTY, PREPARING_REBALANCE) or not group.pending_sync_members:
            self.timers.cancel(sync_key(group.group_id))

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self.timers.cancel(sync_key(group.group_id))

    def _schedule_pending_sync(self, group: ClassicGroup, now_ms: int) -> None:
        group_id, generation_id = group.group_id, group.generation_id
        self._schedule(
            sync_key(group_id),
            now_ms + group.rebalance_timeout_ms(),
            lambda t: self._expire_pending_sync(group_id, generation_id, t),
        )

    def _expire_pending_sync(self, group_id: str, generation_id: int, now_ms: int) -> None:
        """§4.4: members that have not synced this generation are removed, then a rebalance."""
        group = self.groups.get(group_id)
        if group is None or generation_id != group.generation_id:
            return
        if group.state not in (COMPLETING_REBALANCE, STABLE) or not group.pending_sync_members:
            return
        pending = list(group.pending_sync_members)
        for member_id in pending:
            if group.remove(member_id) is not None:
                self._record(
                    "member.removed", group, now_ms, member_id=member_id,
                    reason="did not send SyncGroup within the rebalance timeout", cause="pending_sync_expired",
                )  # fmt: skip
            self.timers.cancel(heartbeat_key(group_id, member_id))
        self._prepare_rebalance(group, now_ms, f"Removing {pending} on pending sync request expiration")

    def _reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: ErrorCode, now_ms: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error, now_ms)

    def _set_and_propagate_assignment(self, group: ClassicGroup, assignment: dict[str, bytes], now_ms: int) -> None:
        for member in group.members.values():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate_assignment(group, ErrorCode.NONE, now_ms)

    def _propagate_assignment(self, group: ClassicGroup, error: ErrorCode, now_ms: int) -> None:
        ok = error == ErrorCode.NONE
        for member in list(group.members.values()):
            response = SyncGroupResponse(
                error_code=error,
                protocol_type=group.protocol_type if ok else None,
                protocol_name=group.protocol_name if ok else None,
                assignment=member.assignment,
            )
            if group.complete_sync(member, response):
                # A session that expired while parked was ignored: re-arm it now (§5).
                self._reschedule_classic_group_member_heartbeat(group, member, now_ms)

    def _reschedule_classic_group_member_heartbeat(
        self, group: ClassicGroup, member: ClassicGroupMember, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        """Arm the member's heartbeat timer at now + its session timeout (or ``timeout_ms``):
        the armed one is moved when it can be (Timers.postpone: same callback, same instant and
        order of expiry as a new timer), else a new one replaces it."""
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        timer = member.session_timer
        if timer is not None and self.timers.postpone(timer, now_ms + timeout, now_ms):
            return
        group_id, member_id = group.group_id, member.member_id
        member.session_timer = self._schedule(
            heartbeat_key(group_id, member_id),
            now_ms + timeout,
            lambda t: self._expire_classic_group_member_heartbeat(group_id, member_id, t),
        )

    def _expire_classic_group_member_heartbeat(self, group_id: str, member_id: str, now_ms: int) -> None:
        """A member's heartbeat timer fired (§5 "Session expiry", Appendix)."""
        group = self.groups.get(group_id)
        if group is None or group.state is DEAD:
            return
        if group.is_pending_member(member_id):
            self._record(
                "member.expired", group, now_ms, member_id=member_id,
                reason="pending member did not rejoin within its session timeout", kind="pending",
            )  # fmt: skip
            group.remove(member_id)
            if group.state is PREPARING_REBALANCE and group.has_all_members_joined():
                self._complete_classic_group_join(group, now_ms)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return  # parked in JoinGroup/SyncGroup: ignored until that completes
        kind = "new_member_join_timeout" if member.is_new else "session_timeout"
        reason = (
            f"new member {member_id} did not complete its JoinGroup within "
            f"{self.config.classic_group_new_member_join_timeout_ms} ms"
            if member.is_new
            else f"member {member_id} session expired ({member.session_timeout_ms} ms without a heartbeat)"
        )
        self._record("member.expired", group, now_ms, member_id=member_id, reason=reason, kind=kind)
        self._remove_member_and_update_classic_group(group, member, now_ms, f"removing member {member_id} on heartbeat expiration.")

    def _remove_member_and_update_classic_group(
        self, group: ClassicGroup, member: ClassicGroupMember, now_ms: int, reason: str
    ) -> None:
        group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group, now_ms, reason)
        elif group.state is PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_classic_group_join(group, now_ms)

    def _delete(self, group: ClassicGroup, now_ms: int, reason: str, **details: Any) -> None:
        self._transition(group, DEAD, now_ms, reason)
        del self.groups[group.group_id]
        self.timers.cancel(join_key(group.group_id))
        self.timers.cancel(sync_key(group.group_id))
        self._record("group.deleted", group, now_ms, reason=reason, **details)

