"""The classic group coordinator, sans-I/O: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, offsets,
DescribeGroups, ListGroups, DeleteGroups, OffsetDelete, the timers, and the event log.

Follows Kafka's GroupMetadataManager / OffsetMetadataManager (the 4.x group coordinator) rule by
rule, as kafka-group-semantics §2-§9 and its Appendix describe them; the method names are Kafka's
in snake_case, so the Java source can be read side by side. Inputs are the request's fields and
``now_ms``; outputs are response values, or a ``Parked`` response that a later request or a timer
completes (a JoinGroup parked until the join phase completes, a SyncGroup until the leader syncs).
Nothing here reads a clock, touches a socket or waits: timers are scheduled on ``Timers`` with
deadlines in clock milliseconds and call back with the time they fired.

Every change of group state goes through one door, ``_transition``, checked against the table in
``mockbroker.groups.classic`` and recorded in the event log with its reason (docs/events.md).

Deliberate differences from Kafka, all invisible to clients on the wire:
- There is no __consumer_offsets log: a commit is stored as soon as it is validated, so the
  "append then complete" steps of Kafka's write path happen at once, and write errors
  (COORDINATOR_LOAD_IN_PROGRESS, NOT_ENOUGH_REPLICAS...) never occur. The coordinator is always
  active: COORDINATOR_NOT_AVAILABLE appears only for a Dead group.
- Where Kafka iterates a HashMap (leader succession, the leader's member list, protocol vote ties)
  insertion order decides, so runs repeat exactly.
- A deleted group is removed at once (after a recorded transition to Dead), as in Kafka 4.x.
- KIP-848 consumer groups live in ``consumer`` (mockbroker.groups.consumer_coordinator), in
  their own map ``consumer.groups``; ``groups`` holds the classic ones. A group id is in at most
  one of them (``find_group`` looks in both), and the APIs both kinds serve (OffsetCommit,
  OffsetFetch, OffsetDelete, ListGroups, DeleteGroups, JoinGroup) dispatch by type here.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mockbroker.config.groups import GroupConfig
from mockbroker.events import EventLog
from mockbroker.groups.classic import (
    COMPLETING_REBALANCE,
    CONSUMER_PROTOCOL_TYPE,
    DEAD,
    EMPTY,
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
from mockbroker.groups.consumer import ConsumerGroup
from mockbroker.groups.consumer_coordinator import ConsumerGroupCoordinator, TopicView
from mockbroker.groups.offsets import NO_METADATA, OffsetAndMetadata, OffsetStore
from mockbroker.groups.parked import Parked
from mockbroker.timers import Timer, Timers
from mockbroker_protocol.consumer_protocol import decode_assignment, decode_subscription
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.describe_groups import DescribedGroup, DescribedGroupMember
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestTopic,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from mockbroker_protocol.messages.offset_delete import (
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.groups.assignment_checks import AssignmentChecks

log = logging.getLogger("mockbroker.groups")

REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION = 4  # JoinGroupRequest.requiresKnownMemberId (KIP-394)
SKIP_ASSIGNMENT_MIN_VERSION = 9  # JoinGroupRequest.supportsSkippingAssignment (KIP-814)
SYNC_PROTOCOL_FIELDS_MIN_VERSION = 5  # SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent (KIP-559)
OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION = 9  # OffsetMetadataManager.validateOffsetCommit
DEFAULT_RETENTION_TIME = -1  # OffsetCommitRequest.DEFAULT_RETENTION_TIME
DEFAULT_TIMESTAMP = -1  # OffsetCommitRequest.DEFAULT_TIMESTAMP (v1 commit timestamp)
INVALID_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET
GROUP_TYPE_CLASSIC = "classic"
KNOWN_GROUP_TYPES = frozenset({"classic", "consumer", "share", "streams"})  # Group.GroupType.parse

GROUP_EXPIRATION_KEY = ("group-metadata-expiration",)  # GroupCoordinatorShard.GROUP_EXPIRATION_KEY

# A steady heartbeat's answers, read as module globals: on CPython 3.11 reading an enum member as
# a class attribute (ErrorCode.NONE) costs about 1k instructions, a quarter of such a heartbeat.
_NONE = ErrorCode.NONE
_REBALANCE_IN_PROGRESS = ErrorCode.REBALANCE_IN_PROGRESS


def _heartbeat_key(group_id: str, member_id: str) -> Hashable:
    return ("classic-group-heartbeat", group_id, member_id)


def _join_key(group_id: str) -> Hashable:
    return ("classic-group-join", group_id)


def _sync_key(group_id: str) -> Hashable:
    return ("classic-group-sync", group_id)


def _join_reason(reason: str | None) -> str:
    """JoinGroupRequest.joinReason."""
    return reason if reason else "not provided"


def _java_length(text: str) -> int:
    """String.length(): UTF-16 code units (offset.metadata.max.bytes counts these, §8.1)."""
    return len(text.encode("utf-16-le")) // 2


class GroupCoordinator:
    """Owns every classic group and the committed offsets of the cluster."""

    def __init__(
        self,
        config: GroupConfig,
        timers: Timers,
        events: EventLog,
        *,
        broker_of: Callable[[str], int] | None = None,
        new_uuid: Callable[[], str] | None = None,
        on_internal_error: Callable[[BaseException], None] | None = None,
        assignment_checks: AssignmentChecks | None = None,
        topics: Mapping[str, TopicView] | None = None,
    ) -> None:
        self.config = config
        # Validation, reference check and broker-side assignment of SyncGroup assignments (#5).
        self.assignment_checks = assignment_checks
        self.timers = timers
        self.events = events
        # Classic groups by id; KIP-848 consumer groups are in self.consumer.groups.
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets = OffsetStore()
        self._broker_of = broker_of
        self._new_uuid = new_uuid or (lambda: str(uuid.uuid4()))
        self._on_internal_error = on_internal_error
        # KIP-848 consumer groups (kafka-group-semantics §10); ``topics`` is the cluster's topic
        # map, which they read for subscriptions, regexes and topic ids.
        self.consumer = ConsumerGroupCoordinator(self, topics if topics is not None else {})

    def find_group(self, group_id: str) -> ClassicGroup | ConsumerGroup | None:
        """The group named ``group_id``, classic or consumer (KIP-848), or None."""
        return self.groups.get(group_id) or self.consumer.groups.get(group_id)

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A consumer group as plain data (see ConsumerGroupCoordinator.snapshot); None for a
        classic or unknown group."""
        return self.consumer.snapshot(group_id)

    def is_empty_classic_group(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and group.state is EMPTY

    def remove_empty_classic_group(self, group_id: str, now_ms: int, reason: str) -> None:
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

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self, now_ms: int) -> None:
        """Arm the periodic offset expiry and empty-group cleanup (§8.2)."""
        self._schedule(GROUP_EXPIRATION_KEY, now_ms + self.config.offsets_retention_check_interval_ms, self.cleanup_group_metadata)

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
        self,
        type: str,
        group: ClassicGroup | ConsumerGroup | str,
        now_ms: int,
        *,
        member_id: str | None = None,
        reason: str | None = None,
        **details: Any,
    ) -> None:
        group_id = group if isinstance(group, str) else group.group_id
        generation = None if isinstance(group, str) else group.generation_id
        broker_id = self._broker_of(group_id) if self._broker_of is not None else None
        self.events.record(
            type,
            broker_id=broker_id,
            group_id=group_id,
            generation_id=generation,
            member_id=member_id,
            reason=reason,
            now_ms=now_ms,
            **details,
        )

    def _schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[int], None]) -> Timer:
        def fire(now_ms: int) -> None:
            try:
                callback(now_ms)
            except Exception as exc:  # a broker bug inside a timer: surface it, keep the timers going
                if self._on_internal_error is None:
                    raise
                self._on_internal_error(exc)

        return self.timers.schedule(key, deadline_ms, fire)

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
        """GroupMetadataManager.classicGroupJoin. Answers at once, or parks until the join phase
        completes (or the member is removed, or replaced by a static rejoin)."""
        error = self.check_join_request(request)
        if error is not None:
            return JoinGroupResponse(error_code=error, member_id=request.member_id)
        join = _Join(
            request=request,
            api_version=api_version,
            client_id=client_id,
            client_host=client_host,
            # v0 has no RebalanceTimeoutMs: JoinGroupRequest copies the session timeout into it (§3.1).
            rebalance_timeout_ms=request.session_timeout_ms if api_version == 0 else request.rebalance_timeout_ms,
            protocols=[(p.name, p.metadata) for p in request.protocols],
            parked=Parked(f"JoinGroup {request.group_id}/{request.member_id or '(new)'}"),
        )
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None:
            if not consumer_group.is_empty():
                # A classic member inside a consumer group (§10.8): the consumer engine answers.
                return self.consumer.mixed.classic_group_join_to_consumer_group(
                    now_ms, consumer_group, request, api_version=api_version, rebalance_timeout_ms=join.rebalance_timeout_ms,
                    client_id=client_id, client_host=client_host,
                )  # fmt: skip
            self.consumer.remove_group(consumer_group, now_ms, "replaced by a classic group (JoinGroup)")
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
            new_member_id = f"{prefix}{MEMBER_ID_DELIMITER}{self._new_uuid()}"
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
        client_reason = _join_reason(request.reason)
        self._record(
            "member.rejoined", group, now_ms, member_id=member_id, reason=client_reason,
            state=group.state.value, same_metadata=member.matches(join.protocols),
        )  # fmt: skip
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
        """GroupMetadataManager.classicGroupSync: answers at once, or parks a SyncGroup in
        CompletingRebalance until the leader's assignment arrives."""
        error = self.check_sync_request(request, api_version)
        if error is not None:
            return SyncGroupResponse(error_code=error)
        group = self.groups.get(request.group_id)
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None and not consumer_group.is_empty():  # §10.8
            return self.consumer.mixed.classic_group_sync_to_consumer_group(now_ms, consumer_group, request)
        if group is None or group.state is EMPTY:
            return SyncGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID)
        error = self._validate_sync_group(group, request)
        if error is not None:
            return SyncGroupResponse(error_code=error)
        member_id = request.member_id
        member = group.members[member_id]
        if group.state is PREPARING_REBALANCE:
            return SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS)
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
            # A member missing from the leader's list gets empty bytes; unknown ids are ignored (§4.2).
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
                group, STABLE, now_ms, f"leader {member_id} sent the assignment for generation {group.generation_id}"
            )
        return parked.result() if parked.done() else parked

    def _validate_sync_group(self, group: ClassicGroup, request: SyncGroupRequest) -> ErrorCode | None:
        if group.state is DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(request.member_id, request.group_instance_id)
        if error is not None:
            return error
        if request.generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if _is_protocol_inconsistent(request.protocol_type, group.protocol_type) or _is_protocol_inconsistent(
            request.protocol_name, group.protocol_name
        ):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

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
        """GroupMetadataManager.classicGroupHeartbeat."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None:
            consumer_group = self.consumer.groups.get(group_id)
            if consumer_group is not None:  # a classic member inside a consumer group (§10.8)
                return self.consumer.mixed.classic_group_heartbeat_to_consumer_group(
                    now_ms, consumer_group, member_id, generation_id, group_instance_id
                )
            return ErrorCode.UNKNOWN_MEMBER_ID
        state = group.state
        if state is DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if group_instance_id is None:  # validate_member without a static id: membership only
            member = group.members.get(member_id)
            if member is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
        else:
            error = group.validate_member(member_id, group_instance_id)
            if error is not None:
                return error
            member = group.members[member_id]
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if state is EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
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
        """GroupMetadataManager.classicGroupLeave: (top-level error, one answer per identity)."""
        identities = list(members)
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        consumer_group = self.consumer.groups.get(group_id)
        if consumer_group is not None:  # classic members inside a consumer group (§10.8)
            return ErrorCode.NONE, self.consumer.mixed.classic_group_leave_to_consumer_group(now_ms, consumer_group, identities)
        if group is None:
            # GroupCoordinatorService.leaveGroup: NONE at the top, UNKNOWN_MEMBER_ID for each member.
            return ErrorCode.NONE, [
                MemberResponse(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID) for m in identities
            ]
        if group.state is DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        responses: list[MemberResponse] = []
        for identity in identities:
            client_reason = identity.reason if identity.reason is not None else "not provided"
            error = ErrorCode.NONE
            if identity.member_id == UNKNOWN_MEMBER_ID:
                # Admin removal by instance id (KIP-345).
                target = group.static_members.get(identity.group_instance_id) if identity.group_instance_id is not None else None
                if target is None:
                    error = ErrorCode.UNKNOWN_MEMBER_ID
                else:
                    self._remove_current_member_from_classic_group(group, target, now_ms, client_reason)
            elif group.is_pending_member(identity.member_id):
                group.remove(identity.member_id)
                self.timers.cancel(_heartbeat_key(group_id, identity.member_id))
                self._record(
                    "member.left", group, now_ms, member_id=identity.member_id, reason=client_reason, pending=True
                )
            else:
                validation = group.validate_member(identity.member_id, identity.group_instance_id)
                if validation is not None:
                    error = validation
                else:
                    self._remove_current_member_from_classic_group(group, identity.member_id, now_ms, client_reason)
            responses.append(MemberResponse(identity.member_id, identity.group_instance_id, error))

        left = [r.member_id for r in responses if r.error_code == ErrorCode.NONE]
        if left:
            reason = f"explicit `LeaveGroup` request for ({', '.join(left)}) members."
            if group.state in (STABLE, COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group, now_ms, reason)
            elif group.state is PREPARING_REBALANCE:
                self._maybe_complete_join_phase(group, now_ms)
        return ErrorCode.NONE, responses

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

    # -- OffsetCommit (§8.1) ------------------------------------------------------------------------

    def commit_offsets(
        self, now_ms: int, request: OffsetCommitRequest, *, api_version: int
    ) -> list[OffsetCommitResponseTopic]:
        """OffsetMetadataManager.commitOffset for the partitions that passed the broker-level
        checks (request.topics, by name); a group-level error goes on every partition."""
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None:
            return self.consumer.commit_offsets(now_ms, consumer_group, request, api_version=api_version)
        group = self.groups.get(request.group_id)
        error: ErrorCode | None = None
        generation = request.generation_id_or_member_epoch
        if group is None:
            if generation < 0:
                # A "simple group": admin clients and manual-assignment consumers (§2, §8.1).
                group = self._create_group(request.group_id, now_ms, "OffsetCommit with generation -1 (simple group)")
            elif api_version >= OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION:
                error = ErrorCode.GROUP_ID_NOT_FOUND
            else:
                error = ErrorCode.ILLEGAL_GENERATION
        if group is not None and error is None:
            error = self._validate_offset_commit(
                group, request.member_id, request.group_instance_id, generation, transactional=False
            )
        if error is not None:
            self._record(
                "offset.commit_rejected", group or request.group_id, now_ms, member_id=request.member_id or None,
                reason=f"{error.name}", error=error.name, request_generation_id=generation,
                partitions=_partition_list(request.topics),
            )  # fmt: skip
            return [
                OffsetCommitResponseTopic(t.name, t.topic_id, [OffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions])
                for t in request.topics
            ]
        assert group is not None
        if group.state in (STABLE, PREPARING_REBALANCE):
            # A commit keeps a classic member's session alive (§5).
            self._reschedule_classic_group_member_heartbeat(group, group.members[request.member_id], now_ms)
        return self.store_offsets(
            now_ms, group, request, {},
            reason="simple commit (generation -1)" if generation < 0 else "member commit", request_generation_id=generation,
        )  # fmt: skip

    def store_offsets(
        self,
        now_ms: int,
        group: ClassicGroup | ConsumerGroup,
        request: OffsetCommitRequest,
        partition_errors: Mapping[tuple[str, int], ErrorCode],
        *,
        reason: str,
        request_generation_id: int,
    ) -> list[OffsetCommitResponseTopic]:
        """Store a validated commit, partition by partition (OFFSET_METADATA_TOO_LARGE for one
        partition only, §8.1); ``partition_errors`` are answered as given and not stored."""
        retention = request.retention_time_ms
        expire_timestamp_ms = None if retention == DEFAULT_RETENTION_TIME else now_ms + retention
        answered: list[OffsetCommitResponseTopic] = []
        committed: dict[str, dict[str, int]] = {}
        too_large: list[str] = []
        for topic in request.topics:
            partitions: list[OffsetCommitResponsePartition] = []
            for p in topic.partitions:
                rejected = partition_errors.get((topic.name, p.partition_index))
                if rejected is not None:
                    partitions.append(OffsetCommitResponsePartition(p.partition_index, rejected))
                    continue
                if p.committed_metadata is not None and _java_length(p.committed_metadata) > self.config.offset_metadata_max_bytes:
                    partitions.append(OffsetCommitResponsePartition(p.partition_index, ErrorCode.OFFSET_METADATA_TOO_LARGE))
                    too_large.append(f"{topic.name}-{p.partition_index}")
                    continue
                self.offsets.put(
                    group.group_id,
                    topic.name,
                    p.partition_index,
                    OffsetAndMetadata(
                        committed_offset=p.committed_offset,
                        leader_epoch=None if p.committed_leader_epoch == -1 else p.committed_leader_epoch,
                        metadata=NO_METADATA if p.committed_metadata is None else p.committed_metadata,
                        commit_timestamp_ms=now_ms if p.commit_timestamp == DEFAULT_TIMESTAMP else p.commit_timestamp,
                        expire_timestamp_ms=expire_timestamp_ms,
                    ),
                )
                committed.setdefault(topic.name, {})[str(p.partition_index)] = p.committed_offset
                partitions.append(OffsetCommitResponsePartition(p.partition_index, ErrorCode.NONE))
            answered.append(OffsetCommitResponseTopic(topic.name, topic.topic_id, partitions))
        self._record(
            "offset.committed", group, now_ms, member_id=request.member_id or None, reason=reason,
            request_generation_id=request_generation_id, offsets=committed, metadata_too_large=too_large,
            expire_timestamp_ms=expire_timestamp_ms,
        )  # fmt: skip
        return answered

    def _validate_offset_commit(
        self,
        group: ClassicGroup,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        *,
        transactional: bool,
    ) -> ErrorCode | None:
        """ClassicGroup.validateOffsetCommit (§8.1 "Classic group exists")."""
        if group.state is DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state is EMPTY:
            return None  # a simple or admin commit to an empty group
        if generation_id >= 0 or member_id or group_instance_id is not None:
            error = group.validate_member(member_id, group_instance_id)
            if error is not None:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        elif not transactional and group.state is not EMPTY:
            # Manual-assignment clients sharing a group id with an active group (§8.1 rule 4).
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and group.state is COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return None

    def commit_transactional_offsets(
        self,
        now_ms: int,
        group_id: str,
        producer_id: int,
        topics: list[tuple[str, list[tuple[int, int, int, str | None]]]],
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:
        """OffsetMetadataManager.commitTransactionalOffset: pending until ``complete_transaction``.
        ``topics``: (name, [(partition, offset, leader_epoch, metadata)]). A group-level error, or
        the error of each partition. (TxnOffsetCommit is not served yet: transactions are not.)"""
        group = self.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                return ErrorCode.ILLEGAL_GENERATION
            group = self._create_group(group_id, now_ms, "TxnOffsetCommit with generation -1 (simple group)")
        error = self._validate_offset_commit(group, member_id, group_instance_id, generation_id, transactional=True)
        if error is not None:
            return error
        results: dict[tuple[str, int], ErrorCode] = {}
        for topic, partitions in topics:
            for partition, offset, epoch, metadata in partitions:
                if metadata is not None and _java_length(metadata) > self.config.offset_metadata_max_bytes:
                    results[(topic, partition)] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                    continue
                self.offsets.put_pending(
                    producer_id, group_id, topic, partition,
                    OffsetAndMetadata(offset, None if epoch == -1 else epoch, metadata or NO_METADATA, now_ms),
                )  # fmt: skip
                results[(topic, partition)] = ErrorCode.NONE
        return results

    def complete_transaction(self, now_ms: int, producer_id: int, commit: bool) -> None:
        """The transaction marker for ``producer_id`` reached the offsets partitions."""
        self.offsets.complete_transaction(producer_id, commit)

    # -- OffsetFetch (§8.3) -------------------------------------------------------------------------

    def fetch_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None, *, require_stable: bool = False
    ) -> OffsetFetchResponseGroup:
        """OffsetMetadataManager.fetchOffsets / fetchAllOffsets (``topics`` None: every committed
        partition). An unknown or Dead group answers -1 everywhere with no error; classic groups
        check no member or generation."""
        group = self.groups.get(group_id)
        known = (group is not None and group.state is not DEAD) or group_id in self.consumer.groups
        if topics is None:
            answered: list[OffsetFetchResponseTopics] = []
            if known:
                for topic, partitions in self.offsets.group_offsets(group_id).items():
                    answered.append(
                        OffsetFetchResponseTopics(
                            name=topic,
                            partitions=[self._fetched(group_id, topic, p, o, require_stable) for p, o in partitions.items()],
                        )
                    )
            return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)
        answered = []
        for topic, partition_indexes in topics:
            answered.append(
                OffsetFetchResponseTopics(
                    name=topic,
                    partitions=[
                        self._fetched(
                            group_id, topic, p, self.offsets.get(group_id, topic, p) if known else None, require_stable
                        )
                        for p in partition_indexes
                    ],
                )
            )
        return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)

    def _fetched(
        self, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata | None, require_stable: bool
    ) -> OffsetFetchResponsePartitions:
        if require_stable and self.offsets.has_pending(group_id, topic, partition):
            return OffsetFetchResponsePartitions(partition, INVALID_OFFSET, -1, NO_METADATA, ErrorCode.UNSTABLE_OFFSET_COMMIT)
        if offset is None:
            return OffsetFetchResponsePartitions(partition, INVALID_OFFSET, -1, NO_METADATA, ErrorCode.NONE)
        return OffsetFetchResponsePartitions(
            partition, offset.committed_offset, offset.leader_epoch_or_sentinel, offset.metadata, ErrorCode.NONE
        )

    # -- OffsetDelete (§8.4) ------------------------------------------------------------------------

    def delete_offsets(
        self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]]
    ) -> tuple[ErrorCode, list[OffsetDeleteResponseTopic]]:
        """OffsetMetadataManager.deleteOffsets for the partitions that passed the broker-level checks."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group: ClassicGroup | ConsumerGroup | None = self.groups.get(group_id)
        if group is None:
            group = self.consumer.groups.get(group_id)  # KIP-848: no group-level restriction (§8.4)
        elif group.state is DEAD:
            group = None
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        if (
            isinstance(group, ClassicGroup)
            and group.state in (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE)
            and not group.uses_consumer_protocol()
        ):
            return ErrorCode.NON_EMPTY_GROUP, []
        answered: list[OffsetDeleteResponseTopic] = []
        deleted: list[str] = []
        for topic, partitions in topics:
            if group.is_subscribed_to_topic(topic):
                errors = [OffsetDeleteResponsePartition(p, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for p in partitions]
            else:
                errors = []
                for p in partitions:
                    removed = self.offsets.remove(group_id, topic, p) is not None
                    removed = self.offsets.remove_pending(group_id, topic, p) or removed
                    if removed:
                        deleted.append(f"{topic}-{p}")
                    errors.append(OffsetDeleteResponsePartition(p, ErrorCode.NONE))
            answered.append(OffsetDeleteResponseTopic(topic, errors))
        if deleted:
            self._record("offset.deleted", group, now_ms, reason="OffsetDelete", partitions=deleted)
        return ErrorCode.NONE, answered

    # -- DescribeGroups, ListGroups, DeleteGroups (§8.5-§8.7) ----------------------------------------

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

    def list_groups(
        self, states_filter: Iterable[str] = (), types_filter: Iterable[str] = (), *, include: Callable[[str], bool] | None = None
    ) -> list[ListedGroup]:
        """GroupMetadataManager.listGroups: states match case-insensitively after trimming; types
        case-insensitively, an unknown type matching nothing. ``include`` picks the groups of one
        broker's partitions."""
        states = {s.strip().lower() for s in states_filter}
        types = {t.lower() if t.lower() in KNOWN_GROUP_TYPES else "unknown" for t in types_filter}
        listed: list[ListedGroup] = []
        for group in self.groups.values():
            if include is not None and not include(group.group_id):
                continue
            if states and group.state.value.lower() not in states:
                continue
            if types and GROUP_TYPE_CLASSIC not in types:
                continue
            listed.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value, GROUP_TYPE_CLASSIC))
        listed += self.consumer.list_groups(states, types, include)
        return listed

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """GroupCoordinatorShard.deleteGroups for one group: only an Empty group goes, with every
        committed and pending offset (§8.7)."""
        if group_id in self.consumer.groups:
            return self.consumer.delete_group(now_ms, group_id)
        group = self.groups.get(group_id)
        if group is None or group.state is DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        deleted = self.offsets.delete_group(group_id)
        self._delete(group, now_ms, "DeleteGroups", offsets_deleted=deleted)
        return ErrorCode.NONE

    def _delete(self, group: ClassicGroup, now_ms: int, reason: str, **details: Any) -> None:
        self._transition(group, DEAD, now_ms, reason)
        del self.groups[group.group_id]
        self.timers.cancel(_join_key(group.group_id))
        self.timers.cancel(_sync_key(group.group_id))
        self._record("group.deleted", group, now_ms, reason=reason, **details)

    # -- offset expiry and empty-group cleanup (§8.2) ------------------------------------------------

    def cleanup_group_metadata(self, now_ms: int) -> None:
        """GroupCoordinatorShard.cleanupGroupMetadata, every offsets.retention.check.interval.ms."""
        for group_id in list(self.groups):
            if self._cleanup_expired_offsets(group_id, now_ms):
                group = self.groups[group_id]
                if group.state is EMPTY:
                    self._delete(group, now_ms, "empty group with no offsets left, removed by the cleanup cycle")
        for group_id in list(self.consumer.groups):
            if self._cleanup_expired_offsets(group_id, now_ms):
                consumer_group = self.consumer.groups[group_id]
                if consumer_group.is_empty():
                    self.consumer.remove_group(consumer_group, now_ms, "empty group with no offsets left, removed by the cleanup cycle")
        self.start(now_ms)

    def _cleanup_expired_offsets(self, group_id: str, now_ms: int) -> bool:
        """OffsetMetadataManager.cleanupExpiredOffsets: True when the group has no offsets left."""
        if not self.offsets.has_offsets(group_id):
            return True
        group: ClassicGroup | ConsumerGroup = self.groups.get(group_id) or self.consumer.groups[group_id]
        base = group.offset_expiration_base()
        if base is None:
            return False
        retention_ms = self.config.offsets_retention_ms
        all_expired = True
        expired: list[str] = []
        for topic, partition, offset in self.offsets.items(group_id):
            if group.is_subscribed_to_topic(topic):
                all_expired = False  # never while the group still subscribes to the topic
                continue
            if offset.expire_timestamp_ms is not None:
                is_expired = now_ms >= offset.expire_timestamp_ms
            else:
                since = group.state_timestamp_ms if base == "state" else offset.commit_timestamp_ms
                is_expired = now_ms - since >= retention_ms
            if is_expired and not self.offsets.has_pending(group_id, topic, partition):
                self.offsets.remove(group_id, topic, partition)
                expired.append(f"{topic}-{partition}")
            else:
                all_expired = False
        if expired:
            self._record(
                "offset.expired", group, now_ms, partitions=expired,
                reason=f"offsets.retention.minutes ({self.config.offsets_retention_minutes}) passed since "
                + ("the group became Empty" if base == "state" else "the commit"),
            )  # fmt: skip
        return all_expired and not self.offsets.has_open_transactions(group_id)

    def on_topic_deleted(self, topic: str, now_ms: int) -> None:
        """OffsetMetadataManager.onPartitionsDeleted: a deleted topic's offsets go with it."""
        removed = self.offsets.delete_partitions(topic)
        by_group: dict[str, list[str]] = {}
        for group_id, partition in removed:
            by_group.setdefault(group_id, []).append(f"{topic}-{partition}")
        for group_id, partitions in by_group.items():
            self._record("offset.deleted", self.find_group(group_id) or group_id, now_ms, reason="topic deleted", partitions=partitions)


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


def _is_protocol_inconsistent(requested: str | None, groups: str | None) -> bool:
    """GroupMetadataManager.isProtocolInconsistent: only when both sides are known (v5+)."""
    return requested is not None and groups is not None and requested != groups


def _partition_list(topics: list[OffsetCommitRequestTopic]) -> list[str]:
    return [f"{t.name}-{p.partition_index}" for t in topics for p in t.partitions]


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
