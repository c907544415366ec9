"""kafka-group-semantics §3: JoinGroup, rule by rule, as arithmetic on now_ms."""

from __future__ import annotations

import re
import uuid

import pytest

from mockbroker.coordinators.classic.group import DEAD
from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from tests.mockbroker.coordinators.groups_support import (
    RANGE,
    REBALANCE,
    SESSION,
    Harness,
    answered,
    assignment,
    error,
    subscription,
)

# -- §3.1 version deltas --------------------------------------------------------------------------


def test_v0_copies_the_session_timeout_into_the_rebalance_timeout() -> None:
    h = Harness()
    parked = h.join("g", version=0, session=7_000, rebalance=-1)
    assert isinstance(parked, Parked)  # v0-3 never get MEMBER_ID_REQUIRED
    h.advance(0)
    member_id = parked.result().member_id
    assert h.group().members[member_id].rebalance_timeout_ms == 7_000


def test_v1_keeps_its_own_rebalance_timeout() -> None:
    h = Harness()
    parked = h.join("g", version=1, session=7_000, rebalance=20_000)
    h.advance(0)
    assert h.group().members[answered(parked).member_id].rebalance_timeout_ms == 20_000


# -- §3.2 request checks, in order ------------------------------------------------------------------


def test_empty_group_id_is_invalid_group_id_with_the_member_id_echoed() -> None:
    h = Harness()
    response = answered(h.join("", "m-1"))
    assert (response.error_code, response.member_id) == (ErrorCode.INVALID_GROUP_ID, "m-1")
    # The group id is checked before the session timeout.
    assert error(h.join("", session=0)) == ErrorCode.INVALID_GROUP_ID


@pytest.mark.parametrize(("session", "expected"), [(5_999, 26), (6_000, 79), (1_800_000, 79), (1_800_001, 26)])
def test_session_timeout_must_lie_within_the_configured_bounds(session: int, expected: int) -> None:
    h = Harness(group_min_session_timeout_ms=6_000)
    response = answered(h.join("g", "", session=session))
    assert response.error_code == expected  # INVALID_SESSION_TIMEOUT (26) or MEMBER_ID_REQUIRED (79)


def test_the_maximum_session_timeout_is_configurable_too() -> None:
    h = Harness(group_max_session_timeout_ms=30_000)
    assert error(h.join("g", session=30_001)) == ErrorCode.INVALID_SESSION_TIMEOUT
    assert "g" not in h.groups.groups  # nothing created


def test_the_rebalance_timeout_is_never_validated() -> None:
    h = Harness()
    assert error(h.join("g", rebalance=-5)) == ErrorCode.MEMBER_ID_REQUIRED


def test_an_unknown_group_with_a_member_id_is_unknown_member_id() -> None:
    h = Harness()
    response = answered(h.join("g", "ghost"))
    assert (response.error_code, response.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "ghost")
    assert "g" not in h.groups.groups


def test_group_max_size_caps_new_members_of_a_stable_group() -> None:
    h = Harness(group_max_size=2)
    h.stable_group(members=2)
    response = answered(h.join("g", "", client_id="third"))
    assert (response.error_code, response.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")


def test_group_max_size_accepts_anyone_into_an_empty_group() -> None:
    h = Harness(group_max_size=1)
    assert error(h.join("g", client_id="a")) == ErrorCode.MEMBER_ID_REQUIRED
    assert error(h.join("g", client_id="b")) == ErrorCode.MEMBER_ID_REQUIRED  # still Empty: pending ids only


def test_group_max_size_in_preparing_rebalance_counts_parked_members() -> None:
    h = Harness(group_max_size=2, group_initial_rebalance_delay_ms=3_000)
    h.join_new(client_id="a")
    h.join_new(client_id="b")
    assert h.state() == "PreparingRebalance"
    assert error(h.join("g", client_id="c")) == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_group_max_size_removes_a_rejected_existing_member() -> None:
    h = Harness(group_max_size=3)
    leader, f1, f2 = h.stable_group(members=3)
    # The limit drops to 2 (a broker restart with a new config, say); a rebalance starts.
    h.groups.classic.config = type(h.groups.config)(**{**_fields(h.groups.config), "group_max_size": 2})
    h.join("g", leader)
    h.join("g", f1)
    assert h.group().num_awaiting_join_response() == 2
    response = answered(h.join("g", f2))
    assert (response.error_code, response.member_id) == (ErrorCode.GROUP_MAX_SIZE_REACHED, "")
    assert f2 not in h.group().members
    assert h.events("member.removed")[-1].details["cause"] == "group_max_size"


def _fields(config: object) -> dict[str, object]:
    import dataclasses

    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}  # type: ignore[arg-type]


