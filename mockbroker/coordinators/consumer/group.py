"""The KIP-848 consumer group: its states, members, epochs, and the per-member reconciliation step.

Mirrors Kafka's ConsumerGroup, ConsumerGroupMember, MemberState and CurrentAssignmentBuilder
(group-coordinator module, ``GC/modern/``). This module only keeps state and computes the next
step of one member; the rules that drive them (heartbeats, leaving, fencing, the target
assignment, timers) live in ``mockbroker.coordinators.consumer.coordinator``, and every change of group
state goes through its one door, ``ConsumerGroupCoordinator._update_state`` (kafka-group-semantics
§10.2-§10.4).

Partitions are keyed by topic id, as on the wire: a topic deleted and created again under the same
name is a different topic to the group, as in Kafka. A member's partitions remember the epoch at
which each was given to it; OffsetCommit with an older member epoch is checked against them
(KIP-1251, §8.1).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from mockbroker.timers import Timer

# One partition of one topic, by topic id: the unit of KIP-848 assignments.
TopicIdPartition = tuple[uuid.UUID, int]

JOIN_GROUP_MEMBER_EPOCH = 0  # ConsumerGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1  # ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2  # ConsumerGroupHeartbeatRequest.LEAVE_GROUP_STATIC_MEMBER_EPOCH
GROUP_TYPE_CONSUMER = "consumer"  # Group.GroupType.CONSUMER
CONSUMER_PROTOCOL_TYPE = "consumer"  # what ListGroups reports as a consumer group's protocol type
MEMBER_TYPE_CLASSIC = 0  # ConsumerGroupDescribe v1 MemberType: 0 classic, 1 consumer
MEMBER_TYPE_CONSUMER = 1


class ConsumerGroupState(enum.Enum):
    """ConsumerGroup.ConsumerGroupState; the values are the names on the wire."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(enum.Enum):
    """MemberState: where a member is in its reconciliation towards the target (§10.3)."""

    STABLE = "STABLE"
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: what a member that speaks the
    classic protocol (JoinGroup/SyncGroup/Heartbeat) inside a consumer group needs (§10.8)."""

    session_timeout_ms: int
    # (name, metadata) in the member's order of preference, as its last JoinGroup carried them
    supported_protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """What JoinGroup and SyncGroup answer as the protocol name: the member's first."""
        return self.supported_protocols[0][0]


@dataclass(eq=False, slots=True)
class ConsumerGroupMember:
    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor_name: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    # partition -> the epoch at which it was given to this member
    assigned: dict[TopicIdPartition, int] = field(default_factory=dict)
    # partitions the member must give up before it moves on, with the epoch they were given at
    pending_revocation: dict[TopicIdPartition, int] = field(default_factory=dict)
    # Set while the member speaks the classic protocol (a classic JoinGroup to a consumer group,
    # or a member carried over by an online upgrade); None for a ConsumerGroupHeartbeat member.
    classic: ClassicMemberMetadata | None = None
    # The session timer last armed for this member and the timeout it was armed with, so that a
    # heartbeat can move its deadline (Timers.postpone) instead of arming a new one.
    session_timer: Timer | None = None
    session_timer_timeout_ms: int = 0

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def uses_classic_protocol(self) -> bool:
        """ConsumerGroupMember.useClassicProtocol."""
        return self.classic is not None

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo."""
        return self.state is MemberState.STABLE and self.member_epoch == target_assignment_epoch

    def update_member_epoch(self, epoch: int) -> None:
        """ConsumerGroupMember.Builder.updateMemberEpoch: the old epoch becomes the previous one."""
        self.previous_member_epoch = self.member_epoch
        self.member_epoch = epoch

    def owned(self) -> set[TopicIdPartition]:
        """Every partition the group counts as this member's: assigned or pending revocation."""
        return set(self.assigned) | set(self.pending_revocation)


