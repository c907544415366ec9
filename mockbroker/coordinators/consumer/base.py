"""The KIP-848 consumer coordinator's shared core: its state and doors, the target assignment and
reconciliation, and fencing with its timers (kafka-group-semantics §10.2-§10.4).

``ConsumerCoordinatorBase`` holds what ConsumerGroupHeartbeat, the classic members inside
consumer groups (migration/) and the control API all drive: ``update_state`` (the one place a
group's state changes), ``_set_member_assignment`` (the one place a member's epoch, state or
assignment changes), the subscription metadata and the server assignor (updateTargetAssignment),
one reconciliation step (``maybe_reconcile``), and fencing (consumerGroupFenceMembers, the
session and rebalance timeouts). heartbeat.py and admin.py hold the rules of each API;
coordinator.py puts them together as ``ConsumerGroupCoordinator``.
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker.coordinators.consumer.group import (
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
    MemberState,
    TopicIdPartition,
    build_current_assignment,
    group_by_topic,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.offsets.manager import OffsetMetadataManager
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker_assignors import registry as assignor_registry
from mockbroker_assignors.base import ServerAssignor
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec, TopicMetadata
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.config.groups import GroupConfig


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


def session_key(group_id: str, member_id: str) -> Hashable:
    return ("consumer-group-session-timeout", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> Hashable:
    return ("consumer-group-rebalance-timeout", group_id, member_id)


def join_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """consumerGroupJoinKey: a classic member asked to rejoin must do so in time (§10.8)."""
    return ("consumer-group-join-timeout", group_id, member_id)


def sync_key(group_id: str, member_id: str) -> tuple[str, str, str]:
    """consumerGroupSyncKey: a classic member that joined must SyncGroup in time (§10.8)."""
    return ("consumer-group-sync-timeout", group_id, member_id)


class OnlineMigration(Protocol):
    """What the consumer coordinator asks of classic groups and online migration (§10.8):
    implemented by mockbroker.coordinators.migration.MixedGroups, which the router hands in
    (``ConsumerGroupCoordinator.migration``), so that this package never imports that one."""

    def is_classic_group(self, group_id: str) -> bool:
        """Whether ``group_id`` names a classic group."""
        ...

    def upgrade_classic_group(
        self, group_id: str, now_ms: int, member_id: str, instance_id: str | None
    ) -> ConsumerGroup:
        """An epoch-0 ConsumerGroupHeartbeat to the classic group ``group_id``: the consumer group
        that replaces it (empty) or converts it (online upgrade); GroupError when it may not."""
        ...

    def validate_online_downgrade_with_fenced_members(self, group: ConsumerGroup, fenced: list[ConsumerGroupMember]) -> bool:
        """Whether fencing ``fenced`` leaves only classic members that may become a classic group."""
        ...

    def convert_to_classic_group(self, group: ConsumerGroup, leaving: list[ConsumerGroupMember], now_ms: int, reason: str) -> object:
        """The consumer group becomes a classic group without ``leaving``."""
        ...


class _NoClassicGroups:
    """The ``OnlineMigration`` of a consumer coordinator on its own: no classic group exists."""

    def is_classic_group(self, group_id: str) -> bool:
        return False

    def upgrade_classic_group(self, group_id: str, now_ms: int, member_id: str, instance_id: str | None) -> ConsumerGroup:
        raise AssertionError(f"no classic group {group_id} to upgrade")

    def validate_online_downgrade_with_fenced_members(self, group: ConsumerGroup, fenced: list[ConsumerGroupMember]) -> bool:
        return False

    def convert_to_classic_group(self, group: ConsumerGroup, leaving: list[ConsumerGroupMember], now_ms: int, reason: str) -> object:
        raise AssertionError("no classic coordinator to downgrade to")


# What a heartbeat hands in under an authorizer: of these topic names, those its principal may
# DESCRIBE (TopicRegexResolver.filterTopicDescribeAuthorizedTopics).
TopicFilter = Callable[[Sequence[str]], Iterable[str]]


def resolve_regular_expressions(
    patterns: Iterable[str], topic_names: Sequence[str], describable: TopicFilter | None
) -> dict[str, frozenset[str]]:
    """TopicRegexResolver.resolveRegularExpressions: each regex's topics (whole name matched, as
    RE2J's Matcher.matches), less those ``describable`` leaves out (every regex filtered with the
    one principal's ACLs; None: no authorizer)."""
    resolved = {pattern: frozenset(n for n in topic_names if re.fullmatch(pattern, n)) for pattern in patterns}
    if describable is None:
        return resolved
    matched = sorted(set().union(*resolved.values()))
    allowed = set(describable(matched)) if matched else set()
    return {pattern: names & allowed for pattern, names in resolved.items()}