def test_a_new_member_of_a_dead_group_gets_coordinator_not_available() -> None:
    h = Harness()
    h.join("g")
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")  # Dead but still present
    response = answered(h.join("g", ""))
    assert (response.error_code, response.member_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, "")


def test_an_existing_member_of_a_dead_group_gets_coordinator_not_available_with_its_id() -> None:
    h = Harness()
    leader, _ = h.stable_group()
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")
    response = answered(h.join("g", leader))
    assert (response.error_code, response.member_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, leader)


# -- §3.3 protocol type and protocols ----------------------------------------------------------------


@pytest.mark.parametrize(("protocol_type", "protocols"), [("", RANGE), ("consumer", ())])
def test_an_empty_group_needs_a_protocol_type_and_protocols(protocol_type: str, protocols: tuple) -> None:  # type: ignore[type-arg]
    h = Harness()
    response = answered(h.join("g", protocol_type=protocol_type, protocols=protocols))
    assert (response.error_code, response.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")


def test_an_empty_group_accepts_any_protocol_type_and_the_first_member_sets_it() -> None:
    h = Harness()
    parked = h.join_new(protocol_type="connect", protocols=(("default", b"x"),))
    h.advance(0)
    assert (answered(parked).protocol_type, answered(parked).protocol_name) == ("connect", "default")
    assert h.group().protocol_type == "connect"


def test_a_different_protocol_type_is_inconsistent() -> None:
    h = Harness()
    h.stable_group()
    assert error(h.join("g", protocol_type="connect")) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_newcomer_must_share_a_protocol_with_every_member() -> None:
    h = Harness()
    h.stable_group()  # both on "range"
    assert error(h.join("g", protocols=(("roundrobin", b""),))) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert error(h.join("g", protocols=(("roundrobin", b""), ("range", b"")))) == ErrorCode.MEMBER_ID_REQUIRED


def test_a_sole_member_switching_protocols_is_inconsistent_its_old_list_counts() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1, protocols=(("A", b""),))
    response = answered(h.join("g", only, protocols=(("B", b""),)))
    assert (response.error_code, response.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, only)


def test_the_protocol_with_most_first_choice_votes_among_common_ones_wins() -> None:
    h = Harness()
    a = h.join_new(client_id="a", protocols=(("roundrobin", b"1"), ("range", b"1")))
    b = h.join_new(client_id="b", protocols=(("range", b"2"), ("roundrobin", b"2"), ("sticky", b"2")))
    c = h.join_new(client_id="c", protocols=(("range", b"3"), ("roundrobin", b"3")))
    h.advance(0)
    assert {answered(p).protocol_name for p in (a, b, c)} == {"range"}
    leader = next(answered(p) for p in (a, b, c) if answered(p).members)
    assert {m.metadata for m in leader.members} == {b"1", b"2", b"3"}  # metadata of the chosen protocol


def test_a_tied_vote_goes_to_the_earliest_members_choice() -> None:
    h = Harness()
    h.join_new(client_id="a", protocols=(("roundrobin", b""), ("range", b"")))
    h.join_new(client_id="b", protocols=(("range", b""), ("roundrobin", b"")))
    h.advance(0)
    assert h.group().protocol_name == "roundrobin"


