"""JoinGroup on classic groups (kafka-group-semantics §3, static members §7): member ids and the
KIP-394 handshake, group.max.size, adding and updating members, static member replacement
(KIP-345), and the answers of a rejoin by state. Kafka's GroupMetadataManager.classicGroupJoin*.
"""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.classic.base import (
    ClassicCoordinatorBase,
    heartbeat_key,
    join_reason,
    raise_if,
)
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    CONSUMER_PROTOCOL_TYPE,
    DEAD,
    EMPTY,
    MEMBER_ID_DELIMITER,
    NO_LEADER,
    PREPARING_REBALANCE,
    STABLE,
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    ClassicGroupMember,
    IllegalStateTransition,
    Protocol,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.consumer_protocol import decode_subscription
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from mockbroker_protocol.messages.sync_group import SyncGroupResponse

REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION = 4  # JoinGroupRequest.requiresKnownMemberId (KIP-394)
SKIP_ASSIGNMENT_MIN_VERSION = 9  # JoinGroupRequest.supportsSkippingAssignment (KIP-814)


def join_rebalance_timeout_ms(request: JoinGroupRequest, api_version: int) -> int:
    """v0 has no RebalanceTimeoutMs: JoinGroupRequest copies the session timeout into it (§3.1)."""
    return request.session_timeout_ms if api_version == 0 else request.rebalance_timeout_ms


class JoinGroupRules(ClassicCoordinatorBase):
    """JoinGroup (GroupMetadataManager.classicGroupJoin and its steps)."""

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
        try:
            group = self._get_or_maybe_create_group_for_join(request, now_ms)
            self._throw_if_group_is_full(group, request.member_id, now_ms)
            if request.member_id == UNKNOWN_MEMBER_ID:
                self._join_new_member(group, join, now_ms)
            else:
                self._join_existing_member(group, join, now_ms)
        except GroupError as exc:
            return _join_error(exc.code, request.member_id)
        return join.parked.result() if join.parked.done() else join.parked

    def _get_or_maybe_create_group_for_join(self, request: JoinGroupRequest, now_ms: int) -> ClassicGroup:
        """An unknown group is created by a JoinGroup with an empty member id only."""
        group = self.groups.get(request.group_id)
        if group is not None:
            return group
        if request.member_id != UNKNOWN_MEMBER_ID:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {request.group_id} is unknown.")
        return self._create_group(request.group_id, now_ms, "JoinGroup with an empty member id")

    def _throw_if_group_is_full(self, group: ClassicGroup, member_id: str, now_ms: int) -> None:
        """§3.2 step 6: GROUP_MAX_SIZE_REACHED, and a rejected existing member is removed."""
        if self._accept_joining_member(group, member_id):
            return
        if group.remove(member_id) is not None:
            self.timers.cancel(heartbeat_key(group.group_id, member_id))
            self._record(
                "member.removed", group, now_ms, member_id=member_id,
                reason=f"group.max.size {self.config.group_max_size} reached", cause="group_max_size",
            )  # fmt: skip
        raise GroupError(ErrorCode.GROUP_MAX_SIZE_REACHED, f"Group {group.group_id} is full.")

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
        _throw_if_not_joinable(group, join)
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
                heartbeat_key(group.group_id, new_member_id),
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
        _throw_if_not_joinable(group, join)
        if group.is_pending_member(member_id):
            if request.group_instance_id is not None:
                # Kafka throws IllegalStateException here, answered UNKNOWN_SERVER_ERROR.
                raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, "A pending member cannot be a static member.")
            self._add_member_then_rebalance_or_complete_join(group, join, member_id, now_ms)
            return
        raise_if(group.validate_member(member_id, request.group_instance_id), f"member {member_id} is refused")
        member = group.members[member_id]
        self._record(
            "member.rejoined", group, now_ms, member_id=member_id, reason=join_reason(request.reason),
            state=group.state.value, same_metadata=member.matches(join.protocols),
        )  # fmt: skip
        self._rejoin_by_state(group, member, join, now_ms)

    def _rejoin_by_state(self, group: ClassicGroup, member: ClassicGroupMember, join: _Join, now_ms: int) -> None:
        """classicGroupJoinExistingMember by state (§3.8): a rebalance when the member's
        metadata changed or the leader rejoins Stable; otherwise the current generation again."""
        member_id = member.member_id
        client_reason = join_reason(join.request.reason)
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
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group.group_id} is {group.state.value}.")

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
            "member.joined", group, now_ms, member_id=member_id, reason=join_reason(request.reason),
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
            f"Adding new member {member_id} with group instance id {instance}; client reason: {join_reason(request.reason)}",
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
        client_reason = join_reason(request.reason)

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
        self.timers.cancel(heartbeat_key(group.group_id, old_member_id))
        self._record(
            "member.replaced", group, now_ms, member_id=new_member_id,
            reason=f"static member {instance_id} rejoined with an empty member id (KIP-345)",
            group_instance_id=instance_id, old_member_id=old_member_id, state=group.state.value,
        )  # fmt: skip
        return new


# Answered without the request's member id: acceptJoiningMember's answer sets UNKNOWN_MEMBER_ID, and
# an exception (UNKNOWN_SERVER_ERROR) is answered by the service with the response's defaults.
_ANSWERED_WITHOUT_MEMBER_ID = frozenset({ErrorCode.GROUP_MAX_SIZE_REACHED, ErrorCode.UNKNOWN_SERVER_ERROR})


def _join_error(code: ErrorCode, member_id: str) -> JoinGroupResponse:
    """classicGroupJoin's error answer (§3.9): the request's member id ("" for a new member),
    everything else at its default; ProtocolType and ProtocolName null, as Kafka's membership
    errors set them (the handler's ``shape`` writes a null name as "" below v7)."""
    answered_id = UNKNOWN_MEMBER_ID if code in _ANSWERED_WITHOUT_MEMBER_ID else member_id
    return JoinGroupResponse(error_code=code, member_id=answered_id, protocol_type=None, protocol_name=None)


def _throw_if_not_joinable(group: ClassicGroup, join: _Join) -> None:
    """classicGroupJoin{New,Existing}Member's first checks: a Dead group, then the protocols."""
    if group.state is DEAD:
        raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Group {group.group_id} is Dead.")
    if not group.supports_protocols(join.request.protocol_type, {name for name, _ in join.protocols}):
        raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Group {group.group_id} does not support the protocols.")


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


