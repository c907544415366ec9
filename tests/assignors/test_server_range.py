"""Tests of the KIP-848 server-side ``range`` assignor (mockbroker_assignors.server_range) against Java's tables.

The tables carry facts (inputs and expected outputs) from apache/kafka's
group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor/RangeAssignorTest.java
as rewritten with the assignor by KAFKA-16944 (Kafka 3.9; unchanged on trunk since), and from
``CommonAssignorTests`` (trunk, 2025). Each case names its Java test. Java's topic ids there are
random, so the expected results do not depend on topic order, and topic names serve.
"""

from __future__ import annotations

import doctest
import itertools
import time
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mockbroker_assignors.server_range
from mockbroker_assignors.server_range import ServerRangeAssignor, sort_member_ids
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec, TargetAssignment
from tests.assignors.properties import (
    MODEST,
    Topology,
    assert_balanced,
    check_common_server_properties,
    to_group_spec,
    topologies,
)

ASSIGNOR = ServerRangeAssignor()
Assigned = Mapping[str, set[int]]


def member(subscribed: set[str], assigned: Assigned | None = None, *, instance: str | None = None,
           rack: str | None = None) -> MemberSpec:
    return MemberSpec("", frozenset(subscribed), {t: frozenset(ps) for t, ps in (assigned or {}).items()}, instance, rack)


def group(**members: MemberSpec) -> GroupSpec:
    return GroupSpec(
        {m: MemberSpec(m, s.subscribed_topics, s.assigned, s.instance_id, s.rack_id) for m, s in members.items()}
    )


def plain(result: TargetAssignment) -> dict[str, dict[str, set[int]]]:
    return {m: {t: set(ps) for t, ps in topics.items()} for m, topics in result.items()}


t1, t2, t3 = "topic1", "topic2", "topic3"

# -- RangeAssignorTest (KAFKA-16944, trunk) -----------------------------------------------------------------