class ConsumerGroup:
    """One KIP-848 consumer group (ConsumerGroup)."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = ConsumerGroupState.EMPTY
        self.state_timestamp_ms = now_ms
        # Kafka 4.3's ModernGroup starts a new group at group and assignment epoch 1, so its first
        # member's join bumps it to 2 (a real 4.3.1 broker answers the first member epoch 2).
        self.group_epoch = 1
        self.assignment_epoch = 1
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target_assignment: dict[str, frozenset[TopicIdPartition]] = {}  # member id -> target
        # partition -> the member that holds it (assigned or pending revocation): Kafka's
        # currentPartitionEpoch map, kept as owners so that a double assignment is caught at once.
        self.owners: dict[TopicIdPartition, str] = {}
        # topic name -> (topic id, partition count) of every topic the members subscribe to that
        # exists (ConsumerGroup.subscriptionMetadata); a change bumps the group epoch (§10.2).
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.assignor_name: str | None = None  # the assignor of the last target assignment
        # regex -> the topic names it resolved to (ConsumerGroup.resolvedRegularExpressions), each
        # resolution filtered by the DESCRIBE ACLs of the member whose heartbeat refreshed it
        # (TopicRegexResolver); with the topics it was resolved against (name, id) and when
        # (lastResolvedRegularExpressionVersion / RefreshTimeMs), the refresh triggers.
        self.resolved_regexes: dict[str, frozenset[str]] = {}
        self.regex_topic_image: frozenset[tuple[str, uuid.UUID]] = frozenset()
        self.regex_refresh_ms: int | None = None

    @property
    def generation_id(self) -> int:
        """What the event log's ``generation_id`` carries for a consumer group: the group epoch."""
        return self.group_epoch

    @property
    def protocol_type(self) -> str:
        return CONSUMER_PROTOCOL_TYPE

    def is_empty(self) -> bool:
        return not self.members

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def compute_state(self) -> ConsumerGroupState:
        """ConsumerGroup.maybeUpdateGroupState's rule (§10.2)."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def preferred_server_assignor(self) -> str | None:
        """ConsumerGroup.computePreferredServerAssignor: the name most members ask for; ties go to
        the name asked for first (Java's HashMap order is not reproducible; this is)."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor_name is not None:
                counts[member.server_assignor_name] = counts.get(member.server_assignor_name, 0) + 1
        if not counts:
            return None
        return max(counts, key=lambda name: counts[name])

    def num_classic_protocol_members(self) -> int:
        return sum(1 for m in self.members.values() if m.uses_classic_protocol)

    def supports_classic_protocols(self, protocol_type: str | None, protocol_names: set[str]) -> bool:
        """ConsumerGroup.supportsClassicProtocols: the type must be ``consumer``, and one of the
        names must be supported by every member that uses the classic protocol."""
        if protocol_type != CONSUMER_PROTOCOL_TYPE:
            return False
        if not self.members:
            return bool(protocol_names)
        classic = [m.classic for m in self.members.values() if m.classic is not None]
        return any(all(name in {p for p, _ in c.supported_protocols} for c in classic) for name in protocol_names)

    def all_members_use_classic_protocol_except(self, excluded: Iterable[ConsumerGroupMember]) -> bool:
        """ConsumerGroup.allMembersUseClassicProtocolExcept: every member not in ``excluded``
        uses the classic protocol."""
        gone = {m.member_id for m in excluded}
        return all(m.uses_classic_protocol for m in self.members.values() if m.member_id not in gone)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """ConsumerGroup.waitingOnUnreleasedPartition: the member, in UNRELEASED_PARTITIONS,
        still waits for a target partition that another member holds."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        target = self.target_assignment.get(member.member_id, frozenset())
        return any(tp not in member.assigned and tp in self.owners for tp in target)

    def subscribed_topic_names(self, resolve_regex: Callable[[str], Iterable[str]]) -> set[str]:
        """Every topic name some member subscribes to, by name or through its regex."""
        names: set[str] = set()
        for member in self.members.values():
            names.update(member.subscribed_topic_names)
            if member.subscribed_topic_regex is not None:
                names.update(resolve_regex(member.subscribed_topic_regex))
        return names

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """For offset expiry and OffsetDelete: the group's resolved subscription names it."""
        return topic in self.subscription_metadata

    def offset_expiration_base(self) -> str | None:
        """Consumer groups expire offsets from their commit time, only for unsubscribed topics (§8.2)."""
        return "commit"

    def assign_partitions(self, member: ConsumerGroupMember, assigned: Mapping[TopicIdPartition, int],
                          pending_revocation: Mapping[TopicIdPartition, int]) -> None:
        """Replace a member's partitions, keeping ``owners`` in step. A partition held by another
        member is a broker bug (Kafka's addPartitionEpochs throws IllegalStateException)."""
        self.release_partitions(member)
        for tp in (*assigned, *pending_revocation):
            holder = self.owners.get(tp)
            if holder is not None and holder != member.member_id:
                raise RuntimeError(
                    f"group {self.group_id}: partition {tp} given to {member.member_id} is still held by {holder}"
                )
            self.owners[tp] = member.member_id
        member.assigned = dict(assigned)
        member.pending_revocation = dict(pending_revocation)

    def release_partitions(self, member: ConsumerGroupMember) -> None:
        for tp in member.owned():
            if self.owners.get(tp) == member.member_id:
                del self.owners[tp]


class Reconciled(NamedTuple):
    """The next step of one member (CurrentAssignmentBuilder.build's result)."""

    state: MemberState
    member_epoch: int
    assigned: dict[TopicIdPartition, int]
    pending_revocation: dict[TopicIdPartition, int]


def owns_revoked_partitions(owned: set[TopicIdPartition] | None, pending_revocation: Iterable[TopicIdPartition]) -> bool:
    """CurrentAssignmentBuilder.ownsRevokedPartitions: unknown owned partitions (a heartbeat that
    did not list them) count as still owned."""
    if owned is None:
        return True
    return any(tp in owned for tp in pending_revocation)


def build_current_assignment(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: frozenset[TopicIdPartition],
    owned: set[TopicIdPartition] | None,
    held_by_other: Callable[[TopicIdPartition], bool],
) -> Reconciled | None:
    """CurrentAssignmentBuilder.build (§10.3): the member's next state, or None when it cannot move.

    ``owned`` is what the heartbeat says the member still owns (None: not sent); ``held_by_other``
    tells whether a partition is still assigned to, or pending revocation from, another member."""
    if member.state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return None
        return _compute_next_assignment(member, member.member_epoch, target_epoch, target, owned, held_by_other)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owns_revoked_partitions(owned, member.pending_revocation):
            return None  # the member has not acknowledged the revocation yet
        return _compute_next_assignment(member, member.member_epoch + 1, target_epoch, target, owned, held_by_other)
    # UNRELEASED_PARTITIONS: pick up whatever others have released since.
    return _compute_next_assignment(member, member.member_epoch, target_epoch, target, owned, held_by_other)


def _compute_next_assignment(
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: frozenset[TopicIdPartition],
    owned: set[TopicIdPartition] | None,
    held_by_other: Callable[[TopicIdPartition], bool],
) -> Reconciled:
    """CurrentAssignmentBuilder.computeNextAssignment: keep = A ∩ T, revoke = A - T, add = T - A
    minus what others still hold; revoke first, then assign."""
    current = member.assigned
    keep = {tp: epoch for tp, epoch in current.items() if tp in target}
    revoke = {tp: epoch for tp, epoch in current.items() if tp not in target}
    wanted = [tp for tp in sorted(target, key=_tp_key) if tp not in keep]
    add = [tp for tp in wanted if not held_by_other(tp)]
    has_unreleased = len(add) < len(wanted)
    if revoke and owns_revoked_partitions(owned, revoke):
        # Stay at the current epoch with only what is kept, until the client confirms (§10.3).
        return Reconciled(MemberState.UNREVOKED_PARTITIONS, member_epoch, keep, revoke)
    assigned = dict(keep)
    for tp in add:
        assigned[tp] = target_epoch  # newly given partitions carry the epoch they were given at
    state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
    return Reconciled(state, target_epoch, assigned, {})


def _tp_key(tp: TopicIdPartition) -> tuple[int, int]:
    return (tp[0].int, tp[1])


def group_by_topic(partitions: Iterable[TopicIdPartition]) -> dict[uuid.UUID, list[int]]:
    """Partitions by topic id, topics in Uuid order and partitions ascending (for the wire)."""
    by_topic: dict[uuid.UUID, list[int]] = {}
    for topic_id, partition in sorted(partitions, key=_tp_key):
        by_topic.setdefault(topic_id, []).append(partition)
    return by_topic
