"""Mixed groups with real clients (kafka-group-semantics §10.8): kafka-python consumers (the
classic protocol) and confluent-kafka consumers with group.protocol=consumer in one group id on
one 12-partition topic.

- Online upgrade: a Stable classic group of kafka-python members becomes a consumer group when a
  consumer-protocol member joins; the classic members stay, served by the consumer engine
  (JoinGroup/SyncGroup/Heartbeat), and every partition ends up owned exactly once.
- Online downgrade: when that member leaves, the group becomes a classic group again and the
  classic members rebalance among themselves.
- group.consumer.migration.policy=disabled: the kafka-python member is refused with
  INCONSISTENT_GROUP_PROTOCOL and the consumer group does not move.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.integration.groups_support import Members, group_broker, group_state, settle
from tests.integration.support import BrokerThread, wait_for
from tests.integration.test_consumer_groups import KIP848_SETTINGS, partitions_of, snapshot, start
from tests.integration.test_consumer_groups import settle as settle_consumer_group

PARTITIONS = 12
INCONSISTENT_GROUP_PROTOCOL = 23


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker(**KIP848_SETTINGS)


@pytest.fixture
def disabled_broker() -> Iterator[BrokerThread]:
    yield from group_broker(**KIP848_SETTINGS, group_consumer_migration_policy="disabled")


def new_group(broker: BrokerThread) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    topic = f"mixed-{suffix}"
    broker.create_topic(topic, PARTITIONS)
    return f"group-{suffix}", topic


def events(broker: BrokerThread, type: str, group: str) -> list[object]:
    return broker.call(lambda: broker.cluster.events.filter(type, group))  # type: ignore[union-attr]


def test_upgrade_when_a_consumer_member_joins_and_downgrade_when_it_leaves(broker: BrokerThread) -> None:
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        classic = [members.start("kafka-python", f"classic-{i}") for i in range(2)]
        before = settle(broker, members, classic, PARTITIONS)  # a Stable classic group, 6 + 6
        assert before.protocol_name == "range"

        # Upgrade: the consumer-protocol member's first heartbeat converts the group.
        modern = start(members, "modern-0")
        snap = settle_consumer_group(broker, members, [*classic, modern])
        protocols = {m["client_id"]: m["protocol"] for m in snap["members"]}
        assert protocols == {"classic-0": "classic", "classic-1": "classic", "modern-0": "consumer"}
        assert sorted(len(partitions_of(m["assigned"], topic)) for m in snap["members"]) == [4, 4, 4]  # uniform
        assert group_state(broker, group, topic) is None  # no classic group any more
        assert len(events(broker, "consumer_group.upgraded", group)) == 1

        # Downgrade: the last consumer-protocol member leaves; the classic members rebalance alone.
        modern.close()
        after = settle(broker, members, classic, PARTITIONS)
        assert snapshot(broker, group) is None
        assert after.generation_id > snap["group_epoch"]  # the downgrade's rebalance formed a new generation
        assert sorted(len(m.assignment) for m in after.members) == [6, 6]
        assert len(events(broker, "group.downgraded", group)) == 1


def test_classic_member_joins_a_consumer_group(broker: BrokerThread) -> None:
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        modern = [start(members, f"modern-{i}") for i in range(2)]
        settle_consumer_group(broker, members, modern)
        joiner = members.start("kafka-python", "classic-0")
        snap = settle_consumer_group(broker, members, [*modern, joiner])
        assert {m["client_id"]: m["protocol"] for m in snap["members"]}["classic-0"] == "classic"
        joiner.close()  # LeaveGroup from a classic member: the group stays a consumer group
        settle_consumer_group(broker, members, modern)


def test_disabled_policy_refuses_the_classic_client(disabled_broker: BrokerThread) -> None:
    broker = disabled_broker
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        modern = [start(members, f"modern-{i}") for i in range(2)]
        before = settle_consumer_group(broker, members, modern)
        odd = members.start("kafka-python", "classic-0")
        refused = odd.wait_event("error", where=lambda e: e.get("code") == INCONSISTENT_GROUP_PROTOCOL)
        assert refused["code"] == INCONSISTENT_GROUP_PROTOCOL, refused
        assert odd.assignment in (None, frozenset())
        odd.close()
        after = wait_for(lambda: snapshot(broker, group), "the consumer group", lambda: "")
        assert {m["client_id"] for m in after["members"]} == {"modern-0", "modern-1"}
        assert after["group_epoch"] == before["group_epoch"]
