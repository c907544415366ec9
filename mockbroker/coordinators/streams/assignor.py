"""The server-side task assignor of streams groups: Kafka 4.3.1's StickyTaskAssignor.

Members are grouped by process (``process.id``: one Kafka Streams instance, which may run several
members). Active tasks (StickyTaskAssignor.assignActive), against a per-member quota (the ceiling
of tasks over members, recomputed for the others when a member reaches it):
1. by partition, then subtopology: a task stays with the member that had it in the previous
   target, while that member is under quota; else with its least-loaded previous standby holder;
2. the rest, by subtopology then partition, each to the least-loaded process (tasks per member)
   and within it to its least-loaded member. Ties fall as in Kafka: the processes are kept in a
   java.util.HashMap sized for the members and polled from a java.util.PriorityQueue, both
   reproduced here (differential-tested against Kafka 4.3.1's assignments).
With ``group.streams.num.standby.replicas`` n > 0, each task of a stateful subtopology gets n
standby replicas on processes other than the active one's, a previous standby holder first, else
the least-loaded process; Kafka 4.3.1's standby placement (its own queue of processes) is
followed in outline only, and rack-aware client tags are not used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mockbroker.coordinators.streams.group import TaskId, TasksTuple
from mockbroker.coordinators.streams.topology import java_string_hash


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """AssignmentMemberSpec: a member's process and what it had in the previous target."""

    member_id: str
    process_id: str
    previous: TasksTuple


def _table_size(capacity: int) -> int:
    """HashMap.tableSizeFor: the power of two a HashMap(capacity) starts with."""
    size = 1
    while size < capacity:
        size *= 2
    return max(size, 1)


def _java_hash_map_order(keys: Sequence[str], capacity: int = 16) -> list[str]:
    """The iteration order of a java.util.HashMap created with ``capacity`` into which ``keys``
    were put in that order (load factor 0.75)."""
    distinct = list(dict.fromkeys(keys))
    size = _table_size(capacity)
    while len(distinct) > size * 3 // 4:
        size *= 2

    def bucket(name: str) -> int:
        h = java_string_hash(name) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (size - 1)

    position = {k: i for i, k in enumerate(distinct)}
    return sorted(distinct, key=lambda k: (bucket(k), position[k]))


class _PriorityQueue:
    """java.util.PriorityQueue's binary heap (siftUp on offer, siftDown on poll), so that ties
    between equal keys come out in Java's order."""

    def __init__(self, key: Callable[[str], float]) -> None:
        self.items: list[str] = []
        self.key = key

    def offer(self, item: str) -> None:
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

    def poll(self) -> str | None:
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


def _tasks_per_member(tasks: int, members: int) -> int:
    """StickyTaskAssignor.computeTasksPerMember: the ceiling of tasks / members."""
    return 0 if members == 0 else -(-tasks // members)


def assign(
    members: Sequence[AssignmentMember], tasks_by_subtopology: Mapping[str, tuple[int, bool]], num_standby_replicas: int
) -> dict[str, TasksTuple]:
    """StickyTaskAssignor.assign: member id -> (active, standby) tasks. ``tasks_by_subtopology``
    is subtopology id -> (number of tasks, stateful)."""
    if not members:
        return {}
    all_tasks = [(sub, p) for sub, (n, _) in tasks_by_subtopology.items() for p in range(n)]
    stateful = sorted((t for t in all_tasks if tasks_by_subtopology[t[0]][1]), key=lambda t: (t[1], t[0]))
    by_id = {m.member_id: m for m in members}
    active: dict[str, set[TaskId]] = {m.member_id: set() for m in members}
    standby: dict[str, set[TaskId]] = {m.member_id: set() for m in members}
    count = {m.member_id: 0 for m in members}  # ProcessState.memberToTaskCounts
    # processIdToState: a HashMap sized for the members, so its order (and the priority queue's
    # ties below) are Java's
    first_seen = list(dict.fromkeys(m.process_id for m in members))
    process_order = _java_hash_map_order(first_seen, len(members))
    processes: dict[str, list[str]] = {p: [] for p in process_order}
    for m in members:
        processes[m.process_id].append(m.member_id)
    process_tasks = dict.fromkeys(processes, 0)

    def process_load(process_id: str) -> float:
        return process_tasks[process_id] / len(processes[process_id])

    def member_load(member_id: str) -> int:
        return count[member_id]

    quota = {"per_member": _tasks_per_member(len(all_tasks), len(members)), "members": len(members), "tasks": len(all_tasks)}

    def add_active(member_id: str, task: TaskId) -> None:
        active[member_id].add(task)
        count[member_id] += 1
        process_tasks[by_id[member_id].process_id] += 1
        if count[member_id] == quota["per_member"]:  # maybeUpdateActiveTasksPerMember
            quota["members"] -= 1
            quota["tasks"] -= count[member_id]
            quota["per_member"] = _tasks_per_member(quota["tasks"], quota["members"])

    previous_owner = {t: m.member_id for m in members for t in m.previous.active}
    previous_standby: dict[TaskId, list[str]] = {}
    for m in members:
        for t in m.previous.standby:
            previous_standby.setdefault(t, []).append(m.member_id)
    remaining: list[TaskId] = []
    for task in sorted(all_tasks, key=lambda t: (t[1], t[0])):
        owner = previous_owner.get(task)
        if owner is not None and count[owner] < quota["per_member"]:
            add_active(owner, task)
        else:
            remaining.append(task)
    unassigned: list[TaskId] = []
    for task in remaining:  # findPrevMemberWithLeastLoad: a previous standby holder
        holders = previous_standby.get(task, [])
        holder = min(holders, key=member_load) if holders else None
        if holder is not None and count[holder] < quota["per_member"]:
            add_active(holder, task)
        else:
            unassigned.append(task)
    queue = _PriorityQueue(process_load)
    for process_id in process_order:
        queue.offer(process_id)
    for task in sorted(unassigned):  # by subtopology, then partition
        polled = queue.poll()
        if polled is None:
            raise AssertionError(f"No process available to assign active task {task}.")
        ids = processes[polled]
        member_id = ids[0] if len(ids) == 1 else min(_java_hash_map_order(ids), key=member_load)
        add_active(member_id, task)
        queue.offer(polled)

    if num_standby_replicas > 0:
        active_process = {t: by_id[mid].process_id for mid, ts in active.items() for t in ts}
        for task in stateful:
            used = {active_process[task]}
            for _ in range(num_standby_replicas):
                candidates = [p for p in process_order if p not in used]
                if not candidates:
                    break  # fewer processes than replicas: Kafka logs and assigns fewer standbys
                sticky = [by_id[i].process_id for i in previous_standby.get(task, ()) if by_id[i].process_id in candidates]
                process_id = sticky[0] if sticky else min(candidates, key=process_load)
                member_id = min(processes[process_id], key=member_load)
                standby[member_id].add(task)
                count[member_id] += 1
                process_tasks[process_id] += 1
                used.add(process_id)
    return {mid: TasksTuple(frozenset(active[mid]), frozenset(standby[mid])) for mid in by_id}
