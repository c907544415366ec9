"""Consumer groups with real clients: kafka-python, aiokafka and confluent-kafka, each in its own
processes, over loopback against a 3-broker cluster.

For each client:
- three members of a 12-partition topic: every partition owned by exactly one member;
- a fourth joins: a rebalance, and again exactly-once ownership;
- one closes (LeaveGroup): the survivors take its partitions;
- one is killed (SIGKILL: no LeaveGroup, its sockets just drop): once its session timeout has
  passed the coordinator removes it and the group rebalances without it;
- a static member (group.instance.id) restarts within its session timeout: no rebalance, the
  same generation, the same assignment (the group's leader first, then a follower).
Ownership is checked from both sides at every step: what each member's own rebalance callbacks
report, and the assignments the coordinator stored (``settle``). And at every step DescribeGroups
and ListGroups, sent by the same client's admin API, agree with the coordinator's state
(``check_wire``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.groups_support import (
    CLIENTS,
    Members,
    check_wire,
    explain_group,
    group_broker,
    group_events,
    group_state,
    last_seq,
    settle,
)
from tests.integration.support import DEADLINE_S, BrokerThread

PARTITIONS = 12
KILLED_SESSION_TIMEOUT_MS = 2000  # the killed member's own session timeout: what its death costs
STATIC_SESSION_TIMEOUT_MS = 30000  # static members: restarts happen well within it


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker()


@pytest.mark.parametrize("client", CLIENTS)
def test_members_join_leave_and_die(broker: BrokerThread, client: str) -> None:
    topic, group = f"lifecycle-{client}", f"lifecycle-{client}"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        # a. Three members: every partition owned by exactly one of them.
        m1 = members.start(client, f"{client}-1")
        m2 = members.start(client, f"{client}-2")
        m3 = members.start(client, f"{client}-3", session_timeout_ms=KILLED_SESSION_TIMEOUT_MS)
        three = settle(broker, members, [m1, m2, m3], PARTITIONS)
        assert (three.protocol_type, three.protocol_name) == ("consumer", "range")
        assert all(len(m.assignment) == PARTITIONS // 3 for m in three.members), three
        check_wire(client, broker, group, topic)

        # b. A fourth joins: a rebalance, a new generation, again exactly-once ownership.
        m4 = members.start(client, f"{client}-4")
        four = settle(broker, members, [m1, m2, m3, m4], PARTITIONS)
        assert four.generation_id > three.generation_id
        assert all(len(m.assignment) == PARTITIONS // 4 for m in four.members), four
        check_wire(client, broker, group, topic)

        # c. One closes: it leaves the group (LeaveGroup) and the survivors take its partitions.
        leaving = four.by_client_id()[m2.client_id]
        m2.close()
        three_again = settle(broker, members, [m1, m3, m4], PARTITIONS)
        assert three_again.generation_id > four.generation_id
        assert leaving.member_id not in three_again.by_member_id()
        taken = frozenset().union(*(m.assignment for m in three_again.members))
        assert leaving.assignment <= taken
        assert_left(broker, group, leaving.member_id)
        check_wire(client, broker, group, topic)

        # d. One is killed: no LeaveGroup; the coordinator notices only when its session times
        # out, and then rebalances the group without it.
        killed = three_again.by_client_id()[m3.client_id]
        m3.kill()
        two = settle(
            broker, members, [m1, m4], PARTITIONS, timeout=DEADLINE_S + KILLED_SESSION_TIMEOUT_MS / 1000
        )
        assert two.generation_id > three_again.generation_id
        assert killed.member_id not in two.by_member_id()
        assert_removed_by_session_expiry(broker, group, killed.member_id)
        check_wire(client, broker, group, topic)


def assert_removed_by_session_expiry(broker: BrokerThread, group: str, member_id: str) -> None:
    """The event log says why the killed member went: its session expired; it never left."""
    about = [e for e in group_events(broker, group) if e.member_id == member_id]
    told = [f"{e.type} {e.details} {e.reason}" for e in about]
    assert any(e.type == "member.expired" and e.details.get("kind") == "session_timeout" for e in about), (
        f"no event says member {member_id}'s session expired; its events: {told}"
    )
    assert not any(e.type == "member.left" for e in about), f"the killed member sent LeaveGroup? {told}"


def assert_left(broker: BrokerThread, group: str, member_id: str) -> None:
    """The event log says the closed member left by LeaveGroup."""
    about = [e for e in group_events(broker, group) if e.member_id == member_id]
    assert any(e.type == "member.left" for e in about), (
        f"no LeaveGroup from member {member_id}; its events: {[f'{e.type} {e.reason}' for e in about]}"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_static_member_restarts_without_rebalance(broker: BrokerThread, client: str) -> None:
    """A static member that closes (a static member sends no LeaveGroup) and comes back under the
    same group.instance.id within its session timeout takes its old place: the coordinator swaps
    in the new member id and hands it the old assignment, and nobody rebalances. First the
    group's leader restarts, then a follower."""
    topic, group = f"static-{client}", f"static-{client}"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        current = [
            members.start(
                client, f"{client}-static-{i}", instance_id=f"instance-{i}", session_timeout_ms=STATIC_SESSION_TIMEOUT_MS
            )
            for i in (1, 2, 3)
        ]
        view = settle(broker, members, current, PARTITIONS)
        check_wire(client, broker, group, topic)
        leader = next(m for m in current if view.by_client_id()[m.client_id].member_id == view.leader_id)
        follower = next(m for m in current if m is not leader)
        for target in (leader, follower):
            before = settle(broker, members, current, PARTITIONS)
            old = before.by_client_id()[target.client_id]
            others = [m for m in current if m is not target]
            marks = {m.client_id: m.mark() for m in others}
            seq = last_seq(broker)

            target.close()
            # No LeaveGroup: once close() has returned the coordinator still has the member, and the
            # group has not moved.
            after_close = group_state(broker, group, topic)
            assert after_close is not None
            assert (after_close.state, after_close.generation_id) == ("Stable", before.generation_id), (
                explain_group(broker, group, topic, members)
            )
            assert old.member_id in after_close.by_member_id(), "the static member left the group on close"
            check_wire(client, broker, group, topic)

            restarted = members.start(
                client,
                target.client_id,
                instance_id=target.instance_id,
                session_timeout_ms=STATIC_SESSION_TIMEOUT_MS,
            )
            current = [*others, restarted]
            after = settle(broker, members, current, PARTITIONS)
            back = after.by_client_id()[target.client_id]
            assert after.generation_id == before.generation_id, explain_group(broker, group, topic, members)
            assert back.member_id != old.member_id, "the restarted static member kept its old member id"
            assert back.group_instance_id == old.group_instance_id
            assert back.assignment == old.assignment
            assert {m.client_id: m.assignment for m in after.members} == {
                m.client_id: m.assignment for m in before.members
            }
            # No rebalance anywhere: the other members' callbacks did not fire, and the group never
            # left Stable.
            for m in others:
                fired = m.of("assigned", "revoked", "lost", since=marks[m.client_id])
                assert not fired, f"{m.client_id} went through a rebalance: {fired}"
            since = group_events(broker, group, since_seq=seq)
            moved = [f"{e.details} {e.reason}" for e in since if e.type == "group.transition"]
            assert not moved, f"the restart moved the group: {moved}"
            replaced = [e for e in since if e.type == "member.replaced"]
            assert [(e.member_id, e.details["old_member_id"]) for e in replaced] == [(back.member_id, old.member_id)]
            check_wire(client, broker, group, topic)