# -- §3.4 member ids ----------------------------------------------------------------------------------

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def test_member_ids_are_client_id_or_instance_id_dash_uuid4() -> None:
    h = Harness()
    h.groups.classic.new_uuid = lambda: str(uuid.uuid4())  # the real generator, not the harness's counter
    dynamic = answered(h.join("g", client_id="my-client")).member_id
    assert re.fullmatch(f"my-client-{UUID}", dynamic)
    static = h.join("g", instance="instance-7", client_id="my-client")
    h.advance(0)
    assert re.fullmatch(f"instance-7-{UUID}", answered(static).member_id)


# -- §3.5 KIP-394 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 5, 6, 7, 8, 9])
def test_v4_and_later_a_dynamic_newcomer_gets_member_id_required(version: int) -> None:
    h = Harness()
    response = h.join("g", version=version)
    assert response == JoinGroupResponse(
        error_code=ErrorCode.MEMBER_ID_REQUIRED,
        generation_id=-1,
        protocol_type=None,
        protocol_name="",
        leader="",
        skip_assignment=False,
        member_id="client-uuid-1",
        members=[],
    )
    assert h.group().pending_join_members == {"client-uuid-1": None}
    assert h.state() == "Empty"  # a pending member does not move the group
    assert h.groups.list_groups()[0].group_state == "Empty"


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_before_v4_a_newcomer_is_added_at_once(version: int) -> None:
    h = Harness()
    assert isinstance(h.join("g", version=version), Parked)
    assert h.state() == "PreparingRebalance"


def test_static_members_never_get_member_id_required() -> None:
    h = Harness()
    assert isinstance(h.join("g", instance="i-1"), Parked)


def test_a_pending_id_expires_after_the_session_timeout_of_its_request() -> None:
    h = Harness()
    pending = answered(h.join("g", session=8_000)).member_id
    h.advance(7_999)
    assert h.group().is_pending_member(pending)
    h.advance(1)
    assert not h.group().is_pending_member(pending)
    assert [(e.member_id, e.details["kind"]) for e in h.events("member.expired")] == [(pending, "pending")]
    assert error(h.join("g", pending)) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_pending_member_rejoining_with_its_id_becomes_a_member() -> None:
    h = Harness()
    pending = answered(h.join("g")).member_id
    parked = h.join("g", pending)
    assert isinstance(parked, Parked)
    assert pending in h.group().members and not h.group().pending_join_members
    h.advance(0)
    assert answered(parked).member_id == pending and answered(parked).generation_id == 1


def test_pending_members_block_a_non_initial_join_completion_until_they_expire() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    pending = answered(h.join("g", client_id="late", session=5_000)).member_id
    h.join("g", leader)  # the leader rejoins: a rebalance
    h.join("g", follower)
    assert h.state() == "PreparingRebalance"  # everyone joined, but a pending id is outstanding
    h.advance(5_000)  # the pending id expires; the join phase completes
    assert h.state() == "CompletingRebalance"
    assert pending not in h.group().members


def test_a_pending_member_that_rejoins_completes_the_rebalance() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    pending = answered(h.join("g", client_id="late")).member_id
    h.join("g", leader)
    h.join("g", follower)
    late = h.join("g", pending)
    assert h.state() == "CompletingRebalance"
    assert answered(late).generation_id == 2 and len(h.group().members) == 3


def test_a_pending_member_that_rejoins_with_an_instance_id_is_a_broker_side_error() -> None:
    h = Harness()
    pending = answered(h.join("g")).member_id
    assert error(h.join("g", pending, instance="i-1")) == ErrorCode.UNKNOWN_SERVER_ERROR


# -- §3.6 adding members; the initial rebalance delay ------------------------------------------------


def test_the_first_member_added_becomes_leader() -> None:
    h = Harness()
    first = h.join_new(client_id="first")
    h.join_new(client_id="second")
    h.advance(0)
    assert answered(first).leader == answered(first).member_id
    assert len(answered(first).members) == 2


def test_the_initial_rebalance_waits_the_delay_even_when_everyone_joined() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3_000)
    parked = h.join_new(rebalance=REBALANCE)
    h.advance(2_999)
    assert not parked.done() and h.state() == "PreparingRebalance"
    h.advance(1)
    assert answered(parked).generation_id == 1 and h.state() == "CompletingRebalance"


