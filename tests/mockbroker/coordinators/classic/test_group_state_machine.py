"""kafka-group-semantics §2: the classic group state machine, its table and its one door."""

from __future__ import annotations

import pytest

from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    VALID_PREVIOUS_STATES,
    ClassicGroup,
    ClassicGroupState,
    IllegalStateTransition,
)
from mockbroker_protocol.errors import ErrorCode
from tests.mockbroker.coordinators.groups_support import Harness, answered, assignment


def test_the_transition_table_is_the_rulebooks() -> None:
    assert {
        EMPTY: {PREPARING_REBALANCE},
        PREPARING_REBALANCE: {EMPTY, STABLE, COMPLETING_REBALANCE},
        COMPLETING_REBALANCE: {PREPARING_REBALANCE},
        STABLE: {COMPLETING_REBALANCE},
        DEAD: set(ClassicGroupState),
    } == VALID_PREVIOUS_STATES
    assert [s.value for s in ClassicGroupState] == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (EMPTY, COMPLETING_REBALANCE),
        (EMPTY, STABLE),
        (STABLE, EMPTY),
        (COMPLETING_REBALANCE, EMPTY),
        (PREPARING_REBALANCE, STABLE),
        (STABLE, COMPLETING_REBALANCE),
    ],
)
def test_the_door_refuses_what_the_table_forbids(source: ClassicGroupState, target: ClassicGroupState) -> None:
    h = Harness()
    group = ClassicGroup("g", h.now)
    group.state = source
    with pytest.raises(IllegalStateTransition):
        h.groups.classic._transition(group, target, h.now, "test")
    assert group.state is source


def test_a_new_group_is_empty_with_generation_0_and_previous_state_dead() -> None:
    h = Harness()
    h.join("g")  # MEMBER_ID_REQUIRED: the group exists, Empty
    group = h.group()
    assert (group.state, group.previous_state, group.generation_id, group.protocol_type) == (EMPTY, DEAD, 0, None)
    created = h.events("group.created")
    assert [(e.group_id, e.reason) for e in created] == [("g", "JoinGroup with an empty member id")]


def test_every_transition_of_a_lifecycle_goes_through_the_door_with_a_reason() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    h.leave("g", follower, leader)
    assert h.transitions() == [
        ("Empty", "PreparingRebalance"),
        ("PreparingRebalance", "CompletingRebalance"),
        ("CompletingRebalance", "Stable"),
        ("Stable", "PreparingRebalance"),
        ("PreparingRebalance", "Empty"),
    ]
    events = h.events("group.transition")
    assert all(e.reason for e in events)
    assert events[0].reason.startswith(f"Adding new member {leader} with group instance id null")
    assert events[1].details["members"] == [leader, follower]
    assert events[1].generation_id == 1
    assert events[3].reason == f"explicit `LeaveGroup` request for ({follower}, {leader}) members."
    # The last member leaving: PreparingRebalance then Empty at once, with generation + 1 (§2).
    assert events[4].generation_id == 2
    assert h.group().protocol_name is None and h.group().protocol_type == "consumer"


def test_the_state_timestamp_is_when_the_group_entered_its_state() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.advance(5_000)
    h.leave("g", leader, follower)
    assert h.group().state_timestamp_ms == h.now


def test_the_last_member_timing_out_takes_the_group_to_empty_with_a_new_generation() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1)
    assert h.group().generation_id == 1
    h.advance(10_000)  # the session timeout, no heartbeat
    assert h.state() == "Empty"
    assert h.group().generation_id == 2
    assert h.transitions()[-2:] == [("Stable", "PreparingRebalance"), ("PreparingRebalance", "Empty")]
    assert h.heartbeat("g", only, 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_deleted_group_passes_through_dead_and_is_removed() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.leave("g", leader, follower)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NONE
    assert h.transitions()[-1] == ("Empty", "Dead")
    assert "g" not in h.groups.groups
    # Later lookups behave as "group not found".
    assert answered(h.sync("g", leader, 2)).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert answered(h.join("g", leader)).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_simple_group_is_created_empty_by_a_generation_minus_one_commit() -> None:
    h = Harness()
    h.cluster.create_topic("t", 2)
    h.commit("simple", {("t", 0): 5})
    group = h.group("simple")
    assert (group.state, group.generation_id, group.protocol_type) == (EMPTY, 0, None)
    assert h.events("group.created")[0].reason == "OffsetCommit with generation -1 (simple group)"


def test_state_by_state_what_a_member_request_gets() -> None:
    """The §2 summary table, row by row, for one existing member."""
    h = Harness()
    leader, follower = h.stable_group()
    # Stable: heartbeat NONE, sync returns the current assignment, commit allowed.
    assert h.heartbeat("g", follower, 1) == ErrorCode.NONE
    assert answered(h.sync("g", follower, 1)).assignment == assignment(t=[1])
    assert h.commit("g", {("t", 0): 1}, generation=1, member_id=follower)[0].partitions[0].error_code == 0
    # PreparingRebalance (a new member joins): heartbeat and sync REBALANCE_IN_PROGRESS, commit allowed.
    h.join_new(client_id="c-new")
    assert h.state() == "PreparingRebalance"
    assert h.heartbeat("g", follower, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert answered(h.sync("g", follower, 1)).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.commit("g", {("t", 0): 2}, generation=1, member_id=follower)[0].partitions[0].error_code == 0
    # CompletingRebalance: heartbeat NONE (new generation), commit REBALANCE_IN_PROGRESS, sync parks.
    h.join("g", leader)
    h.join("g", follower)
    assert h.state() == "CompletingRebalance"
    assert h.heartbeat("g", follower, 2) == ErrorCode.NONE
    assert h.commit("g", {("t", 0): 3}, generation=2, member_id=follower)[0].partitions[0].error_code == (
        ErrorCode.REBALANCE_IN_PROGRESS
    )
    assert not answered_now(h.sync("g", follower, 2))


def answered_now(result: object) -> bool:
    from mockbroker.coordinators.parked import Parked

    return not isinstance(result, Parked) or result.done()
