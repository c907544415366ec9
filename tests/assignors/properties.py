"""Shared Hypothesis strategies and property checks for the assignor tests (not a test module).

``topologies()`` draws a cluster and a group's subscriptions: random topic sizes (including empty
topics), member ids in random lexical order, optional static members, optional unknown topics,
optional KIP-881 racks on members and partitions. ``check_common_properties`` asserts what every
client-side assignor owes: every member answered, every subscribed partition owned exactly once,
only by subscribers, and the same answer for the same input whatever the member order.
``check_common_server_properties`` does the same for KIP-848 server-side assignors. Below those,
small helpers for tables of cases (``sub``, ``tps``, ``as_sets``, ``names``, ``by_instance``) and
``kafka_python_assign``, which runs one of kafka-python's assignors on our inputs.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mockbroker_assignors.base import Assignor, ServerAssignor
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    MemberSpec,
    Subscription,
    TargetAssignment,
    TopicMetadata,
    TopicPartition,
)
from mockbroker_assignors.validation import check_assignment

__all__ = [
    "MODEST",
    "RACKS",
    "Topology",
    "as_sets",
    "assert_balanced",
    "by_instance",
    "check_common_properties",
    "check_common_server_properties",
    "kafka_python_assign",
    "names",
    "partition_counts",
    "shuffled",
    "sub",
    "to_group_spec",
    "topic_counts",
    "topologies",
    "tps",
]

# Modest example counts: these suites run on every commit.
MODEST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

RACKS = ("a", "b", "c")
Topology = tuple[ClusterMetadata, dict[str, Subscription]]

_ids = st.text(alphabet="abcmxz019-_", min_size=1, max_size=6)


@st.composite
def topologies(
    draw: st.DrawFn,
    *,
    max_topics: int = 5,
    max_partitions: int = 8,
    max_members: int = 6,
    identical: bool = False,
    static: bool | None = None,
    racks: bool = False,
    unknown_topics: bool = True,
    empty_topics: bool = True,
) -> Topology:
    """A random (cluster, subscriptions).

    ``identical``: every member subscribes to the same topics. ``static``: True all members
    have a group.instance.id, False none, None a random mix. ``racks``: members may carry a
    rack id (or the empty one, which Java ignores) and partitions random subsets of RACKS as
    replica racks. ``unknown_topics``: subscriptions may name topics the cluster lacks.
    ``empty_topics``: topics may have zero partitions."""
    num_topics = draw(st.integers(1, max_topics))
    names = [f"t{i}" for i in range(num_topics)]
    sizes = draw(
        st.lists(
            st.integers(0 if empty_topics else 1, max_partitions), min_size=num_topics, max_size=num_topics
        )
    )
    topics: dict[str, TopicMetadata] = {}
    for name, size in zip(names, sizes, strict=True):
        replica_racks: tuple[frozenset[str], ...] = ()
        if racks:
            replica_racks = tuple(
                draw(st.lists(st.frozensets(st.sampled_from(RACKS)), min_size=size, max_size=size))
            )
        topics[name] = TopicMetadata(name, size, replica_racks)
    cluster = ClusterMetadata(topics)

    choices = names + (["ghost"] if unknown_topics else [])
    member_ids = draw(st.lists(_ids, min_size=1, max_size=max_members, unique=True))
    instance_ids = draw(st.lists(_ids, min_size=len(member_ids), max_size=len(member_ids), unique=True))
    shared = tuple(draw(st.lists(st.sampled_from(choices), min_size=1, unique=True)))
    subscriptions: dict[str, Subscription] = {}
    for member_id, instance_id in zip(member_ids, instance_ids, strict=True):
        subscribed = shared if identical else tuple(draw(st.lists(st.sampled_from(choices), unique=True)))
        is_static = draw(st.booleans()) if static is None else static
        rack = draw(st.sampled_from((None, "", *RACKS))) if racks else None
        subscriptions[member_id] = Subscription(
            topics=subscribed,
            group_instance_id=f"i-{instance_id}" if is_static else None,
            rack_id=rack,
        )
    return cluster, subscriptions


def shuffled(subscriptions: Mapping[str, Subscription], seed: int) -> dict[str, Subscription]:
    """The same members in another dict order."""
    items = list(subscriptions.items())
    random.Random(seed).shuffle(items)
    return dict(items)


def partition_counts(result: Mapping[str, MemberAssignment | Mapping[str, frozenset[int]]]) -> dict[str, int]:
    """Member -> number of partitions, for a client-side (GroupAssignment) or server-side
    (TargetAssignment) result."""
    return {
        member: len(assigned.partitions)
        if isinstance(assigned, MemberAssignment)
        else sum(len(ps) for ps in assigned.values())
        for member, assigned in result.items()
    }


def topic_counts(result: GroupAssignment, topic: str, members: Iterable[str]) -> dict[str, int]:
    """Member -> number of partitions of ``topic`` it holds."""
    return {m: sum(1 for tp in result[m].partitions if tp.topic == topic) for m in members}


def assert_balanced(counts: Mapping[str, int], slack: int = 1) -> None:
    if counts:
        assert max(counts.values()) - min(counts.values()) <= slack, f"unbalanced: {dict(counts)}"


def check_common_properties(
    assignor: Assignor,
    cluster: ClusterMetadata,
    subscriptions: Mapping[str, Subscription],
    result: GroupAssignment,
) -> None:
    """What every client-side assignor owes, whatever its strategy (assert-based)."""
    before = dict(subscriptions)
    # Every member is answered, nobody else is.
    assert set(result) == set(subscriptions), f"members {sorted(result)} != {sorted(subscriptions)}"
    for member, assigned in result.items():
        assert isinstance(assigned.partitions, tuple), f"{member}: partitions must be a tuple"
        assert all(isinstance(tp, TopicPartition) for tp in assigned.partitions)
    # Exactly-once ownership of every subscribed partition, subscribed-only, nothing unknown.
    findings = check_assignment(cluster, subscriptions, result)
    assert findings == [], findings
    # Determinism: the same input again, a read-only mapping, and other member orders.
    assert assignor.assign(cluster, subscriptions) == result, "not deterministic"
    assert assignor.assign(cluster, MappingProxyType(dict(subscriptions))) == result
    reordered = dict(reversed(list(subscriptions.items())))
    assert assignor.assign(cluster, reordered) == result, "depends on member order (reversed)"
    assert assignor.assign(cluster, shuffled(subscriptions, seed=len(subscriptions))) == result
    # The input is untouched.
    assert dict(subscriptions) == before


def to_group_spec(
    subscriptions: Mapping[str, Subscription],
    assigned: Mapping[str, Mapping[str, frozenset[int]]] | None = None,
) -> GroupSpec:
    """The KIP-848 view of a drawn topology: subscribed topics, instance and rack ids, and an
    optional current assignment."""
    assigned = assigned or {}
    return GroupSpec(
        {
            m: MemberSpec(
                member_id=m,
                subscribed_topics=frozenset(s.topics),
                assigned=dict(assigned.get(m, {})),
                instance_id=s.group_instance_id,
                rack_id=s.rack_id or None,
            )
            for m, s in subscriptions.items()
        }
    )


def check_common_server_properties(
    assignor: ServerAssignor,
    group: GroupSpec,
    cluster: ClusterMetadata,
    result: TargetAssignment,
) -> None:
    """What every server-side assignor owes: every member answered, each partition of each
    subscribed known topic owned exactly once, only by subscribers, only real partitions, and the
    same answer whatever the member order."""
    assert set(result) == set(group.members), f"members {sorted(result)} != {sorted(group.members)}"
    owners: Counter[TopicPartition] = Counter()
    for member, topics in result.items():
        subscribed = group.members[member].subscribed_topics
        for topic, partitions in topics.items():
            assert topic in subscribed, f"{member} owns {topic} without subscribing to it"
            size = cluster.partitions_for(topic)
            for p in partitions:
                assert 0 <= p < size, f"{member} owns {topic}-{p}, out of range ({size})"
                owners[TopicPartition(topic, p)] += 1
    wanted = {
        TopicPartition(t, p)
        for spec in group.members.values()
        for t in spec.subscribed_topics
        for p in range(cluster.partitions_for(t))
    }
    assert set(owners) == wanted, f"unassigned: {sorted(wanted - set(owners))}"
    assert all(n == 1 for n in owners.values()), f"owned twice: {[tp for tp, n in owners.items() if n > 1]}"
    assert assignor.assign(group, cluster) == result, "not deterministic"
    reversed_group = GroupSpec(dict(reversed(list(group.members.items()))))
    assert assignor.assign(reversed_group, cluster) == result, "depends on member order"


# -- small helpers for tables of cases ----------------------------------------------------------------


def tps(*names: str) -> set[TopicPartition]:
    """tps("t1-0", "t2-1") -> {TopicPartition("t1", 0), TopicPartition("t2", 1)}"""
    out = set()
    for name in names:
        topic, _, p = name.rpartition("-")
        out.add(TopicPartition(topic, int(p)))
    return out


def as_sets(result: GroupAssignment) -> dict[str, set[TopicPartition]]:
    return {m: set(a.partitions) for m, a in result.items()}


def sub(*topics: str, instance: str | None = None, rack: str | None = None) -> Subscription:
    return Subscription(topics=topics, group_instance_id=instance, rack_id=rack)


def names(result: GroupAssignment, member: str) -> list[str]:
    return [f"{tp.topic}-{tp.partition}" for tp in result[member].partitions]


def by_instance(
    result: GroupAssignment, subscriptions: Mapping[str, Subscription]
) -> dict[str, set[TopicPartition]]:
    """Static members' partitions keyed by group.instance.id (Java's checkStaticAssignment)."""
    return {
        s.group_instance_id: set(result[m].partitions)
        for m, s in subscriptions.items()
        if s.group_instance_id
    }


def kafka_python_assign(
    assignor: Any, cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]
) -> dict[str, set[TopicPartition]]:
    """Run a kafka-python assignor (classmethod assign(cluster, members)) on our inputs."""

    class Cluster:
        @staticmethod
        def partitions_for_topic(topic: str) -> set[int] | None:
            meta = cluster.topics.get(topic)
            return None if meta is None else set(range(meta.num_partitions))

    members = [
        SimpleNamespace(
            member_id=m,
            group_instance_id=s.group_instance_id,
            metadata=SimpleNamespace(topics=list(s.topics)),
        )
        for m, s in subscriptions.items()
    ]
    result = assignor.assign(Cluster(), members)
    return {m: {TopicPartition(tp.topic, tp.partition) for tp in a.partitions()} for m, a in result.items()}