def test_each_newcomer_during_the_initial_delay_extends_it_by_up_to_the_delay() -> None:
    # D = 3000, group rebalance timeout 10000: R = 7000 at first.
    h = Harness(group_initial_rebalance_delay_ms=3_000)
    first = h.join_new(client_id="a", rebalance=10_000)
    h.advance(2_000)
    h.join_new(client_id="b", rebalance=10_000)  # newcomer: the timer at 3000 re-arms for 3000 more
    h.advance(1_000)  # t=3000: extended (R 7000 -> 4000)
    assert not first.done()
    h.advance(2_000)
    h.join_new(client_id="c", rebalance=10_000)  # t=5000: another newcomer
    h.advance(1_000)  # t=6000: extended again, by min(3000, 4000) (R 4000 -> 1000)
    assert not first.done()
    h.advance(2_999)
    assert not first.done()
    h.advance(1)  # t=9000: nobody new since, the first generation forms
    assert answered(first).generation_id == 1 and len(answered(first).members) == 3
    assert [(e.details["delay_ms"], e.details["remaining_ms"]) for e in h.events("group.initial_rebalance_extended")] == [
        (3_000, 4_000),
        (3_000, 1_000),
    ]


def test_the_extension_stops_when_the_remaining_budget_is_spent() -> None:
    # D = 3000, rebalance timeout 4000: R = 1000; one extension of min(3000, 1000), then R = 0.
    h = Harness(group_initial_rebalance_delay_ms=3_000)
    first = h.join_new(client_id="a", rebalance=4_000)
    h.advance(1_000)
    h.join_new(client_id="b", rebalance=4_000)
    h.advance(2_000)  # t=3000: extended by 1000
    h.join_new(client_id="c", rebalance=4_000)
    h.advance(1_000)  # t=4000: R is 0 now: complete despite the newcomer
    assert answered(first).generation_id == 1 and len(h.group().members) == 3


def test_the_java_defaults_worked_example_budget_is_297_seconds() -> None:
    # D = 3000, rebalance timeout = max.poll.interval.ms = 300000: R = 297000, so a newcomer in
    # every 3 s window keeps extending the wait, up to 3000 + 297000 ms in all.
    h = Harness(kafka_defaults=True)
    h.join_new(session=45_000, rebalance=300_000)
    for i in range(200):
        h.advance(2_900)
        if h.state() != "PreparingRebalance":
            break
        h.join_new(client_id=f"n{i}", session=45_000, rebalance=300_000)
    (formed,) = [e for e in h.events("group.transition") if e.details["to_state"] == "CompletingRebalance"]
    assert formed.time_ms - h.start_ms == 300_000
    assert len(h.events("group.initial_rebalance_extended")) == 99


def test_a_new_member_parked_longer_than_5_minutes_is_removed_with_unknown_member_id() -> None:
    h = Harness()
    _leader, _follower = h.stable_group(session=400_000, rebalance=600_000)
    newcomer = h.join_new(client_id="new", session=400_000, rebalance=600_000)  # rebalance; the others never rejoin
    h.advance(299_999)
    assert not newcomer.done()
    h.advance(1)
    response = answered(newcomer)
    assert (response.error_code, response.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "")
    assert [e.details["kind"] for e in h.events("member.expired")] == ["new_member_join_timeout"]


# -- §3.7 completing the join phase ----------------------------------------------------------------------


def test_a_one_member_group_whose_leader_rejoins_completes_at_once() -> None:
    h = Harness()
    (leader,) = h.stable_group(members=1)
    response = answered(h.join("g", leader))
    assert (response.error_code, response.generation_id, response.leader) == (0, 2, leader)
    assert h.state() == "CompletingRebalance"


def test_the_join_phase_ends_at_the_rebalance_timeout_from_its_start_dropping_absent_dynamic_members() -> None:
    h = Harness()
    leader, follower = h.stable_group(session=30_000, rebalance=20_000)
    parked = h.join("g", leader, session=30_000, rebalance=20_000)  # the leader rejoins: rebalance starts now
    h.advance(19_999)
    assert not answered_now(parked)
    h.advance(1)
    response = answered(parked)
    assert response.generation_id == 2 and [m.member_id for m in response.members] == [leader]
    assert follower not in h.group().members
    assert h.events("member.removed")[-1].details["cause"] == "not_rejoined"


