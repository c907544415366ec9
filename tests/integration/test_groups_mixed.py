"""One consumer group, three client libraries: a kafka-python, an aiokafka and a confluent-kafka
member (each in its own process, all offering the range assignor) share a 12-partition topic.
Every partition is owned by exactly one of them, and each client's own DescribeGroups/ListGroups
agrees with the coordinator. Then a member of each library offering only roundrobin, a protocol
the group does not support, is refused with INCONSISTENT_GROUP_PROTOCOL (kafka-group-semantics
§3.3) and the group does not move.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.groups_support import (
    CLIENTS,
    Members,
    check_wire,
    group_broker,
    group_events,
    group_state,
    last_seq,
    settle,
)
from tests.integration.support import BrokerThread

PARTITIONS = 12
INCONSISTENT_GROUP_PROTOCOL = 23


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker()


def test_three_client_libraries_in_one_group(broker: BrokerThread) -> None:
    topic = group = "mixed"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        started = [members.start(client, f"mixed-{client}") for client in CLIENTS]
        view = settle(broker, members, started, PARTITIONS)
        assert (view.protocol_type, view.protocol_name) == ("consumer", "range")
        assert sorted(len(m.assignment) for m in view.members) == [4, 4, 4], view
        for client in CLIENTS:
            check_wire(client, broker, group, topic)

        # A member that offers only roundrobin cannot join a group whose members all speak range.
        seq = last_seq(broker)
        for client in CLIENTS:
            odd = members.start(client, f"odd-{client}", assignor="roundrobin")
            refused = odd.wait_event("error", where=lambda e: e.get("code") == INCONSISTENT_GROUP_PROTOCOL)
            assert refused["code"] == INCONSISTENT_GROUP_PROTOCOL, refused
            assert odd.assignment in (None, frozenset()), f"{odd.client_id} was given partitions"
            odd.close()
        # The group did not move: no new member, no rebalance, the same generation and owners.
        after = group_state(broker, group, topic)
        assert after is not None
        assert (after.state, after.generation_id) == ("Stable", view.generation_id)
        assert {m.client_id: m.assignment for m in after.members} == {m.client_id: m.assignment for m in view.members}
        moved = [f"{e.type} {e.reason}" for e in group_events(broker, group, since_seq=seq) if e.type != "offset.committed"]
        assert not moved, f"the refused members changed the group: {moved}"
        settle(broker, members, started, PARTITIONS)
