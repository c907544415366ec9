"""The streams groups' task assignor (Kafka 4.3.1's StickyTaskAssignor): standby replicas placed
as Kafka places them, stickiness of active and standby tasks, no warm-up tasks; and, through the
coordinator with the manual clock, a standby taking over the tasks of a member whose session
expired."""

from __future__ import annotations

from collections import Counter

from mockbroker.coordinators.streams.assignor import AssignmentMember, assign
from mockbroker.coordinators.streams.group import TaskId, TasksTuple
from tests.mockbroker.coordinators.streams_groups_support import StreamsHarness

EMPTY = TasksTuple(frozenset(), frozenset())
WORD_COUNT = {"0": (6, False), "1": (6, True)}  # subtopology 1 holds the state store
STATEFUL = {("1", p) for p in range(6)}


def member(member_id: str, process: str | None = None, active: set[TaskId] | None = None,
           standby: set[TaskId] | None = None) -> AssignmentMember:
    return AssignmentMember(member_id, process or f"process-{member_id}",
                            TasksTuple(frozenset(active or ()), frozenset(standby or ())))  # fmt: skip


def tasks(by_subtopology: dict[str, list[int]]) -> frozenset[TaskId]:
    return frozenset((sub, p) for sub, ps in by_subtopology.items() for p in ps)


def standby_holders(result: dict[str, TasksTuple]) -> Counter[TaskId]:
    return Counter(t for tasks in result.values() for t in tasks.standby)


def test_every_stateful_task_gets_its_standbys_away_from_its_active_process() -> None:
    members = [member("a"), member("b"), member("c")]
    result = assign(members, WORD_COUNT, 1)
    assert standby_holders(result) == Counter(dict.fromkeys(STATEFUL, 1))  # stateless tasks get none
    for given in result.values():
        assert not given.active & given.standby
        assert not given.warmup  # Kafka 4.3.1's assignor gives no warm-up tasks
    # exactly Kafka 4.3.1's StickyTaskAssignor for these members (run on its jar): the standbys
    # go by descending task to the least-loaded process in its java.util.PriorityQueue order
    expected = {
        "a": ({"0": [0, 5], "1": [1, 3]}, {"1": [2, 5]}),
        "b": ({"0": [1, 3], "1": [2, 4]}, {"1": [0, 1, 3]}),
        "c": ({"0": [2, 4], "1": [0, 5]}, {"1": [4]}),
    }
    for m, (active, standby) in expected.items():
        assert result[m] == TasksTuple(tasks(active), tasks(standby))


def test_two_replicas_need_three_processes() -> None:
    two = assign([member("a"), member("b")], WORD_COUNT, 2)
    assert standby_holders(two) == Counter(dict.fromkeys(STATEFUL, 1))  # Kafka warns, assigns fewer
    three = assign([member("a"), member("b"), member("c")], WORD_COUNT, 2)
    assert standby_holders(three) == Counter(dict.fromkeys(STATEFUL, 2))
    for given in three.values():
        assert not given.active & given.standby


def test_members_of_one_process_never_share_a_task() -> None:
    members = [member("a1", "p"), member("a2", "p"), member("b", "q")]
    result = assign(members, WORD_COUNT, 1)
    for task in STATEFUL:
        holders = [m.process_id for m in members if task in result[m.member_id].active | result[m.member_id].standby]
        assert sorted(holders) == ["p", "q"]


def test_a_previous_standby_takes_over_the_active_task_of_a_member_gone() -> None:
    first = assign([member("a"), member("b"), member("c")], WORD_COUNT, 1)
    survivors = [member(m, active=set(first[m].active), standby=set(first[m].standby)) for m in ("a", "b")]
    second = assign(survivors, WORD_COUNT, 1)
    for task in first["c"].active & STATEFUL:
        holder = next(m for m in ("a", "b") if task in first[m].standby)
        assert task in second[holder].active  # the warm standby, not a cold member, becomes active
    for m in ("a", "b"):
        assert first[m].active <= second[m].active  # the survivors keep their active tasks


def test_sticky_assignment_is_stable_and_a_moved_task_leaves_a_standby_behind() -> None:
    first = assign([member("a"), member("b")], WORD_COUNT, 1)
    again = assign([member(m, active=set(first[m].active), standby=set(first[m].standby)) for m in ("a", "b")], WORD_COUNT, 1)
    assert again == first
    grown = assign(
        [*(member(m, active=set(first[m].active), standby=set(first[m].standby)) for m in ("a", "b")), member("c")],
        WORD_COUNT, 1,
    )  # fmt: skip
    for m in ("a", "b"):
        assert grown[m].active <= first[m].active  # only moves away, under the new quota of 4
        moved = (first[m].active - grown[m].active) & STATEFUL
        assert moved <= grown[m].standby  # the previous active owner keeps the state as a standby
    assert len(grown["c"].active) == 4


def test_no_tasks_without_a_topology_and_none_for_no_members() -> None:
    assert assign([], WORD_COUNT, 1) == {}
    assert assign([member("a")], {}, 1) == {"a": EMPTY}


def test_standby_becomes_active_when_the_owner_session_expires() -> None:
    """Through the coordinator, manual clock: a's session expires; b, its standby, is given a's
    stateful tasks as active ones."""
    h = StreamsHarness(group_streams_num_standby_replicas=1)
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    target = {m["member_id"]: m["target"] for m in h.snap()["members"]}
    a_stateful = set(target["a"]["active"].get("1", []))
    assert a_stateful and set(target["b"]["standby"].get("1", [])) == a_stateful
    session = h.cluster.groups.config.streams_group_session_timeout_ms
    for _ in range(3):
        h.advance(session // 2)
        h.beat("b", h.epoch("b"), active={}, standby={})
    assert list(h.sgroup().members) == ["b"]
    (only,) = h.snap()["members"]
    assert only["target"]["active"] == {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]}  # a's stateful tasks among them
    assert only["target"]["standby"] == {}  # one process left: nowhere to put a standby


def test_sticky_with_a_two_member_process_as_kafka() -> None:
    """Previous actives and standbys, one process with two members: Kafka 4.3.1's answer (run on
    its jar), ties within the process broken by its heap of members."""
    members = [
        member("a1", "p", active={("0", 0), ("1", 0), ("1", 1)}, standby={("1", 2)}),
        member("a2", "p", standby={("1", 3)}),
        member("b", "q", active={("1", 2), ("1", 3)}, standby={("1", 0)}),
        member("c", "r", standby={("1", 1)}),
    ]
    expected = {
        "a1": ({"0": [0], "1": [0, 1]}, {"1": [2, 4]}),
        "a2": ({"0": [3, 5], "1": [5]}, {"1": [3]}),
        "b": ({"1": [2, 3, 4]}, {"1": [0]}),
        "c": ({"0": [1, 2, 4]}, {"1": [1, 5]}),
    }
    result = assign(members, WORD_COUNT, 1)
    assert {m: (result[m].active, result[m].standby) for m in expected} == {
        m: (tasks(active), tasks(standby)) for m, (active, standby) in expected.items()
    }
