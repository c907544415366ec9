"""The classic group: its states, the table of allowed transitions, members and their bookkeeping.

Mirrors Kafka's ClassicGroupState, ClassicGroup and ClassicGroupMember (group-coordinator module,
``GC/classic/``). This module only keeps state; the rules that move it (join, sync, heartbeat,
leave, timers) live in ``mockbroker.coordinators.classic.coordinator``, and every change of state
goes through its one door, ``ClassicGroupCoordinator._transition``, checked against ``VALID_PREVIOUS_STATES``
(kafka-group-semantics §2).

Where Java iterates a HashMap (which member becomes leader when the leader leaves, who is elected
at join completion, the order of the leader's member list) this module uses insertion order, so
runs are deterministic.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.consumer_protocol import decode_subscription
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from mockbroker_protocol.messages.sync_group import SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.coordinators.classic.findings import Finding
    from mockbroker.timers import Timer

CONSUMER_PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
GROUP_TYPE_CLASSIC = "classic"  # Group.GroupType.CLASSIC
MEMBER_ID_DELIMITER = "-"  # ClassicGroup.MEMBER_ID_DELIMITER
UNKNOWN_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID
NO_LEADER = ""  # ClassicGroup.NO_LEADER
NO_GENERATION = -1  # JoinGroupRequest.UNKNOWN_GENERATION_ID

# (name, metadata) in the member's order of preference, as JoinGroup carries them.
Protocol = tuple[str, bytes]


class ClassicGroupState(enum.Enum):
    """ClassicGroupState; the values are the names DescribeGroups and ListGroups put on the wire."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


EMPTY = ClassicGroupState.EMPTY
PREPARING_REBALANCE = ClassicGroupState.PREPARING_REBALANCE
COMPLETING_REBALANCE = ClassicGroupState.COMPLETING_REBALANCE
STABLE = ClassicGroupState.STABLE
DEAD = ClassicGroupState.DEAD

