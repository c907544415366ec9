"""Mixed groups (kafka-group-semantics §10.8): classic-protocol members inside a KIP-848 consumer
group, and online migration between classic and consumer groups.

Follows Kafka's GroupMetadataManager: classicGroupJoinToConsumerGroup,
classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup,
classicGroupLeaveToConsumerGroup, validateOnlineUpgrade / convertToConsumerGroup
(ConsumerGroup.fromClassicGroup) and validateOnlineDowngradeWithFencedMembers /
convertToClassicGroup (ClassicGroup.fromConsumerGroup); method names are Kafka's in snake_case.

A classic member inside a consumer group is a ``ConsumerGroupMember`` with ``classic`` metadata
(its session timeout and JoinGroup protocols). The consumer engine computes its target and
reconciles it one step per JoinGroup, taking the owned partitions from its subscription's
``owned_partitions``: JoinGroup answers GenerationId = member epoch, no leader and no member
list; SyncGroup hands out the member's current assignment as a ConsumerProtocolAssignment; a
Heartbeat answers REBALANCE_IN_PROGRESS whenever the member must rejoin to move on (a newer group
epoch, partitions to revoke, or freed partitions to pick up). Classic members have no rebalance
timer; a join timer (armed when a heartbeat or SyncGroup asks them to rejoin) and a sync timer
(armed by the JoinGroup answer), both of the member's rebalance timeout, fence them instead.

``group.consumer.migration.policy`` (GroupConfig) decides which conversions happen:
- upgrade: the first epoch-0 ConsumerGroupHeartbeat to a non-empty classic group (protocol type
  ``consumer``, no larger than group.consumer.max.size, every member's subscription and
  assignment readable, no assignment with user data) converts it: members keep their ids,
  assignments and epochs (= the generation), and the joining member's epoch bump starts a new
  target assignment. Parked JoinGroups and SyncGroups get REBALANCE_IN_PROGRESS. Otherwise the
  heartbeat gets GROUP_ID_NOT_FOUND, with Kafka's message.
- downgrade: when the last consumer-protocol member leaves or is fenced and classic members
  remain (no more than group.max.size), the group becomes a classic group at generation = group
  epoch, Stable, each member holding its target assignment, and a rebalance starts at once.
- disabled: neither, and a classic JoinGroup to a non-empty consumer group gets
  INCONSISTENT_GROUP_PROTOCOL (KAFKA-20640), as does one whose protocols the group cannot take.

Deliberate differences from Kafka, invisible on the wire: a classic group in its first rebalance
(no protocol selected yet) is upgraded reading each member's first protocol, and an empty
assignment (a member that never synced) counts as no partitions; Java reads the selected
protocol and refuses empty assignment bytes as malformed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import Any

from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.classic.coordinator import ClassicGroupCoordinator
from mockbroker.coordinators.classic.group import (
    CONSUMER_PROTOCOL_TYPE,
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    ClassicGroupMember,
)
from mockbroker.coordinators.consumer.coordinator import (
    ConsumerGroupCoordinator,
    join_key,
    known_static_member,
    sync_key,
)
from mockbroker.coordinators.consumer.group import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    TopicIdPartition,
    group_by_topic,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker_protocol.consumer_protocol import (
    ASSIGNMENT_VERSIONS,
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

log = logging.getLogger("mockbroker.groups")

REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION = 4  # JoinGroupRequest.requiresKnownMemberId (KIP-394)


def _version_of(metadata: bytes) -> int:
    """ConsumerProtocol.deserializeVersion, clamped to the assignment versions we can write."""
    version = int.from_bytes(metadata[:2], "big", signed=True) if len(metadata) >= 2 else ASSIGNMENT_VERSIONS[0]
    return max(ASSIGNMENT_VERSIONS[0], min(version, ASSIGNMENT_VERSIONS[1]))


def _joined(member: ConsumerGroupMember) -> JoinGroupResponse:
    """A classic member's JoinGroup answer in a consumer group: GenerationId = member epoch, no
    leader and no member list (the broker assigns)."""
    assert member.classic is not None
    return JoinGroupResponse(
        error_code=ErrorCode.NONE,
        generation_id=member.member_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocol_name=member.classic.protocol_name,
        leader="",
        member_id=member.member_id,
        members=[],
    )


class MixedGroups:
    """The §10.8 rules, working on the classic coordinator's groups (``classic``) and the
    consumer coordinator's (``consumer``) through their public methods. It is the consumer
    coordinator's ``OnlineMigration`` (the router wires it in)."""

    def __init__(self, classic: ClassicGroupCoordinator, consumer: ConsumerGroupCoordinator) -> None:
        self.classic = classic
        self.consumer = consumer

    @property
    def config(self) -> GroupConfig:
        return self.consumer.config

    def is_classic_group(self, group_id: str) -> bool:
        """Whether ``group_id`` names a classic group (OnlineMigration)."""
        return group_id in self.classic.groups

    def upgrade_classic_group(self, group_id: str, now_ms: int, member_id: str, instance_id: str | None) -> ConsumerGroup:
        """getOrMaybeCreateConsumerGroup's classic side (OnlineMigration): an epoch-0 join
        replaces an empty classic group and upgrades a non-empty one when validateOnlineUpgrade
        allows (§10.8); GroupError otherwise."""
        if self.classic.is_empty_group(group_id):
            self.classic.remove_empty_group(group_id, now_ms, "replaced by a consumer group (epoch-0 ConsumerGroupHeartbeat)")
            return self.consumer.create_group(group_id, now_ms)
        classic = self.classic.groups[group_id]
        problem = self.validate_online_upgrade(classic)
        if problem is not None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, problem)
        # Kafka converts, then finds the group full and appends nothing: the classic group stays.
        max_size = self.config.consumer_group_max_size
        if len(classic.members) >= max_size and member_id not in classic.members and (
            instance_id is None or instance_id not in classic.static_members
        ):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of {max_size} members."
            )
        return self.convert_to_consumer_group(classic, now_ms)

    # -- topic ids and the embedded protocol --------------------------------------------------------

    def _to_topic_id_partitions(self, topics: Iterable[tuple[str, Iterable[int]]]) -> dict[TopicIdPartition, None]:
        """toTopicPartitions / toTopicPartitionMap: by topic id; topics that do not exist are dropped."""
        result: dict[TopicIdPartition, None] = {}
        for name, partitions in topics:
            topic = self.consumer.topics.get(name)
            if topic is None:
                continue
            for p in partitions:
                result[(topic.topic_id, p)] = None
        return result

    def _encode_assignment(self, partitions: Iterable[TopicIdPartition], version: int) -> bytes:
        """toConsumerProtocolAssignment + ConsumerProtocol.serializeAssignment: topics the
        cluster no longer has are left out."""
        assigned = [
            TopicPartition(name, parts)
            for topic_id, parts in group_by_topic(partitions).items()
            if (name := self._name_of(topic_id)) is not None
        ]
        return encode_assignment(ConsumerProtocolAssignment(assigned_partitions=assigned), version)

    def _name_of(self, topic_id: uuid.UUID) -> str | None:
        for topic in self.consumer.topics.values():
            if topic.topic_id == topic_id:
                return topic.name
        return None

    # -- JoinGroup to a consumer group --------------------------------------------------------------

    def classic_group_join_to_consumer_group(
        self, now_ms: int, group: ConsumerGroup, request: JoinGroupRequest, *, api_version: int,
        rebalance_timeout_ms: int, client_id: str, client_host: str,
    ) -> JoinGroupResponse:  # fmt: skip
        """GroupMetadataManager.classicGroupJoinToConsumerGroup: answered at once."""
        try:
            return self._classic_group_join_to_consumer_group(
                now_ms, group, request, api_version, rebalance_timeout_ms, client_id, client_host
            )
        except GroupError as exc:
            log.debug("consumer group %s: classic JoinGroup refused: %s", group.group_id, exc.message)
            return JoinGroupResponse(error_code=exc.code, member_id=request.member_id)

    def _classic_group_join_to_consumer_group(
        self, now_ms: int, group: ConsumerGroup, request: JoinGroupRequest, api_version: int,
        rebalance_timeout_ms: int, client_id: str, client_host: str,
    ) -> JoinGroupResponse:  # fmt: skip
        consumer = self.consumer
        group_id, instance_id = group.group_id, request.group_instance_id
        is_unknown_member = request.member_id == UNKNOWN_MEMBER_ID
        member_id = consumer.new_member_id() if is_unknown_member else request.member_id
        protocols = tuple((p.name, p.metadata) for p in request.protocols)

        self._throw_if_classic_member_cannot_join(group, member_id, instance_id, request.protocol_type, protocols)
        if is_unknown_member and instance_id is None and api_version >= REQUIRES_KNOWN_MEMBER_ID_MIN_VERSION:
            # KIP-394: the member must come back with this id (nothing is stored meanwhile).
            consumer.record(
                "consumer_group.member_join_pending", group, now_ms, member_id=member_id,
                reason="MEMBER_ID_REQUIRED: a dynamic classic member must rejoin with the id it is given",
                client_id=client_id,
            )  # fmt: skip
            return JoinGroupResponse(error_code=ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
        try:
            # deserializeSubscription: every protocol carries the same subscription; the first is read.
            _, subscription = decode_subscription(protocols[0][1])
        except DecodeError as exc:
            # Java: IllegalStateException, answered UNKNOWN_SERVER_ERROR; nothing was changed.
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Malformed embedded consumer protocol in subscription deserialization: {exc}") from exc

        if instance_id is None:
            existing = group.members.get(member_id)
            joining = existing is None  # a dynamic member with an unknown id simply joins
            member = existing or consumer.add_member(
                group, member_id, client_id, client_host, rebalance_timeout_ms, None, now_ms, protocol="classic"
            )
        else:
            joining = is_unknown_member and group.static_member(instance_id) is None
            member = self._get_or_maybe_subscribe_static_member(
                group, member_id, instance_id, is_unknown_member, client_id, client_host, rebalance_timeout_ms, now_ms
            )
        consumer.timers.cancel(join_key(group_id, member.member_id))

        # 1. Update the member from its JoinGroup; bump the group epoch when its subscription, or
        # the subscribed topics' metadata, changed.
        changes = self._update_classic_member(member, request, subscription, protocols, rebalance_timeout_ms, client_id, client_host)
        # 2. A new target when the group epoch is ahead of it; 3. one reconciliation step, with
        # what the member says it owns (its subscription's owned partitions).
        consumer.apply_member_changes(group, member, changes, joining, now_ms, "classic member")
        owned = set(self._to_topic_id_partitions((tp.topic, tp.partitions) for tp in subscription.owned_partitions))
        consumer.maybe_reconcile(group, member, owned, now_ms)
        consumer.update_state(group, now_ms, f"classic member {member.member_id} joined")

        # The member must SyncGroup within its rebalance timeout; its session is the classic one.
        consumer.schedule_consumer_group_session_timeout(group_id, member, now_ms, self._session_timeout(member))
        self._schedule_sync_timeout(group_id, member.member_id, rebalance_timeout_ms, now_ms)
        return _joined(member)

    def _throw_if_classic_member_cannot_join(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, protocol_type: str | None,
        protocols: tuple[tuple[str, bytes], ...],
    ) -> None:  # fmt: skip
        """classicGroupJoinToConsumerGroup's first checks: the group's size, the member's
        protocols, and the migration policy."""
        self.consumer.throw_if_consumer_group_is_full(group, member_id, instance_id)
        if not group.supports_classic_protocols(protocol_type, {name for name, _ in protocols}):
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported.")
        if self.config.consumer_group_migration_policy == "disabled":
            # KAFKA-20640: with migration disabled no classic member joins or rejoins a consumer group.
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"Cannot join the consumer group {group.group_id} with the classic protocol because the group "
                "migration is disabled.",
            )

    def _get_or_maybe_subscribe_static_member(
        self, group: ConsumerGroup, member_id: str, instance_id: str, create: bool, client_id: str,
        client_host: str, rebalance_timeout_ms: int, now_ms: int,
    ) -> ConsumerGroupMember:  # fmt: skip
        """getOrMaybeSubscribeStaticConsumerGroupMember for a classic member: an empty member id
        takes the instance over (whatever the holder's epoch), a known one must match it."""
        consumer = self.consumer
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                return consumer.add_member(
                    group, member_id, client_id, client_host, rebalance_timeout_ms, instance_id, now_ms, protocol="classic"
                )
            return consumer.replace_static_member(group, existing, member_id, client_id, client_host, now_ms)
        return known_static_member(existing, member_id, instance_id)

    def _update_classic_member(
        self, member: ConsumerGroupMember, request: JoinGroupRequest, subscription: ConsumerProtocolSubscription,
        protocols: tuple[tuple[str, bytes], ...], rebalance_timeout_ms: int, client_id: str, client_host: str,
    ) -> list[str]:  # fmt: skip
        """The ConsumerGroupMember.Builder calls of classicGroupJoinToConsumerGroup; returns what
        changed that needs a new target (hasMemberSubscriptionChanged)."""
        changes: list[str] = []
        if subscription.rack_id is not None:
            member.rack_id = subscription.rack_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        member.client_id, member.client_host = client_id, client_host
        names = tuple(sorted(set(subscription.topics)))
        if names != member.subscribed_topic_names:
            member.subscribed_topic_names = names
            changes.append("subscribed topic names")
        if member.subscribed_topic_regex is not None:  # regexes are not for classic members
            member.subscribed_topic_regex = None
            changes.append("subscribed topic regex")
        member.classic = ClassicMemberMetadata(request.session_timeout_ms, protocols)
        return changes

    # -- SyncGroup, Heartbeat, LeaveGroup to a consumer group ---------------------------------------

    def _validate_consumer_group_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
        """validateConsumerGroupMember."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
            return member
        member = group.static_member(instance_id)
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member with instance id {instance_id} is not a member of group {group.group_id}."
            )
        if member.member_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member {member.member_id}.",
            )
        return member

    def _validate_classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int) -> ConsumerGroupMember:
        """validateConsumerGroupMember, throwIfMemberDoesNotUseClassicProtocol, throwIfGenerationIdUnmatched."""
        member = self._validate_consumer_group_member(group, member_id, instance_id)
        if not member.uses_classic_protocol:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member.member_id} does not use the classic protocol.")
        if generation_id != member.member_epoch:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION,
                f"The request generation id {generation_id} is not equal to the member epoch {member.member_epoch} "
                f"of member {member.member_id}.",
            )
        return member

    def classic_group_sync_to_consumer_group(self, now_ms: int, group: ConsumerGroup, request: SyncGroupRequest) -> SyncGroupResponse:
        """GroupMetadataManager.classicGroupSyncToConsumerGroup: the member's current assignment,
        encoded with the version of its first protocol's subscription."""
        try:
            member = self._validate_classic_member(group, request.member_id, request.group_instance_id, request.generation_id)
            assert member.classic is not None
            if request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE:
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                    f"The protocol type {request.protocol_type} from member {member.member_id} request is not equal "
                    f"to the group protocol type {CONSUMER_PROTOCOL_TYPE}.",
                )
            if request.protocol_name is not None and request.protocol_name != member.classic.protocol_name:
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                    f"The protocol name {request.protocol_name} from member {member.member_id} request is not equal "
                    f"to the protocol name {member.classic.protocol_name} returned in the join response.",
                )
            self._throw_if_rebalance_in_progress(group, member, now_ms)
        except GroupError as exc:
            return SyncGroupResponse(error_code=exc.code)
        self.consumer.timers.cancel(sync_key(group.group_id, member.member_id))
        self.consumer.schedule_consumer_group_session_timeout(group.group_id, member, now_ms, self._session_timeout(member))
        self.consumer.record(
            "consumer_group.member_synced", group, now_ms, member_id=member.member_id,
            reason="classic member's SyncGroup answered with its current assignment",
            member_epoch=member.member_epoch, assigned=self.consumer.names(member.assigned),
        )  # fmt: skip
        return SyncGroupResponse(
            error_code=ErrorCode.NONE,
            protocol_type=request.protocol_type,
            protocol_name=request.protocol_name,
            assignment=self._encode_assignment(member.assigned, _version_of(member.classic.supported_protocols[0][1])),
        )

    def _throw_if_rebalance_in_progress(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int) -> None:
        """throwIfRebalanceInProgress: a newer group epoch sends the member back to JoinGroup,
        unless it is still revoking (it rejoins once that is done)."""
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._schedule_join_timeout_if_absent(group.group_id, member, now_ms)
            raise GroupError(
                ErrorCode.REBALANCE_IN_PROGRESS,
                f"A new rebalance is triggered in group {group.group_id} and member {member.member_id} should rejoin to catch up.",
            )

    def classic_group_heartbeat_to_consumer_group(
        self, now_ms: int, group: ConsumerGroup, member_id: str, generation_id: int, instance_id: str | None
    ) -> ErrorCode:
        """GroupMetadataManager.classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS when
        the member must rejoin to progress: the group epoch moved on, it has partitions to
        revoke, or the partitions it waits for are free now."""
        try:
            member = self._validate_classic_member(group, member_id, instance_id, generation_id)
        except GroupError as exc:
            return exc.code
        self.consumer.schedule_consumer_group_session_timeout(group.group_id, member, now_ms, self._session_timeout(member))
        if (
            member.member_epoch < group.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (member.state is MemberState.UNRELEASED_PARTITIONS and not group.waiting_on_unreleased_partition(member))
        ):
            self._schedule_join_timeout_if_absent(group.group_id, member, now_ms)
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def classic_group_leave_to_consumer_group(
        self, now_ms: int, group: ConsumerGroup, identities: Iterable[MemberIdentity]
    ) -> list[MemberResponse]:
        """GroupMetadataManager.classicGroupLeaveToConsumerGroup: every valid identity is fenced
        at once (one epoch bump), which may downgrade the group."""
        responses: list[MemberResponse] = []
        leaving: dict[str, ConsumerGroupMember] = {}
        reasons: list[str] = []
        for identity in identities:
            try:
                if identity.group_instance_id is None:
                    member = group.members.get(identity.member_id)
                    if member is None:
                        raise GroupError(
                            ErrorCode.UNKNOWN_MEMBER_ID, f"Member {identity.member_id} is not a member of group {group.group_id}."
                        )
                else:
                    static = group.static_member(identity.group_instance_id)
                    if static is None:
                        raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {identity.group_instance_id} is unknown.")
                    # Admin removal by instance id comes with an empty member id (KIP-345).
                    if identity.member_id != UNKNOWN_MEMBER_ID and static.member_id != identity.member_id:
                        raise GroupError(ErrorCode.FENCED_INSTANCE_ID, "fenced")
                    member = static
                leaving[member.member_id] = member
                reasons.append(identity.reason if identity.reason is not None else "not provided")
                responses.append(MemberResponse(identity.member_id, identity.group_instance_id, ErrorCode.NONE))
            except GroupError as exc:
                responses.append(MemberResponse(identity.member_id, identity.group_instance_id, exc.code))
        if leaving:
            self.consumer.consumer_group_fence_members(
                group, list(leaving.values()), now_ms,
                f"explicit `LeaveGroup` request for ({', '.join(leaving)}) members; client reason: {', '.join(reasons)}",
                "left",
            )  # fmt: skip
        return responses

    # -- classic-member timers ----------------------------------------------------------------------

    def _session_timeout(self, member: ConsumerGroupMember) -> int | None:
        """The session timeout of a member: its JoinGroup's for a classic member, else None (the
        group's consumer.session.timeout.ms, which the consumer coordinator resolves)."""
        if member.classic is not None:
            return member.classic.session_timeout_ms
        return None

    def _schedule_join_timeout_if_absent(self, group_id: str, member: ConsumerGroupMember, now_ms: int) -> None:
        """scheduleConsumerGroupJoinTimeoutIfAbsent."""
        key = join_key(group_id, member.member_id)
        if self.consumer.timers.deadline(key) is not None:
            return
        member_id, timeout = member.member_id, member.rebalance_timeout_ms
        self.consumer.services.schedule(
            key, now_ms + timeout,
            lambda t: self.consumer.consumer_group_fence_member_operation(
                group_id, member_id, t, f"the classic member failed to join within the rebalance timeout ({timeout} ms)",
                "join_timeout",
            ),
        )  # fmt: skip

    def _schedule_sync_timeout(self, group_id: str, member_id: str, timeout: int, now_ms: int) -> None:
        """scheduleConsumerGroupSyncTimeout."""
        self.consumer.services.schedule(
            sync_key(group_id, member_id), now_ms + timeout,
            lambda t: self.consumer.consumer_group_fence_member_operation(
                group_id, member_id, t, f"the member failed to sync within timeout ({timeout} ms)", "sync_timeout",
            ),
        )  # fmt: skip

    # -- online upgrade ------------------------------------------------------------------------------

    def validate_online_upgrade(self, classic: ClassicGroup) -> str | None:
        """validateOnlineUpgrade: None when the classic group may become a consumer group,
        otherwise Kafka's GROUP_ID_NOT_FOUND message."""
        group_id = classic.group_id
        if not self.config.is_upgrade_enabled:
            return f"Cannot upgrade classic group {group_id} to consumer group because online upgrade is disabled."
        if not classic.uses_consumer_protocol():
            return (
                f"Cannot upgrade classic group {group_id} to consumer group because the group does not use the "
                "consumer embedded protocol."
            )
        if len(classic.members) > self.config.consumer_group_max_size:
            return (
                f"Cannot upgrade classic group {group_id} to consumer group because the group size exceeds the "
                "consumer group maximum size."
            )
        return None

    def convert_to_consumer_group(self, classic: ClassicGroup, now_ms: int) -> ConsumerGroup:
        """convertToConsumerGroup (ConsumerGroup.fromClassicGroup): the new consumer group. A
        group that cannot be read raises GroupError GROUP_ID_NOT_FOUND, a partition given to two
        members UNKNOWN_SERVER_ERROR (Java's IllegalStateException); then nothing changed.

        Members keep their ids, are STABLE at epoch = generation, hold their last assignment as
        current and target, and keep their classic protocols and session timeouts."""
        group_id = classic.group_id
        members: list[ConsumerGroupMember] = []
        holders: dict[TopicIdPartition, str] = {}
        for old in classic.members.values():
            members.append(self._upgraded_member(classic, old, holders))
        previous: dict[str, Any] = {
            "classic_state": classic.state.value, "classic_generation_id": classic.generation_id,
            "protocol_name": classic.protocol_name, "members": list(classic.members),
        }  # fmt: skip
        # The classic group goes: parked JoinGroups and SyncGroups are told to rejoin.
        self.classic.remove_classic_group_for_upgrade(classic, now_ms)
        consumer = self.consumer
        group = ConsumerGroup(group_id, now_ms)
        group.group_epoch = group.assignment_epoch = classic.generation_id
        consumer.groups[group_id] = group
        for member in members:
            group.members[member.member_id] = member
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member.member_id
            group.target_assignment[member.member_id] = frozenset(member.assigned)
            group.assign_partitions(member, member.assigned, {})
        consumer.record(
            "consumer_group.upgraded", group, now_ms, reason="epoch-0 ConsumerGroupHeartbeat to a classic group (online upgrade)",
            group_epoch=group.group_epoch, **previous,
        )  # fmt: skip
        consumer.update_state(group, now_ms, "converted from a classic group")
        for member in members:
            consumer.schedule_consumer_group_session_timeout(group_id, member, now_ms, self._session_timeout(member))
        return group

    def _upgraded_member(
        self, classic: ClassicGroup, old: ClassicGroupMember, holders: dict[TopicIdPartition, str]
    ) -> ConsumerGroupMember:
        """ConsumerGroupMember.Builder from a classic member (convertToConsumerGroup), with its
        subscription and assignment decoded; ``holders`` collects who holds which partition."""
        group_id = classic.group_id
        metadata = old.metadata(classic.protocol_name) if classic.protocol_name is not None else old.supported_protocols[0][1]
        try:
            _, subscription = decode_subscription(metadata)
            _, assignment = decode_assignment(old.assignment)
        except DecodeError as exc:
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade classic group {group_id} to consumer group because the embedded consumer "
                "protocol is malformed.",
            ) from exc
        if assignment.user_data:  # KAFKA-18134: a custom assignor's user data would be lost
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade classic group {group_id} to consumer group because an unsupported custom assignor "
                "is in use. Please refer to the documentation or switch to a default assignor before re-attempting "
                "the upgrade.",
            )
        assigned = self._to_topic_id_partitions((tp.topic, tp.partitions) for tp in assignment.assigned_partitions)
        for tp in assigned:
            if tp in holders:
                raise GroupError(
                    ErrorCode.UNKNOWN_SERVER_ERROR,
                    f"Cannot upgrade classic group {group_id}: partition {self._name_of(tp[0])}-{tp[1]} is assigned "
                    f"to both {holders[tp]} and {old.member_id}.",
                )
            holders[tp] = old.member_id
        return ConsumerGroupMember(
            member_id=old.member_id, client_id=old.client_id, client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms, instance_id=old.group_instance_id,
            rack_id=subscription.rack_id, subscribed_topic_names=tuple(sorted(set(subscription.topics))),
            member_epoch=classic.generation_id, previous_member_epoch=classic.generation_id,
            state=MemberState.STABLE, assigned=dict.fromkeys(assigned, classic.generation_id),
            classic=ClassicMemberMetadata(old.session_timeout_ms, tuple(old.supported_protocols)),
        )  # fmt: skip

    # -- online downgrade ----------------------------------------------------------------------------

    def validate_online_downgrade_with_fenced_members(self, group: ConsumerGroup, fenced: list[ConsumerGroupMember]) -> bool:
        """validateOnlineDowngradeWithFencedMembers."""
        if not group.all_members_use_classic_protocol_except(fenced):
            return False
        remaining = len(group.members) - len(fenced)
        if remaining <= 0:
            return False  # the group just becomes empty
        if not self.config.is_downgrade_enabled:
            log.info("cannot downgrade consumer group %s: online downgrade is disabled", group.group_id)
            return False
        if remaining > self.config.group_max_size:
            log.info("cannot downgrade consumer group %s: %d members exceed group.max.size", group.group_id, remaining)
            return False
        return True

    def convert_to_classic_group(self, group: ConsumerGroup, leaving: list[ConsumerGroupMember], now_ms: int, reason: str) -> ClassicGroup:
        """convertToClassicGroup (ClassicGroup.fromConsumerGroup) for members leaving: a Stable
        classic group at generation = group epoch whose members hold their target assignment,
        then a rebalance (every member must rejoin)."""
        consumer = self.consumer
        gone = {m.member_id for m in leaving}
        remaining = [m for m in group.members.values() if m.member_id not in gone]
        classic = ClassicGroup(group.group_id, now_ms)
        classic.generation_id = group.group_epoch
        for member in remaining:
            assert member.classic is not None
            classic.add(
                ClassicGroupMember(
                    member_id=member.member_id, group_instance_id=member.instance_id, client_id=member.client_id,
                    client_host=member.client_host, rebalance_timeout_ms=member.rebalance_timeout_ms,
                    session_timeout_ms=member.classic.session_timeout_ms, protocol_type=CONSUMER_PROTOCOL_TYPE,
                    supported_protocols=list(member.classic.supported_protocols),
                )
            )  # fmt: skip
        classic.protocol_name = classic.select_protocol()
        classic.subscribed_topics = classic.compute_subscribed_topics()
        for cm in classic.members.values():
            target = group.target_assignment.get(cm.member_id, frozenset())
            cm.assignment = self._encode_assignment(target, _version_of(cm.metadata(classic.protocol_name)))
        details = {
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "leaving_members": sorted(gone), "members": list(classic.members),
        }  # fmt: skip
        consumer.remove_group(group, now_ms, f"converted to a classic group ({reason})")
        self.classic.add_classic_group_for_downgrade(classic, now_ms, f"Downgrade group {group.group_id} from consumer to classic for member leaving.", details)
        return classic
