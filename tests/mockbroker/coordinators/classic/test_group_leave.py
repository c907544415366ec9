"""kafka-group-semantics §6: LeaveGroup (the coordinator's part; the v0-2 shaping is over the wire)."""

from __future__ import annotations

from mockbroker.coordinators.classic.group import DEAD
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.leave_group import MemberResponse
from tests.mockbroker.coordinators.groups_support import Harness, answered


def test_empty_group_id_is_invalid() -> None:
    assert Harness().leave("", "m") == (ErrorCode.INVALID_GROUP_ID, [])


def test_an_unknown_group_answers_none_on_top_and_unknown_member_id_per_member() -> None:
    h = Harness()
    assert h.leave("g", "m-1", ("", "i-1")) == (
        ErrorCode.NONE,
        [MemberResponse("m-1", None, ErrorCode.UNKNOWN_MEMBER_ID), MemberResponse("", "i-1", ErrorCode.UNKNOWN_MEMBER_ID)],
    )


def test_a_dead_group_is_coordinator_not_available() -> None:
    h = Harness()
    leader, _ = h.stable_group()
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")
    assert h.leave("g", leader) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, [])


def test_a_member_leaving_a_stable_group_starts_a_rebalance() -> None:
    h = Harness()
    _leader, _f1, f2 = h.stable_group(members=3)
    assert h.leave("g", f2) == (ErrorCode.NONE, [MemberResponse(f2, None, ErrorCode.NONE)])
    assert h.state() == "PreparingRebalance" and f2 not in h.group().members
    assert h.events("member.left")[-1].member_id == f2
    assert h.groups.timers.deadline(("classic-group-heartbeat", "g", f2)) is None


def test_the_last_member_leaving_empties_the_group_with_a_new_generation() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1)
    h.leave("g", only)
    assert (h.state(), h.group().generation_id) == ("Empty", 2)


def test_a_leaving_leader_is_succeeded_by_the_next_member() -> None:
    h = Harness()
    leader, f1, _f2 = h.stable_group(members=3)
    h.leave("g", leader)
    assert h.group().leader_id == f1


def test_a_parked_join_of_a_leaving_member_is_answered_unknown_member_id() -> None:
    h = Harness()
    leader, f1, _f2 = h.stable_group(members=3)
    h.join("g", leader)  # the leader rejoins: a rebalance
    parked = h.join("g", f1)  # f1 parked
    h.leave("g", f1)
    assert (answered(parked).error_code, answered(parked).member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "")


def test_a_leave_in_preparing_rebalance_may_complete_the_join_phase() -> None:
    h = Harness()
    leader, f1, f2 = h.stable_group(members=3)
    p_leader = h.join("g", leader)
    p_f1 = h.join("g", f1)
    h.leave("g", f2)  # the last one the phase waited for
    assert answered(p_leader).generation_id == 2 and answered(p_f1).generation_id == 2


def test_each_identity_is_answered_on_its_own() -> None:
    h = Harness()
    static = h.join("g", instance="i-1")
    h.advance(0)
    static_id = answered(static).member_id
    h.sync("g", static_id, 1, {})
    pending = answered(h.join("g", client_id="p")).member_id
    top, answers = h.leave("g", "stranger", ("", "i-unknown"), ("", None), pending, ("wrong-id", "i-1"))
    assert top == ErrorCode.NONE
    assert answers == [
        MemberResponse("stranger", None, ErrorCode.UNKNOWN_MEMBER_ID),
        MemberResponse("", "i-unknown", ErrorCode.UNKNOWN_MEMBER_ID),
        MemberResponse("", None, ErrorCode.UNKNOWN_MEMBER_ID),
        MemberResponse(pending, None, ErrorCode.NONE),  # a pending id is dropped
        MemberResponse("wrong-id", "i-1", ErrorCode.FENCED_INSTANCE_ID),
    ]
    assert not h.group().pending_join_members
    # A pending id counts as a success (§6.2 step 5): the Stable group rebalances.
    assert h.state() == "PreparingRebalance"


def test_admin_removal_by_instance_id_removes_the_static_member() -> None:
    h = Harness()
    static = h.join("g", instance="i-1")
    h.advance(0)
    static_id = answered(static).member_id
    h.sync("g", static_id, 1, {})
    assert h.leave("g", ("", "i-1")) == (ErrorCode.NONE, [MemberResponse("", "i-1", ErrorCode.NONE)])
    assert h.state() == "Empty" and not h.group().static_members


def test_a_static_member_leaving_by_member_id_only_is_removed() -> None:
    # KIP-1092's CloseOptions LEAVE_GROUP sends only the member id.
    h = Harness()
    static = h.join("g", instance="i-1")
    h.advance(0)
    static_id = answered(static).member_id
    h.sync("g", static_id, 1, {})
    assert h.leave("g", static_id)[1][0].error_code == ErrorCode.NONE
    assert "i-1" not in h.group().static_members