def validate_regex(pattern: str) -> str | None:
    """None when ``pattern`` is usable, otherwise why not (INVALID_REGULAR_EXPRESSION)."""
    if _NOT_RE2.search(pattern):
        return f"SubscribedTopicRegex {pattern!r} uses a construct RE2J does not support"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"SubscribedTopicRegex {pattern!r} is not a valid regular expression: {exc}"
    return None



class ConsumerCoordinatorBase:
    """Every KIP-848 consumer group of the cluster (``groups``) and the machinery the APIs share."""

    def __init__(
        self,
        services: CoordinatorServices,
        offsets: OffsetMetadataManager,
        topics: Mapping[str, TopicView],
        *,
        registry: assignor_registry.AssignorRegistry | None = None,
    ) -> None:
        self.services = services
        # Attributes, not properties over ``services``: every heartbeat reads them.
        self.config: GroupConfig = services.config
        self.timers = services.timers
        self.offsets = offsets
        self.topics = topics
        self.groups: dict[str, ConsumerGroup] = {}
        self.new_member_id: Callable[[], str] = lambda: kafka_uuid_string(uuid.uuid4())
        self.assignors = self._resolve_assignors(registry or assignor_registry.default_registry)
        # Classic groups and online migration (§10.8); the router wires MixedGroups in.
        self.migration: OnlineMigration = _NoClassicGroups()

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
        """group.consumer.assignors' first: the assignor of a group whose members prefer none."""
        return next(iter(self.assignors))

    # -- the doors -----------------------------------------------------------------------------------

    def record(self, type: str, group: ConsumerGroup | str, now_ms: int, *, member_id: str | None = None,
               reason: str | None = None, **details: Any) -> None:
        """One event of a consumer group (docs/events.md): its ``generation_id`` is the group epoch."""
        if isinstance(group, str):
            self.services.record(type, group, None, now_ms, member_id=member_id, reason=reason, **details)
        else:
            self.services.record(
                type, group.group_id, group.group_epoch, now_ms, member_id=member_id, reason=reason, **details
            )

    def update_state(self, group: ConsumerGroup, now_ms: int, reason: str) -> None:
        """The only place a consumer group's state changes (ConsumerGroup.maybeUpdateGroupState)."""
        new_state = group.compute_state()
        if new_state is group.state:
            return
        previous = group.state
        group.state, group.state_timestamp_ms = new_state, now_ms
        log.debug("consumer group %s: %s -> %s (%s)", group.group_id, previous.value, new_state.value, reason)
        self.record(
            "consumer_group.transition", group, now_ms, reason=reason, from_state=previous.value,
            to_state=new_state.value, group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        )  # fmt: skip

    def _bump_group_epoch(self, group: ConsumerGroup, now_ms: int, reason: str) -> None:
        group.group_epoch += 1
        self.record("consumer_group.epoch_bumped", group, now_ms, reason=reason, group_epoch=group.group_epoch)

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
        self.record(
            "consumer_group.member_reconciled", group, now_ms, member_id=member.member_id, reason=reason,
            from_member_epoch=previous_epoch, member_epoch=member.member_epoch,
            from_state=previous_state.value, state=member.state.value,
            assigned=self.names(member.assigned), pending_revocation=self.names(member.pending_revocation),
            target=self.names(group.target_assignment.get(member.member_id, frozenset())),
            assignment_epoch=group.assignment_epoch,
        )  # fmt: skip

    def names(self, partitions: Iterable[TopicIdPartition]) -> dict[str, list[int]]:
        """For events and snapshots: {topic name: [partitions]} (the id when the topic is gone)."""
        return {self._topic_name(topic_id): parts for topic_id, parts in group_by_topic(partitions).items()}

    def _topic_name(self, topic_id: uuid.UUID) -> str:
        for topic in self.topics.values():
            if topic.topic_id == topic_id:
                return topic.name
        return kafka_uuid_string(topic_id)

    def apply_member_changes(
        self, group: ConsumerGroup, member: ConsumerGroupMember, changes: list[str], joining: bool, now_ms: int, who: str,
        *, describable: TopicFilter | None = None, resolve_regexes: bool = False,
    ) -> None:  # fmt: skip
        """Steps 1-2 of a heartbeat or a classic JoinGroup: record the member's changes, bump the
        group epoch (once) when its subscription, its membership, the group's regex resolutions
        (refreshed by a ConsumerGroupHeartbeat: ``resolve_regexes``, with its principal's
        ``describable``) or the subscribed topics' metadata changed, and compute a new target
        when the group epoch is ahead of it."""
        if changes:
            self.record(
                "consumer_group.member_updated", group, now_ms, member_id=member.member_id,
                reason=f"{who} {member.member_id} changed its {', '.join(changes)}", changes=list(changes),
                subscribed_topic_names=list(member.subscribed_topic_names),
                subscribed_topic_regex=member.subscribed_topic_regex, server_assignor=member.server_assignor_name,
            )  # fmt: skip
        if joining:
            changes.insert(0, "membership")  # a new member always needs a new target (§10.4)
        if resolve_regexes and self.maybe_update_regular_expressions(group, now_ms, describable):
            changes.append("resolved regular expressions")
        if self._maybe_update_subscription_metadata(group, now_ms):
            changes.append("subscribed topics' metadata")
        if changes:
            self._bump_group_epoch(group, now_ms, f"{who} {member.member_id}: {', '.join(changes)} changed")
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group, now_ms)

    def maybe_update_regular_expressions(self, group: ConsumerGroup, now_ms: int, describable: TopicFilter | None) -> bool:
        """GroupMetadataManager.maybeUpdateRegularExpressions, run by a ConsumerGroupHeartbeat
        after the member's update: every regex the group subscribes to is resolved again, with
        the DESCRIBE ACLs of this member's principal (``describable``; None: no authorizer), when
        one is not resolved yet, when topics were created since the last resolution, or when that
        is older than group.consumer.regex.refresh.interval.ms. An ACL added or removed later
        therefore shows in the next refresh, as in Kafka, not at the next heartbeat. True when a
        resolution changed (handleRegularExpressionsResult: the caller bumps the group epoch).
        Kafka resolves off-thread and at most every 10 s (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS);
        here it happens in the heartbeat itself, so a new topic is matched at once."""
        dropped = self._drop_unsubscribed_regexes(group)
        patterns = {m.subscribed_topic_regex for m in group.members.values() if m.subscribed_topic_regex is not None}
        if not patterns:
            return dropped
        image = frozenset((name, t.topic_id) for name, t in self.topics.items() if not t.is_internal)
        last = group.regex_refresh_ms
        # onMetadataUpdate advances lastMetadataImageWithNewTopics for created topic ids only: a
        # deletion is no reason (the subscription metadata drops the topic), a re-creation is.
        new_topics = not image <= group.regex_topic_image
        interval = self.config.consumer_group_regex_refresh_interval_ms
        if (patterns <= group.resolved_regexes.keys() and not new_topics
                and last is not None and now_ms <= last + interval):  # fmt: skip
            return dropped
        resolved = resolve_regular_expressions(patterns, sorted(name for name, _ in image), describable)
        group.regex_topic_image, group.regex_refresh_ms = image, now_ms
        if resolved == group.resolved_regexes:
            return dropped
        group.resolved_regexes = resolved
        self.record(
            "consumer_group.regexes_resolved", group, now_ms,
            reason="the group's regular expressions were resolved again",
            resolved={pattern: sorted(names) for pattern, names in sorted(resolved.items())},
        )  # fmt: skip
        return True

    def _drop_unsubscribed_regexes(self, group: ConsumerGroup) -> bool:
        """maybeDeleteResolvedRegularExpressions: a regex no member subscribes to any more goes."""
        subscribed = {m.subscribed_topic_regex for m in group.members.values()}
        gone = [pattern for pattern in group.resolved_regexes if pattern not in subscribed]
        for pattern in gone:
            del group.resolved_regexes[pattern]
        return bool(gone)

    def _resolved_regex(self, group: ConsumerGroup) -> Callable[[str], frozenset[str]]:
        return lambda pattern: group.resolved_regexes.get(pattern, frozenset())

    def _member_subscription(self, group: ConsumerGroup, member: ConsumerGroupMember) -> frozenset[str]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex is not None:
            names.update(group.resolved_regexes.get(member.subscribed_topic_regex, ()))
        return frozenset(names)

    def _maybe_update_subscription_metadata(self, group: ConsumerGroup, now_ms: int) -> bool:
        """updateSubscriptionMetadata: the subscribed topics that exist, with id and partition
        count. True when it changed (a topic created, deleted or grown, a regex matching more, a
        subscription added or dropped): the caller bumps the group epoch."""
        self._drop_unsubscribed_regexes(group)
        metadata: dict[str, tuple[uuid.UUID, int]] = {}
        for name in sorted(group.subscribed_topic_names(self._resolved_regex(group))):
            topic = self.topics.get(name)
            if topic is not None:
                metadata[name] = (topic.topic_id, len(topic.partitions))
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        self.record(
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
        subscriptions = {m.member_id: frozenset(self._member_subscription(group, m) & by_name.keys()) for m in group.members.values()}
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
            self.record("consumer_group.assignment_failed", group, now_ms, reason=message, assignor=assignor_name)
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, message) from exc
        group.target_assignment = target
        group.assignment_epoch = group.group_epoch
        group.assignor_name = assignor_name
        self.record(
            "consumer_group.target_assignment", group, now_ms,
            reason=f"group epoch {group.group_epoch} is ahead of the target assignment",
            assignor=assignor_name, assignment_epoch=group.assignment_epoch,
            target={member_id: self.names(parts) for member_id, parts in target.items()},
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

    def maybe_reconcile(
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
            self.timers.cancel(rebalance_key(group.group_id, member.member_id))

    def _consumer_group_fence_member(
        self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int, reason: str, cause: str
    ) -> None:
        self.consumer_group_fence_members(group, [member], now_ms, reason, cause)

    def consumer_group_fence_members(
        self, group: ConsumerGroup, members: Sequence[ConsumerGroupMember], now_ms: int, reason: str, cause: str
    ) -> None:
        """consumerGroupFenceMembers: the members go with their partitions and targets; the group
        epoch is bumped once so that the others are given what they had (§10.4). When only
        classic members would remain, the group is downgraded instead (§10.8)."""
        if not members:
            return
        downgrade = self.migration.validate_online_downgrade_with_fenced_members(group, list(members))
        for member in members:
            self._cancel_timers(group.group_id, member.member_id)
            self.record(
                "consumer_group.member_left" if cause == "left" else "consumer_group.member_fenced", group, now_ms,
                member_id=member.member_id, reason=reason, cause=cause, member_epoch=member.member_epoch,
                instance_id=member.instance_id, assigned=self.names(member.assigned),
                protocol="classic" if member.uses_classic_protocol else "consumer",
            )  # fmt: skip
        if downgrade:
            self.migration.convert_to_classic_group(group, list(members), now_ms, reason)
            return
        for member in members:
            group.release_partitions(member)
            del group.members[member.member_id]
            group.target_assignment.pop(member.member_id, None)
            if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
                del group.static_members[member.instance_id]
        self._maybe_update_subscription_metadata(group, now_ms)
        self._bump_group_epoch(group, now_ms, reason)
        self.update_state(group, now_ms, reason)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.timers.cancel(session_key(group_id, member_id))
        self.timers.cancel(rebalance_key(group_id, member_id))
        self.timers.cancel(join_key(group_id, member_id))
        self.timers.cancel(sync_key(group_id, member_id))

    def schedule_consumer_group_session_timeout(
        self, group_id: str, member: ConsumerGroupMember, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        """The group's consumer.session.timeout.ms (its group config, else the broker's
        group.consumer.session.timeout.ms), or a classic member's own (§10.8).
        Every heartbeat re-arms it: the armed timer is moved when it was armed with the same
        timeout (Timers.postpone: same callback, same instant and order of expiry as a new
        timer; the timeout is in the expiry's reason), else a new one replaces it."""
        timeout = self.services.group_config(group_id).consumer_session_timeout_ms if timeout_ms is None else timeout_ms
        timer = member.session_timer
        if timer is not None and member.session_timer_timeout_ms == timeout and self.timers.postpone(timer, now_ms + timeout, now_ms):
            return
        member_id = member.member_id
        member.session_timer_timeout_ms = timeout
        member.session_timer = self.services.schedule(
            session_key(group_id, member_id),
            now_ms + timeout,
            lambda t: self.consumer_group_fence_member_operation(
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

        self.services.schedule(rebalance_key(group_id, member_id), now_ms + rebalance_timeout_ms, fire)

    def consumer_group_fence_member_operation(self, group_id: str, member_id: str, now_ms: int, reason: str, cause: str) -> None:
        """A timer's fencing (session, rebalance, a classic member's join or sync timeout): the
        member goes if it is still there when the timer fires; ``cause`` names the timer."""
        group = self.groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            return
        self._consumer_group_fence_member(group, member, now_ms, f"member {member_id} fenced: {reason}", cause)

    def remove_group(self, group: ConsumerGroup, now_ms: int, reason: str, **details: Any) -> None:
        """A consumer group goes (DeleteGroups, the cleanup cycle, or a classic group replacing it)."""
        previous = group.state
        group.state = ConsumerGroupState.DEAD
        del self.groups[group.group_id]
        for member_id in list(group.members):
            self._cancel_timers(group.group_id, member_id)
        self.record("consumer_group.transition", group, now_ms, reason=reason, from_state=previous.value,
                     to_state=ConsumerGroupState.DEAD.value, group_epoch=group.group_epoch,
                     assignment_epoch=group.assignment_epoch)  # fmt: skip
        self.record("consumer_group.deleted", group, now_ms, reason=reason, **details)



def known_static_member(
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


