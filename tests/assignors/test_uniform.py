"""Tests of the KIP-848 ``uniform`` server assignor (mockbroker_assignors.uniform) against Java's own test tables.

The tables carry facts (inputs and expected outputs) from apache/kafka's
group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor/:
``UniformHomogeneousAssignmentBuilderTest`` as of KAFKA-18688 (Kafka 4.1; the file was
``OptimizedUniformAssignmentBuilderTest`` before), ``UniformHeterogeneousAssignmentBuilderTest`` as of
KAFKA-17710 (Kafka 4.0) and ``CommonAssignorTests`` (trunk, 2025). Each case names its Java test.
The Java tests use three fixed topic ids, whose ``HashSet<Uuid>`` order (T2, T3, T1) decides the
homogeneous cases, so the cluster metadata here carries them. Java's ``TreeMap`` of members "A",
"B", "C" iterates as Java's ``HashMap`` does (buckets 1, 2, 3).
"""

from __future__ import annotations

import doctest
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mockbroker_assignors.uniform
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec, TargetAssignment, TopicMetadata
from mockbroker_assignors.uniform import (
    UniformAssignor,
    assign_heterogeneous,
    assign_homogeneous,
    java_member_order,
    java_topic_order,
)
from mockbroker_protocol.hashing import java_string_hash
from tests.assignors.properties import (
    MODEST,
    Topology,
    assert_balanced,
    check_common_server_properties,
    partition_counts,
    to_group_spec,
    topologies,
)

ASSIGNOR = UniformAssignor()

# The Java tests' topic ids (Uuid.fromString) and names.
T1 = ("topic1", "T1-A4s3VTwiI5CTbEp6POw")
T2 = ("topic2", "T2-B4s3VTwiI5YHbPp6YUe")
T3 = ("topic3", "T3-CU8fVTLCz5YMkLoDQsa")
T4 = ("topic4", "T4-Tw9fVTLCz5HbPp6YQsa")


@dataclass(frozen=True, slots=True)
class TopicWithId(TopicMetadata):
    """Topic metadata plus the topic id the broker knows (the optional ``topic_id`` the assignor reads)."""

    topic_id: str | None = None


def cluster_of(*topics: tuple[tuple[str, str], int]) -> ClusterMetadata:
    return ClusterMetadata({name: TopicWithId(name, count, (), topic_id) for (name, topic_id), count in topics})


Assigned = Mapping[str, set[int]]


def member(subscribed: set[str], assigned: Assigned | None = None, *, rack: str | None = None) -> MemberSpec:
    # MemberSpec.member_id is filled in by group(); the Mapping keeps the Java map's iteration order.
    return MemberSpec("", frozenset(subscribed), {t: frozenset(ps) for t, ps in (assigned or {}).items()}, None, rack)


def group(**members: MemberSpec) -> GroupSpec:
    return GroupSpec(
        {m: MemberSpec(m, s.subscribed_topics, s.assigned, s.instance_id, s.rack_id) for m, s in members.items()}
    )


def plain(result: TargetAssignment) -> dict[str, dict[str, set[int]]]:
    return {m: {t: set(ps) for t, ps in topics.items()} for m, topics in result.items()}


t1, t2, t3, t4 = T1[0], T2[0], T3[0], T4[0]

# -- UniformHomogeneousAssignmentBuilderTest (trunk, after KAFKA-18688) ------------------------------

