"""The classic group coordinator, sans-I/O: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, static
membership (KIP-345), the join/sync/session timers, and a classic group's side of the offset and
admin APIs.

Follows Kafka's GroupMetadataManager (the 4.x group coordinator) rule by rule, as
kafka-group-semantics §2-§7 and its Appendix describe them; the method names are Kafka's in
snake_case, so the Java source can be read side by side. Inputs are the request's fields and
``now_ms``; outputs are response values, or a ``Parked`` response that a later request or a timer
completes (a JoinGroup parked until the join phase completes, a SyncGroup until the leader syncs).
Nothing here reads a clock, touches a socket or waits: timers are armed on the cluster's
``Timers`` (``CoordinatorServices.schedule``) with deadlines in clock milliseconds and call back
with the time they fired.

Every change of group state goes through one door, ``_transition``, checked against the table in
``mockbroker.coordinators.classic.group`` and recorded in the event log with its reason
(docs/events.md). Requests for a group id that is a consumer group never reach this class: the
router (mockbroker.coordinators.router) sends them to the migration package, except the hot
Heartbeat, which this class answers for classic groups and hands on through
``heartbeat_other_kind`` otherwise.

Deliberate differences from Kafka, all invisible to clients on the wire:
- The coordinator is always active: COORDINATOR_NOT_AVAILABLE appears only for a Dead group.
- Where Kafka iterates a HashMap (leader succession, the leader's member list, protocol vote ties)
  insertion order decides, so runs repeat exactly.
- A deleted group is removed at once (after a recorded transition to Dead), as in Kafka 4.x.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any
from typing import Protocol as TypingProtocol

from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    CONSUMER_PROTOCOL_TYPE,
    DEAD,
    EMPTY,
    GROUP_TYPE_CLASSIC,
    MEMBER_ID_DELIMITER,
    NO_LEADER,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    VALID_PREVIOUS_STATES,
    ClassicGroup,
    ClassicGroupMember,
    ClassicGroupState,
    IllegalStateTransition,
    Protocol,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.offsets.manager import (
    OffsetMetadataManager,
    TransactionalTopics,
    partition_list,
    rejected_commit,
)
from mockbroker.coordinators.parked import Parked
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.timers import Timer
from mockbroker_protocol.consumer_protocol import decode_assignment, decode_subscription
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.describe_groups import DescribedGroup, DescribedGroupMember
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponseTopic
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.coordinators.classic.assignment_checks import AssignmentChecks

log = logging.getLogger("mockbroker.groups")

REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION = 4  # JoinGroupRequest.requiresKnownMemberId (KIP-394)
SKIP_ASSIGNMENT_MIN_VERSION = 9  # JoinGroupRequest.supportsSkippingAssignment (KIP-814)
SYNC_PROTOCOL_FIELDS_MIN_VERSION = 5  # SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent (KIP-559)
OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION = 9  # OffsetMetadataManager.validateOffsetCommit

# A steady heartbeat's answers, read as module globals: on CPython 3.11 reading an enum member as
# a class attribute (ErrorCode.NONE) costs about 1k instructions, a quarter of such a heartbeat.
_NONE = ErrorCode.NONE
_REBALANCE_IN_PROGRESS = ErrorCode.REBALANCE_IN_PROGRESS


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


def join_rebalance_timeout_ms(request: JoinGroupRequest, api_version: int) -> int:
    """v0 has no RebalanceTimeoutMs: JoinGroupRequest copies the session timeout into it (§3.1)."""
    return request.session_timeout_ms if api_version == 0 else request.rebalance_timeout_ms


def _heartbeat_key(group_id: str, member_id: str) -> Hashable:
    return ("classic-group-heartbeat", group_id, member_id)


def _join_key(group_id: str) -> Hashable:
    return ("classic-group-join", group_id)


def _sync_key(group_id: str) -> Hashable:
    return ("classic-group-sync", group_id)


def _join_reason(reason: str | None) -> str:
    """JoinGroupRequest.joinReason."""
    return reason if reason else "not provided"


class ClassicGroupCoordinator:
    """Owns every classic group of the cluster (``groups``)."""

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

    # -- for the migration package (§10.8) -----------------------------------------------------------

    def is_empty_group(self, group_id: str) -> bool:
        """True for an Empty classic group (a consumer group may replace it, §10.1)."""
        group = self.groups.get(group_id)
        return group is not None and group.state is EMPTY

    def remove_empty_group(self, group_id: str, now_ms: int, reason: str) -> None:
        """An empty classic group replaced by a consumer group; its offsets stay (§10.1)."""
        self._delete(self.groups[group_id], now_ms, reason)

    def remove_classic_group_for_upgrade(self, group: ClassicGroup, now_ms: int) -> None:
        """convertToConsumerGroup's classic side (§10.8): parked JoinGroups and SyncGroups are
        told REBALANCE_IN_PROGRESS, every timer goes, and the group goes (its offsets stay)."""
        for member in list(group.members.values()):
            group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id))
            group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
        for member_id in [*group.members, *group.pending_join_members]:
            self.timers.cancel(_heartbeat_key(group.group_id, member_id))
        self._delete(group, now_ms, "converted to a consumer group (online upgrade)")

    def add_classic_group_for_downgrade(self, group: ClassicGroup, now_ms: int, reason: str, details: dict[str, Any]) -> None:
        """convertToClassicGroup's classic side (§10.8): the group, built Stable at generation =
        the consumer group's epoch, arms every member's session, then rebalances at once."""
        group.state, group.state_timestamp_ms = STABLE, now_ms
        self.groups[group.group_id] = group
        self._record("group.created", group, now_ms, reason=reason, state=group.state.value)
        self._record("group.downgraded", group, now_ms, reason=reason, protocol_name=group.protocol_name, **details)
        for member in group.members.values():
            self._reschedule_classic_group_member_heartbeat(group, member, now_ms)
        self._prepare_rebalance(group, now_ms, reason)


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

    # -- JoinGroup (§3) -----------------------------------------------------------------------------

    def check_join_request(self, request: JoinGroupRequest) -> ErrorCode | None:
        """GroupCoordinatorService.joinGroup's checks, made before the group is looked up (and
        before NOT_COORDINATOR): §3.2 steps 2 and 3. RebalanceTimeoutMs is never validated."""
        if not request.group_id:
            return ErrorCode.INVALID_GROUP_ID
        if not (
            self.config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            return ErrorCode.INVALID_SESSION_TIMEOUT
        return None

    def join_group(
        self,
        now_ms: int,
        request: JoinGroupRequest,
        *,
        api_version: int,
        client_id: str,
        client_host: str,
    ) -> JoinGroupResponse | Parked[JoinGroupResponse]:
        """GroupMetadataManager.classicGroupJoin, once ``check_join_request`` passed and the
        router found no consumer group of that id. Answers at once, or parks until the join phase
        completes (or the member is removed, or replaced by a static rejoin)."""
        join = _Join(
            request=request,
            api_version=api_version,
            client_id=client_id,
            client_host=client_host,
            rebalance_timeout_ms=join_rebalance_timeout_ms(request, api_version),
            protocols=[(p.name, p.metadata) for p in request.protocols],
            parked=Parked(f"JoinGroup {request.group_id}/{request.member_id or '(new)'}"),
        )
        group = self.groups.get(request.group_id)
        is_unknown_member = request.member_id == UNKNOWN_MEMBER_ID
        if group is None:
            if not is_unknown_member:
                return JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=request.member_id)
            group = self._create_group(request.group_id, now_ms, "JoinGroup with an empty member id")

        if not self._accept_joining_member(group, request.member_id):
            # §3.2 step 6: a rejected existing member is removed from the group.
            if group.remove(request.member_id) is not None:
                self.timers.cancel(_heartbeat_key(group.group_id, request.member_id))
                self._record(
                    "member.removed", group, now_ms, member_id=request.member_id,
                    reason=f"group.max.size {self.config.group_max_size} reached", cause="group_max_size",
                )  # fmt: skip
            join.parked.complete(
                JoinGroupResponse(error_code=ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=UNKNOWN_MEMBER_ID)
            )
        elif is_unknown_member:
            self._join_new_member(group, join, now_ms)
        else:
            self._join_existing_member(group, join, now_ms)
        return join.parked.result() if join.parked.done() else join.parked

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """GroupMetadataManager.acceptJoiningMember (group.max.size, §3.2 step 6)."""
        max_size = self.config.group_max_size
        if group.state in (EMPTY, DEAD):
            return True
        if group.state is PREPARING_REBALANCE:
            member = group.members.get(member_id)
            return (member is not None and member.is_awaiting_join) or group.num_awaiting_join_response() < max_size
        return member_id in group.members or len(group.members) < max_size

    def _join_new_member(self, group: ClassicGroup, join: _Join, now_ms: int) -> None:
        request = join.request
        if group.state is DEAD:
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=UNKNOWN_MEMBER_ID))
        elif not group.supports_protocols(request.protocol_type, {name for name, _ in join.protocols}):
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=UNKNOWN_MEMBER_ID))
        else:
            # §3.4: clientId-UUID for dynamic members, groupInstanceId-UUID for static ones.
            prefix = request.group_instance_id if request.group_instance_id is not None else join.client_id
            new_member_id = f"{prefix}{MEMBER_ID_DELIMITER}{self.new_uuid()}"
            if request.group_instance_id is not None:
                self._join_new_static_member(group, join, new_member_id, now_ms)
            else:
                self._join_new_dynamic_member(group, join, new_member_id, now_ms)

    def _join_new_static_member(self, group: ClassicGroup, join: _Join, new_member_id: str, now_ms: int) -> None:
        """§7.1: a known instance id replaces its old member; an unknown one is added."""
        instance_id = join.request.group_instance_id
        assert instance_id is not None
        existing_member_id = group.static_members.get(instance_id)
        if existing_member_id is not None:
            self._update_static_member_then_rebalance_or_complete_join(group, join, existing_member_id, new_member_id, now_ms)
        else:
            self._add_member_then_rebalance_or_complete_join(group, join, new_member_id, now_ms)

    def _join_new_dynamic_member(self, group: ClassicGroup, join: _Join, new_member_id: str, now_ms: int) -> None:
        if join.api_version >= REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION:
            # KIP-394 (§3.5): hand out an id, remember it as pending for one session timeout, and
            # ask the member to rejoin with it. The group's state does not change.
            group.pending_join_members[new_member_id] = None
            self._schedule(
                _heartbeat_key(group.group_id, new_member_id),
                now_ms + join.request.session_timeout_ms,
                lambda t: self._expire_classic_group_member_heartbeat(group.group_id, new_member_id, t),
            )
            self._record(
                "member.join_pending", group, now_ms, member_id=new_member_id,
                reason="MEMBER_ID_REQUIRED: rejoin with the member id handed out (KIP-394)",
                client_id=join.client_id, session_timeout_ms=join.request.session_timeout_ms,
            )  # fmt: skip
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.MEMBER_ID_REQUIRED, member_id=new_member_id))
        else:
            self._add_member_then_rebalance_or_complete_join(group, join, new_member_id, now_ms)

    def _join_existing_member(self, group: ClassicGroup, join: _Join, now_ms: int) -> None:
        request = join.request
        member_id = request.member_id
        if group.state is DEAD:
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=member_id))
            return
        if not group.supports_protocols(request.protocol_type, {name for name, _ in join.protocols}):
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
            return
        if group.is_pending_member(member_id):
            if request.group_instance_id is not None:
                # Kafka throws IllegalStateException here ("pending member cannot be a static
                # member"), which reaches the client as UNKNOWN_SERVER_ERROR.
                join.parked.complete(JoinGroupResponse(error_code=ErrorCode.UNKNOWN_SERVER_ERROR))
                return
            self._add_member_then_rebalance_or_complete_join(group, join, member_id, now_ms)
            return
        error = group.validate_member(member_id, request.group_instance_id)
        if error is not None:
            join.parked.complete(
                JoinGroupResponse(error_code=error, member_id=member_id, protocol_type=None, protocol_name=None)
            )
            return
        member = group.members[member_id]
        self._record(
            "member.rejoined", group, now_ms, member_id=member_id, reason=_join_reason(request.reason),
            state=group.state.value, same_metadata=member.matches(join.protocols),
        )  # fmt: skip
        self._rejoin_by_state(group, member, join, now_ms)

    def _rejoin_by_state(self, group: ClassicGroup, member: ClassicGroupMember, join: _Join, now_ms: int) -> None:
        """classicGroupJoinExistingMember by state (§3.8): a rebalance when the member's
        metadata changed or the leader rejoins Stable; otherwise the current generation again."""
        member_id = member.member_id
        client_reason = _join_reason(join.request.reason)
        if group.state is PREPARING_REBALANCE:
            self._update_member_then_rebalance_or_complete_join(
                group, member, join, now_ms,
                f"Member {member_id} is joining group during {group.state.value}; client reason: {client_reason}",
            )  # fmt: skip
        elif group.state is COMPLETING_REBALANCE:
            if member.matches(join.protocols):
                # It lost its JoinGroup response: answer again with the current generation (§3.8).
                join.parked.complete(
                    self._join_response(group, member_id, group.current_members() if group.is_leader(member_id) else [])
                )
            else:
                self._update_member_then_rebalance_or_complete_join(
                    group, member, join, now_ms,
                    f"Updating metadata for member {member_id} during {group.state.value}; client reason: {client_reason}",
                )  # fmt: skip
        elif group.state is STABLE:
            if group.is_leader(member_id):
                # The leader rejoins to react to metadata changes: always a rebalance (§3.8).
                self._update_member_then_rebalance_or_complete_join(
                    group, member, join, now_ms,
                    f"Leader {member_id} re-joining group during {group.state.value}; client reason: {client_reason}",
                )  # fmt: skip
            elif not member.matches(join.protocols):
                self._update_member_then_rebalance_or_complete_join(
                    group, member, join, now_ms,
                    f"Updating metadata for member {member_id} during {group.state.value}; client reason: {client_reason}",
                )  # fmt: skip
            else:
                join.parked.complete(self._join_response(group, member_id, []))
        else:
            join.parked.complete(JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))

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

    def _add_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, join: _Join, member_id: str, now_ms: int
    ) -> None:
        """§3.6: the member is stored, its JoinGroup parked, and it is flagged new with the
        5-minute new-member join timeout as its heartbeat timer."""
        request = join.request
        member = ClassicGroupMember(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=join.client_id,
            client_host=join.client_host,
            rebalance_timeout_ms=join.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            supported_protocols=join.protocols,
            awaiting_join=join.parked,
            is_new=True,
        )
        if group.state is PREPARING_REBALANCE and group.previous_state is EMPTY:
            group.new_member_added = True  # extends the initial rebalance delay (§3.6)
        group.add(member)
        self._record(
            "member.joined", group, now_ms, member_id=member_id, reason=_join_reason(request.reason),
            group_instance_id=request.group_instance_id, client_id=join.client_id, client_host=join.client_host,
            session_timeout_ms=member.session_timeout_ms, rebalance_timeout_ms=member.rebalance_timeout_ms,
            protocol_type=member.protocol_type, protocols=_describe_protocols(member.protocol_type, join.protocols),
        )  # fmt: skip
        self._reschedule_classic_group_member_heartbeat(
            group, member, now_ms, self.config.classic_group_new_member_join_timeout_ms
        )
        instance = "null" if request.group_instance_id is None else request.group_instance_id
        self._maybe_prepare_rebalance_or_complete_join(
            group, now_ms,
            f"Adding new member {member_id} with group instance id {instance}; client reason: {_join_reason(request.reason)}",
        )  # fmt: skip

    def _update_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, member: ClassicGroupMember, join: _Join, now_ms: int, reason: str
    ) -> None:
        group.update_member(
            member, join.protocols, join.rebalance_timeout_ms, join.request.session_timeout_ms, join.parked
        )
        self._maybe_prepare_rebalance_or_complete_join(group, now_ms, reason)

    def _update_static_member_then_rebalance_or_complete_join(
        self, group: ClassicGroup, join: _Join, old_member_id: str, new_member_id: str, now_ms: int
    ) -> None:
        """§7.1: replace X by Y; no rebalance when Stable and the selected protocol would not change."""
        request = join.request
        instance_id = request.group_instance_id
        assert instance_id is not None
        current_leader = group.leader_id
        new_member = self._replace_static_member(group, instance_id, old_member_id, new_member_id, now_ms)
        self._reschedule_classic_group_member_heartbeat(group, new_member, now_ms)
        group.update_member(new_member, join.protocols, join.rebalance_timeout_ms, request.session_timeout_ms, join.parked)
        client_reason = _join_reason(request.reason)

        if group.state is STABLE:
            if (group.protocol_name or "") == group.select_protocol():
                # No rebalance: answer with the current generation (§7.1). v9+ tells a replaced
                # leader to skip the assignor (KIP-814); older versions name the *old* leader id,
                # so the client believes it is a follower and just syncs.
                if join.api_version >= SKIP_ASSIGNMENT_MIN_VERSION:
                    is_leader = group.is_leader(new_member_id)
                    response = self._join_response(group, new_member_id, group.current_members() if is_leader else [])
                    response.skip_assignment = is_leader
                else:
                    response = self._join_response(group, new_member_id, [])
                    response.leader = current_leader or NO_LEADER
                group.complete_join(new_member, response)
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    group, now_ms,
                    f"Group's selectedProtocol will change because static member {new_member_id} with instance id "
                    f"{instance_id} joined with change of protocol; client reason: {client_reason}",
                )  # fmt: skip
        elif group.state is COMPLETING_REBALANCE:
            # The leader may have computed assignments for the old id already (§7.1).
            self._prepare_rebalance(
                group, now_ms,
                f"Updating metadata for static member {new_member_id} with instance id {instance_id}; "
                f"client reason: {client_reason}",
            )  # fmt: skip
        elif group.state in (EMPTY, DEAD):
            raise IllegalStateTransition(
                f"group {group.group_id} in {group.state.value} cannot hold static member {instance_id}"
            )
        else:
            self._maybe_complete_join_phase(group, now_ms)

    def _replace_static_member(
        self, group: ClassicGroup, instance_id: str, old_member_id: str, new_member_id: str, now_ms: int
    ) -> ClassicGroupMember:
        """ClassicGroup.replaceStaticMember: the old id's parked JoinGroup and SyncGroup are fenced;
        the new id inherits the assignment, client id, host and timeouts (§7.1)."""
        old = group.members.pop(old_member_id)
        group.complete_join(
            old,
            JoinGroupResponse(
                error_code=ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id,
                protocol_type=None, protocol_name=None, leader=NO_LEADER, members=[],
            ),
        )  # fmt: skip
        group.complete_sync(
            old,
            SyncGroupResponse(error_code=ErrorCode.FENCED_INSTANCE_ID, protocol_type=None, protocol_name=None, assignment=b""),
        )
        new = ClassicGroupMember(
            member_id=new_member_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            supported_protocols=old.supported_protocols,
            assignment=old.assignment,
        )
        group.members[new_member_id] = new
        if group.is_leader(old_member_id):
            group.leader_id = new_member_id
        group.static_members[instance_id] = new_member_id
        # The old id's heartbeat would expire without effect (it is no longer a member).
        self.timers.cancel(_heartbeat_key(group.group_id, old_member_id))
        self._record(
            "member.replaced", group, now_ms, member_id=new_member_id,
            reason=f"static member {instance_id} rejoined with an empty member id (KIP-345)",
            group_instance_id=instance_id, old_member_id=old_member_id, state=group.state.value,
        )  # fmt: skip
        return new

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
                _join_key(group_id),
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
                _join_key(group_id),
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
                _join_key(group_id),
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
        self.timers.cancel(_join_key(group.group_id))
        if group.state is not PREPARING_REBALANCE:  # Kafka would throw on the transition below
            raise IllegalStateTransition(f"group {group.group_id} completes a join phase in {group.state.value}")
        # 1. Dynamic members that did not rejoin are removed; absent static members stay.
        for member in [m for m in group.not_yet_rejoined_members() if not m.is_static]:
            group.remove(member.member_id)
            self.timers.cancel(_heartbeat_key(group.group_id, member.member_id))
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
                _join_key(group_id),
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
                assignment=_describe_assignment(group.protocol_type, assigned.assignment),
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
        _raise_if(group.validate_member(request.member_id, request.group_instance_id), f"member {request.member_id} is refused")
        if request.generation_id != group.generation_id:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {request.generation_id} is not {group.generation_id}.")
        if _is_protocol_inconsistent(request.protocol_type, group.protocol_type) or _is_protocol_inconsistent(
            request.protocol_name, group.protocol_name
        ):
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "The protocol type or name is not the group's.")
        if group.state is PREPARING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"Group {group.group_id} is rebalancing.")
        return group, group.members[request.member_id]

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.pop(member_id, None)
        if group.state in (DEAD, EMPTY, PREPARING_REBALANCE) or not group.pending_sync_members:
            self.timers.cancel(_sync_key(group.group_id))

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self.timers.cancel(_sync_key(group.group_id))

    def _schedule_pending_sync(self, group: ClassicGroup, now_ms: int) -> None:
        group_id, generation_id = group.group_id, group.generation_id
        self._schedule(
            _sync_key(group_id),
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
            self.timers.cancel(_heartbeat_key(group_id, member_id))
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
                _raise_if(group.validate_member(member_id, group_instance_id), f"member {member_id} is refused")
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
            return _REBALANCE_IN_PROGRESS  # the member must rejoin
        return _NONE

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
            _heartbeat_key(group_id, member_id),
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
        self.timers.cancel(_heartbeat_key(group_id, member_id))
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

    def _remove_member_and_update_classic_group(
        self, group: ClassicGroup, member: ClassicGroupMember, now_ms: int, reason: str
    ) -> None:
        group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group, now_ms, reason)
        elif group.state is PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_classic_group_join(group, now_ms)

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
            self.timers.cancel(_heartbeat_key(group.group_id, identity.member_id))
            self._record("member.left", group, now_ms, member_id=identity.member_id, reason=client_reason, pending=True)
        else:
            _raise_if(group.validate_member(identity.member_id, identity.group_instance_id), "member refused")
            self._remove_current_member_from_classic_group(group, identity.member_id, now_ms, client_reason)

    def _remove_current_member_from_classic_group(
        self, group: ClassicGroup, member_id: str, now_ms: int, client_reason: str
    ) -> None:
        member = group.members[member_id]
        self.timers.cancel(_heartbeat_key(group.group_id, member_id))
        self._record(
            "member.left", group, now_ms, member_id=member_id, reason=client_reason,
            group_instance_id=member.group_instance_id, pending=False,
        )  # fmt: skip
        # Its parked JoinGroup (if any) is answered before it goes (§6.2).
        group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id)


    # -- OffsetCommit and TxnOffsetCommit to a classic group (§8.1) -----------------------------------

    def commit_offsets(
        self, now_ms: int, request: OffsetCommitRequest, *, api_version: int
    ) -> list[OffsetCommitResponseTopic]:
        """OffsetMetadataManager.commitOffset for a classic group (or none yet: a simple group),
        for the partitions that passed the broker-level checks (request.topics, by name); a
        group-level error goes on every partition."""
        generation = request.generation_id_or_member_epoch
        try:
            group = self._get_or_maybe_create_group_for_commit(now_ms, request.group_id, generation, api_version)
            self._validate_offset_commit(group, request.member_id, request.group_instance_id, generation, transactional=False)
        except GroupError as exc:
            self.offsets.record_rejected_commit(
                self.groups.get(request.group_id) or request.group_id, now_ms, request.member_id, exc.code, generation,
                partition_list(request.topics),
            )  # fmt: skip
            return rejected_commit(request, exc.code)
        if group.state in (STABLE, PREPARING_REBALANCE):
            # A commit keeps a classic member's session alive (§5).
            self._reschedule_classic_group_member_heartbeat(group, group.members[request.member_id], now_ms)
        return self.offsets.store_offsets(
            now_ms, group, request, {},
            reason="simple commit (generation -1)" if generation < 0 else "member commit", request_generation_id=generation,
        )  # fmt: skip

    def _get_or_maybe_create_group_for_commit(
        self, now_ms: int, group_id: str, generation: int, api_version: int
    ) -> ClassicGroup:
        """An unknown group is created by a commit with generation -1: a "simple group" of admin
        clients and manual-assignment consumers (§2, §8.1); other commits to it are refused."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if generation < 0:
            return self._create_group(group_id, now_ms, "OffsetCommit with generation -1 (simple group)")
        if api_version >= OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Group {group_id} not found (generation {generation}).")

    def _validate_offset_commit(
        self,
        group: ClassicGroup,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        *,
        transactional: bool,
    ) -> None:
        """ClassicGroup.validateOffsetCommit (§8.1 "Classic group exists"): raises GroupError."""
        if group.state is DEAD:
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Group {group.group_id} is Dead.")
        if generation_id < 0 and group.state is EMPTY:
            return  # a simple or admin commit to an empty group
        if generation_id >= 0 or member_id or group_instance_id is not None:
            _raise_if(group.validate_member(member_id, group_instance_id), f"member {member_id} is refused")
            if generation_id != group.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {generation_id} is not {group.generation_id}.")
        elif not transactional and group.state is not EMPTY:
            # Manual-assignment clients sharing a group id with an active group (§8.1 rule 4).
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group.group_id} is not empty.")
        if not transactional and group.state is COMPLETING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"Group {group.group_id} is rebalancing.")

    def commit_transactional_offsets(
        self,
        now_ms: int,
        group_id: str,
        producer_id: int,
        topics: TransactionalTopics,
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:
        """OffsetMetadataManager.commitTransactionalOffset: pending until the transaction
        completes. A group-level error, or the error of each partition. (TxnOffsetCommit is not
        served yet: transactions are not.)"""
        group = self.groups.get(group_id)
        try:
            if group is None:
                if generation_id >= 0:
                    raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Group {group_id} not found.")
                group = self._create_group(group_id, now_ms, "TxnOffsetCommit with generation -1 (simple group)")
            self._validate_offset_commit(group, member_id, group_instance_id, generation_id, transactional=True)
        except GroupError as exc:
            return exc.code
        return self.offsets.store_pending_offsets(now_ms, group_id, producer_id, topics)

    # -- OffsetDelete, DescribeGroups, ListGroups, DeleteGroups (§8.4-§8.7) ---------------------------

    def check_offset_delete(self, group: ClassicGroup) -> ErrorCode | None:
        """ClassicGroup.validateDeleteGroup's OffsetDelete side: a group using its own embedded
        protocol (not ``consumer``) that has members cannot have offsets deleted (§8.4)."""
        if group.state in (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE) and not group.uses_consumer_protocol():
            return ErrorCode.NON_EMPTY_GROUP
        return None

    def describe_group(self, group_id: str) -> DescribedGroup | None:
        """GroupMetadataManager.describeGroups for one group; None when it does not exist (the
        handler shapes Kafka's "Dead" placeholder or GROUP_ID_NOT_FOUND by version)."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        stable = group.state is STABLE
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=(group.protocol_name or "") if stable else "",
            members=[
                DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata(group.protocol_name) if stable else b"",
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ],
        )

    def list_groups(self, states: set[str], types: set[str], include: Callable[[str], bool] | None) -> list[ListedGroup]:
        """ListGroups entries of the classic groups (type "classic", §8.6); ``states`` and
        ``types`` are lower-cased already (the router's)."""
        if types and GROUP_TYPE_CLASSIC not in types:
            return []
        return [
            ListedGroup(group.group_id, group.protocol_type or "", group.state.value, GROUP_TYPE_CLASSIC)
            for group in self.groups.values()
            if (include is None or include(group.group_id)) and (not states or group.state.value.lower() in states)
        ]

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """GroupCoordinatorShard.deleteGroups for one classic group: only an Empty group goes,
        with every committed and pending offset (§8.7)."""
        group = self.groups.get(group_id)
        if group is None or group.state is DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        deleted = self.offsets.delete_group(group_id)
        self._delete(group, now_ms, "DeleteGroups", offsets_deleted=deleted)
        return ErrorCode.NONE

    def remove_group(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        """A classic group goes (the cleanup cycle found it Empty with no offsets left)."""
        self._delete(group, now_ms, reason)

    def _delete(self, group: ClassicGroup, now_ms: int, reason: str, **details: Any) -> None:
        self._transition(group, DEAD, now_ms, reason)
        del self.groups[group.group_id]
        self.timers.cancel(_join_key(group.group_id))
        self.timers.cancel(_sync_key(group.group_id))
        self._record("group.deleted", group, now_ms, reason=reason, **details)


class _Join:
    """One JoinGroup being handled: the request plus what the handler knows about its sender."""

    __slots__ = ("api_version", "client_host", "client_id", "parked", "protocols", "rebalance_timeout_ms", "request")

    def __init__(
        self,
        *,
        request: JoinGroupRequest,
        api_version: int,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        protocols: list[Protocol],
        parked: Parked[JoinGroupResponse],
    ) -> None:
        self.request = request
        self.api_version = api_version
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.protocols = protocols
        self.parked = parked


def _raise_if(error: ErrorCode | None, message: str) -> None:
    """ClassicGroup.validateMember and friends answer a code; the rules raise it (one style)."""
    if error is not None:
        raise GroupError(error, message)


def _is_protocol_inconsistent(requested: str | None, groups: str | None) -> bool:
    """GroupMetadataManager.isProtocolInconsistent: only when both sides are known (v5+)."""
    return requested is not None and groups is not None and requested != groups


def _describe_protocols(protocol_type: str, protocols: list[Protocol]) -> list[dict[str, Any]]:
    """For the event log: each protocol by name, with the subscribed topics of a consumer's."""
    described: list[dict[str, Any]] = []
    for name, metadata in protocols:
        entry: dict[str, Any] = {"name": name, "metadata_bytes": len(metadata)}
        if protocol_type == CONSUMER_PROTOCOL_TYPE:
            try:
                version, subscription = decode_subscription(metadata)
                entry.update(version=version, topics=list(subscription.topics))
            except DecodeError:
                entry["undecodable"] = True
        described.append(entry)
    return described


def _describe_assignment(protocol_type: str | None, assignment: bytes) -> dict[str, list[int]] | None:
    """For the event log: a consumer assignment decoded as {topic: [partitions]}; None otherwise."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    try:
        _, decoded = decode_assignment(assignment)
    except DecodeError:
        return None
    return {tp.topic: list(tp.partitions) for tp in decoded.assigned_partitions}
