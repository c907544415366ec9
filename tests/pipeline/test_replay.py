"""mockbroker_pipeline.replay on the coordinator's own events, driven request by request on a ManualClock
(tests/mockbroker/coordinators/groups_support.Harness): every time in the log is known, so durations and
per-member times without partitions are checked to the millisecond. No Spark here."""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.parked import Parked
from mockbroker_pipeline.replay import (
    COOPERATIVE,
    COOPERATIVE_FOLLOWUP,
    EAGER,
    JOIN,
    LEAVE,
    UNKNOWN,
    member_protocol,
    replay,
)
from mockbroker_protocol.errors import ErrorCode
from tests.mockbroker.coordinators.groups_support import Harness, assignment, subscription


def _events(h: Harness, group: str = "g") -> list[dict[str, Any]]:
    return [e.to_json() for e in h.events(group_id=group)]


def _ok(result: Any) -> Any:
    answered = result.result() if isinstance(result, Parked) else result
    assert answered.error_code == ErrorCode.NONE, answered
    return answered


def _rejoin(h: Harness, member: str, protocols: tuple[tuple[str, bytes], ...]) -> Parked[Any]:
    parked = h.join("g", member, protocols=protocols)
    assert isinstance(parked, Parked) or parked.error_code == ErrorCode.NONE, parked
    return parked  # type: ignore[return-value]


def test_eager_join_every_member_revokes_and_waits_from_its_rejoin() -> None:
    h = Harness()
    protocols = (("range", subscription("t")),)
    a, b = h.stable_group(members=2, protocols=protocols)  # generation 1: a has t-0, b has t-1
    t0 = h.now
    h.advance(100)
    newcomer = h.join_new("g", client_id="c2", protocols=protocols)  # t0+100: PreparingRebalance
    h.advance(50)
    ra = _rejoin(h, a, protocols)  # t0+150
    h.advance(50)
    rb = _rejoin(h, b, protocols)  # t0+200: everyone joined -> generation 2
    c = _ok(newcomer).member_id
    leader = _ok(ra).leader
    h.advance(100)  # t0+300: the leader syncs; Stable
    _ok(h.sync("g", leader, 2, {a: assignment(t=[0, 1]), b: assignment(t=[2]), c: assignment(t=[3])}))
    _ok(rb)

    rows = replay("g", _events(h))
    assert [r.generation_id for r in rows] == [1, 2]
    row = rows[1]
    assert (row.trigger, row.rebalance_protocol, row.outcome) == (JOIN, EAGER, "stable")
    assert (row.start_ms, row.formed_ms, row.end_ms) == (t0 + 100, t0 + 200, t0 + 300)
    assert row.duration_ms == 200
    assert (row.members_before, row.members_after, row.members_joined) == (2, 3, 1)
    # Eager: a and b revoke everything they held (one partition each).
    assert row.partitions_revoked == 2
    # t-1 went from b to a; t-0 stays with a; t-2, t-3 are new.
    assert row.partitions_moved == 1
    assert (row.max_partitions_per_member, row.min_partitions_per_member) == (2, 1)
    gaps = {m.member_id: m.time_without_partitions_ms for m in row.members}
    assert gaps == {a: 150, b: 100, c: 200}
    assert row.max_time_without_partitions_ms == 200 and row.total_time_without_partitions_ms == 450
    revoked = {m.member_id: m.revoked for m in row.members}
    assert revoked == {a: 1, b: 1, c: 0}


def test_cooperative_join_revokes_only_what_moves_then_follows_up() -> None:
    h = Harness()
    protocols = (("cooperative-sticky", subscription("t")),)
    a, b = h.stable_group(members=2, protocols=protocols)  # a: t-0, b: t-1
    # The leader rejoins (a metadata change) and hands out t-0..t-3: a 0, 1; b 2, 3.
    ra = _rejoin(h, a, protocols)
    _rejoin(h, b, protocols)
    gen = _ok(ra).generation_id
    _ok(h.sync("g", a, gen, {a: assignment(t=[0, 1]), b: assignment(t=[2, 3])}))
    _ok(h.sync("g", b, gen))
    start = h.now + 100
    h.advance(100)
    newcomer = h.join_new("g", client_id="c2", protocols=protocols)
    ra = _rejoin(h, a, protocols)
    _rejoin(h, b, protocols)
    c = _ok(newcomer).member_id
    revoke_gen = _ok(ra).generation_id
    h.advance(20)
    # The revoke generation: b gives up t-3 (it moves to c); nobody gets it yet.
    _ok(h.sync("g", a, revoke_gen, {a: assignment(t=[0, 1]), b: assignment(t=[2]), c: assignment(t=[])}))
    _ok(h.sync("g", b, revoke_gen)), _ok(h.sync("g", c, revoke_gen))
    h.advance(30)
    # The leader rejoins for the follow-up (the revoke done), the others follow; it hands t-3 to c.
    ra = _rejoin(h, a, protocols)
    _rejoin(h, b, protocols)
    _rejoin(h, c, protocols)
    follow_gen = _ok(ra).generation_id
    h.advance(5)
    _ok(h.sync("g", a, follow_gen, {a: assignment(t=[0, 1]), b: assignment(t=[2]), c: assignment(t=[3])}))

    rows = {r.generation_id: r for r in replay("g", _events(h))}
    assert follow_gen == revoke_gen + 1
    three, four = rows[revoke_gen], rows[follow_gen]
    assert (three.trigger, three.rebalance_protocol) == (JOIN, COOPERATIVE)
    assert three.start_ms == start and three.duration_ms == 20
    assert three.partitions_revoked == 1 and three.partitions_moved == 0
    assert {m.member_id: m.revoked for m in three.members} == {a: 0, b: 1, c: 0}
    assert three.members_without_partitions == 1
    assert (four.trigger, four.rebalance_protocol) == (COOPERATIVE_FOLLOWUP, COOPERATIVE)
    assert four.partitions_revoked == 0 and four.partitions_moved == 1
    # c waited from its join (start) until the follow-up's assignment; a and b never went without.
    assert {m.member_id: m.time_without_partitions_ms for m in four.members} == {a: None, b: None, c: 55}


def test_leave_and_an_empty_generation() -> None:
    h = Harness()
    a, b = h.stable_group(members=2)
    h.advance(40)
    h.leave("g", a, b)
    rows = replay("g", _events(h))
    last = rows[-1]
    assert (last.trigger, last.outcome, last.members_after, last.members_departed) == (LEAVE, "empty", 0, 2)
    assert last.duration_ms == 0


def test_member_protocol_follows_the_java_rule() -> None:
    assert member_protocol(["cooperative-sticky"]) == COOPERATIVE
    # One eager-only assignor among the offered ones makes the member eager.
    assert member_protocol(["cooperative-sticky", "range"]) == EAGER
    assert member_protocol(["range", "roundrobin"]) == EAGER
    assert member_protocol(["no-such-assignor"]) == UNKNOWN
    assert member_protocol([]) == UNKNOWN