HOMOGENEOUS_CASES = [
    pytest.param(
        cluster_of((T1, 3), (T3, 2)),
        group(A=member({t1, t3}), B=member({t1, t3})),
        {"A": {t3: {0, 1}}, "B": {t1: {0, 1, 2}}},
        id="testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks",
    ),
    pytest.param(
        cluster_of((T3, 2)),
        group(A=member({t3}), B=member({t3}), C=member({t3})),
        {"A": {}, "B": {t3: {0}}, "C": {t3: {1}}},
        id="testFirstAssignmentNumMembersGreaterThanTotalNumPartitions",
    ),
    pytest.param(
        cluster_of((T1, 3), (T2, 3)),
        # mkOrderedAssignment: topic1 then topic2.
        group(A=member({t1, t2}, {t1: {0, 1}, t2: {0, 1}}), B=member({t1, t2}, {t1: {2}, t2: {2}})),
        {"A": {t1: {0, 1}, t2: {0}}, "B": {t1: {2}, t2: {1, 2}}},
        id="testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment",
    ),
    pytest.param(
        cluster_of((T1, 6), (T2, 5)),
        group(A=member({t1, t2}, {t1: {0, 2}, t2: {0}}), B=member({t1, t2}, {t1: {1}, t2: {1, 2}})),
        {"A": {t1: {0, 2}, t2: {0, 3, 4}}, "B": {t1: {1, 3, 4, 5}, t2: {1, 2}}},
        id="testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T1, 3), (T2, 3)),
        group(
            A=member({t1, t2}, {t1: {0, 2}, t2: {0}}),
            B=member({t1, t2}, {t1: {1}, t2: {1, 2}}),
            C=member({t1, t2}),
        ),
        {"A": {t1: {0, 2}}, "B": {t1: {1}, t2: {1}}, "C": {t2: {0, 2}}},
        id="testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T1, 3), (T2, 3)),
        # mkAssignment: a HashMap, so topic2 (bucket 1) comes before topic1 (bucket 10).
        group(A=member({t1, t2}, {t2: {0}, t1: {0}}), B=member({t1, t2}, {t2: {1}, t1: {1}})),
        {"A": {t1: {0}, t2: {0, 2}}, "B": {t1: {1, 2}, t2: {1}}},
        id="testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T1, 2), (T2, 2)),
        group(A=member({t2}, {t2: {0}, t1: {0}}), B=member({t2}, {t2: {1}, t1: {1}})),
        {"A": {t2: {0}}, "B": {t2: {1}}},
        id="testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
]


@pytest.mark.parametrize(("cluster", "spec", "expected"), HOMOGENEOUS_CASES)
def test_homogeneous_java_table(cluster: ClusterMetadata, spec: GroupSpec, expected: dict[str, Assigned]) -> None:
    assert spec.homogeneous
    assert plain(ASSIGNOR.assign(spec, cluster)) == expected


def test_homogeneous_java_order_of_the_test_topic_ids() -> None:
    # The fact the first two cases rest on: Java's HashSet<Uuid> walks T2, T3, T1 (buckets 1, 9, 10).
    cluster = cluster_of((T1, 1), (T2, 1), (T3, 1))
    assert java_topic_order([t1, t2, t3], cluster) == [t2, t3, t1]
    # Without topic ids, names stand in.
    assert java_topic_order([t3, t1, t2], ClusterMetadata.of({t1: 1, t2: 1, t3: 1})) == [t1, t2, t3]


def test_homogeneous_large_sample_is_valid_and_balanced() -> None:
    # testValidityAndBalanceForLargeSampleSet: 99 topics of 3 partitions, members member1..member49.
    cluster = ClusterMetadata.of({f"topic-{i}": 3 for i in range(1, 100)})
    topics = frozenset(cluster.topics)
    spec = group(**{f"member{i}": member(set(topics)) for i in range(1, 50)})
    result = ASSIGNOR.assign(spec, cluster)
    check_common_server_properties(ASSIGNOR, spec, cluster, result)
    assert_balanced(partition_counts(result))


# -- UniformHeterogeneousAssignmentBuilderTest (trunk, KAFKA-17710) ---------------------------------

HETEROGENEOUS_CASES = [
    pytest.param(
        cluster_of((T1, 3), (T3, 6)),
        group(A=member({t1, t3}), B=member({t3})),
        {"A": {t1: {0, 1, 2}, t3: {4}}, "B": {t3: {0, 1, 2, 3, 5}}},
        id="testFirstAssignmentTwoMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T3, 1), (T1, 2)),
        group(A=member({t3}), B=member({t3}), C=member({t1})),
        {"A": {t3: {0}}, "B": {}, "C": {t1: {0, 1}}},
        id="testFirstAssignmentNumMembersGreaterThanTotalNumPartitions",
    ),
    pytest.param(
        cluster_of((T1, 6), (T2, 4), (T3, 4)),
        group(
            A=member({t1}, {t1: {0, 1, 2}}),
            B=member({t1, t2}, {t1: {3}, t2: {0}}),
            C=member({t1, t2, t3}, {t1: {4, 5}, t2: {1, 2, 3}, t3: {0, 1, 2, 3}}),
        ),
        {"A": {t1: {0, 1, 2, 5}}, "B": {t1: {3}, t2: {0, 1, 2, 3}}, "C": {t1: {4}, t3: {0, 1, 2, 3}}},
        id="testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment",
    ),
    pytest.param(
        cluster_of((T1, 6), (T2, 5), (T3, 3), (T4, 3)),
        group(
            A=member({t1, t3}, {t1: {0, 1, 2, 3}, t3: {0, 1}}),
            B=member({t1, t2, t3, t4}, {t2: {0, 1, 2}, t4: {0, 1, 2}}),
        ),
        {"A": {t1: {0, 1, 2, 3, 4, 5}, t3: {0, 1, 2}}, "B": {t2: {0, 1, 2, 3, 4}, t4: {0, 1, 2}}},
        id="testReassignmentWhenPartitionsAreAddedForTwoMembers",
    ),
    pytest.param(
        cluster_of((T1, 6), (T2, 7)),
        group(
            A=member({t1}, {t1: {0, 2}, t2: {0}}),
            B=member({t1, t2}, {t1: {1}, t2: {1, 2}}),
            C=member({t1, t2}),
        ),
        {"A": {t1: {0, 2, 3, 4, 5}}, "B": {t1: {1}, t2: {1, 2, 6}}, "C": {t2: {0, 3, 4, 5}}},
        id="testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T1, 3), (T2, 8), (T3, 3)),
        group(A=member({t1, t3}, {t1: {0, 1, 2}, t3: {0, 1}}), B=member({t2}, {t2: {3, 4, 5, 6}})),
        {"A": {t1: {0, 1, 2}, t3: {0, 1, 2}}, "B": {t2: {0, 1, 2, 3, 4, 5, 6, 7}}},
        id="testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics",
    ),
    pytest.param(
        cluster_of((T1, 3), (T2, 5)),
        group(A=member({t1}, {t1: {0, 2}, t2: {1, 3}}), B=member({t1, t2}, {t1: {1}, t2: {0, 2, 4}})),
        {"A": {t1: {0, 1, 2}}, "B": {t2: {0, 1, 2, 3, 4}}},
        id="testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
    ),
    pytest.param(
        cluster_of((T1, 3)),
        group(A=member({t1}), B=member(set())),
        {"A": {t1: {0, 1, 2}}, "B": {}},
        id="testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions",
    ),
]


@pytest.mark.parametrize(("cluster", "spec", "expected"), HETEROGENEOUS_CASES)
def test_heterogeneous_java_table(cluster: ClusterMetadata, spec: GroupSpec, expected: dict[str, Assigned]) -> None:
    assert not spec.homogeneous
    assert plain(ASSIGNOR.assign(spec, cluster)) == expected
    # The tie-break "topic id ascending" agrees with names here: the result is the same without ids.
    by_name = ClusterMetadata.of({t: m.num_partitions for t, m in cluster.topics.items()})
    assert plain(ASSIGNOR.assign(spec, by_name)) == expected


def test_heterogeneous_partitions_run_out() -> None:
    # testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions. Java forces the
    # heterogeneous builder (TestGroupSpecImpl with HETEROGENEOUS) although both members subscribe
    # to the same topics; the broker would pick the homogeneous one, so call the builder directly.
    cluster = cluster_of((T1, 2), (T2, 2), (T3, 2))
    spec = group(A=member({t1, t2, t3}, {t1: {0, 1}, t2: {0, 1}, t3: {0, 1}}), B=member({t1, t2, t3}))
    result = assign_heterogeneous(["A", "B"], spec, cluster)
    assert plain(result) == {"A": {t2: {0}, t3: {0, 1}}, "B": {t1: {0, 1}, t2: {1}}}


# -- Java's "nothing to do" cases: same outcome, our shape --------------------------------------------


def test_no_subscription_gives_empty_assignments() -> None:
    # testOneMemberNoTopicSubscription / testTwoMembersNoTopicSubscription: Java returns an empty
    # GroupAssignment; we answer every member with {} (the coordinator reads both the same way).
    cluster = cluster_of((T1, 3))
    assert ASSIGNOR.assign(group(A=member(set())), cluster) == {"A": {}}
    assert ASSIGNOR.assign(group(A=member(set()), B=member(set())), cluster) == {"A": {}, "B": {}}


def test_unknown_topics_are_ignored_like_the_broker() -> None:
    # testOneMemberSubscribedToNonexistentTopic / testTwoMembersSubscribedToNonexistentTopics: the
    # Java assignor throws for a topic id missing from the metadata, but the broker never passes one
    # (TopicIds skips names it cannot resolve), and our input is names: they are ignored.
    cluster = cluster_of((T1, 3))
    assert ASSIGNOR.assign(group(A=member({t2})), cluster) == {"A": {}}
    assert ASSIGNOR.assign(group(A=member({t3}), B=member({t2})), cluster) == {"A": {}, "B": {}}
    # Subscriptions differ by name, so this is the heterogeneous builder: t1 goes round the two.
    assert plain(ASSIGNOR.assign(group(A=member({t1, t2}), B=member({t1})), cluster)) == {
        "A": {t1: {0, 2}},
        "B": {t1: {1}},
    }


def test_empty_group() -> None:
    assert ASSIGNOR.assign(GroupSpec({}), cluster_of((T1, 3))) == {}


# -- CommonAssignorTests (trunk), with and without racks -----------------------------------------------

COMMON_CLUSTER = ClusterMetadata.of(
    {"topic1": 2, "topic2": 5, "topic3": 7},
    # MetadataImageBuilder.addRacks(): every partition has replicas on racks.
    racks={t: tuple(frozenset({f"rack{p % 3 + 1}", f"rack{(p + 1) % 3 + 1}"}) for p in range(n)) for t, n in
           {"topic1": 2, "topic2": 5, "topic3": 7}.items()},
)
ALL3 = {"topic1", "topic2", "topic3"}
BUILDERS = {"HOMOGENEOUS": assign_homogeneous, "HETEROGENEOUS": assign_heterogeneous}


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", sorted(BUILDERS))
def test_assignment_reuse(subscription_type: str, rack_aware: bool) -> None:
    # testAssignmentReuse: an unchanged assignment comes back unchanged.
    build = BUILDERS[subscription_type]
    racks = {"A": "rack1", "B": "rack2", "C": "rack3"} if rack_aware else {}
    spec = group(**{m: member(ALL3, rack=racks.get(m)) for m in "ABC"})
    order = java_member_order(spec.members)
    first = build(order, spec, COMMON_CLUSTER)
    again = group(**{m: member(ALL3, {t: set(ps) for t, ps in first[m].items()}, rack=racks.get(m)) for m in "ABC"})
    assert build(order, again, COMMON_CLUSTER) == first
    # Racks do not change anything: trunk's server-side assignors are not rack-aware (KAFKA-16694).
    plain_spec = group(**{m: member(ALL3) for m in "ABC"})
    assert build(order, plain_spec, COMMON_CLUSTER) == first


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", sorted(BUILDERS))
def test_iteration_order_stickiness(subscription_type: str, rack_aware: bool) -> None:
    # testReassignmentStickiness (later testIterationOrderStickiness): once assigned, walking the
    # members in any of the six orders gives the same assignment. For the homogeneous builder this
    # is what KAFKA-18688 fixed. Only B has a rack, so A and C stay interchangeable.
    build = BUILDERS[subscription_type]
    rack = {"B": "rack1"} if rack_aware else {}
    spec = group(**{m: member(ALL3, rack=rack.get(m)) for m in "ABC"})
    first = build(["A", "B", "C"], spec, COMMON_CLUSTER)
    expected = plain(first)
    with_assignment = group(
        **{m: member(ALL3, {t: set(ps) for t, ps in first[m].items()}, rack=rack.get(m)) for m in "ABC"}
    )
    for order in itertools.permutations("ABC"):
        assert plain(build(list(order), with_assignment, COMMON_CLUSTER)) == expected, order


# -- Java's iteration orders ------------------------------------------------------------------------------


def test_java_string_hash_facts() -> None:
    # String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, in 32-bit arithmetic.
    assert java_string_hash("") == 0
    assert java_string_hash("A") == 65
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == 0x80000000  # Integer.MIN_VALUE
    # A supplementary character counts as its two surrogates: "\U0001F600" is \uD83D\uDE00.
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00


def test_java_member_order_is_hashmap_order() -> None:
    # HashMap of 3 keys: 16 buckets; "A", "B", "C" hash to 65, 66, 67 -> buckets 1, 2, 3.
    assert java_member_order(["C", "A", "B"]) == ["A", "B", "C"]
    # "Aa" and "BB" collide; Java keeps insertion order there, we use member id order.
    assert java_member_order(["BB", "Aa"]) == ["Aa", "BB"]
    # 13 keys make the table grow to 32 buckets: "P" (80) then sits in bucket 16, after "A" (1).
    keys = [chr(c) for c in range(ord("A"), ord("A") + 13)] + ["P"]
    assert java_member_order(keys)[-1] == "P"


# -- properties --------------------------------------------------------------------------------------------


def _sizes(result: TargetAssignment) -> dict[str, int]:
    return partition_counts(result)


@st.composite
def current_assignments(draw: st.DrawFn, cluster: ClusterMetadata, members: list[str]) -> dict[str, dict[str, frozenset[int]]]:
    """A valid current assignment: each partition of each known topic owned by nobody or by one
    member, subscribed to its topic or not (after a subscription change)."""
    owned: dict[str, dict[str, set[int]]] = {m: {} for m in members}
    for topic, meta in cluster.topics.items():
        for p in range(meta.num_partitions):
            owner = draw(st.sampled_from([None, *members]))
            if owner is not None:
                owned[owner].setdefault(topic, set()).add(p)
    return {m: {t: frozenset(ps) for t, ps in d.items()} for m, d in owned.items()}


@st.composite
def topologies_with_assignment(
    draw: st.DrawFn, *, identical: bool = False, racks: bool = False
) -> tuple[ClusterMetadata, GroupSpec]:
    cluster, subscriptions = draw(topologies(identical=identical, racks=racks))
    assigned = draw(current_assignments(cluster, list(subscriptions)))
    return cluster, to_group_spec(subscriptions, assigned)


@MODEST
@given(topologies_with_assignment(racks=True))
def test_common_server_properties(topology: tuple[ClusterMetadata, GroupSpec]) -> None:
    # Exactly-once ownership, subscribed-only, every member present, deterministic whatever the order.
    cluster, spec = topology
    result = ASSIGNOR.assign(spec, cluster)
    check_common_server_properties(ASSIGNOR, spec, cluster, result)


@MODEST
@given(topologies_with_assignment(identical=True, racks=True))
def test_identical_subscriptions_are_balanced_and_maximally_sticky(topology: tuple[ClusterMetadata, GroupSpec]) -> None:
    cluster, spec = topology
    result = ASSIGNOR.assign(spec, cluster)
    sizes = _sizes(result)
    assert_balanced(sizes)  # max - min <= 1
    for m, spec_m in spec.members.items():
        # A member keeps what it owns of its topics up to its new size: it loses partitions only
        # when it owned more than it ends up with (Balance > Stickiness, nothing more).
        before = {(t, p) for t, ps in spec_m.assigned.items() if t in spec_m.subscribed_topics for p in ps}
        after = {(t, p) for t, ps in result[m].items() for p in ps}
        assert len(before & after) == min(len(before), sizes[m]), (m, before, after)


@MODEST
@given(topologies_with_assignment(racks=True))
def test_topic_subscribers_are_balanced(topology: tuple[ClusterMetadata, GroupSpec]) -> None:
    # The heterogeneous builder's criterion: a member holding partitions of a topic is at most one
    # partition above any other subscriber of that topic (Java's balanceTopic; with overlapping
    # subscriptions the group as a whole may still be off by more, the javadoc's 9/10/11).
    cluster, spec = topology
    result = ASSIGNOR.assign(spec, cluster)
    sizes = _sizes(result)
    for m, topics in result.items():
        for topic in topics:
            for other, other_spec in spec.members.items():
                if topic in other_spec.subscribed_topics:
                    assert sizes[m] - sizes[other] <= 1, (m, other, topic, sizes)


@MODEST
@given(topologies_with_assignment(racks=True))
def test_a_computed_assignment_is_a_fixed_point(topology: tuple[ClusterMetadata, GroupSpec]) -> None:
    # Stickiness when balance allows: feeding the target back moves nothing.
    cluster, spec = topology
    result = ASSIGNOR.assign(spec, cluster)
    again = GroupSpec(
        {m: MemberSpec(m, s.subscribed_topics, result[m], s.instance_id, s.rack_id) for m, s in spec.members.items()}
    )
    assert ASSIGNOR.assign(again, cluster) == result


@MODEST
@given(topologies(identical=True, unknown_topics=False, empty_topics=False), st.data())
def test_member_leaving_moves_only_its_partitions(topology: Topology, data: st.DataObject) -> None:
    # Identical subscriptions: when a member leaves, the others keep everything they had.
    cluster, subscriptions = topology
    spec = to_group_spec(subscriptions)
    first = ASSIGNOR.assign(spec, cluster)
    leaver = data.draw(st.sampled_from(sorted(spec.members)))
    rest = GroupSpec(
        {m: MemberSpec(m, s.subscribed_topics, first[m], s.instance_id) for m, s in spec.members.items() if m != leaver}
    )
    second = ASSIGNOR.assign(rest, cluster)
    for m in rest.members:
        for topic, partitions in first[m].items():
            assert partitions <= second[m].get(topic, frozenset()), (m, topic)


@MODEST
@given(topologies_with_assignment(identical=True), st.permutations(range(8)))
def test_homogeneous_balanced_input_is_kept_in_any_iteration_order(
    topology: tuple[ClusterMetadata, GroupSpec], permutation: list[int]
) -> None:
    # KAFKA-18688: an already balanced assignment does not move, whatever the member order.
    cluster, spec = topology
    base = ASSIGNOR.assign(spec, cluster)
    again = GroupSpec({m: MemberSpec(m, s.subscribed_topics, base[m]) for m, s in spec.members.items()})
    members = sorted(spec.members)
    order = [members[i] for i in permutation if i < len(members)]
    assert assign_homogeneous(order, again, cluster) == base


def test_deterministic_whatever_the_dict_orders() -> None:
    cluster = cluster_of((T1, 5), (T2, 4))
    a = group(A=member({t1, t2}, {t1: {0, 1, 2}, t2: {0}}), B=member({t1, t2}), C=member({t1}))
    b = group(C=member({t1}), B=member({t1, t2}), A=member({t1, t2}, {t1: {0, 1, 2}, t2: {0}}))
    assert ASSIGNOR.assign(a, cluster) == ASSIGNOR.assign(b, cluster) == ASSIGNOR.assign(a, cluster)


# -- scale and docs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("homogeneous", [True, False])
def test_scale_1000_members_10000_partitions(homogeneous: bool) -> None:
    # The broker recomputes on every group epoch bump: no quadratic scans. Generous bound; ~20-100 ms.
    cluster = ClusterMetadata.of({f"t{i}": 100 for i in range(100)})
    names = sorted(cluster.topics)
    spec = GroupSpec(
        {
            f"member-{i:04d}": MemberSpec(
                f"member-{i:04d}", frozenset(names if homogeneous else names[(i % 4) * 20 : (i % 4) * 20 + 40])
            )
            for i in range(1000)
        }
    )
    started = time.perf_counter()
    first = ASSIGNOR.assign(spec, cluster)
    again = GroupSpec({m: MemberSpec(m, s.subscribed_topics, first[m]) for m, s in list(spec.members.items())[1:]})
    ASSIGNOR.assign(again, cluster)
    assert time.perf_counter() - started < 10.0
    assert sum(_sizes(first).values()) == 10_000


def test_docstring_examples() -> None:
    assert doctest.testmod(mockbroker_assignors.uniform).failed == 0
