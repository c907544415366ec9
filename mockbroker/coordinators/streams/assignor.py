"""The server-side task assignor of streams groups: Kafka 4.3.1's StickyTaskAssignor.

Members are grouped by process (``process.id``: one Kafka Streams instance, which may run several
members; ProcessState). The previous assignment is each member's previous target.

Active tasks (assignActive), against a per-member quota (the ceiling of tasks over members,
recomputed for the others whenever a member reaches it):
1. by partition, then subtopology: a task stays with the member that had it actively, while that
   member is under quota;
2. else with a previous standby holder (findPrevMemberWithLeastLoad), while under quota;
3. the rest, by subtopology then partition, each to the least-loaded process (tasks over members)
   and within it to its least-loaded member.

Standby tasks (assignStandby), with ``group.streams.num.standby.replicas`` n > 0: each task of a
stateful subtopology gets n replicas, never on a process that already holds the task (actively or
as a standby), against a quota over every task (active and standby) per member. By partition then
subtopology, descending: first the member that had the task actively before (the task moved
away), then a previous standby holder; the replicas left over go, by subtopology then partition,
descending, to the least-loaded processes (fewer replicas than asked when the processes run out:
Kafka logs a warning).

Kafka 4.3.1's assignor assigns no warm-up tasks (its MemberAssignment's warmupTasks is always
empty, and it has no warm-up settings: only ``group.streams.num.standby.replicas`` and
``group.streams.max.standby.replicas``), so neither does this one. Ties fall as in Kafka: the
processes and each process's members are kept in java.util.HashMaps and polled from
java.util.PriorityQueues, both reproduced here, so that the assignments equal Kafka's
(differential-tested against Kafka 4.3.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mockbroker.coordinators.streams.group import TaskId, TasksTuple
from mockbroker_protocol.hashing import java_hash_map_order

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """AssignmentMemberSpec: a member's process and what it had in the previous target."""

    member_id: str
    process_id: str
    previous: TasksTuple


class _PriorityQueue(Generic[_T]):
    """java.util.PriorityQueue's binary heap (siftUp on offer, siftDown on poll), so that ties
    between equal keys come out in Java's order. An item's key must not change while it is in
    the queue (Kafka polls a process or member, updates it, and offers it again)."""

    def __init__(self, key: Callable[[_T], float]) -> None:
        self.items: list[_T] = []
        self.key = key

    def __len__(self) -> int:
        return len(self.items)

    def offer(self, item: _T) -> None:
        q = self.items
        q.append(item)
        k = len(q) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if self.key(item) >= self.key(q[parent]):
                break
            q[k] = q[parent]
            k = parent
        q[k] = item

    def poll(self) -> _T | None:
        q = self.items
        if not q:
            return None
        first, last = q[0], q.pop()
        if q:
            n, k = len(q), 0
            while k < n >> 1:
                child = 2 * k + 1
                if child + 1 < n and self.key(q[child]) > self.key(q[child + 1]):
                    child += 1
                if self.key(last) <= self.key(q[child]):
                    break
                q[k] = q[child]
                k = child
            q[k] = last
        return first


