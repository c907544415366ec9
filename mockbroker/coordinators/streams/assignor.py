"""The server-side task assignor of streams groups: Kafka 4.3's StickyTaskAssignor, in outline.

Members are grouped by process (``process.id``: one Kafka Streams instance, which may run several
members). Tasks are sorted by partition, then subtopology (StickyTaskAssignor.assignActive):
1. an active task stays with the member that had it in the previous target, while that member is
   under its quota (ceil(tasks / members));
2. the rest go to the least-loaded process, and within it to its least-loaded member;
3. with ``num.standby.replicas`` n > 0, each task of a stateful subtopology gets n standby
   replicas on distinct processes other than the active one's, a previous standby holder first,
   else the least-loaded process.
Ties are broken by process id, then member id, so the result is deterministic. Kafka's assignor
also weighs stateless tasks separately, rack-aware client tags and reported task offsets; this
one does not (docs/divergences.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mockbroker.coordinators.streams.group import TaskId, TasksTuple


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """AssignmentMemberSpec: a member's process and what it had in the previous target."""

    member_id: str
    process_id: str
    previous: TasksTuple


def assign(
    members: Sequence[AssignmentMember], tasks_by_subtopology: Mapping[str, tuple[int, bool]], num_standby_replicas: int
) -> dict[str, TasksTuple]:
    """StickyTaskAssignor.assign: member id -> (active, standby) tasks. ``tasks_by_subtopology``
    is subtopology id -> (number of tasks, stateful)."""
    if not members:
        return {}
    active_tasks = sorted(
        ((sub, p) for sub, (n, _) in tasks_by_subtopology.items() for p in range(n)), key=lambda t: (t[1], t[0])
    )
    stateful = [t for t in active_tasks if tasks_by_subtopology[t[0]][1]]
    by_id = {m.member_id: m for m in members}
    active: dict[str, set[TaskId]] = {m.member_id: set() for m in members}
    standby: dict[str, set[TaskId]] = {m.member_id: set() for m in members}
    processes: dict[str, list[str]] = {}
    for m in sorted(members, key=lambda m: m.member_id):
        processes.setdefault(m.process_id, []).append(m.member_id)

    def member_load(member_id: str) -> int:
        return len(active[member_id]) + len(standby[member_id])

    def process_load(process_id: str) -> float:
        ids = processes[process_id]
        return sum(member_load(i) for i in ids) / len(ids)

    quota = math.ceil(len(active_tasks) / len(members)) if active_tasks else 0
    previous_owner = {t: m.member_id for m in members for t in m.previous.active}
    unassigned: list[TaskId] = []
    for task in active_tasks:
        owner = previous_owner.get(task)
        if owner is not None and len(active[owner]) < quota:
            active[owner].add(task)
        else:
            unassigned.append(task)
    for task in unassigned:
        process = min(processes, key=lambda p: (process_load(p), p))
        member = min(processes[process], key=lambda i: (member_load(i), i))
        active[member].add(task)

    if num_standby_replicas > 0:
        active_process = {t: by_id[mid].process_id for mid, ts in active.items() for t in ts}
        previous_standby: dict[TaskId, list[str]] = {}
        for m in members:
            for t in m.previous.standby:
                previous_standby.setdefault(t, []).append(m.member_id)
        for task in stateful:
            used = {active_process[task]}
            for _ in range(num_standby_replicas):
                candidates = [p for p in processes if p not in used]
                if not candidates:
                    break  # fewer processes than replicas: Kafka logs and assigns fewer standbys
                sticky = [by_id[i].process_id for i in sorted(previous_standby.get(task, ())) if by_id[i].process_id in candidates]
                process = sticky[0] if sticky else min(candidates, key=lambda p: (process_load(p), p))
                member = min(processes[process], key=lambda i: (member_load(i), i))
                standby[member].add(task)
                used.add(process)
    return {mid: TasksTuple(frozenset(active[mid]), frozenset(standby[mid])) for mid in by_id}