# The transition table (kafka-group-semantics §2, ClassicGroupState's static block): a group may
# enter the key state only from one of these.
VALID_PREVIOUS_STATES: dict[ClassicGroupState, frozenset[ClassicGroupState]] = {
    EMPTY: frozenset({PREPARING_REBALANCE}),
    PREPARING_REBALANCE: frozenset({EMPTY, STABLE, COMPLETING_REBALANCE}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    DEAD: frozenset(ClassicGroupState),
}


class IllegalStateTransition(RuntimeError):
    """A transition the table forbids: a broker bug, never a client's fault."""


@dataclass(eq=False, slots=True)
class ClassicGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: list[Protocol]
    assignment: bytes = b""
    awaiting_join: Parked[JoinGroupResponse] | None = None
    awaiting_sync: Parked[SyncGroupResponse] | None = None
    # Added by a JoinGroup that has not been answered yet: its session timer is the 5-minute
    # new-member join timeout, and being parked does not protect it (hasSatisfiedHeartbeat).
    is_new: bool = False
    # The heartbeat timer last armed for this member, so that a heartbeat can move its deadline
    # (Timers.postpone) instead of arming a new one; a stale one (fired, cancelled) is re-armed.
    session_timer: Timer | None = None

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.supported_protocols}

    def matches(self, protocols: list[Protocol]) -> bool:
        """Same ordered (name, metadata) list: a rejoin "with the same metadata" (§3.3)."""
        return protocols == self.supported_protocols

    def vote(self, candidates: set[str]) -> str:
        """The first of the candidates in this member's own order of preference (§3.3)."""
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise IllegalStateTransition(f"member {self.member_id} supports none of {sorted(candidates)}")

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, metadata in self.supported_protocols:
            if name == protocol_name:
                return metadata
        raise IllegalStateTransition(f"member {self.member_id} does not support protocol {protocol_name!r}")

    def has_satisfied_heartbeat(self) -> bool:
        """ClassicGroupMember.hasSatisfiedHeartbeat: a parked member's session cannot expire,
        unless it is new (its parked JoinGroup has the 5-minute join timeout instead, §5)."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync


class ClassicGroup:
    """One classic group's state. Changed only by the coordinator."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = EMPTY
        self.previous_state = DEAD  # ClassicGroup's constructor
        self.state_timestamp_ms = now_ms  # currentStateTimestamp: when the group entered its state
        self.created_ms = now_ms
        self.generation_id = 0
        self.protocol_type: str | None = None  # None: a simple group (no member ever joined)
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicGroupMember] = {}
        self.static_members: dict[str, str] = {}  # group instance id -> member id
        self.pending_join_members: dict[str, None] = {}  # KIP-394 ids handed out, not yet rejoined
        self.pending_sync_members: dict[str, None] = {}  # members yet to SyncGroup this generation
        self.supported_protocols: Counter[str] = Counter()  # protocol name -> members supporting it
        self.subscribed_topics: set[str] | None = None  # None: unknown
        self.new_member_added = False  # extends the initial rebalance delay (§3.6)
        # What the assignment checks found in this group's stored assignments, oldest first
        # (mockbroker/coordinators/classic/assignment_checks.py); not a Kafka notion.
        self.findings: list[Finding] = []

    # -- reading --------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return (
            f"<ClassicGroup {self.group_id!r} {self.state.value} generation={self.generation_id} "
            f"protocol={self.protocol_type}/{self.protocol_name} leader={self.leader_id} members={list(self.members)}>"
        )

    def is_in_state(self, state: ClassicGroupState) -> bool:
        return self.state is state

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def num_awaiting_join_response(self) -> int:
        return sum(1 for m in self.members.values() if m.is_awaiting_join)

    def has_all_members_joined(self) -> bool:
        """Every member is parked in JoinGroup and no KIP-394 id is outstanding (§3.5, §3.7)."""
        return len(self.members) == self.num_awaiting_join_response() and not self.pending_join_members

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def rebalance_timeout_ms(self) -> int:
        """The group rebalance timeout: the largest RebalanceTimeoutMs of its members (0 if none)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PREPARING_REBALANCE]

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_simple_group(self) -> bool:
        return self.protocol_type is None and self.state is EMPTY and not self.pending_join_members

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
        """ClassicGroup.validateMember (§7.2): a static id mapped to another member is fenced."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def supports_protocols(self, protocol_type: str, protocol_names: set[str]) -> bool:
        """§3.3: an Empty group takes any non-empty type and protocol list; otherwise the type must
        match and one of the names must be supported by every current member (the joining
        member's own old list included)."""
        if self.state is EMPTY:
            return bool(protocol_type) and bool(protocol_names)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols[name] == len(self.members) for name in protocol_names
        )

    def candidate_protocols(self) -> set[str]:
        return {name for name, count in self.supported_protocols.items() if count == len(self.members) and count}

    def select_protocol(self) -> str:
        """§3.3: every member votes for its first candidate; most votes wins. Ties (Java: HashMap
        order) go to the protocol that got its first vote from the earliest member."""
        if not self.members:
            raise IllegalStateTransition(f"cannot select a protocol for empty group {self.group_id}")
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter(m.vote(candidates) for m in self.members.values())
        return max(votes, key=lambda name: votes[name])  # max keeps the first of equals

    def current_members(self) -> list[JoinGroupResponseMember]:
        """The leader's member list (§3.7): every member, absent static ones included, with its
        metadata for the selected protocol."""
        return [
            JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        ]

    def compute_subscribed_topics(self) -> set[str] | None:
        """ClassicGroup.computeSubscribedTopics: the union of the members' subscribed topics for a
        ``consumer`` group, parsed from their metadata for the selected protocol; None (unknown)
        for other protocol types, or when some metadata does not parse."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                _, subscription = decode_subscription(member.metadata(self.protocol_name))
                topics.update(subscription.topics)
        except DecodeError:
            return None
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """ClassicGroup.isSubscribedToTopic: unknown subscriptions count as "subscribed to
        everything" for consumer groups, and "nothing" for other types."""
        if self.subscribed_topics is None:
            return self.uses_consumer_protocol()
        return topic in self.subscribed_topics

    def offset_expiration_base(self) -> str | None:
        """ClassicGroup.offsetExpirationCondition, as the base timestamp to measure retention from
        (§8.2): "state" (the time the group became Empty), "commit" (each offset's commit time),
        or None when no offset of this group expires."""
        if self.protocol_type is not None:
            if self.state is EMPTY:
                return "state"
            if self.uses_consumer_protocol() and self.subscribed_topics is not None and self.state is STABLE:
                return "commit"
            return None
        return "commit"

    # -- changing (called by the coordinator only) -----------------------------------------------

    def add(self, member: ClassicGroupMember) -> None:
        """ClassicGroup.add: the first member sets the protocol type and becomes leader."""
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalStateTransition(f"static member {member.group_instance_id} is already in {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(member.protocol_names())
        self.pending_join_members.pop(member.member_id, None)

    def remove(self, member_id: str) -> ClassicGroupMember | None:
        """ClassicGroup.remove: a leader leaving hands leadership to the next member in order."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(member.protocol_names())
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.pop(member_id, None)
        self.pending_sync_members.pop(member_id, None)
        return member

    def update_member(
        self,
        member: ClassicGroupMember,
        protocols: list[Protocol],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        awaiting_join: Parked[JoinGroupResponse] | None,
    ) -> None:
        """ClassicGroup.updateMember: a parked JoinGroup replaced here is never answered (§3.8)."""
        self.supported_protocols.subtract(member.protocol_names())
        member.supported_protocols = protocols
        self.supported_protocols.update(member.protocol_names())
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        member.awaiting_join = awaiting_join

    def complete_join(self, member: ClassicGroupMember, response: JoinGroupResponse) -> bool:
        parked, member.awaiting_join = member.awaiting_join, None
        return parked is not None and parked.complete(response)

    def complete_sync(self, member: ClassicGroupMember, response: SyncGroupResponse) -> bool:
        parked, member.awaiting_sync = member.awaiting_sync, None
        return parked is not None and parked.complete(response)

    def maybe_elect_new_joined_leader(self) -> bool:
        """ClassicGroup.maybeElectNewJoinedLeader: keep a leader that rejoined, else take the first
        member that did; False when nobody rejoined (or there is no leader)."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False
