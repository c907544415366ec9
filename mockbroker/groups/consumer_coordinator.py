"""The KIP-848 consumer-group coordinator, sans-I/O: ConsumerGroupHeartbeat, ConsumerGroupDescribe,
and the consumer-group side of the offset and admin group APIs.

Follows Kafka's GroupMetadataManager (consumerGroupHeartbeat, consumerGroupLeave, ...) rule by rule,
as kafka-group-semantics §10 describes them; method names are Kafka's in snake_case. Inputs are
request fields and ``now_ms``; outputs are response values. Timers (session timeout, rebalance
timeout) are scheduled on the cluster's ``Timers`` and call back with the time they fired.

Every change of group state goes through one door, ``_update_state``, which recomputes the state
from the epochs and members (ConsumerGroup.maybeUpdateGroupState) and records the transition with
its reason; every change of a member's assignment goes through ``_set_member_assignment``
(docs/events.md, "Consumer group events").

The group epoch is bumped by a member joining, leaving or being fenced, by a change of subscribed
names or regex or of preferred assignor, and by a change of the subscribed topics' metadata
(§10.2). Deliberate differences from Kafka, all invisible on the wire except where said:
- The target assignment is computed synchronously in the heartbeat that finds the group epoch
  ahead (Kafka may defer it by group.consumer.assignment.interval.ms or run it off-thread).
- Subscription metadata and regexes are re-resolved on every heartbeat, against the cluster's
  topics as they are then; Kafka refreshes them periodically
  (group.consumer.regex.refresh.interval.ms). A new topic matching a regex is therefore picked
  up at the next heartbeat rather than minutes later.
- Regexes are Python ``re`` patterns matched in full against topic names (RE2J's ``matches()``);
  constructs RE2J does not have (look-around, back-references, conditionals, possessive and
  atomic groups) are refused with INVALID_REGULAR_EXPRESSION, as RE2J would refuse them. Python
  and RE2J still differ on a few escapes and flags (``\\Z``, ``(?u)``, POSIX classes such as
  ``[[:alpha:]]``, which RE2J knows and ``re`` does not).
- Mixed groups (§10.8) are served by ``mockbroker.groups.mixed``: classic JoinGroup, SyncGroup,
  Heartbeat and LeaveGroup to a non-empty consumer group, and online upgrade (in
  ``_get_or_maybe_create_consumer_group``) and downgrade (in ``_consumer_group_fence_members``)
  as ``group.consumer.migration.policy`` allows. An empty classic group is replaced on an epoch-0
  heartbeat, and an empty consumer group by a classic group on a classic JoinGroup, as in Kafka.
  Not served: the downgrade Kafka makes when a classic static member replaces the last
  consumer-protocol static member under the same instance id (the classic member joins the
  consumer group instead).
- Ties in the preferred assignor vote go to the name asked for first (Java: HashMap order).
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker_assignors import registry as assignor_registry
from mockbroker_assignors.base import ServerAssignor
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec, TopicMetadata
from mockbroker.groups import mixed
from mockbroker.groups.consumer import (
    GROUP_TYPE_CONSUMER,
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
    GroupError,
    MemberState,
    TopicIdPartition,
    build_current_assignment,
    group_by_topic,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_describe import Assignment as DescribedAssignment
from mockbroker_protocol.messages.consumer_group_describe import DescribedGroup, Member, TopicPartitions
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseTopicPartitions,
)
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.groups.coordinator import GroupCoordinator

log = logging.getLogger("mockbroker.groups")

# ConsumerGroupHeartbeat v1 (KIP-1082): the client generates its member id.
CLIENT_MEMBER_ID_MIN_VERSION = 1
# OffsetCommit v9 is the first that carries a member epoch (ConsumerGroup.validateOffsetCommit).
OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION = 9

# RE2J has no look-around, back-references, conditionals, atomic or possessive groups.
_NOT_RE2 = re.compile(r"\(\?<?[=!]|\(\?P=|\(\?\(|\(\?>|\\[1-9]|[*+?}][+]")


class TopicView(Protocol):
    """What the coordinator reads of a topic (mockbroker.cluster.Topic)."""

    @property
    def name(self) -> str: ...

    @property
    def topic_id(self) -> uuid.UUID: ...

    @property
    def partitions(self) -> Sequence[object]: ...

    @property
    def is_internal(self) -> bool: ...


def kafka_uuid_string(value: uuid.UUID) -> str:
    """Uuid.toString: URL-safe base64 of the 16 bytes, without padding (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def _session_key(group_id: str, member_id: str) -> Hashable:
    return ("consumer-group-session-timeout", group_id, member_id)


def _rebalance_key(group_id: str, member_id: str) -> Hashable:
    return ("consumer-group-rebalance-timeout", group_id, member_id)


def validate_regex(pattern: str) -> str | None:
    """None when ``pattern`` is usable, otherwise why not (INVALID_REGULAR_EXPRESSION)."""
    if _NOT_RE2.search(pattern):
        return f"SubscribedTopicRegex {pattern!r} uses a construct RE2J does not support"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"SubscribedTopicRegex {pattern!r} is not a valid regular expression: {exc}"
    return None


class ConsumerGroupCoordinator:
    """Owns every KIP-848 consumer group. Lives inside the ``GroupCoordinator`` (``owner``), with
    which it shares the timers, the event log, the offsets store and the group-id namespace: a
    group id names a classic group (``owner.groups``) or a consumer group (``self.groups``),
    never both."""

    def __init__(
        self,
        owner: GroupCoordinator,
        topics: Mapping[str, TopicView],
        *,
        registry: assignor_registry.AssignorRegistry | None = None,
    ) -> None:
        self.owner = owner
        self.config = owner.config
        self.timers = owner.timers
        self.topics = topics
        self.groups: dict[str, ConsumerGroup] = {}
        self._new_member_id: Callable[[], str] = lambda: kafka_uuid_string(uuid.uuid4())
        self.assignors = self._resolve_assignors(registry or assignor_registry.default_registry)
        # Classic members inside consumer groups and online migration (§10.8).
        self.mixed = mixed.MixedGroups(self)

    def _resolve_assignors(self, registry: assignor_registry.AssignorRegistry) -> dict[str, ServerAssignor]:
        """group.consumer.assignors: names or "module:attr" references, keyed by the assignor's
        own name (what members ask for in ServerAssignor); the first is the default."""
        resolved: dict[str, ServerAssignor] = {}
        for spec in self.config.consumer_group_assignors:
            try:
                assignor = registry.resolve_server(spec)
            except (KeyError, ImportError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"group.consumer.assignors: cannot use {spec!r}: {exc}") from exc
            if assignor.name in resolved:
                raise ValueError(f"group.consumer.assignors names the assignor {assignor.name!r} twice")
            resolved[assignor.name] = assignor
        return resolved

    @property
    def default_assignor_name(self) -> str:
        return next(iter(self.assignors))

    # -- the doors -----------------------------------------------------------------------------------

    def _record(self, type: str, group: ConsumerGroup | str, now_ms: int, *, member_id: str | None = None,
                reason: str | None = None, **details: Any) -> None:
        group_id = group if isinstance(group, str) else group.group_id
        epoch = None if isinstance(group, str) else group.group_epoch
        broker_of = self.owner._broker_of
        self.owner.events.record(
            type, broker_id=None if broker_of is None else broker_of(group_id), group_id=group_id,
            generation_id=epoch, member_id=member_id, reason=reason, now_ms=now_ms, **details,
        )  # fmt: skip

    def _update_state(self, group: ConsumerGroup, now_ms: int, reason: str) -> None:
        """The only place a consumer group's state changes (ConsumerGroup.maybeUpdateGroupState)."""
        new_state = group.compute_state()
        if new_state is group.state:
            return
        previous = group.state
        group.state, group.state_timestamp_ms = new_state, now_ms
        log.debug("consumer group %s: %s -> %s (%s)", group.group_id, previous.value, new_state.value, reason)
        self._record(
            "consumer_group.transition", group, now_ms, reason=reason, from_state=previous.value,
            to_state=new_state.value, group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        )  # fmt: skip

    def _bump_group_epoch(self, group: ConsumerGroup, now_ms: int, reason: str) -> None:
        group.group_epoch += 1
        self._record("consumer_group.epoch_bumped", group, now_ms, reason=reason, group_epoch=group.group_epoch)

    def _set_member_assignment(
        self, group: ConsumerGroup, member: ConsumerGroupMember, state: MemberState, member_epoch: int,
        assigned: Mapping[TopicIdPartition, int], pending_revocation: Mapping[TopicIdPartition, int],
        now_ms: int, reason: str,
    ) -> None:  # fmt: skip
        """The only place a member's epoch, state or current assignment changes."""
        previous_epoch, previous_state = member.member_epoch, member.state
        group.assign_partitions(member, assigned, pending_revocation)
        member.state = state
        member.update_member_epoch(member_epoch)
        self._record(
            "consumer_group.member_reconciled", group, now_ms, member_id=member.member_id, reason=reason,
            from_member_epoch=previous_epoch, member_epoch=member.member_epoch,
            from_state=previous_state.value, state=member.state.value,
            assigned=self._names(member.assigned), pending_revocation=self._names(member.pending_revocation),
            target=self._names(group.target_assignment.get(member.member_id, frozenset())),
            assignment_epoch=group.assignment_epoch,
        )  # fmt: skip

    def _names(self, partitions: Iterable[TopicIdPartition]) -> dict[str, list[int]]:
        """For events and snapshots: {topic name: [partitions]} (the id when the topic is gone)."""
        return {self._topic_name(topic_id): parts for topic_id, parts in group_by_topic(partitions).items()}

    def _topic_name(self, topic_id: uuid.UUID) -> str:
        for topic in self.topics.values():
            if topic.topic_id == topic_id:
                return topic.name
        return kafka_uuid_string(topic_id)

    # -- ConsumerGroupHeartbeat (§10.1) ---------------------------------------------------------------

    def check_heartbeat_request(self, request: ConsumerGroupHeartbeatRequest, api_version: int) -> GroupError | None:
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
            return GroupError(ErrorCode.INVALID_REQUEST, invalid)
        if request.server_assignor is not None and request.server_assignor not in self.assignors:
            return GroupError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(self.assignors)}.",
            )
        if request.subscribed_topic_regex is not None:
            problem = validate_regex(request.subscribed_topic_regex)
            if problem is not None:
                return GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION, problem)
        return None

    def consumer_group_heartbeat(
        self, now_ms: int, request: ConsumerGroupHeartbeatRequest, *, api_version: int, client_id: str, client_host: str
    ) -> ConsumerGroupHeartbeatResponse:
        """GroupMetadataManager.consumerGroupHeartbeat, or consumerGroupLeave for epochs -1 and -2."""
        try:
            error = self.check_heartbeat_request(request, api_version)
            if error is not None:
                raise error
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._consumer_group_leave(now_ms, request)
            return self._consumer_group_heartbeat(now_ms, request, client_id=client_id, client_host=client_host)
        except GroupError as exc:
            return ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message)

    def _consumer_group_heartbeat(
        self, now_ms: int, request: ConsumerGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> ConsumerGroupHeartbeatResponse:
        group_id, member_epoch = request.group_id, request.member_epoch
        owned = _owned_partitions(request.topic_partitions)
        group = self._get_or_maybe_create_consumer_group(
            group_id, member_epoch == JOIN_GROUP_MEMBER_EPOCH, now_ms, request.member_id, request.instance_id
        )
        self._throw_if_consumer_group_is_full(group, request.member_id, request.instance_id)
        member_id = request.member_id or self._new_member_id()  # v0: the coordinator names it
        joining = member_id not in group.members and (
            request.instance_id is None or request.instance_id not in group.static_members
        )
        if request.instance_id is None:
            member = self._get_or_maybe_subscribe_dynamic_member(group, member_id, member_epoch, owned, client_id, client_host, request, now_ms)
        else:
            member = self._get_or_maybe_subscribe_static_member(group, member_id, member_epoch, request.instance_id, owned, client_id, client_host, request, now_ms)
        assigned_before = set(member.assigned)
        # Armed first, so that a member stays accountable even if the assignor fails below.
        self._schedule_consumer_group_session_timeout(group.group_id, member, now_ms)

        # 1. Update the member; bump the group epoch (once) when its subscription or the
        # subscribed topics' metadata changed.
        changes = self._update_member(member, request, client_id, client_host)
        # 2. A new target assignment when the group epoch is ahead of it.
        self._apply_member_changes(group, member, changes, joining, now_ms, "member")

        # 3. Reconcile this member towards its target.
        self._maybe_reconcile(group, member, owned, now_ms)
        self._update_state(group, now_ms, f"member {member.member_id} heartbeat")

        response = ConsumerGroupHeartbeatResponse(
            error_code=ErrorCode.NONE,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.config.consumer_group_heartbeat_interval_ms,
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

    def _apply_member_changes(
        self, group: ConsumerGroup, member: ConsumerGroupMember, changes: list[str], joining: bool, now_ms: int, who: str
    ) -> None:
        """Steps 1-2 of a heartbeat or a classic JoinGroup: record the member's changes, bump the
        group epoch (once) when its subscription, its membership or the subscribed topics'
        metadata changed, and compute a new target when the group epoch is ahead of it."""
        if changes:
            self._record(
                "consumer_group.member_updated", group, now_ms, member_id=member.member_id,
                reason=f"{who} {member.member_id} changed its {', '.join(changes)}", changes=list(changes),
                subscribed_topic_names=list(member.subscribed_topic_names),
                subscribed_topic_regex=member.subscribed_topic_regex, server_assignor=member.server_assignor_name,
            )  # fmt: skip
        if joining:
            changes.insert(0, "membership")  # a new member always needs a new target (§10.4)
        if self._maybe_update_subscription_metadata(group, now_ms):
            changes.append("subscribed topics' metadata")
        if changes:
            self._bump_group_epoch(group, now_ms, f"{who} {member.member_id}: {', '.join(changes)} changed")
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group, now_ms)

    def _get_or_maybe_create_consumer_group(
        self, group_id: str, create_if_not_exists: bool, now_ms: int, member_id: str = "", instance_id: str | None = None
    ) -> ConsumerGroup:
        """GroupMetadataManager.getOrMaybeCreateConsumerGroup: an epoch-0 join replaces an empty
        classic group and upgrades a non-empty one when validateOnlineUpgrade allows (§10.8);
        any other classic group is not found."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.owner.groups.get(group_id)
        if not create_if_not_exists:
            if classic is not None:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if classic is None:
            return self._create_group(group_id, now_ms)
        if self.owner.is_empty_classic_group(group_id):
            self.owner.remove_empty_classic_group(group_id, now_ms, "replaced by a consumer group (epoch-0 ConsumerGroupHeartbeat)")
            return self._create_group(group_id, now_ms)
        problem = self.mixed.validate_online_upgrade(classic)
        if problem is not None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, problem)
        # Kafka converts, then finds the group full and appends nothing: the classic group stays.
        if len(classic.members) >= self.config.consumer_group_max_size and member_id not in classic.members and (
            instance_id is None or instance_id not in classic.static_members
        ):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {self.config.consumer_group_max_size} members.",
            )
        return self.mixed.convert_to_consumer_group(classic, now_ms)

    def _create_group(self, group_id: str, now_ms: int) -> ConsumerGroup:
        group = ConsumerGroup(group_id, now_ms)
        self.groups[group_id] = group
        self._record("consumer_group.created", group, now_ms, reason="epoch-0 ConsumerGroupHeartbeat", state=group.state.value)
        return group

    def _throw_if_consumer_group_is_full(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> None:
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

    def _add_member(
        self, group: ConsumerGroup, member_id: str, client_id: str, client_host: str, rebalance_timeout_ms: int,
        instance_id: str | None, now_ms: int, *, protocol: str = "consumer",
    ) -> ConsumerGroupMember:  # fmt: skip
        member = ConsumerGroupMember(
            member_id=member_id, client_id=client_id, client_host=client_host,
            rebalance_timeout_ms=rebalance_timeout_ms, instance_id=instance_id,
        )  # fmt: skip
        group.members[member_id] = member
        if instance_id is not None:
            group.static_members[instance_id] = member_id
        self._record(
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
            return self._add_member(group, member_id, client_id, client_host, request.rebalance_timeout_ms, request.instance_id, now_ms)
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
                return self._add_member(group, member_id, client_id, client_host, request.rebalance_timeout_ms, request.instance_id, now_ms)
            if existing.member_id == member_id:
                return existing  # the same member rejoining (KAFKA-19233)
            # A classic holder is replaced whatever its epoch (it cannot send epoch -2).
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH and not existing.uses_classic_protocol:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the group because the "
                    f"instance id is owned by {existing.member_id} member.",
                )
            return self._replace_static_member(group, existing, member_id, client_id, client_host, now_ms)
        existing = _known_static_member(existing, member_id, instance_id)
        self._throw_if_member_epoch_is_invalid(existing, member_epoch, owned)
        return existing

    def _replace_static_member(
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
        self._record(
            "consumer_group.member_replaced", group, now_ms, member_id=new_member_id,
            reason=f"static member {old.instance_id} rejoined with a new member id after a temporary leave",
            instance_id=old.instance_id, old_member_id=old.member_id, assigned=self._names(new.assigned),
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

    def _resolve_regex(self, pattern: str) -> list[str]:
        """The non-internal topics whose whole name matches (RE2J Matcher.matches)."""
        compiled = re.compile(pattern)
        return [name for name, topic in self.topics.items() if not topic.is_internal and compiled.fullmatch(name)]

    def _member_subscription(self, member: ConsumerGroupMember) -> frozenset[str]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex is not None:
            names.update(self._resolve_regex(member.subscribed_topic_regex))
        return frozenset(names)

    def _maybe_update_subscription_metadata(self, group: ConsumerGroup, now_ms: int) -> bool:
        """updateSubscriptionMetadata: the subscribed topics that exist, with id and partition
        count. True when it changed (a topic created, deleted or grown, a regex matching more, a
        subscription added or dropped): the caller bumps the group epoch."""
        metadata: dict[str, tuple[uuid.UUID, int]] = {}
        for name in sorted(group.subscribed_topic_names(self._resolve_regex)):
            topic = self.topics.get(name)
            if topic is not None:
                metadata[name] = (topic.topic_id, len(topic.partitions))
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        self._record(
            "consumer_group.subscription_metadata", group, now_ms, reason="the subscribed topics' metadata changed",
            topics={name: count for name, (_, count) in metadata.items()},
        )  # fmt: skip
        return True

    def _update_target_assignment(self, group: ConsumerGroup, now_ms: int) -> None:
        """updateTargetAssignment: run the chosen server assignor over every member (§10.2)."""
        assignor_name = group.preferred_server_assignor() or self.default_assignor_name
        assignor = self.assignors[assignor_name]
        by_name = {name: topic_id for name, (topic_id, _) in group.subscription_metadata.items()}
        name_of = {topic_id: name for name, topic_id in by_name.items()}
        subscriptions = {m.member_id: frozenset(self._member_subscription(m) & by_name.keys()) for m in group.members.values()}
        spec = GroupSpec({
            m.member_id: MemberSpec(
                member_id=m.member_id,
                subscribed_topics=subscriptions[m.member_id],
                assigned={
                    name_of[t]: frozenset(parts)
                    for t, parts in group_by_topic(group.target_assignment.get(m.member_id, frozenset())).items()
                    if t in name_of
                },
                instance_id=m.instance_id,
                rack_id=m.rack_id,
            )
            for m in group.members.values()
        })  # fmt: skip
        cluster = ClusterMetadata({
            name: TopicMetadata(name, count, topic_id=kafka_uuid_string(topic_id))
            for name, (topic_id, count) in group.subscription_metadata.items()
        })  # fmt: skip
        try:
            result = assignor.assign(spec, cluster)
            target = self._check_target(group, result, subscriptions, by_name)
        except Exception as exc:
            if type(assignor).__module__.startswith("assignors."):
                raise  # a built-in assignor failing is our bug: fail loudly
            # A plugin's failure is its author's: Kafka's PartitionAssignorException path.
            message = f"Failed to compute a new target assignment for epoch {group.group_epoch}: {type(exc).__name__}: {exc}"
            log.error("consumer group %s: %s", group.group_id, message, exc_info=exc)
            self._record("consumer_group.assignment_failed", group, now_ms, reason=message, assignor=assignor_name)
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, message) from exc
        group.target_assignment = target
        group.assignment_epoch = group.group_epoch
        group.assignor_name = assignor_name
        self._record(
            "consumer_group.target_assignment", group, now_ms,
            reason=f"group epoch {group.group_epoch} is ahead of the target assignment",
            assignor=assignor_name, assignment_epoch=group.assignment_epoch,
            target={member_id: self._names(parts) for member_id, parts in target.items()},
        )  # fmt: skip

    def _check_target(
        self, group: ConsumerGroup, result: Mapping[str, Mapping[str, frozenset[int]]],
        subscriptions: Mapping[str, frozenset[str]], by_name: Mapping[str, uuid.UUID],
    ) -> dict[str, frozenset[TopicIdPartition]]:  # fmt: skip
        """The assignor's answer, by topic id; anything a broker could not hand out is an error."""
        target: dict[str, frozenset[TopicIdPartition]] = {member_id: frozenset() for member_id in group.members}
        seen: dict[TopicIdPartition, str] = {}
        for member_id, topics in result.items():
            if member_id not in group.members:
                raise ValueError(f"the assignor assigned partitions to {member_id!r}, not a member of the group")
            partitions: set[TopicIdPartition] = set()
            for topic, parts in topics.items():
                if topic not in subscriptions[member_id]:
                    raise ValueError(f"the assignor gave {member_id!r} topic {topic!r}, which it does not subscribe to")
                count = group.subscription_metadata[topic][1]
                for p in parts:
                    if not 0 <= p < count:
                        raise ValueError(f"the assignor gave {member_id!r} partition {topic}-{p}, which does not exist")
                    tp = (by_name[topic], p)
                    if tp in seen:
                        raise ValueError(f"the assignor gave {topic}-{p} to both {seen[tp]!r} and {member_id!r}")
                    seen[tp] = member_id
                    partitions.add(tp)
            target[member_id] = frozenset(partitions)
        return target

    def _maybe_reconcile(
        self, group: ConsumerGroup, member: ConsumerGroupMember, owned: set[TopicIdPartition] | None, now_ms: int
    ) -> None:
        """maybeReconcile: one step of CurrentAssignmentBuilder; arm the rebalance timeout when the
        member must revoke, cancel it otherwise (§10.3)."""
        if member.is_reconciled_to(group.assignment_epoch):
            return
        target = group.target_assignment.get(member.member_id, frozenset())
        step = build_current_assignment(
            member, group.assignment_epoch, target, owned,
            lambda tp: group.owners.get(tp, member.member_id) != member.member_id,
        )  # fmt: skip
        if step is None:
            return
        if (step.state, step.member_epoch, step.assigned, step.pending_revocation) == (
            member.state, member.member_epoch, member.assigned, member.pending_revocation
        ):
            return
        reason = {
            MemberState.UNREVOKED_PARTITIONS: "partitions must be revoked before the member moves on",
            MemberState.UNRELEASED_PARTITIONS: "some target partitions are still held by other members",
            MemberState.STABLE: "reconciled to the target assignment",
        }[step.state]
        self._set_member_assignment(
            group, member, step.state, step.member_epoch, step.assigned, step.pending_revocation, now_ms, reason
        )
        if member.uses_classic_protocol:
            return  # classic members have join and sync timers instead (§10.8)
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            self._schedule_consumer_group_rebalance_timeout(group.group_id, member.member_id, member.member_epoch,
                                                            member.rebalance_timeout_ms, now_ms)  # fmt: skip
        else:
            self.timers.cancel(_rebalance_key(group.group_id, member.member_id))

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
        static = _known_static_member(group.static_member(instance_id), member_id, instance_id)
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
        self.timers.cancel(_rebalance_key(group.group_id, member.member_id))
        self._set_member_assignment(
            group, member, member.state, LEAVE_GROUP_STATIC_MEMBER_EPOCH, member.assigned, {}, now_ms,
            f"static member {member.member_id} with instance id {member.instance_id} temporarily left the consumer group",
        )  # fmt: skip
        self._record(
            "consumer_group.member_left_temporarily", group, now_ms, member_id=member.member_id,
            reason="epoch -2 (KIP-848 static member leave)", instance_id=member.instance_id,
        )  # fmt: skip
        self._update_state(group, now_ms, f"static member {member.member_id} temporarily left")

    def _consumer_group_fence_member(
        self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int, reason: str, cause: str
    ) -> None:
        self._consumer_group_fence_members(group, [member], now_ms, reason, cause)

    def _consumer_group_fence_members(
        self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember], now_ms: int, reason: str, cause: str
    ) -> None:
        """consumerGroupFenceMembers: the members go with their partitions and targets; the group
        epoch is bumped once so that the others are given what they had (§10.4). When only
        classic members would remain, the group is downgraded instead (§10.8)."""
        if not members:
            return
        downgrade = self.mixed.validate_online_downgrade_with_fenced_members(group, list(members))
        for member in members:
            self._cancel_timers(group.group_id, member.member_id)
            self._record(
                "consumer_group.member_left" if cause == "left" else "consumer_group.member_fenced", group, now_ms,
                member_id=member.member_id, reason=reason, cause=cause, member_epoch=member.member_epoch,
                instance_id=member.instance_id, assigned=self._names(member.assigned),
                protocol="classic" if member.uses_classic_protocol else "consumer",
            )  # fmt: skip
        if downgrade:
            self.mixed.convert_to_classic_group(group, list(members), now_ms, reason)
            return
        for member in members:
            group.release_partitions(member)
            del group.members[member.member_id]
            group.target_assignment.pop(member.member_id, None)
            if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
                del group.static_members[member.instance_id]
        self._maybe_update_subscription_metadata(group, now_ms)
        self._bump_group_epoch(group, now_ms, reason)
        self._update_state(group, now_ms, reason)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.timers.cancel(_session_key(group_id, member_id))
        self.timers.cancel(_rebalance_key(group_id, member_id))
        self.timers.cancel(mixed.join_key(group_id, member_id))
        self.timers.cancel(mixed.sync_key(group_id, member_id))

    def _schedule_consumer_group_session_timeout(
        self, group_id: str, member: ConsumerGroupMember, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        """The broker's group.consumer.session.timeout.ms, or a classic member's own (§10.8).
        Every heartbeat re-arms it: the armed timer is moved when it was armed with the same
        timeout (Timers.postpone: same callback, same instant and order of expiry as a new
        timer; the timeout is in the expiry's reason), else a new one replaces it."""
        timeout = self.config.consumer_group_session_timeout_ms if timeout_ms is None else timeout_ms
        timer = member.session_timer
        if timer is not None and member.session_timer_timeout_ms == timeout and self.timers.postpone(timer, now_ms + timeout, now_ms):
            return
        member_id = member.member_id
        member.session_timer_timeout_ms = timeout
        member.session_timer = self.owner._schedule(
            _session_key(group_id, member_id),
            now_ms + timeout,
            lambda t: self._consumer_group_fence_member_operation(
                group_id, member_id, t, f"the member session expired ({timeout} ms without a heartbeat)", "session_timeout",
            ),
        )  # fmt: skip

    def _schedule_consumer_group_rebalance_timeout(
        self, group_id: str, member_id: str, member_epoch: int, rebalance_timeout_ms: int, now_ms: int
    ) -> None:
        """scheduleConsumerGroupRebalanceTimeout: fenced if still at this epoch when it fires."""
        def fire(t: int) -> None:
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if group is None or member is None or member.member_epoch != member_epoch:
                return
            self._consumer_group_fence_member(
                group, member, t,
                f"member {member_id} failed to revoke its partitions from epoch {member_epoch} within {rebalance_timeout_ms}ms",
                "rebalance_timeout",
            )  # fmt: skip

        self.owner._schedule(_rebalance_key(group_id, member_id), now_ms + rebalance_timeout_ms, fire)

    def _consumer_group_fence_member_operation(self, group_id: str, member_id: str, now_ms: int, reason: str, cause: str) -> None:
        group = self.groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            return
        self._consumer_group_fence_member(group, member, now_ms, f"member {member_id} fenced: {reason}", cause)

    # -- ConsumerGroupDescribe (§10.5) ----------------------------------------------------------------

    def consumer_group_describe(self, group_id: str) -> DescribedGroup:
        """GroupMetadataManager.consumerGroupDescribe for one group id."""
        if not group_id:
            return DescribedGroup(error_code=ErrorCode.INVALID_GROUP_ID, error_message="Group id can not be empty.", group_id=group_id)
        group = self.groups.get(group_id)
        if group is None:
            message = (
                f"Group {group_id} is not a consumer group." if group_id in self.owner.groups
                else f"Group {group_id} not found."
            )  # fmt: skip
            # Kafka 4.3 leaves the state empty for a group it does not know (not "Dead").
            return DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id)
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=group.preferred_server_assignor() or self.default_assignor_name,
            members=[self._describe_member(group, m) for m in group.members.values()],
        )

    def _describe_member(self, group: ConsumerGroup, member: ConsumerGroupMember) -> Member:
        return Member(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=list(member.subscribed_topic_names),
            subscribed_topic_regex=member.subscribed_topic_regex or "",  # Kafka 4.3: "" without a regex
            assignment=self._described_assignment(member.assigned),
            target_assignment=self._described_assignment(group.target_assignment.get(member.member_id, frozenset())),
            member_type=MEMBER_TYPE_CLASSIC if member.uses_classic_protocol else MEMBER_TYPE_CONSUMER,
        )

    def _described_assignment(self, partitions: Iterable[TopicIdPartition]) -> DescribedAssignment:
        return DescribedAssignment(
            topic_partitions=[
                TopicPartitions(topic_id, self._topic_name(topic_id), parts)
                for topic_id, parts in group_by_topic(partitions).items()
            ]
        )

    # -- introspection -------------------------------------------------------------------------------

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A consumer group as plain data, for the control API and tests: type, state, epochs,
        assignor, and each member's epoch, state, current and target partitions (by topic name)."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        return {
            "group_id": group.group_id,
            "group_type": GROUP_TYPE_CONSUMER,
            "protocol_type": group.protocol_type,
            "state": group.state.value,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor": group.assignor_name or group.preferred_server_assignor() or self.default_assignor_name,
            "subscribed_topics": {name: count for name, (_, count) in group.subscription_metadata.items()},
            "members": [
                {
                    "member_id": m.member_id,
                    "instance_id": m.instance_id,
                    "rack_id": m.rack_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_epoch": m.member_epoch,
                    "previous_member_epoch": m.previous_member_epoch,
                    "state": m.state.value,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "server_assignor": m.server_assignor_name,
                    "rebalance_timeout_ms": m.rebalance_timeout_ms,
                    "protocol": "classic" if m.uses_classic_protocol else "consumer",
                    "session_timeout_ms": None if m.classic is None else m.classic.session_timeout_ms,
                    "assigned": self._names(m.assigned),
                    "pending_revocation": self._names(m.pending_revocation),
                    "target": self._names(group.target_assignment.get(m.member_id, frozenset())),
                }
                for m in group.members.values()
            ],
        }

    # -- control entry points (mockbroker.control) -----------------------------------------------------

    def expire_member_session(
        self, group_id: str, member_id: str, now_ms: int, accepted: Callable[[], None] | None = None
    ) -> None:
        """Expire a member's session now, as if group.consumer.session.timeout.ms had passed
        without a heartbeat (§10.4): the session-timeout fencing path itself, so the member goes
        with its partitions (``consumer_group.member_fenced``, cause ``session_timeout``), the
        group epoch is bumped and the others are given its partitions. The client learns of it at
        its next heartbeat (UNKNOWN_MEMBER_ID) and rejoins with epoch 0. A static member at epoch
        -2 is removed for good, as its real expiry would. ValueError for an unknown member;
        ``accepted`` runs once the checks passed, before any effect."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            raise ValueError(f"consumer group {group_id!r} has no member {member_id!r}")
        if accepted is not None:
            accepted()
        self._consumer_group_fence_member_operation(
            group_id, member_id, now_ms,
            f"the member session expired ({self.config.consumer_group_session_timeout_ms} ms without a heartbeat; "
            "expired now by the control API)",
            "session_timeout",
        )  # fmt: skip

    def force_rebalance(
        self, group_id: str, now_ms: int, reason: str, accepted: Callable[[], None] | None = None
    ) -> str | None:
        """Make the group recompute its target assignment now, as Kafka does when something the
        assignment depends on changes (§10.2): the subscribed topics' metadata is refreshed, the
        group epoch is bumped, and the chosen assignor computes the target for the new epoch.
        Every member is then behind the assignment epoch (the group is Reconciling) and
        reconciles at its next heartbeat: it revokes what it lost before anyone else is given it
        (§10.3), and even a member whose partitions stay the same moves to the new member epoch.
        A deterministic assignor over unchanged members and topics computes the same target, so
        the visible effect is then the epoch bump alone.

        Returns None, or why the target could not be computed (a plugin assignor failed: the
        group stays Assigning and the next heartbeat tries again, answering UNKNOWN_SERVER_ERROR
        while it fails). ValueError for an unknown or empty group; ``accepted`` runs once the
        checks passed, before any effect."""
        group = self.groups.get(group_id)
        if group is None:
            raise ValueError(f"no consumer group {group_id!r}")
        if not group.members:
            raise ValueError(f"consumer group {group_id} is Empty; there is nothing to rebalance")
        if accepted is not None:
            accepted()
        self._maybe_update_subscription_metadata(group, now_ms)
        self._bump_group_epoch(group, now_ms, reason)
        failed: str | None = None
        try:
            self._update_target_assignment(group, now_ms)
        except GroupError as exc:
            failed = exc.message
        self._update_state(group, now_ms, reason)
        return failed

    # -- offsets and admin APIs (§8, §10.6, §10.7) -----------------------------------------------------

    def validate_offset_commit(
        self, group: ConsumerGroup, member_id: str, member_epoch: int, api_version: int, partitions: Iterable[tuple[str, int]]
    ) -> tuple[ErrorCode | None, dict[tuple[str, int], ErrorCode]]:
        """ConsumerGroup.validateOffsetCommit: a group-level error, or per-partition errors for a
        commit with an older epoch (KIP-1251: each partition must have been given to the member at
        or before that epoch, and still be assigned or pending revocation)."""
        if member_epoch < 0 and not group.members:
            return None, {}  # an admin or manual-assignment commit to an empty group
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID, {}
        if member.uses_classic_protocol:
            # A classic member commits with its generation (= member epoch), at any version (§10.8).
            return (None if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION), {}
        if api_version < OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION:
            return ErrorCode.UNSUPPORTED_VERSION, {}
        if member_epoch > member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH, {}
        if member_epoch == member.member_epoch:
            return None, {}
        errors: dict[tuple[str, int], ErrorCode] = {}
        held = {**member.pending_revocation, **member.assigned}
        for topic, partition in partitions:
            known = self.topics.get(topic)
            given_at = None if known is None else held.get((known.topic_id, partition))
            if given_at is None or given_at > member_epoch:
                errors[(topic, partition)] = ErrorCode.STALE_MEMBER_EPOCH
        return None, errors

    def commit_offsets(self, now_ms: int, group: ConsumerGroup, request: OffsetCommitRequest, *, api_version: int) -> list[OffsetCommitResponseTopic]:
        """OffsetCommit to a consumer group: validated against member epochs, then stored."""
        epoch = request.generation_id_or_member_epoch
        requested = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
        error, partition_errors = self.validate_offset_commit(group, request.member_id, epoch, api_version, requested)
        if error is not None:
            self._record(
                "offset.commit_rejected", group, now_ms, member_id=request.member_id or None, reason=error.name,
                error=error.name, request_generation_id=epoch, partitions=[f"{t}-{p}" for t, p in requested],
            )  # fmt: skip
            return [
                OffsetCommitResponseTopic(t.name, t.topic_id, [OffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions])
                for t in request.topics
            ]
        if partition_errors:
            self._record(
                "offset.commit_rejected", group, now_ms, member_id=request.member_id or None,
                reason=f"{ErrorCode.STALE_MEMBER_EPOCH.name} for partitions not held at epoch {epoch}",
                error=ErrorCode.STALE_MEMBER_EPOCH.name, request_generation_id=epoch,
                partitions=[f"{t}-{p}" for t, p in partition_errors],
            )  # fmt: skip
        return self.owner.store_offsets(
            now_ms, group, request, partition_errors,
            reason="admin commit (epoch -1)" if epoch < 0 else "member commit", request_generation_id=epoch,
        )  # fmt: skip

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """ConsumerGroup.validateOffsetFetch (v9+): None for a classic or unknown group."""
        group = self.groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return None
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            # ConsumerGroup.validateMemberEpoch: classic members get the classic error.
            return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        return None

    def list_groups(self, states: set[str], types: set[str], include: Callable[[str], bool] | None) -> list[ListedGroup]:
        """ListGroups entries of the consumer groups (type and protocol type "consumer", §8.6)."""
        if types and GROUP_TYPE_CONSUMER not in types:
            return []
        return [
            ListedGroup(group.group_id, group.protocol_type, group.state.value, GROUP_TYPE_CONSUMER)
            for group in self.groups.values()
            if (include is None or include(group.group_id)) and (not states or group.state.value.lower() in states)
        ]

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """DeleteGroups for a consumer group: only when Empty, with its offsets (§10.7)."""
        group = self.groups[group_id]
        if group.state is not ConsumerGroupState.EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        deleted = self.owner.offsets.delete_group(group_id)
        self.remove_group(group, now_ms, "DeleteGroups", offsets_deleted=deleted)
        return ErrorCode.NONE

    def remove_group(self, group: ConsumerGroup, now_ms: int, reason: str, **details: Any) -> None:
        """A consumer group goes (DeleteGroups, the cleanup cycle, or a classic group replacing it)."""
        previous = group.state
        group.state = ConsumerGroupState.DEAD
        del self.groups[group.group_id]
        for member_id in list(group.members):
            self._cancel_timers(group.group_id, member_id)
        self._record("consumer_group.transition", group, now_ms, reason=reason, from_state=previous.value,
                     to_state=ConsumerGroupState.DEAD.value, group_epoch=group.group_epoch,
                     assignment_epoch=group.assignment_epoch)  # fmt: skip
        self._record("consumer_group.deleted", group, now_ms, reason=reason, **details)


def _known_static_member(
    static: ConsumerGroupMember | None, member_id: str, instance_id: str
) -> ConsumerGroupMember:
    """throwIfStaticMemberIsUnknown, then throwIfInstanceIdIsFenced."""
    if static is None:
        raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if static.member_id != member_id:
        raise GroupError(
            ErrorCode.FENCED_INSTANCE_ID,
            f"Static member {member_id} with instance id {instance_id} was fenced by member {static.member_id}.",
        )
    return static


def _owned_partitions(
    topic_partitions: list[ConsumerGroupHeartbeatRequestTopicPartitions] | None,
) -> set[TopicIdPartition] | None:
    if topic_partitions is None:
        return None
    return {(t.topic_id, p) for t in topic_partitions for p in t.partitions}
