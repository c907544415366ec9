"""The KIP-1071 streams group: its states, members, topology, tasks and the per-member reconciliation step.

Mirrors Kafka 4.3's StreamsGroup, StreamsGroupMember, StreamsTopology, TasksTuple, MemberState and
streams.CurrentAssignmentBuilder (group-coordinator module, ``coordinator/group/streams/``). This
module keeps state and computes the next step of one member; the rules that drive them live in
``mockbroker.coordinators.streams.coordinator``, and every change of group state goes through its
one door, ``StreamsGroupCoordinator.update_state``.

A task is (subtopology id, partition): task ``p`` of a subtopology reads partition ``p`` of each of
its source topics. Members own active, standby and warm-up tasks (``TasksTuple``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from mockbroker.coordinators.streams.topology import ConfiguredTopology, StreamsTopology

if TYPE_CHECKING:
    from mockbroker.timers import Timer

TaskId = tuple[str, int]  # (subtopology id, partition)

JOIN_GROUP_MEMBER_EPOCH = 0  # StreamsGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
GROUP_TYPE_STREAMS = "streams"  # Group.GroupType.STREAMS
STREAMS_PROTOCOL_TYPE = "streams"  # what ListGroups reports as a streams group's protocol type


class StreamsGroupState(enum.Enum):
    """StreamsGroup.StreamsGroupState; the values are the names on the wire."""

    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(enum.Enum):
    """streams.MemberState: where a member is in its reconciliation towards its target."""

    STABLE = "STABLE"
    UNREVOKED_TASKS = "UNREVOKED_TASKS"
    UNRELEASED_TASKS = "UNRELEASED_TASKS"


class TasksTuple(NamedTuple):
    """TasksTuple: active, standby and warm-up tasks."""

    active: frozenset[TaskId] = frozenset()
    standby: frozenset[TaskId] = frozenset()
    warmup: frozenset[TaskId] = frozenset()

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def contains_any(self, other: TasksTuple) -> bool:
        """TasksTuple.containsAny: a task of ``other`` is in this tuple, kind by kind."""
        return bool(self.active & other.active or self.standby & other.standby or self.warmup & other.warmup)

    def merge(self, other: TasksTuple) -> TasksTuple:
        return TasksTuple(self.active | other.active, self.standby | other.standby, self.warmup | other.warmup)


EMPTY_TASKS = TasksTuple()


def by_subtopology(tasks: Iterable[TaskId]) -> dict[str, list[int]]:
    """Tasks grouped as on the wire: subtopology id (sorted) -> sorted partitions."""
    grouped: dict[str, list[int]] = {}
    for subtopology, partition in sorted(tasks):
        grouped.setdefault(subtopology, []).append(partition)
    return grouped


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int


@dataclass(eq=False, slots=True)
class StreamsGroupMember:
    member_id: str
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    rack_id: str | None = None
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: TasksTuple = EMPTY_TASKS
    pending_revocation: TasksTuple = EMPTY_TASKS
    # active task -> the member epoch at which it was given (TasksTupleWithEpochs)
    active_epochs: dict[TaskId, int] = field(default_factory=dict)
    session_timer: Timer | None = None

    def metadata(self) -> tuple[object, ...]:
        """What StreamsGroupMember.equals compares before reconciliation: a change bumps the
        group epoch (hasStreamsMemberMetadataChanged)."""
        return (self.client_id, self.client_host, self.rebalance_timeout_ms, self.rack_id, self.topology_epoch,
                self.process_id, self.user_endpoint, self.client_tags)  # fmt: skip

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_assignment_epoch


class StreamsGroup:
    """One KIP-1071 streams group (StreamsGroup)."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = StreamsGroupState.EMPTY
        self.state_timestamp_ms = now_ms
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, StreamsGroupMember] = {}
        self.topology: StreamsTopology | None = None
        self.configured_topology: ConfiguredTopology | None = None
        # what the configured topology was computed from: (topic name, partition count) of every
        # topic the topology names that exists (Kafka's metadata hash)
        self.metadata_hash: tuple[tuple[str, int], ...] | None = None
        self.validated_topology_epoch = -1
        self.last_assignment_configs: dict[str, str] = {}
        self.target_assignment: dict[str, TasksTuple] = {}  # member id -> target
        self.endpoint_information_epoch = 0
        self.shutdown_request_member_id: str | None = None

    @property
    def generation_id(self) -> int:
        """What the event log's ``generation_id`` carries for a streams group: the group epoch."""
        return self.group_epoch

    @property
    def protocol_type(self) -> str:
        return STREAMS_PROTOCOL_TYPE

    def is_empty(self) -> bool:
        return not self.members

    def compute_state(self) -> StreamsGroupState:
        """StreamsGroup.maybeUpdateGroupState's rule: NotReady until the topology is validated
        against the cluster's topics."""
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.topology is None or self.topology.topology_epoch != self.validated_topology_epoch:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def current_active_owner(self, task: TaskId) -> str | None:
        """The process that holds ``task`` as active (assigned or pending revocation), or None
        (StreamsGroup.currentActiveTaskProcessId)."""
        for member in self.members.values():
            if task in member.assigned.active or task in member.pending_revocation.active:
                return member.process_id
        return None

    def current_standby_processes(self, task: TaskId) -> set[str]:
        return {m.process_id for m in self.members.values()
                if task in m.assigned.standby or task in m.pending_revocation.standby}  # fmt: skip

    def current_warmup_processes(self, task: TaskId) -> set[str]:
        return {m.process_id for m in self.members.values()
                if task in m.assigned.warmup or task in m.pending_revocation.warmup}  # fmt: skip

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """For offset expiry and OffsetDelete: a topic of the group's topology."""
        return self.topology is not None and topic in self.topology.required_topics()

    def offset_expiration_base(self) -> str | None:
        """Streams groups expire offsets as consumer groups do: from their commit time."""
        return "commit"