@dataclass(eq=False)
class _ProcessState:
    """ProcessState: one process's members, their task counts and the tasks given to them."""

    process_id: str
    member_order: list[str] = field(default_factory=list)  # memberToTaskCounts' HashMap order
    counts: dict[str, int] = field(default_factory=dict)
    active: dict[str, set[TaskId]] = field(default_factory=dict)
    standby: dict[str, set[TaskId]] = field(default_factory=dict)
    tasks: set[TaskId] = field(default_factory=set)
    task_count: int = 0
    members_by_load: _PriorityQueue[str] | None = None

    @property
    def load(self) -> float:
        return self.task_count / len(self.counts)

    def add_member(self, member_id: str) -> None:
        self.counts[member_id] = 0
        self.member_order = java_hash_map_order([*self.member_order, member_id])

    def has_task(self, task: TaskId) -> bool:
        return task in self.tasks

    def add_task(self, member_id: str, task: TaskId, active: bool) -> int:
        """addTask: to a given member; the heap of members by load is rebuilt on next use."""
        count = self._add(member_id, task, active)
        self.members_by_load = None
        return count

    def _add(self, member_id: str, task: TaskId, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        self.counts[member_id] += 1
        return self.counts[member_id]

    def add_task_to_least_loaded_member(self, task: TaskId, active: bool) -> int:
        """addTaskToLeastLoadedMember: the member with the fewest tasks, from a heap kept
        between calls (Java's ties)."""
        if len(self.counts) == 1:
            return self._add(self.member_order[0], task, active)
        if self.members_by_load is None:
            self.members_by_load = _PriorityQueue(self.counts.__getitem__)
            for member_id in self.member_order:
                self.members_by_load.offer(member_id)
        least = self.members_by_load.poll()
        if least is None:
            raise AssertionError(f"No members available to assign task {task}.")
        count = self._add(least, task, active)
        self.members_by_load.offer(least)
        return count


def _tasks_per_member(tasks: int, members: int) -> int:
    """StickyTaskAssignor.computeTasksPerMember: the ceiling of tasks / members."""
    return 0 if members == 0 else -(-tasks // members)


@dataclass
class _Quota:
    """A per-member quota over ``tasks`` among ``members``, lowered as members reach it."""

    tasks: int
    members: int
    per_member: int = 0

    def __post_init__(self) -> None:
        self.per_member = _tasks_per_member(self.tasks, self.members)

    def reached(self, count: int) -> None:
        """maybeUpdate(Active|Total)TasksPerMember: a member now has ``count`` tasks."""
        if count == self.per_member:
            self.members -= 1
            self.tasks -= count
            self.per_member = _tasks_per_member(self.tasks, self.members)


@dataclass
class _LocalState:
    """StickyTaskAssignor.LocalState."""

    num_standby_replicas: int
    active_quota: _Quota
    total_quota: _Quota
    processes: dict[str, _ProcessState]  # in processIdToState's HashMap order
    prev_active: dict[TaskId, AssignmentMember]
    prev_standby: dict[TaskId, list[AssignmentMember]]

    def add(self, member: AssignmentMember, task: TaskId, active: bool) -> None:
        """addTask on the member's process, then the quotas the new count may have reached."""
        count = self.processes[member.process_id].add_task(member.member_id, task, active)
        if active:
            self.active_quota.reached(count)
        self.total_quota.reached(count)

    def count(self, member: AssignmentMember) -> int:
        return self.processes[member.process_id].counts[member.member_id]


def _initialize(
    members: Sequence[AssignmentMember], tasks_by_subtopology: Mapping[str, tuple[int, bool]], num_standby_replicas: int
) -> _LocalState:
    """StickyTaskAssignor.initialize: quotas, processes and the previous holders of tasks."""
    total_active = sum(n for n, _ in tasks_by_subtopology.values())
    total = total_active + sum(n * num_standby_replicas for n, stateful in tasks_by_subtopology.values() if stateful)
    order = java_hash_map_order([m.process_id for m in members], len(members))
    processes = {p: _ProcessState(p) for p in order}
    prev_active: dict[TaskId, AssignmentMember] = {}
    prev_standby: dict[TaskId, list[AssignmentMember]] = {}
    for m in members:
        processes[m.process_id].add_member(m.member_id)
        for task in m.previous.active:
            prev_active[task] = m
        for task in m.previous.standby:
            prev_standby.setdefault(task, []).append(m)
    return _LocalState(
        num_standby_replicas, _Quota(total_active, len(members)), _Quota(total, len(members)),
        processes, prev_active, prev_standby,
    )  # fmt: skip


def _find_prev_member_with_least_load(
    state: _LocalState, members: Sequence[AssignmentMember] | None, task: TaskId | None
) -> AssignmentMember | None:
    """findPrevMemberWithLeastLoad: the first previous holder, replaced by a later one only when
    both its process load and its own task count are lower (and, for a standby, its process does
    not hold the task). As in Kafka, the final check looks at the first holder's process."""
    if not members:
        return None
    candidate = members[0]
    first_process = state.processes[candidate.process_id]
    candidate_process_load, candidate_member_load = first_process.load, float(state.count(candidate))
    for member in members[1:]:
        process = state.processes[member.process_id]
        if (
            process.load < candidate_process_load
            and (task is None or not process.has_task(task))
            and state.count(member) < candidate_member_load
        ):
            candidate, candidate_process_load, candidate_member_load = member, process.load, float(state.count(member))
    return candidate if task is None or not first_process.has_task(task) else None


def _assign_active(state: _LocalState, tasks: list[TaskId]) -> None:
    """assignActive: previous owners, then previous standby holders, then the least loaded."""
    tasks = sorted(tasks, key=lambda t: (t[1], t[0]))
    remaining: list[TaskId] = []
    for task in tasks:  # 1. the member that had the task actively
        owner = state.prev_active.get(task)
        if owner is not None and state.count(owner) < state.active_quota.per_member:
            state.add(owner, task, active=True)
        else:
            remaining.append(task)
    unassigned: list[TaskId] = []
    for task in remaining:  # 2. a member that had it as a standby
        holder = _find_prev_member_with_least_load(state, state.prev_standby.get(task), None)
        if holder is not None and state.count(holder) < state.active_quota.per_member:
            state.add(holder, task, active=True)
        else:
            unassigned.append(task)
    queue: _PriorityQueue[_ProcessState] = _PriorityQueue(lambda p: p.load)
    for process in state.processes.values():
        queue.offer(process)
    for task in sorted(unassigned):  # 3. by subtopology then partition, to the least loaded
        least = queue.poll()
        if least is None:
            raise AssertionError(f"No process available to assign active task {task}.")
        count = least.add_task_to_least_loaded_member(task, True)
        state.active_quota.reached(count)
        state.total_quota.reached(count)
        queue.offer(least)


def _sticky_standby(state: _LocalState, task: TaskId) -> bool:
    """One replica of ``task`` to its previous active owner, else to a previous standby holder,
    while under the total quota and its process does not hold the task; False if neither."""
    owner = state.prev_active.get(task)
    if owner is not None:
        process = state.processes[owner.process_id]
        if not process.has_task(task) and state.count(owner) < state.total_quota.per_member:
            state.add(owner, task, active=False)
            return True
    holder = _find_prev_member_with_least_load(state, state.prev_standby.get(task), task)
    if holder is not None and state.count(holder) < state.total_quota.per_member:
        state.add(holder, task, active=False)
        return True
    return False


def _standby_to_least_loaded(state: _LocalState, queue: _PriorityQueue[_ProcessState], task: TaskId) -> bool:
    """assignStandbyToMemberWithLeastLoad: the least-loaded process not holding the task (the
    ones polled on the way are offered back afterwards, innermost first, as Kafka's recursion
    does)."""
    least = queue.poll()
    if least is None:
        return False
    found = False
    if not least.has_task(task):
        state.total_quota.reached(least.add_task_to_least_loaded_member(task, False))
        found = True
    elif len(queue):
        found = _standby_to_least_loaded(state, queue, task)
    queue.offer(least)
    return found


def _assign_standby(state: _LocalState, stateful_tasks: list[TaskId]) -> None:
    """assignStandby: sticky replicas first, the rest to the least-loaded processes."""
    to_least_loaded: list[tuple[TaskId, int]] = []
    for task in sorted(stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
        for i in range(state.num_standby_replicas):
            if not _sticky_standby(state, task):
                to_least_loaded.append((task, state.num_standby_replicas - i))
                break
    to_least_loaded.sort(reverse=True)
    queue: _PriorityQueue[_ProcessState] = _PriorityQueue(lambda p: p.load)
    for process in state.processes.values():
        queue.offer(process)
    for task, replicas in to_least_loaded:
        for _ in range(replicas):
            if not _standby_to_least_loaded(state, queue, task):
                break  # not enough processes: Kafka warns and assigns fewer standbys


def assign(
    members: Sequence[AssignmentMember], tasks_by_subtopology: Mapping[str, tuple[int, bool]], num_standby_replicas: int
) -> dict[str, TasksTuple]:
    """StickyTaskAssignor.assign: member id -> (active, standby) tasks. ``tasks_by_subtopology``
    is subtopology id -> (number of tasks, stateful)."""
    if not members:
        return {}
    state = _initialize(members, tasks_by_subtopology, num_standby_replicas)
    _assign_active(state, [(sub, p) for sub, (n, _) in tasks_by_subtopology.items() for p in range(n)])
    if num_standby_replicas > 0:
        stateful = [(sub, p) for sub, (n, is_stateful) in tasks_by_subtopology.items() if is_stateful for p in range(n)]
        _assign_standby(state, stateful)
    result: dict[str, TasksTuple] = {}
    for m in members:
        process = state.processes[m.process_id]
        result[m.member_id] = TasksTuple(
            frozenset(process.active.get(m.member_id, ())), frozenset(process.standby.get(m.member_id, ()))
        )
    return result