CASES = [
    pytest.param(
        {t1: 3, t3: 2},
        group(A=member({t1, t3}), B=member({t1, t3})),
        {"A": {t1: {0, 1}, t3: {0}}, "B": {t1: {2}, t3: {1}}},
        id="testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions",
    ),
    pytest.param(
        {t1: 3, t2: 3, t3: 2},
        group(A=member({t1, t2}), B=member({t3}), C=member({t2, t3})),
        {"A": {t1: {0, 1, 2}, t2: {0, 1}}, "B": {t3: {0}}, "C": {t2: {2}, t3: {1}}},
        id="testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions",
    ),
    pytest.param(
        {t1: 3, t3: 2},
        group(A=member({t1, t3}), B=member({t1, t3}), C=member({t1, t3})),
        {"A": {t1: {0}, t3: {0}}, "B": {t1: {1}, t3: {1}}, "C": {t1: {2}}},
        id="testFirstAssignmentNumMembersGreaterThanNumPartitions",
    ),
    pytest.param(
        {t1: 2, t2: 2},
        group(A=member({t1, t2}, {t1: {0}, t2: {0}}), B=member({t1, t2}, {t1: {1}, t2: {1}}), C=member({t1, t2})),
        {"A": {t1: {0}, t2: {0}}, "B": {t1: {1}, t2: {1}}, "C": {}},
        id="testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded",
    ),
    pytest.param(
        {t1: 4, t2: 4},
        group(A=member({t1, t2}, {t1: {0, 1}, t2: {0, 1}}), B=member({t1, t2}, {t1: {2}, t2: {2}})),
        {"A": {t1: {0, 1}, t2: {0, 1}}, "B": {t1: {2, 3}, t2: {2, 3}}},
        id="testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics",
    ),
    pytest.param(
        {t1: 3, t2: 3},
        group(
            A=member({t1, t2}, {t1: {0, 1}, t2: {0, 1}}),
            B=member({t1, t2}, {t1: {2}, t2: {2}}),
            C=member({t1, t2}),
        ),
        {"A": {t1: {0}, t2: {0}}, "B": {t1: {1}, t2: {1}}, "C": {t1: {2}, t2: {2}}},
        id="testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
    pytest.param(
        {t1: 4, t2: 3},
        group(
            A=member({t1, t2}, {t1: {0, 1}, t2: {0, 1}}),
            B=member({t1, t2}, {t1: {2}, t2: {2}}),
            C=member({t1}),
        ),
        {"A": {t1: {0, 1}, t2: {0, 1}}, "B": {t1: {2}, t2: {2}}, "C": {t1: {3}}},
        id="testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
    pytest.param(
        {t1: 3, t2: 3},
        group(B=member({t1, t2}, {t1: {2}, t2: {2}})),
        {"B": {t1: {0, 1, 2}, t2: {0, 1, 2}}},
        id="testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
    pytest.param(
        {t1: 3, t2: 3, t3: 2},
        group(
            A=member({t1}, {t1: {0, 1, 2}, t2: {0}}),
            B=member({t1, t2, t3}, {t2: {1}}),
            C=member({t2}, {t2: {2}, t3: {0, 1}}),
        ),
        {"A": {t1: {0, 1}}, "B": {t1: {2}, t2: {0, 1}, t3: {0, 1}}, "C": {t2: {2}}},
        id="testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics",
    ),
]


@pytest.mark.parametrize(("topics", "spec", "expected"), CASES)
def test_java_table(topics: dict[str, int], spec: GroupSpec, expected: dict[str, Assigned]) -> None:
    assert plain(ASSIGNOR.assign(spec, ClusterMetadata.of(topics))) == expected


def test_static_membership() -> None:
    # testStaticMembership: static member A comes back as memberA1 with the same instance id and
    # gets the same partitions; so does B. (Values from the sort rule: instanceA < instanceB.)
    cluster = ClusterMetadata.of({t1: 3})
    first = ASSIGNOR.assign(group(A=member({t1}, instance="instanceA"), B=member({t1}, instance="instanceB")), cluster)
    again = ASSIGNOR.assign(group(B=member({t1}, instance="instanceB"), memberA1=member({t1}, instance="instanceA")), cluster)
    assert again["memberA1"] == first["A"] and again["B"] == first["B"]
    assert plain(first) == {"A": {t1: {0, 1}}, "B": {t1: {2}}}


def test_mixed_static_membership() -> None:
    # testMixedStaticMembership: static A and C, dynamic B; A returns as memberA1. Static members
    # sort first (instanceA, instanceC), then B: ranges of 5 partitions are [0, 1], [2, 3], [4].
    cluster = ClusterMetadata.of({t1: 5})
    first = ASSIGNOR.assign(
        group(A=member({t1}, instance="instanceA"), C=member({t1}, instance="instanceC"), B=member({t1})), cluster
    )
    again = ASSIGNOR.assign(
        group(C=member({t1}, instance="instanceC"), B=member({t1}), memberA1=member({t1}, instance="instanceA")),
        cluster,
    )
    assert again["memberA1"] == first["A"] and again["B"] == first["B"] and again["C"] == first["C"]
    assert plain(first) == {"A": {t1: {0, 1}}, "C": {t1: {2, 3}}, "B": {t1: {4}}}


def test_nothing_to_assign() -> None:
    # testOneMemberNoTopic: Java returns an empty GroupAssignment, we answer the member with {}.
    cluster = ClusterMetadata.of({t1: 3})
    assert ASSIGNOR.assign(group(A=member(set())), cluster) == {"A": {}}
    # testOneMemberSubscribedToNonExistentTopic: Java throws for an unknown topic id, which the
    # broker never passes (TopicIds skips unknown names); names are our input, so they are ignored.
    assert ASSIGNOR.assign(group(A=member({t2})), cluster) == {"A": {}}
    assert ASSIGNOR.assign(GroupSpec({}), cluster) == {}


# -- CommonAssignorTests (trunk), with and without racks ---------------------------------------------------

COMMON_TOPICS = {"topic1": 2, "topic2": 5, "topic3": 7}
COMMON_CLUSTER = ClusterMetadata.of(
    COMMON_TOPICS,
    racks={t: tuple(frozenset({f"rack{p % 3 + 1}"}) for p in range(n)) for t, n in COMMON_TOPICS.items()},
)
ALL3 = set(COMMON_TOPICS)


@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(rack_aware: bool) -> None:
    # testAssignmentReuse: run again on its own output, the assignment is unchanged; racks change nothing.
    racks = {"A": "rack1", "B": "rack2", "C": "rack3"} if rack_aware else {}
    first = ASSIGNOR.assign(group(**{m: member(ALL3, rack=racks.get(m)) for m in "ABC"}), COMMON_CLUSTER)
    again = group(**{m: member(ALL3, {t: set(ps) for t, ps in first[m].items()}, rack=racks.get(m)) for m in "ABC"})
    assert ASSIGNOR.assign(again, COMMON_CLUSTER) == first
    assert ASSIGNOR.assign(group(**{m: member(ALL3) for m in "ABC"}), COMMON_CLUSTER) == first


@pytest.mark.parametrize("rack_aware", [False, True])
def test_iteration_order_stickiness(rack_aware: bool) -> None:
    # testReassignmentStickiness / testIterationOrderStickiness: any member order, same assignment.
    rack = {"B": "rack1"} if rack_aware else {}
    first = ASSIGNOR.assign(group(**{m: member(ALL3, rack=rack.get(m)) for m in "ABC"}), COMMON_CLUSTER)
    for order in itertools.permutations("ABC"):
        spec = group(**{m: member(ALL3, {t: set(ps) for t, ps in first[m].items()}, rack=rack.get(m)) for m in order})
        assert ASSIGNOR.assign(spec, COMMON_CLUSTER) == first, order


# -- the member order --------------------------------------------------------------------------------------


def test_static_members_first_by_instance_id_then_dynamic_by_member_id() -> None:
    # Semantics doc §10.2 and RangeAssignor.sortMemberIds.
    spec = group(
        d2=member({t1}), s9=member({t1}, instance="a"), d1=member({t1}), s1=member({t1}, instance="b")
    )
    assert sort_member_ids(spec) == ["s9", "s1", "d1", "d2"]
    assert plain(ASSIGNOR.assign(spec, ClusterMetadata.of({t1: 6}))) == {
        "s9": {t1: {0, 1}},
        "s1": {t1: {2, 3}},
        "d1": {t1: {4}},
        "d2": {t1: {5}},
    }


def test_member_order_is_java_string_order() -> None:
    # String.compareTo compares UTF-16 code units: U+10000 (\uD800\uDC00) sorts before U+FFFF,
    # unlike Python's code point order.
    spec = group(**{"\uffff": member({t1}), "\U00010000": member({t1})})
    assert sort_member_ids(spec) == ["\U00010000", "\uffff"]


# -- properties --------------------------------------------------------------------------------------------


@MODEST
@given(topologies(racks=True))
def test_common_server_properties(topology: Topology) -> None:
    cluster, subscriptions = topology
    spec = to_group_spec(subscriptions)
    check_common_server_properties(ASSIGNOR, spec, cluster, ASSIGNOR.assign(spec, cluster))


@MODEST
@given(topologies(racks=True))
def test_ranges_per_topic(topology: Topology) -> None:
    # Each topic: its subscribers in the sorted order get contiguous ranges, in order, sizes within
    # one of each other, the larger ones first.
    cluster, subscriptions = topology
    spec = to_group_spec(subscriptions)
    result = ASSIGNOR.assign(spec, cluster)
    order = sort_member_ids(spec)
    for topic, meta in cluster.topics.items():
        subscribers = [m for m in order if topic in spec.members[m].subscribed_topics]
        if not subscribers:
            continue
        counts = [len(result[m].get(topic, ())) for m in subscribers]
        assert_balanced(dict(zip(subscribers, counts, strict=True)))
        assert counts == sorted(counts, reverse=True)
        start = 0
        for m, n in zip(subscribers, counts, strict=True):
            assert result[m].get(topic, frozenset()) == frozenset(range(start, start + n))
            start += n
        assert start == meta.num_partitions


@MODEST
@given(topologies(identical=True, unknown_topics=False))
def test_co_partitioning(topology: Topology) -> None:
    # Identical subscriptions, topics of equal size: each member gets the same partition numbers of
    # every topic (what joins need).
    cluster, subscriptions = topology
    equal = ClusterMetadata.of({t: 4 for t in cluster.topics})
    spec = to_group_spec(subscriptions)
    result = ASSIGNOR.assign(spec, equal)
    for topics in result.values():
        assert len({ps for ps in topics.values()}) <= 1


@MODEST
@given(topologies(), st.data())
def test_not_sticky_current_assignment_is_ignored(topology: Topology, data: st.DataObject) -> None:
    # The server-side range reads no current assignment: any one gives the same result.
    cluster, subscriptions = topology
    spec = to_group_spec(subscriptions)
    members = sorted(spec.members)
    assigned = {
        m: {t: frozenset(range(meta.num_partitions)) for t, meta in cluster.topics.items() if data.draw(st.booleans())}
        for m in members
    }
    assert ASSIGNOR.assign(to_group_spec(subscriptions, assigned), cluster) == ASSIGNOR.assign(spec, cluster)


# -- scale and docs -----------------------------------------------------------------------------------------


def test_scale_1000_members_10000_partitions() -> None:
    cluster = ClusterMetadata.of({f"t{i}": 100 for i in range(100)})
    names = sorted(cluster.topics)
    spec = GroupSpec(
        {
            f"member-{i:04d}": MemberSpec(f"member-{i:04d}", frozenset(names[(i % 4) * 20 : (i % 4) * 20 + 40]))
            for i in range(1000)
        }
    )
    started = time.perf_counter()
    result = ASSIGNOR.assign(spec, cluster)
    assert time.perf_counter() - started < 10.0  # typically ~10-60 ms
    assert sum(len(ps) for topics in result.values() for ps in topics.values()) == 10_000


def test_docstring_examples() -> None:
    assert doctest.testmod(mockbroker_assignors.server_range).failed == 0