def answered_now(result: object) -> bool:
    return not isinstance(result, Parked) or result.done()


def test_the_last_expected_member_rejoining_completes_the_phase() -> None:
    h = Harness()
    leader, f1, f2 = h.stable_group(members=3)
    h.join("g", leader)
    h.join("g", f1)
    assert h.state() == "PreparingRebalance"
    last = answered(h.join("g", f2))
    assert last.generation_id == 2 and h.state() == "CompletingRebalance"


def test_a_leader_that_did_not_rejoin_is_replaced_by_the_first_member_that_did() -> None:
    h = Harness()
    _leader, f1, f2 = h.stable_group(members=3, session=30_000, rebalance=10_000)
    h.join_new(client_id="new", session=30_000, rebalance=10_000)
    p1 = h.join("g", f1, session=30_000, rebalance=10_000)
    p2 = h.join("g", f2, session=30_000, rebalance=10_000)
    h.advance(10_000)
    assert answered(p1).leader == f1 and answered(p2).leader == f1
    assert answered(p1).members and not answered(p2).members  # only the leader gets the list


def test_static_members_that_did_not_rejoin_stay_in_the_leaders_list() -> None:
    h = Harness()
    static = h.join("g", instance="s-1", session=60_000, rebalance=10_000, protocols=(("range", subscription("a")),))
    dynamic = h.join_new(client_id="d", rebalance=10_000)
    h.advance(0)
    static_id = answered(static).member_id
    dynamic_id = answered(dynamic).member_id
    # A rebalance in which only the dynamic member rejoins.
    h.join_new(client_id="e", rebalance=10_000)
    parked = h.join("g", dynamic_id, rebalance=10_000)
    h.advance(10_000)
    members = answered(parked).members
    assert JoinGroupResponseMember(static_id, "s-1", subscription("a")) in members
    assert static_id in h.group().members and static_id in h.group().pending_sync_members


def test_completion_is_postponed_when_only_absent_static_members_remain() -> None:
    h = Harness()
    static = h.join("g", instance="s-1", session=60_000, rebalance=10_000)
    dynamic = h.join_new(client_id="d", rebalance=10_000)
    h.advance(0)
    static_id, dynamic_id = answered(static).member_id, answered(dynamic).member_id
    h.sync("g", static_id, 1, {static_id: b"", dynamic_id: b""} if h.group().is_leader(static_id) else None)
    h.sync("g", dynamic_id, 1, {static_id: b"", dynamic_id: b""} if h.group().is_leader(dynamic_id) else None)
    assert h.state() == "Stable"
    h.leave("g", dynamic_id)  # rebalance; the static member never rejoins
    h.advance(10_000)
    assert h.state() == "PreparingRebalance" and h.group().generation_id == 1
    assert h.events("group.join_postponed")
    h.advance(10_000)  # postponed again, and again, until its session expires
    assert h.state() == "PreparingRebalance"
    h.advance(60_000 - 20_000)
    assert h.state() == "Empty" and h.group().generation_id == 2


def test_join_completion_rearms_sessions_and_expects_a_sync_from_everyone() -> None:
    h = Harness()
    a = h.join_new(client_id="a", session=SESSION, rebalance=30_000)
    b = h.join_new(client_id="b", session=SESSION, rebalance=30_000)
    h.advance(0)
    group = h.group()
    assert set(group.pending_sync_members) == {answered(a).member_id, answered(b).member_id}
    assert not any(m.is_new for m in group.members.values())
    assert h.groups.timers.deadline(("classic-group-sync", "g")) == h.now + 30_000


# -- §3.8 an existing member's JoinGroup, by state ------------------------------------------------------------


def test_a_second_parked_join_replaces_the_first_which_is_never_answered() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    first = h.join("g", leader)
    assert isinstance(first, Parked)
    second = h.join("g", leader)
    h.join("g", follower)
    assert answered(second).generation_id == 2
    assert isinstance(first, Parked) and not first.done()