class NextStep(NamedTuple):
    state: MemberState
    member_epoch: int
    assigned: TasksTuple
    pending_revocation: TasksTuple


def build_current_assignment(
    member: StreamsGroupMember, target_epoch: int, target: TasksTuple, owned: TasksTuple | None,
    active_owner: Callable[[TaskId], str | None], standby_processes: Callable[[TaskId], set[str]],
    warmup_processes: Callable[[TaskId], set[str]],
) -> NextStep | None:  # fmt: skip
    """streams.CurrentAssignmentBuilder.build: the member's next step, or None to stay.

    Revoke before assign: tasks the member holds that are not in its target go first (it stays
    at its epoch, UNREVOKED_TASKS, until a heartbeat no longer reports them); only then is it
    given its new tasks at the target epoch, except those another member still holds
    (UNRELEASED_TASKS): an active task while anyone holds it as active, or while this process
    still holds it as standby or warm-up; a standby or warm-up task while this process holds it.
    """
    if member.state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return None
        epoch = member.member_epoch
    elif member.state is MemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(member.pending_revocation):
            return None
        epoch = member.member_epoch + 1
    else:
        epoch = member.member_epoch
    process = member.process_id

    def unreleased_active(task: TaskId) -> bool:
        return active_owner(task) is not None or process in standby_processes(task) or process in warmup_processes(task)

    def unreleased_other(task: TaskId) -> bool:
        return active_owner(task) == process or process in standby_processes(task) or process in warmup_processes(task)

    def split(current: frozenset[TaskId], wanted: frozenset[TaskId], unreleased: Callable[[TaskId], bool]
              ) -> tuple[frozenset[TaskId], frozenset[TaskId], frozenset[TaskId], bool]:  # fmt: skip
        kept = current & wanted
        revoke = current - kept
        pending = wanted - kept
        blocked = frozenset(t for t in pending if unreleased(t))
        return kept, revoke, pending - blocked, bool(blocked)

    a_kept, a_revoke, a_new, a_blocked = split(member.assigned.active, target.active, unreleased_active)
    s_kept, s_revoke, s_new, s_blocked = split(member.assigned.standby, target.standby, unreleased_other)
    w_kept, w_revoke, w_new, w_blocked = split(member.assigned.warmup, target.warmup, unreleased_other)
    kept = TasksTuple(a_kept, s_kept, w_kept)
    revoke = TasksTuple(a_revoke, s_revoke, w_revoke)
    new = TasksTuple(a_new, s_new, w_new)
    blocked = a_blocked or s_blocked or w_blocked
    if not revoke.is_empty() and (owned is None or owned.contains_any(revoke)):
        return NextStep(MemberState.UNREVOKED_TASKS, epoch, kept, revoke)
    if not new.is_empty():
        state = MemberState.UNRELEASED_TASKS if blocked else MemberState.STABLE
        return NextStep(state, target_epoch, kept.merge(new), EMPTY_TASKS)
    if blocked:
        return NextStep(MemberState.UNRELEASED_TASKS, target_epoch, kept, EMPTY_TASKS)
    return NextStep(MemberState.STABLE, target_epoch, kept, EMPTY_TASKS)


def tasks_from_wire(entries: Iterable[tuple[str, Iterable[int]]]) -> frozenset[TaskId]:
    return frozenset((sub, p) for sub, parts in entries for p in parts)


def describe_tasks(tasks: Mapping[str, Iterable[int]]) -> dict[str, list[int]]:
    return {sub: sorted(parts) for sub, parts in sorted(tasks.items())}
