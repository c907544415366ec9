"""confluent-kafka (librdkafka) with the cooperative-sticky assignor: a member joining causes an
incremental rebalance (KIP-429). Existing members give up only the partitions that move to the
newcomer, each through an incremental revoke callback, and keep every other partition without
a revoke; the newcomer gets what was revoked. The coordinator never hands a partition to two
members in one generation.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.groups_support import (
    Members,
    check_wire,
    group_broker,
    group_events,
    last_seq,
    settle,
)
from tests.integration.support import BrokerThread

PARTITIONS = 12
ASSIGNOR = "cooperative-sticky"


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker()


def test_a_joining_member_revokes_only_what_moves(broker: BrokerThread) -> None:
    topic = group = "cooperative"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        c1 = members.start("confluent", "coop-1", assignor=ASSIGNOR)
        c2 = members.start("confluent", "coop-2", assignor=ASSIGNOR)
        before = settle(broker, members, [c1, c2], PARTITIONS)
        assert before.protocol_name == ASSIGNOR
        check_wire("confluent", broker, group, topic)
        owned = {m.client_id: before.by_client_id()[m.client_id].assignment for m in (c1, c2)}
        marks = {m.client_id: m.mark() for m in (c1, c2)}
        seq = last_seq(broker)

        c3 = members.start("confluent", "coop-3", assignor=ASSIGNOR)
        after = settle(broker, members, [c1, c2, c3], PARTITIONS)
        check_wire("confluent", broker, group, topic)

        revoked_to_newcomer: set[int] = set()
        for m in (c1, c2):
            since = marks[m.client_id]
            kept = after.by_client_id()[m.client_id].assignment
            revoked = {p for e in m.of("revoked", since=since) for p in e["removed"]}
            assert not m.of("lost", since=since), f"{m.client_id} lost its partitions"
            # Incremental: only some partitions were revoked, none of those it keeps...
            assert revoked, f"{m.client_id} gave nothing to the newcomer"
            assert revoked < owned[m.client_id], f"{m.client_id} revoked {sorted(revoked)} of {sorted(owned[m.client_id])}"
            assert not revoked & kept, f"{m.client_id} revoked partitions it kept: {sorted(revoked & kept)}"
            # ...and it kept everything else, without being handed anything new.
            assert kept == owned[m.client_id] - revoked
            added = {p for e in m.of("assigned", since=since) for p in e["added"]}
            assert not added, f"{m.client_id} was assigned {sorted(added)} in an incremental rebalance"
            revoked_to_newcomer |= revoked
        assert after.by_client_id()[c3.client_id].assignment == revoked_to_newcomer

        # The coordinator's side: the rebalance took two generations (revoke, then assign), and in
        # each one no partition was assigned to two members.
        assigned: dict[int, dict[str, list[int]]] = {}
        for e in group_events(broker, group, since_seq=seq):
            if e.type == "member.assigned" and e.generation_id is not None:
                assigned.setdefault(e.generation_id, {})[e.member_id or ""] = (e.details["assignment"] or {}).get(topic, [])
        assert after.generation_id >= before.generation_id + 2, (
            f"one generation for an incremental rebalance: {before.generation_id} -> {after.generation_id}"
        )
        for generation, by_member in assigned.items():
            flat = [p for parts in by_member.values() for p in parts]
            assert len(flat) == len(set(flat)), f"generation {generation} assigned a partition twice: {by_member}"
