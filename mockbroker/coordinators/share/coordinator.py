"""The KIP-932 share-group coordinator, sans-I/O: ShareGroupHeartbeat, ShareGroupDescribe and the
share-group side of ListGroups and DeleteGroups.

Follows Kafka's GroupMetadataManager (shareGroupHeartbeat, shareGroupLeave, shareGroupFenceMember,
shareGroupDescribe) rule by rule; method names are Kafka's in snake_case. Inputs are request fields
and ``now_ms``; outputs are response values. The one timer, the member's session
(group.share.session.timeout.ms), is armed on the cluster's ``Timers`` and fences the member when it
fires. Every change of group state goes through one door, ``update_state`` (ShareGroup.
maybeUpdateGroupState: Empty without members, Stable with), and every change of a member's epoch or
assignment through ``_set_member_assignment``; both record events (docs/events.md, "Share group
events").

The group epoch is bumped by a member joining or leaving, by a change of its subscribed topic
names and by a change of the subscribed topics' metadata (a topic created, deleted, or grown). A
member whose epoch is behind the group's gets the new target assignment from the share assignor
(SimpleAssignor, ``assignor.simple_assign``) at once: share groups revoke nothing first
(ShareGroupAssignmentBuilder), so every member is Stable. Deliberate differences from Kafka:
- The target assignment is computed in the heartbeat that finds the group epoch ahead (Kafka may
  defer it by group.share.assignment.interval.ms).
- Every subscribed partition counts as initialized: Kafka first initializes the share-partition
  state through the share coordinator (InitializeShareGroupState) and assigns only initialized
  partitions; here every partition is assigned at once and its share-partition state starts at
  the group's first ShareFetch of it (docs/divergences.md D20).
- Subscription metadata is re-resolved on every heartbeat, against the cluster's topics as they are
  (Kafka refreshes it periodically).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from mockbroker.coordinators.consumer.base import TopicView
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.group_admin import GroupAdmin
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.share.assignor import simple_assign
from mockbroker.coordinators.share.group import (
    GROUP_TYPE_SHARE,
    SIMPLE_ASSIGNOR_NAME,
    ShareGroup,
    ShareGroupMember,
    ShareGroupState,
    TopicIdPartition,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.share_group_describe import Assignment as DescribedAssignment
from mockbroker_protocol.messages.share_group_describe import DescribedGroup, Member, TopicPartitions
from mockbroker_protocol.messages.share_group_heartbeat import (
    Assignment,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from mockbroker_protocol.messages.share_group_heartbeat import (
    TopicPartitions as HeartbeatTopicPartitions,
)

log = logging.getLogger("mockbroker.groups")

JOIN_GROUP_MEMBER_EPOCH = 0  # ShareGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1  # ShareGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH


def session_key(group_id: str, member_id: str) -> Hashable:
    """shareGroupSessionTimeoutKey."""
    return ("share-group-session-timeout", group_id, member_id)


class ShareGroupCoordinator(GroupAdmin[ShareGroup]):
    """Owns every share group (``groups``). Shares the timers and the event log (``services``) and
    the group-id namespace with the other kinds: ``other_kind(group_id)``, wired in by the router,
    says whether the id names a classic or consumer group."""

    GROUP_TYPE = GROUP_TYPE_SHARE

    def __init__(self, services: CoordinatorServices, topics: Mapping[str, TopicView]) -> None:
        self.services = services
        self.config = services.config
        self.timers = services.timers
        self.topics = topics
        self.groups: dict[str, ShareGroup] = {}
        self.other_kind: Callable[[str], bool] = lambda group_id: False
        # The share partitions' side (SharePartitionManager, wired in by the router): a member that
        # goes releases its acquired records; a deleted group's share partitions go.
        self.on_member_removed: Callable[[str, str, int], None] = lambda group_id, member_id, now_ms: None
        self.on_group_deleted: Callable[[str], None] = lambda group_id: None

    # -- the doors -----------------------------------------------------------------------------------

    def record(self, type: str, group: ShareGroup, now_ms: int, *, member_id: str | None = None,
               reason: str | None = None, **details: Any) -> None:
        """One event of a share group (docs/events.md): its ``generation_id`` is the group epoch."""
        self.services.record(type, group.group_id, group.group_epoch, now_ms, member_id=member_id, reason=reason, **details)

    def update_state(self, group: ShareGroup, now_ms: int, reason: str) -> None:
        """ShareGroup.maybeUpdateGroupState: Empty without members, Stable with; the one place a
        share group's state changes (``share_group.transition``)."""
        previous = group.state
        group.state = ShareGroupState.EMPTY if group.is_empty() else ShareGroupState.STABLE
        if group.state is not previous:
            self.record("share_group.transition", group, now_ms, reason=reason, from_state=previous.value,
                        to_state=group.state.value, group_epoch=group.group_epoch,
                        assignment_epoch=group.assignment_epoch)  # fmt: skip

    def _set_member_assignment(
        self, group: ShareGroup, member: ShareGroupMember, epoch: int, assigned: frozenset[TopicIdPartition], now_ms: int
    ) -> None:
        """The one place a member's epoch and assignment change (ShareGroupAssignmentBuilder)."""
        if member.member_epoch == epoch and member.assigned == assigned:
            return
        member.previous_member_epoch, member.member_epoch, member.assigned = member.member_epoch, epoch, assigned
        self.record("share_group.member_assignment", group, now_ms, member_id=member.member_id,
                    member_epoch=epoch, assigned=self.names(assigned))  # fmt: skip

    def names(self, partitions: Iterable[TopicIdPartition]) -> dict[str, list[int]]:
        """Partitions by topic name (a deleted topic by its id), for snapshots and events."""
        by_id = {t.topic_id: t.name for t in self.topics.values()}
        out: dict[str, list[int]] = {}
        for topic_id, p in sorted(partitions):
            out.setdefault(by_id.get(topic_id, str(topic_id)), []).append(p)
        return out

    # -- ShareGroupHeartbeat -------------------------------------------------------------------------

    def check_heartbeat_request(self, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse | None:
        """GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid, made before
        NOT_COORDINATOR: the INVALID_REQUEST answer, or None."""

        def blank(value: str | None) -> bool:
            return value is not None and not value.strip()

        message: str | None = None
        if blank(request.member_id):
            message = "MemberId can't be empty."
        elif blank(request.group_id):
            message = "GroupId can't be empty."
        elif blank(request.rack_id):
            message = "RackId can't be empty."
        elif request.member_epoch == JOIN_GROUP_MEMBER_EPOCH:
            if not request.subscribed_topic_names:
                message = "SubscribedTopicNames must be set in first request."
        elif request.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
            message = "MemberEpoch is invalid."
        if message is None:
            return None
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.INVALID_REQUEST, error_message=message)

    def share_group_heartbeat(
        self, now_ms: int, request: ShareGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> ShareGroupHeartbeatResponse:
        """GroupMetadataManager.shareGroupHeartbeat: join (epoch 0), heartbeat, leave (epoch -1)."""
        refused = self.check_heartbeat_request(request)
        if refused is not None:
            return refused
        try:
            if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return self._share_group_leave(now_ms, request.group_id, request.member_id)
            return self._share_group_heartbeat(now_ms, request, client_id=client_id, client_host=client_host)
        except GroupError as exc:
            return ShareGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message)

    def _get_or_maybe_create_share_group(self, group_id: str, create: bool, now_ms: int) -> ShareGroup:
        """getOrMaybeCreatePersistedShareGroup."""
        if self.other_kind(group_id):
            # No upgrade or downgrade between share and other groups (KIP-932).
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if not create:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
        group = ShareGroup(group_id)
        self.groups[group_id] = group
        self.record("share_group.created", group, now_ms)
        return group

    def get_or_create_group(self, group_id: str, now_ms: int) -> ShareGroup:
        """AlterShareGroupOffsets on an unknown id creates the (empty) share group; GroupError
        GROUP_ID_NOT_FOUND when the id names a group of another kind."""
        return self._get_or_maybe_create_share_group(group_id, True, now_ms)

    def _share_group_heartbeat(
        self, now_ms: int, request: ShareGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> ShareGroupHeartbeatResponse:
        group_id, member_id = request.group_id, request.member_id
        joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
        group = self._get_or_maybe_create_share_group(group_id, joining, now_ms)
        member, is_new = self._member_of(group, request)
        previous_assigned = member.assigned

        # 1. The member's subscription, rack and client; a change of subscribed names, or of the
        # subscribed topics' metadata, bumps the group epoch.
        bump = self._update_member(group, member, request, is_new, client_id=client_id, client_host=client_host,
                                   now_ms=now_ms)  # fmt: skip
        metadata = self._subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
            self.record("share_group.epoch_bumped", group, now_ms, member_id=member_id)
        self.update_state(group, now_ms, f"member {member_id} joined" if is_new else "heartbeat")

        # 2. The target assignment, if the group epoch is ahead of it.
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group, now_ms)

        # 3. The member takes its target at once (nothing to revoke in a share group).
        self._set_member_assignment(
            group, member, group.assignment_epoch, group.target_assignment.get(member_id, frozenset()), now_ms
        )
        self.schedule_share_group_session_timeout(group_id, member, now_ms)

        response = ShareGroupHeartbeatResponse(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            # GroupMetadataManager.shareGroupHeartbeatIntervalMs: the group config, else the broker's.
            heartbeat_interval_ms=self.services.group_config(group_id).share_heartbeat_interval_ms,
        )
        # The assignment goes back on a join and whenever it changed.
        if joining or member.assigned != previous_assigned:
            response.assignment = Assignment(topic_partitions=_by_topic(member.assigned))
        return response

    def _member_of(self, group: ShareGroup, request: ShareGroupHeartbeatRequest) -> tuple[ShareGroupMember, bool]:
        """The heartbeating member and whether it is new: throwIfShareGroupIsFull, an unknown
        member id (UNKNOWN_MEMBER_ID unless it joins), throwIfShareGroupMemberEpochIsInvalid."""
        member_id, member_epoch = request.member_id, request.member_epoch
        joining = member_epoch == JOIN_GROUP_MEMBER_EPOCH
        max_size = self.config.share_group_max_size
        if len(group.members) >= max_size and member_id not in group.members:  # throwIfShareGroupIsFull
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED, f"The share group has reached its maximum capacity of {max_size} members."
            )
        member = group.members.get(member_id)
        if member is None:
            if not joining:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
                )
            return ShareGroupMember(member_id), True
        if not joining:
            self._throw_if_member_epoch_is_invalid(member, member_epoch)
        return member, False

    def _update_member(
        self, group: ShareGroup, member: ShareGroupMember, request: ShareGroupHeartbeatRequest, is_new: bool, *,
        client_id: str, client_host: str, now_ms: int,
    ) -> bool:  # fmt: skip
        """The member's subscribed topic names, rack and client as the request says; a new member
        joins the group. True when the group epoch must go up (a new member, changed names)."""
        bump = is_new
        if request.subscribed_topic_names is not None:
            names = tuple(request.subscribed_topic_names)
            if names != member.subscribed_topic_names:
                bump = True
                if not is_new:
                    self.record("share_group.member_subscription", group, now_ms, member_id=member.member_id,
                                subscribed_topic_names=list(names))  # fmt: skip
            member.subscribed_topic_names = names
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        member.client_id, member.client_host = client_id, client_host
        if is_new:
            group.members[member.member_id] = member
            self.record("share_group.member_joined", group, now_ms, member_id=member.member_id,
                        subscribed_topic_names=list(member.subscribed_topic_names))  # fmt: skip
        return bump

    def _throw_if_member_epoch_is_invalid(self, member: ShareGroupMember, received: int) -> None:
        """throwIfShareGroupMemberEpochIsInvalid: ahead is fenced; behind is fenced unless it is the
        previous epoch (the answer that bumped it may have been lost)."""
        if received > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a greater member epoch ({received}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        if received < member.member_epoch and received != member.previous_member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a smaller member epoch ({received}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )

    def _subscription_metadata(self, group: ShareGroup) -> dict[str, tuple[uuid.UUID, int]]:
        """computeSubscriptionMetadata: the subscribed topics that exist, with id and partition count."""
        out: dict[str, tuple[uuid.UUID, int]] = {}
        for name in sorted(group.subscribed_topic_names()):
            topic = self.topics.get(name)
            if topic is not None and not topic.is_internal:
                out[name] = (topic.topic_id, len(topic.partitions))
        return out

    def _update_target_assignment(self, group: ShareGroup, now_ms: int) -> None:
        """updateTargetAssignment with the SimpleAssignor, at the group epoch."""
        metadata = group.subscription_metadata
        counts = {topic_id: n for topic_id, n in metadata.values()}
        subscriptions = {
            m.member_id: [metadata[name][0] for name in dict.fromkeys(m.subscribed_topic_names) if name in metadata]
            for m in group.members.values()
        }
        current = {m: tps for m, tps in group.target_assignment.items() if m in group.members}
        group.target_assignment = simple_assign(subscriptions, counts, current)
        group.assignment_epoch = group.group_epoch
        self.record("share_group.target_assignment", group, now_ms, assignment_epoch=group.assignment_epoch,
                    target={m: self.names(tps) for m, tps in group.target_assignment.items()})  # fmt: skip

    def _share_group_leave(self, now_ms: int, group_id: str, member_id: str) -> ShareGroupHeartbeatResponse:
        """shareGroupLeave: the member goes at once; the answer carries epoch -1."""
        group = self._get_or_maybe_create_share_group(group_id, False, now_ms)
        member = group.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        self.share_group_fence_member(group, member, now_ms, "the member left the group", "left")
        return ShareGroupHeartbeatResponse(member_id=member_id, member_epoch=LEAVE_GROUP_MEMBER_EPOCH)

    def share_group_fence_member(self, group: ShareGroup, member: ShareGroupMember, now_ms: int, reason: str, cause: str) -> None:
        """shareGroupFenceMember: the member, its target assignment and its session go, and the
        group epoch is bumped so that the others are given its partitions."""
        del group.members[member.member_id]
        group.target_assignment.pop(member.member_id, None)
        self.timers.cancel(session_key(group.group_id, member.member_id))
        group.subscription_metadata = self._subscription_metadata(group)
        group.group_epoch += 1
        self.record("share_group.member_left" if cause == "left" else "share_group.member_fenced", group, now_ms,
                    member_id=member.member_id, reason=reason, cause=cause,
                    assigned=self.names(member.assigned))  # fmt: skip
        self.update_state(group, now_ms, reason)
        self.on_member_removed(group.group_id, member.member_id, now_ms)

    def schedule_share_group_session_timeout(self, group_id: str, member: ShareGroupMember, now_ms: int) -> None:
        """scheduleShareGroupSessionTimeout: the group's share.session.timeout.ms (else the broker's
        group.share.session.timeout.ms) from this heartbeat."""
        deadline = now_ms + self.services.group_config(group_id).share_session_timeout_ms
        timer = member.session_timer
        if timer is not None and self.timers.postpone(timer, deadline, now_ms):
            return
        member_id = member.member_id
        member.session_timer = self.services.schedule(
            session_key(group_id, member_id), deadline, lambda t: self._on_session_timeout(group_id, member_id, t)
        )

    def _on_session_timeout(self, group_id: str, member_id: str, now_ms: int) -> None:
        group = self.groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            return
        timeout = self.services.group_config(group_id).share_session_timeout_ms
        self.share_group_fence_member(
            group, member, now_ms, f"the member session expired ({timeout} ms without a heartbeat)", "session_timeout"
        )

    # -- ShareGroupDescribe --------------------------------------------------------------------------

    def share_group_describe(self, group_id: str) -> DescribedGroup:
        """GroupMetadataManager.shareGroupDescribe for one group id ("" is INVALID_GROUP_ID, as
        GroupCoordinatorService.shareGroupDescribe answers it)."""
        if not group_id:
            return DescribedGroup(error_code=ErrorCode.INVALID_GROUP_ID, error_message="Group id can not be empty.", group_id=group_id)
        group = self.groups.get(group_id)
        if group is None:
            message = f"Group {group_id} is not a share group." if self.other_kind(group_id) else f"Group {group_id} not found."
            return DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id)
        by_id = {t.topic_id: t.name for t in self.topics.values()}

        def described(partitions: frozenset[TopicIdPartition]) -> DescribedAssignment:
            return DescribedAssignment(
                topic_partitions=[
                    TopicPartitions(topic_id=t.topic_id, topic_name=by_id.get(t.topic_id, ""), partitions=t.partitions)
                    for t in _by_topic(partitions)
                ]
            )

        return DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=SIMPLE_ASSIGNOR_NAME,
            members=[
                Member(
                    member_id=m.member_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=list(m.subscribed_topic_names),
                    assignment=described(m.assigned),
                )
                for m in group.members.values()
            ],
        )

    # -- ListGroups, DeleteGroups, snapshot, control ---------------------------------------------------

    # ListGroups and DeleteGroups: mockbroker.coordinators.group_admin.GroupAdmin.

    def is_deletable(self, group: ShareGroup) -> bool:
        return group.is_empty()

    def delete_empty_group(self, group: ShareGroup, now_ms: int) -> None:
        """The group goes, its share partitions with it (``on_group_deleted``)."""
        self.remove_group(group, now_ms, "DeleteGroups")

    def remove_group(self, group: ShareGroup, now_ms: int, reason: str) -> None:
        """A share group goes (DeleteGroups)."""
        previous = group.state
        group.state = ShareGroupState.DEAD
        del self.groups[group.group_id]
        for member_id in list(group.members):
            self.timers.cancel(session_key(group.group_id, member_id))
        self.record("share_group.transition", group, now_ms, reason=reason, from_state=previous.value,
                    to_state=ShareGroupState.DEAD.value, group_epoch=group.group_epoch,
                    assignment_epoch=group.assignment_epoch)  # fmt: skip
        self.record("share_group.deleted", group, now_ms, reason=reason)
        self.on_group_deleted(group.group_id)

    def expire_member_session(self, group_id: str, member_id: str, now_ms: int) -> bool:
        """The member's session expires now, as if group.share.session.timeout.ms had passed: the
        session-timeout fencing itself. False when there is no such member."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return False
        self.timers.cancel(session_key(group_id, member_id))
        self._on_session_timeout(group_id, member_id, now_ms)
        return True

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A share group as plain data, for the control API and tests."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        return {
            "group_id": group.group_id,
            "group_type": GROUP_TYPE_SHARE,
            "protocol_type": group.protocol_type,
            "state": group.state.value,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor": SIMPLE_ASSIGNOR_NAME,
            "subscribed_topics": {name: count for name, (_, count) in group.subscription_metadata.items()},
            "members": [
                {
                    "member_id": m.member_id,
                    "rack_id": m.rack_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_epoch": m.member_epoch,
                    "previous_member_epoch": m.previous_member_epoch,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "assigned": self.names(m.assigned),
                    "target": self.names(group.target_assignment.get(m.member_id, frozenset())),
                }
                for m in group.members.values()
            ],
        }


def _by_topic(partitions: Iterable[TopicIdPartition]) -> list[HeartbeatTopicPartitions]:
    by_topic: dict[uuid.UUID, list[int]] = {}
    for topic_id, p in sorted(partitions):
        by_topic.setdefault(topic_id, []).append(p)
    return [HeartbeatTopicPartitions(topic_id=t, partitions=ps) for t, ps in by_topic.items()]
