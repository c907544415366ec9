"""ConsumerGroupHeartbeat (kafka-group-semantics §10.1, §10.4): the request checks, joining
(and the online upgrade of a classic group, through ``migration``), static and dynamic members,
subscriptions, and leaving (epochs -1 and -2). Kafka's GroupMetadataManager.consumerGroupHeartbeat
and consumerGroupLeave.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockbroker.coordinators.consumer.base import (
    CLIENT_MEMBER_ID_MIN_VERSION,
    ConsumerCoordinatorBase,
    TopicFilter,
    known_static_member,
    rebalance_key,
    validate_regex,
)
from mockbroker.coordinators.consumer.group import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerGroupMember,
    TopicIdPartition,
    group_by_topic,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseTopicPartitions,
)

if TYPE_CHECKING:
    pass


log = logging.getLogger("mockbroker.groups")


class HeartbeatRules(ConsumerCoordinatorBase):
    """ConsumerGroupHeartbeat: join, heartbeat, leave."""

    # -- ConsumerGroupHeartbeat (§10.1) ---------------------------------------------------------------

    def check_heartbeat_request(
        self, request: ConsumerGroupHeartbeatRequest, api_version: int
    ) -> ConsumerGroupHeartbeatResponse | None:
        """The request checks made before NOT_COORDINATOR (§10.1): the error answer, or None."""
        try:
            self._throw_if_heartbeat_request_is_invalid(request, api_version)
        except GroupError as exc:
            return ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message)
        return None

    def _throw_if_heartbeat_request_is_invalid(self, request: ConsumerGroupHeartbeatRequest, api_version: int) -> None:
        """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid (§10.1)."""
        def blank(value: str | None) -> bool:
            return value is not None and not value.strip()

        epoch = request.member_epoch
        invalid: str | None = None
        if blank(request.group_id):
            invalid = "GroupId can't be empty."
        elif blank(request.instance_id):
            invalid = "InstanceId can't be empty."
        elif blank(request.rack_id):
            invalid = "RackId can't be empty."
        elif api_version >= CLIENT_MEMBER_ID_MIN_VERSION and not request.member_id.strip():
            invalid = "MemberId can't be empty."
        elif epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not request.member_id.strip():
                invalid = "MemberId can't be empty."
        elif epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.rebalance_timeout_ms == -1:
                invalid = "RebalanceTimeoutMs must be provided in first request."
            elif request.topic_partitions is None or request.topic_partitions:
                invalid = "TopicPartitions must be empty when (re-)joining."
            elif request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                invalid = "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not request.member_id.strip():
                invalid = "MemberId can't be empty."
            elif request.instance_id is None:
                invalid = "InstanceId can't be null."
        else:
            invalid = "MemberEpoch is invalid."  # Kafka 4.3's wording: the epoch is not repeated
        if invalid is not None:
            raise GroupError(ErrorCode.INVALID_REQUEST, invalid)
        if request.server_assignor is not None and request.server_assignor not in self.assignors:
            raise GroupError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(self.assignors)}.",
            )
        if request.subscribed_topic_regex is not None:
            problem = validate_regex(request.subscribed_topic_regex)
            if problem is not None:
                raise GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION, problem)
        return None

    def consumer_group_heartbeat(
        self, now_ms: int, request: ConsumerGroupHeartbeatRequest, *, api_version: int, client_id: str, client_host: str,
        describable: TopicFilter | None = None,
    ) -> ConsumerGroupHeartbeatResponse:  # fmt: skip
        """GroupMetadataManager.consumerGroupHeartbeat, or consumerGroupLeave for epochs -1 and -2.
        ``describable``: under an authorizer, which topics the sender may DESCRIBE (the group's
        regexes, if this heartbeat refreshes them, match only those: TopicRegexResolver)."""
        try:
            self._throw_if_heartbeat_request_is_invalid(request, api_version)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._consumer_group_leave(now_ms, request)
            return self._consumer_group_heartbeat(
                now_ms, request, client_id=client_id, client_host=client_host, describable=describable
            )
        except GroupError as exc:
            return ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message)

    def _consumer_group_heartbeat(
        self, now_ms: int, request: ConsumerGroupHeartbeatRequest, *, client_id: str, client_host: str,
        describable: TopicFilter | None,
    ) -> ConsumerGroupHeartbeatResponse:  # fmt: skip
        group_id, member_epoch = request.group_id, request.member_epoch
        owned = _owned_partitions(request.topic_partitions)
        group = self._get_or_maybe_create_consumer_group(
            group_id, member_epoch == JOIN_GROUP_MEMBER_EPOCH, now_ms, request.member_id, request.instance_id
        )
        self.throw_if_consumer_group_is_full(group, request.member_id, request.instance_id)
        member_id = request.member_id or self.new_member_id()  # v0: the coordinator names it
        joining = member_id not in group.members and (
            request.instance_id is None or request.instance_id not in group.static_members
        )
        if request.instance_id is None:
            member = self._get_or_maybe_subscribe_dynamic_member(group, member_id, member_epoch, owned, client_id, client_host, request, now_ms)
        else:
            member = self._get_or_maybe_subscribe_static_member(group, member_id, member_epoch, request.instance_id, owned, client_id, client_host, request, now_ms)
        assigned_before = set(member.assigned)
        # Armed first, so that a member stays accountable even if the assignor fails below.
        self.schedule_consumer_group_session_timeout(group.group_id, member, now_ms)

        # 1. Update the member; bump the group epoch (once) when its subscription or the
        # subscribed topics' metadata changed.
        changes = self._update_member(member, request, client_id, client_host)
        # 2. A new target assignment when the group epoch is ahead of it.
        self.apply_member_changes(group, member, changes, joining, now_ms, "member", describable=describable, resolve_regexes=True)

        # 3. Reconcile this member towards its target.
        self.maybe_reconcile(group, member, owned, now_ms)
        self.update_state(group, now_ms, f"member {member.member_id} heartbeat")

        response = ConsumerGroupHeartbeatResponse(
            error_code=ErrorCode.NONE,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            # GroupMetadataManager.consumerGroupHeartbeatIntervalMs: the group config, else the broker's.
            heartbeat_interval_ms=self.services.group_config(group.group_id).consumer_heartbeat_interval_ms,
        )
        # The full assignment goes out on a join, a full request (after an error, say), or when
        # the member's assigned partitions changed (§10.1).
        is_full_request = member_epoch == JOIN_GROUP_MEMBER_EPOCH or (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
            and request.topic_partitions is not None
        )
        if is_full_request or set(member.assigned) != assigned_before:
            response.assignment = Assignment(
                topic_partitions=[
                    ConsumerGroupHeartbeatResponseTopicPartitions(topic_id, parts)
                    for topic_id, parts in group_by_topic(member.assigned).items()
                ]
            )
        return response

    def _get_or_maybe_create_consumer_group(
        self, group_id: str, create_if_not_exists: bool, now_ms: int, member_id: str = "", instance_id: str | None = None
    ) -> ConsumerGroup:
        """GroupMetadataManager.getOrMaybeCreateConsumerGroup: an epoch-0 join replaces an empty
        classic group and upgrades a non-empty one when validateOnlineUpgrade allows (§10.8);
        any other classic group is not found."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        is_classic = self.migration.is_classic_group(group_id)
        if not create_if_not_exists:
            if is_classic:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if is_classic:
            return self.migration.upgrade_classic_group(group_id, now_ms, member_id, instance_id)
        return self.create_group(group_id, now_ms)

    def create_group(self, group_id: str, now_ms: int) -> ConsumerGroup:
        """A new, empty consumer group (an epoch-0 heartbeat to an unknown id, or one replacing
        an empty classic group)."""
        group = ConsumerGroup(group_id, now_ms)
        self.groups[group_id] = group
        self.record("consumer_group.created", group, now_ms, reason="epoch-0 ConsumerGroupHeartbeat", state=group.state.value)
        return group

    def throw_if_consumer_group_is_full(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> None:
        """throwIfConsumerGroupIsFull: existing members and known static instances are exempt."""
        max_size = self.config.consumer_group_max_size
        if len(group.members) < max_size or (member_id and member_id in group.members):
            return
        if instance_id is not None and instance_id in group.static_members:
            return
        raise GroupError(
            ErrorCode.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of {max_size} members."
        )

    def _throw_if_member_epoch_is_invalid(
        self, member: ConsumerGroupMember, received_epoch: int, owned: set[TopicIdPartition] | None
    ) -> None:
        """throwIfConsumerGroupMemberEpochIsInvalid (§10.1). Epoch 0 is a rejoin and always
        accepted (KAFKA-19233); the previous epoch is accepted when the owned partitions are a
        subset of the assignment, since the response that bumped the epoch may have been lost."""
        if received_epoch == JOIN_GROUP_MEMBER_EPOCH:
            return
        if received_epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a greater member epoch ({received_epoch}) than the one known by "
                f"the group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        if received_epoch < member.member_epoch and (
            received_epoch != member.previous_member_epoch or owned is None or not owned <= set(member.assigned)
        ):
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({received_epoch}) than the one known by "
                f"the group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )

    def add_member(
        self, group: ConsumerGroup, member_id: str, client_id: str, client_host: str, rebalance_timeout_ms: int,
        instance_id: str | None, now_ms: int, *, protocol: str = "consumer",
    ) -> ConsumerGroupMember:  # fmt: skip
        """A new member (``protocol`` "classic" for a classic JoinGroup, §10.8), static when it
        has an instance id; recorded as ``consumer_group.member_joined``. The caller bumps the
        group epoch (``apply_member_changes`` with ``joining``)."""
        member = ConsumerGroupMember(
            member_id=member_id, client_id=client_id, client_host=client_host,
            rebalance_timeout_ms=rebalance_timeout_ms, instance_id=instance_id,
        )  # fmt: skip
        group.members[member_id] = member
        if instance_id is not None:
            group.static_members[instance_id] = member_id
        self.record(
            "consumer_group.member_joined", group, now_ms, member_id=member_id,
            reason=f"member {member_id} joins the consumer group using the {protocol} protocol",
            instance_id=instance_id, client_id=client_id, client_host=client_host,
            rebalance_timeout_ms=rebalance_timeout_ms, protocol=protocol,
        )  # fmt: skip
        return member

    def _get_or_maybe_subscribe_dynamic_member(
        self, group: ConsumerGroup, member_id: str, member_epoch: int, owned: set[TopicIdPartition] | None,
        client_id: str, client_host: str, request: ConsumerGroupHeartbeatRequest, now_ms: int,
    ) -> ConsumerGroupMember:  # fmt: skip
        member = group.members.get(member_id)
        if member is None:
            if member_epoch != JOIN_GROUP_MEMBER_EPOCH:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
                )
            return self.add_member(group, member_id, client_id, client_host, request.rebalance_timeout_ms, request.instance_id, now_ms)
        self._throw_if_member_epoch_is_invalid(member, member_epoch, owned)
        return member

    def _get_or_maybe_subscribe_static_member(
        self, group: ConsumerGroup, member_id: str, member_epoch: int, instance_id: str,
        owned: set[TopicIdPartition] | None, client_id: str, client_host: str,
        request: ConsumerGroupHeartbeatRequest, now_ms: int,
    ) -> ConsumerGroupMember:  # fmt: skip
        """getOrMaybeSubscribeStaticConsumerGroupMember (§10.4 "Static members")."""
        existing = group.static_member(instance_id)
        if member_epoch == JOIN_GROUP_MEMBER_EPOCH:
            if existing is None:
                return self.add_member(group, member_id, client_id, client_host, request.rebalance_timeout_ms, request.instance_id, now_ms)
            if existing.member_id == member_id:
                return existing  # the same member rejoining (KAFKA-19233)
            # A classic holder is replaced whatever its epoch (it cannot send epoch -2).
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH and not existing.uses_classic_protocol:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the group because the "
                    f"instance id is owned by {existing.member_id} member.",
                )
            return self.replace_static_member(group, existing, member_id, client_id, client_host, now_ms)
        existing = known_static_member(existing, member_id, instance_id)
        self._throw_if_member_epoch_is_invalid(existing, member_epoch, owned)
        return existing

    def replace_static_member(
        self, group: ConsumerGroup, old: ConsumerGroupMember, new_member_id: str, client_id: str, client_host: str,
        now_ms: int,
    ) -> ConsumerGroupMember:  # fmt: skip
        """replaceMember: the new id takes over the old one's subscription, target and partitions,
        at epoch 0, so that it is reconciled without a reshuffle (§10.4)."""
        assert old.instance_id is not None
        self._cancel_timers(group.group_id, old.member_id)
        assigned, pending = dict(old.assigned), dict(old.pending_revocation)
        group.release_partitions(old)
        del group.members[old.member_id]
        new = ConsumerGroupMember(
            member_id=new_member_id, client_id=client_id, client_host=client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms, instance_id=old.instance_id, rack_id=old.rack_id,
            subscribed_topic_names=old.subscribed_topic_names, subscribed_topic_regex=old.subscribed_topic_regex,
            server_assignor_name=old.server_assignor_name, member_epoch=0, previous_member_epoch=0, state=old.state,
            classic=old.classic,
        )  # fmt: skip
        group.members[new_member_id] = new
        group.static_members[old.instance_id] = new_member_id
        group.assign_partitions(new, assigned, pending)
        target = group.target_assignment.pop(old.member_id, None)
        if target is not None:
            group.target_assignment[new_member_id] = target
        self.record(
            "consumer_group.member_replaced", group, now_ms, member_id=new_member_id,
            reason=f"static member {old.instance_id} rejoined with a new member id after a temporary leave",
            instance_id=old.instance_id, old_member_id=old.member_id, assigned=self.names(new.assigned),
        )  # fmt: skip
        return new

    def _update_member(
        self, member: ConsumerGroupMember, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> list[str]:
        """ConsumerGroupMember.Builder.maybeUpdate*: null or -1 fields keep their value. Returns
        what changed that needs a new target assignment (hasMemberSubscriptionChanged)."""
        changes: list[str] = []
        member.classic = None  # a ConsumerGroupHeartbeat makes it a consumer-protocol member
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.client_id, member.client_host = client_id, client_host
        if request.subscribed_topic_names is not None:
            names = tuple(sorted(set(request.subscribed_topic_names)))
            if names != member.subscribed_topic_names:
                member.subscribed_topic_names = names
                changes.append("subscribed topic names")
        if request.subscribed_topic_regex is not None:
            regex = request.subscribed_topic_regex or None  # "" clears the regex
            if regex != member.subscribed_topic_regex:
                member.subscribed_topic_regex = regex
                changes.append("subscribed topic regex")
        if request.server_assignor is not None and request.server_assignor != member.server_assignor_name:
            member.server_assignor_name = request.server_assignor
            changes.append("server assignor")
        return changes

    # -- leaving and fencing (§10.4) ------------------------------------------------------------------

    def _consumer_group_leave(self, now_ms: int, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
        """GroupMetadataManager.consumerGroupLeave: -1 leaves, -2 is a static member's temporary leave."""
        group_id, member_id, instance_id = request.group_id, request.member_id, request.instance_id
        group = self.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        response = ConsumerGroupHeartbeatResponse(
            error_code=ErrorCode.NONE, member_id=member_id, member_epoch=request.member_epoch,
        )  # fmt: skip
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            self._consumer_group_fence_member(group, member, now_ms, f"member {member_id} left the consumer group", "left")
            return response
        static = known_static_member(group.static_member(instance_id), member_id, instance_id)
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            self._consumer_group_static_member_group_leave(group, static, now_ms)
            response.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
            return response
        self._consumer_group_fence_member(
            group, static, now_ms, f"static member {member_id} with instance id {instance_id} left the consumer group", "left"
        )
        return response

    def _consumer_group_static_member_group_leave(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int) -> None:
        """consumerGroupStaticMemberGroupLeave: epoch -2; the assignment stays reserved for the
        instance until its session times out; what was pending revocation is released."""
        self.timers.cancel(rebalance_key(group.group_id, member.member_id))
        self._set_member_assignment(
            group, member, member.state, LEAVE_GROUP_STATIC_MEMBER_EPOCH, member.assigned, {}, now_ms,
            f"static member {member.member_id} with instance id {member.instance_id} temporarily left the consumer group",
        )  # fmt: skip
        self.record(
            "consumer_group.member_left_temporarily", group, now_ms, member_id=member.member_id,
            reason="epoch -2 (KIP-848 static member leave)", instance_id=member.instance_id,
        )  # fmt: skip
        self.update_state(group, now_ms, f"static member {member.member_id} temporarily left")


def _owned_partitions(
    topic_partitions: list[ConsumerGroupHeartbeatRequestTopicPartitions] | None,
) -> set[TopicIdPartition] | None:
    if topic_partitions is None:
        return None
    return {(t.topic_id, p) for t in topic_partitions for p in t.partitions}