def test_completing_rebalance_same_metadata_answers_at_once_with_the_current_generation() -> None:
    h = Harness()
    a = h.join_new(client_id="a")
    b = h.join_new(client_id="b")
    h.advance(0)
    leader = answered(a).leader
    follower = answered(b).member_id if answered(b).member_id != leader else answered(a).member_id
    again = answered(h.join("g", leader))
    assert (again.generation_id, len(again.members)) == (1, 2)
    assert answered(h.join("g", follower)).members == []
    assert h.state() == "CompletingRebalance"


def test_completing_rebalance_changed_metadata_rebalances_and_fails_parked_syncs() -> None:
    h = Harness()
    a = h.join_new(client_id="a")
    b = h.join_new(client_id="b")
    h.advance(0)
    leader = answered(a).leader
    follower = next(answered(p).member_id for p in (a, b) if answered(p).member_id != leader)
    parked_sync = h.sync("g", follower, 1)
    assert isinstance(parked_sync, Parked) and not parked_sync.done()
    h.join("g", leader, protocols=(("range", subscription("t", "u")),))
    assert h.state() == "PreparingRebalance"
    response = answered(parked_sync)
    assert (response.error_code, response.assignment, response.protocol_name) == (ErrorCode.REBALANCE_IN_PROGRESS, b"", None)
    assert not h.group().pending_sync_members


def test_stable_leader_rejoin_always_rebalances() -> None:
    h = Harness()
    leader, _follower = h.stable_group()
    assert isinstance(h.join("g", leader), Parked)
    assert h.state() == "PreparingRebalance"
    assert "Leader" in h.events("group.transition")[-1].reason


def test_stable_follower_with_the_same_metadata_gets_the_current_generation() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    response = answered(h.join("g", follower))
    assert (response.error_code, response.generation_id, response.leader, response.members) == (0, 1, leader, [])
    assert h.state() == "Stable"


def test_stable_follower_with_changed_metadata_rebalances() -> None:
    h = Harness()
    _leader, follower = h.stable_group()
    assert isinstance(h.join("g", follower, protocols=(("range", subscription("t", "u")),)), Parked)
    assert h.state() == "PreparingRebalance"


def test_a_rebalance_from_completing_rebalance_resets_every_stored_assignment() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    assert h.group().members[follower].assignment == assignment(t=[1])
    h.join("g", leader)
    h.join("g", follower)
    assert h.state() == "CompletingRebalance"
    h.join_new(client_id="x")  # a newcomer: rebalance from CompletingRebalance
    assert all(m.assignment == b"" for m in h.group().members.values())


# -- §3.9 error-response shape ----------------------------------------------------------------------------


def test_membership_errors_echo_the_member_id_and_null_the_protocol() -> None:
    h = Harness()
    h.stable_group()
    response = answered(h.join("g", "not-a-member"))
    assert response == JoinGroupResponse(
        error_code=ErrorCode.UNKNOWN_MEMBER_ID, member_id="not-a-member", protocol_type=None, protocol_name=None
    )


def test_a_fenced_static_member_learns_it_on_join() -> None:
    h = Harness()
    first = h.join("g", instance="i-1")
    h.advance(0)
    old_id = answered(first).member_id
    replacement = h.join("g", instance="i-1")  # bounced: a new id for i-1
    new_id = answered(replacement).member_id
    assert new_id != old_id
    response = answered(h.join("g", old_id, instance="i-1"))
    assert (response.error_code, response.member_id) == (ErrorCode.FENCED_INSTANCE_ID, old_id)
    assert error(h.join("g", old_id)) == ErrorCode.UNKNOWN_MEMBER_ID  # the old id without the instance id
    assert error(h.join("g", new_id, instance="i-unknown")) == ErrorCode.UNKNOWN_MEMBER_ID


def test_rebalance_timeout_of_the_group_is_the_largest_of_its_members() -> None:
    h = Harness()
    h.join_new(client_id="a", rebalance=5_000)
    h.join_new(client_id="b", rebalance=40_000)
    h.advance(0)
    assert h.group().rebalance_timeout_ms() == 40_000
    assert SESSION == 10_000
