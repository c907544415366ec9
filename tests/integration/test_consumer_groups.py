"""KIP-848 consumer groups with real clients: confluent-kafka (librdkafka 2.16) consumers with
group.protocol=consumer, each in its own process (clients/group_member.py), against a 3-broker
mockbroker. The broker computes every assignment; the members only revoke and take what they are
given, one heartbeat at a time (kafka-group-semantics §10).

What is checked, from both sides: the coordinator's introspection (``groups.snapshot``) and the
members' own rebalance callbacks. Callbacks carry the system-wide monotonic clock, so the
callbacks of all members can be replayed in one order to show that no partition is ever owned by
two members at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from mockbroker_assignors.server_range import ServerRangeAssignor
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec
from tests.integration.groups_support import (
    Member,
    Members,
    assert_exactly_once,
    group_broker,
)
from tests.integration.kip848_assignor import ModuloAssignor
from tests.integration.support import DEADLINE_S, BrokerThread, wait_for

PARTITIONS = 12
PLUGIN = "tests.integration.kip848_assignor:ModuloAssignor"
KIP848_SETTINGS: dict[str, Any] = {
    # Members learn of a new target at their next heartbeat: a short interval keeps tests quick.
    "group_consumer_heartbeat_interval_ms": 200,
    "group_consumer_assignors": f"uniform,range,{PLUGIN}",
}


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker(**KIP848_SETTINGS)


def new_group(broker: BrokerThread, partitions: int = PARTITIONS) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    topic = f"kip848-{suffix}"
    broker.create_topic(topic, partitions)
    return f"group-{suffix}", topic


def start(members: Members, client_id: str, **options: Any) -> Member:
    return members.start("confluent", client_id, group_protocol="consumer", **options)


def snapshot(broker: BrokerThread, group_id: str) -> dict[str, Any] | None:
    assert broker.cluster is not None
    cluster = broker.cluster
    return broker.call(lambda: cluster.groups.snapshot(group_id))


def partitions_of(parts: dict[str, list[int]], topic: str) -> frozenset[int]:
    return frozenset(parts.get(topic, []))


def settle(broker: BrokerThread, members: Members, expected: Iterable[Member], partitions: int = PARTITIONS) -> dict[str, Any]:
    """Wait until the group is Stable with exactly ``expected`` (by client id), every partition
    assigned, and each member's callbacks report what the broker assigned to it; then every
    partition must be owned exactly once, from both sides. Returns the snapshot."""
    expected = list(expected)
    want = {m.client_id for m in expected}
    seen: dict[str, frozenset[int]] = {}

    def agreed() -> dict[str, Any] | None:
        snap = snapshot(broker, members.group)
        if snap is None or snap["state"] != "Stable":
            return None
        by_client = {m["client_id"]: m for m in snap["members"]}
        if set(by_client) != want:
            return None
        for member in expected:
            change = member.last_change
            assigned = partitions_of(by_client[member.client_id]["assigned"], members.topic)
            if change is None or frozenset(change["assignment"]) != assigned:
                return None
        owned = {c: partitions_of(m["assigned"], members.topic) for c, m in by_client.items()}
        if frozenset().union(*owned.values()) != frozenset(range(partitions)):
            return None
        seen.clear()
        seen.update(owned)
        return snap

    snap: dict[str, Any] = wait_for(
        agreed,
        f"consumer group {members.group} to be Stable with {sorted(want)}, each reporting the broker's assignment",
        lambda: f"  broker: {snapshot(broker, members.group)}\n{members.explain()}",
        DEADLINE_S,
    )
    assert_exactly_once(seen, partitions, "the broker's and the members' view")
    return snap


def assert_never_owned_twice(members: Iterable[Member]) -> None:
    """Replay every member's assigned/revoked/lost callbacks in monotonic-clock order: a partition
    is given to a member only after its previous owner's callback gave it up (revoke before
    reassign, §10.3)."""
    timeline: list[tuple[float, str, dict[str, Any]]] = []
    for member in members:
        for event in member.of("assigned", "revoked", "lost"):
            timeline.append((event["ts"], member.client_id, event))
    timeline.sort(key=lambda entry: entry[0])
    owner: dict[int, str] = {}
    for ts, who, event in timeline:
        if event["event"] == "assigned":
            for p in event["added"]:
                holder = owner.get(p)
                assert holder is None or holder == who, (
                    f"partition {p} given to {who} at {ts:.3f} while {holder} still owned it; timeline: "
                    + "; ".join(f"{t:.3f} {w} {e['event']} {e.get('added', e.get('removed'))}" for t, w, e in timeline)
                )
                owner[p] = who
        else:
            for p in event["removed"]:
                if owner.get(p) == who:
                    del owner[p]


def describe_with_admin(broker: BrokerThread, group: str) -> Any:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    return admin.describe_consumer_groups([group])[group].result(DEADLINE_S)


def test_members_converge_take_over_and_never_share_a_partition(broker: BrokerThread) -> None:
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        first = [start(members, f"c{i}") for i in range(3)]
        settle(broker, members, first)

        fourth = start(members, "c3")
        snap = settle(broker, members, [*first, fourth])
        sizes = sorted(len(partitions_of(m["assigned"], topic)) for m in snap["members"])
        assert sizes == [3, 3, 3, 3], snap  # uniform: balanced
        assert_never_owned_twice(members.started)
        described = describe_with_admin(broker, group)  # ConsumerGroupDescribe over the wire
        assert (described.type.name, described.state.name) == ("CONSUMER", "STABLE")
        assert {m.member_id: frozenset(tp.partition for tp in m.assignment.topic_partitions) for m in described.members} == {
            m["member_id"]: partitions_of(m["assigned"], topic) for m in snap["members"]
        }

        leaving = first[0]
        leaving.close()
        snap = settle(broker, members, [*first[1:], fourth])
        assert sorted(len(partitions_of(m["assigned"], topic)) for m in snap["members"]) == [4, 4, 4]
        assert_never_owned_twice(members.started)
        assert broker.call(lambda: [e.member_id for e in broker.cluster.events.filter("consumer_group.member_left", group)])  # type: ignore[union-attr]


def test_static_member_restarts_without_reshuffling(broker: BrokerThread) -> None:
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        statics = [start(members, f"s{i}", instance_id=f"instance-{i}") for i in range(3)]
        before = settle(broker, members, statics)
        owned_before = {m["instance_id"]: partitions_of(m["assigned"], topic) for m in before["members"]}
        others = statics[1:]
        marks = {m.client_id: m.mark() for m in others}

        statics[0].close()  # a static member leaves with epoch -2: its partitions stay reserved
        wait_for(
            lambda: any(m["member_epoch"] == -2 for m in (snapshot(broker, group) or {"members": []})["members"]) or None,
            "the static member's temporary leave (epoch -2)",
            lambda: f"  broker: {snapshot(broker, group)}",
        )
        again = start(members, "s0", instance_id="instance-0")
        after = settle(broker, members, [again, *others])
        owned_after = {m["instance_id"]: partitions_of(m["assigned"], topic) for m in after["members"]}
        assert owned_after == owned_before
        assert frozenset(again.last_change["assignment"]) == owned_before["instance-0"]  # type: ignore[index]
        for member in others:  # nobody else gave up or got anything
            assert member.of("assigned", "revoked", "lost", since=marks[member.client_id]) == []
        replaced = broker.call(lambda: broker.cluster.events.filter("consumer_group.member_replaced", group))  # type: ignore[union-attr]
        assert [e.details["instance_id"] for e in replaced] == ["instance-0"]


def expected_by_assignor(assignor: Any, snap: dict[str, Any], topic: str) -> dict[str, frozenset[int]]:
    spec = GroupSpec({
        m["member_id"]: MemberSpec(m["member_id"], frozenset({topic}), instance_id=m["instance_id"])
        for m in snap["members"]
    })  # fmt: skip
    result = assignor.assign(spec, ClusterMetadata.of({topic: PARTITIONS}))
    return {member_id: frozenset(result.get(member_id, {}).get(topic, frozenset())) for member_id in spec.members}


@pytest.mark.parametrize("assignor", ["uniform", "range", "modulo"])
def test_members_receive_what_the_named_server_assignor_computes(broker: BrokerThread, assignor: str) -> None:
    group, topic = new_group(broker)
    with Members(broker, group, topic) as members:
        started = [start(members, f"a{i}", remote_assignor=assignor) for i in range(3)]
        snap = settle(broker, members, started)
        assert snap["assignor"] == assignor
        received = {
            m["member_id"]: frozenset(member.last_change["assignment"])  # type: ignore[index]
            for m in snap["members"]
            for member in started
            if member.client_id == m["client_id"]
        }
        targets = {m["member_id"]: partitions_of(m["target"], topic) for m in snap["members"]}
        assert received == targets
        computed = broker.call(lambda: broker.cluster.events.filter("consumer_group.target_assignment", group))  # type: ignore[union-attr]
        assert computed and {e.details["assignor"] for e in computed} == {assignor}
        if assignor == "range":
            assert received == expected_by_assignor(ServerRangeAssignor(), snap, topic)
            assert all(max(p) - min(p) == 3 for p in received.values())  # contiguous blocks of 4
        elif assignor == "modulo":
            assert received == expected_by_assignor(ModuloAssignor(), snap, topic)
        else:
            assert sorted(len(p) for p in received.values()) == [4, 4, 4]


def test_classic_and_consumer_groups_side_by_side(broker: BrokerThread) -> None:
    classic_group, classic_topic = new_group(broker, 6)
    consumer_group, consumer_topic = new_group(broker, 6)
    with Members(broker, classic_group, classic_topic) as classic, Members(broker, consumer_group, consumer_topic) as kip848:
        classic_members = [classic.start("confluent", f"classic-{i}", assignor="range") for i in range(2)]
        kip848_members = [start(kip848, f"kip848-{i}") for i in range(2)]
        settle(broker, kip848, kip848_members, partitions=6)

        def classic_stable() -> bool | None:
            assert broker.cluster is not None
            group = broker.cluster.groups.groups.get(classic_group)
            if group is None or group.state.value != "Stable":
                return None
            owned = [m.assignment for m in classic_members]
            return None if any(a is None for a in owned) or frozenset().union(*owned) != frozenset(range(6)) else True  # type: ignore[arg-type]

        wait_for(classic_stable, "the classic group to be Stable", lambda: classic.explain())
        assert broker.cluster is not None
        cluster = broker.cluster
        listed = broker.call(lambda: {g.group_id: (g.group_type, g.protocol_type, g.group_state) for g in cluster.groups.list_groups()})
        assert listed[classic_group] == ("classic", "consumer", "Stable")
        assert listed[consumer_group] == ("consumer", "consumer", "Stable")
        by_type = broker.call(lambda: [g.group_id for g in cluster.groups.list_groups(types_filter=["consumer"])])
        assert consumer_group in by_type and classic_group not in by_type
        # Each by its own rules: the classic group has generations, the consumer group epochs.
        assert broker.call(lambda: cluster.groups.snapshot(classic_group)) is None
        assert (snapshot(broker, consumer_group) or {})["group_epoch"] >= 2
