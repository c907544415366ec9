"""Assignment checks and broker-side assignment with real clients (mockbroker/coordinators/classic/assignment_checks.py).

- kafka-python and confluent-kafka consumers in one group under broker-side assignment receive
  exactly the broker's assignment: their own rebalance callbacks report it (``settle``), and it is
  what the named assignor computes for the members.
- confluent-kafka's cooperative-sticky members under a broker-side assignor: partitions that
  change owner are first only revoked, then handed over in the next generation.
- A deliberately broken leader, built from kafka-python's low-level client (JoinGroup and
  SyncGroup by hand), sends an overlapping assignment: the broker stores it, as Kafka does, and
  reports it as a finding; in strict mode it lands in ``cluster.strict_failures``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.coordinators.classic.findings import Finding
from mockbroker_assignors.registry import get as get_assignor
from mockbroker_assignors.types import ClusterMetadata, Subscription
from tests.integration.groups_support import (
    BROKERS,
    GROUP_CLUSTER_SETTINGS,
    Members,
    fail_on_broker_bugs,
    group_events,
    hand_made_leader,
    last_seq,
    settle,
)
from tests.integration.support import BrokerThread

PARTITIONS = 6


def _broker(**settings: Any) -> Iterator[BrokerThread]:
    thread = BrokerThread(brokers=BROKERS, **GROUP_CLUSTER_SETTINGS, **settings)
    try:
        thread.start()
        yield thread
    finally:
        errors = thread.stop()
    fail_on_broker_bugs(errors)


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from _broker(broker_assignors={"broker-rr-*": "roundrobin", "broker-coop": "range"}, assignment_strict="violations")


def findings(broker: BrokerThread, group: str) -> list[Finding]:
    return broker.call(lambda: list(broker.cluster.groups.groups[group].findings))  # type: ignore[union-attr]


def strict_failures(broker: BrokerThread) -> list[Any]:
    return broker.call(lambda: list(broker.cluster.strict_failures))  # type: ignore[union-attr]


def test_kafka_python_and_confluent_receive_exactly_the_brokers_assignment(broker: BrokerThread) -> None:
    topic, group = "orders", "broker-rr-1"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        # The members' own protocol is range; the broker deals round robin instead, which differs
        # from range for 3 members over 6 partitions (0,3 / 1,4 / 2,5 against 0,1 / 2,3 / 4,5).
        started = [
            members.start("kafka-python", "kp-1", assignor="range"),
            members.start("confluent", "ck-1", assignor="range"),
            members.start("kafka-python", "kp-2", assignor="range"),
        ]
        view = settle(broker, members, started, PARTITIONS)
        assert view.protocol_name == "range"
        subscriptions = {m.member_id: Subscription((topic,)) for m in view.members}
        expected = get_assignor("roundrobin").assign(ClusterMetadata.of({topic: PARTITIONS}), subscriptions)
        # settle() checked each client's callbacks against the stored assignment; the stored one is
        # the broker's round robin, not the leader's range.
        assert {m.member_id: m.assignment for m in view.members} == {
            member: frozenset(tp.partition for tp in a.partitions) for member, a in expected.items()
        }
        events = [e for e in group_events(broker, group) if e.type == "group.broker_assignment"]
        assert events and events[-1].generation_id == view.generation_id
        assert events[-1].details["assignor"] == "roundrobin"
    assert findings(broker, group) == [] and strict_failures(broker) == []


def test_cooperative_members_under_a_broker_assignor_revoke_before_the_handover(broker: BrokerThread) -> None:
    topic, group = "coop-orders", "broker-coop"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        c1 = members.start("confluent", "coop-1", assignor="cooperative-sticky")
        before = settle(broker, members, [c1], PARTITIONS)
        seq = last_seq(broker)
        c2 = members.start("confluent", "coop-2", assignor="cooperative-sticky")
        after = settle(broker, members, [c1, c2], PARTITIONS)
        # range's target for two members: 0,1,2 / 3,4,5 (by member id). The half that moves left
        # c1 in one generation and reached c2 in a later one.
        by_generation: dict[int, dict[str, list[int]]] = {}
        withheld: list[str] = []
        for e in group_events(broker, group, since_seq=seq):
            if e.type == "member.assigned" and e.generation_id is not None:
                by_generation.setdefault(e.generation_id, {})[e.member_id or ""] = (e.details["assignment"] or {}).get(topic, [])
            if e.type == "group.broker_assignment":
                withheld += e.details["withheld"]
        assert withheld, "no partition was withheld while its owner revoked it"
        assert after.generation_id >= before.generation_id + 2
        for generation, assigned in by_generation.items():
            flat = [p for ps in assigned.values() for p in ps]
            assert len(flat) == len(set(flat)), f"generation {generation} assigned a partition twice: {assigned}"
        moved = {int(name.rpartition("-")[2]) for name in withheld}
        assert moved == after.by_client_id()["coop-2"].assignment
    assert strict_failures(broker) == []


# -- the reference check with real clients' own assignors ----------------------------------------------------
#
# A real run (see mockbroker_assignors/README.md, "Clients' built-in assignors against Java's"): range and
# roundrobin of kafka-python, aiokafka and librdkafka give Java's result exactly; the sticky
# family differs in tie-breaks (librdkafka, aiokafka) or cannot read Java's user data
# (kafka-python), which the broker reports as informational reference_divergence findings.


@pytest.fixture
def strict_all_broker() -> Iterator[BrokerThread]:
    yield from _broker(assignment_strict="all")


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
def test_kafka_python_and_librdkafka_range_and_roundrobin_are_javas(strict_all_broker: BrokerThread, assignor: str) -> None:
    broker = strict_all_broker
    topic = group = f"reference-{assignor}"
    broker.create_topic(topic, 7)
    with Members(broker, group, topic) as members:
        started = [members.start(client, f"{client}-{i}", assignor=assignor)
                   for i, client in enumerate(["kafka-python", "confluent", "kafka-python", "confluent"])]  # fmt: skip
        settle(broker, members, started, 7)
        started[0].close()  # the leader (the first to join) leaves: a rebalance with a new leader
        settle(broker, members, started[1:], 7)
    assert findings(broker, group) == [] and strict_failures(broker) == []


def test_librdkafka_cooperative_sticky_raises_no_violation(broker: BrokerThread) -> None:
    """librdkafka's cooperative first rebalance leaves the moving partitions unassigned: legal."""
    topic = group = "reference-cooperative"
    broker.create_topic(topic, 7)
    with Members(broker, group, topic) as members:
        started = [members.start("confluent", f"ck-{i}", assignor="cooperative-sticky") for i in range(3)]
        settle(broker, members, started, 7)
        started[1].close()
        settle(broker, members, [started[0], started[2]], 7)
    assert [f for f in findings(broker, group) if not f.informational] == []
    assert strict_failures(broker) == []


# -- a broken leader by hand (groups_support.hand_made_leader) ---------------------------------------------


def test_an_overlapping_leader_assignment_is_a_finding_and_a_strict_failure(broker: BrokerThread) -> None:
    topic, group = "hand", "hand-made"
    broker.create_topic(topic, 2)
    # The broken leader: partition 1 to both members. Stored as sent, as Kafka does.
    generation = hand_made_leader(broker, group, topic, lambda a, b: {a: {topic: [0, 1]}, b: {topic: [1]}})

    found = [f for f in findings(broker, group) if f.generation_id == generation]
    assert [(f.kind, [f"{tp.topic}-{tp.partition}" for tp in f.topic_partitions]) for f in found] == [
        ("multiple_owners", [f"{topic}-1"])
    ]
    events = [e for e in group_events(broker, group) if e.type == "group.assignment_finding"]
    assert [e.details["kind"] for e in events] == ["multiple_owners"] and events[0].details["strict"]
    assert found[0] in strict_failures(broker)
    broker.call(lambda: broker.cluster.strict_failures.clear())  # type: ignore[union-attr]
