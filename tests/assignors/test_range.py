"""Tests of the "range" assignor: Java's own test cases as a table, worked examples, properties,
and a differential run against kafka-python's RangePartitionAssignor."""

from __future__ import annotations

import doctest
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.coordinator.assignors.range import RangePartitionAssignor  # type: ignore[import-untyped]

import mockbroker_assignors.range
from mockbroker_assignors.range import RangeAssignor, java_string_key, member_order, member_sort_key
from mockbroker_assignors.types import (
    ClusterMetadata,
    RebalanceProtocol,
    Subscription,
    TopicMetadata,
    TopicPartition,
)
from tests.assignors.properties import (
    MODEST,
    as_sets,
    assert_balanced,
    by_instance,
    check_common_properties,
    kafka_python_assign,
    names,
    sub,
    topic_counts,
    topologies,
    tps,
)


def test_protocol_attributes() -> None:
    assignor = RangeAssignor()
    assert assignor.name == "range"
    assert assignor.supported_protocols == (RebalanceProtocol.EAGER,)


def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(mockbroker_assignors.range, raise_on_error=False)
    assert tried > 0 and failures == 0


# -- worked examples from the reference articles ----------------------------------------------------


def test_seven_partitions_over_three_consumers_is_3_2_2() -> None:
    every = sub("t0")
    result = RangeAssignor().assign(ClusterMetadata.of({"t0": 7}), {"c0": every, "c1": every, "c2": every})
    assert names(result, "c0") == ["t0-0", "t0-1", "t0-2"]
    assert names(result, "c1") == ["t0-3", "t0-4"]
    assert names(result, "c2") == ["t0-5", "t0-6"]


def test_four_topics_of_two_partitions_over_three_consumers_leaves_one_idle() -> None:
    # Per topic: 2 // 3 = 0 each, and the first 2 % 3 = 2 consumers get one; c2 is never first two.
    topics = ("t0", "t1", "t2", "t3")
    every = sub(*topics)
    cluster = ClusterMetadata.of(dict.fromkeys(topics, 2))
    result = RangeAssignor().assign(cluster, {"c2": every, "c1": every, "c0": every})
    assert names(result, "c0") == ["t0-0", "t1-0", "t2-0", "t3-0"]
    assert names(result, "c1") == ["t0-1", "t1-1", "t2-1", "t3-1"]
    assert names(result, "c2") == []


def test_heterogeneous_subscriptions() -> None:
    # t0, t1, t2 with 1, 2, 3 partitions; c0 [t0], c1 [t0, t1], c2 [t0, t1, t2]. Per topic:
    # t0 -> c0 (first of three); t1 -> c1, c2; t2 -> c2 alone.
    cluster = ClusterMetadata.of({"t0": 1, "t1": 2, "t2": 3})
    result = RangeAssignor().assign(cluster, {"c0": sub("t0"), "c1": sub("t0", "t1"), "c2": sub("t0", "t1", "t2")})
    assert names(result, "c0") == ["t0-0"]
    assert names(result, "c1") == ["t1-0"]
    assert names(result, "c2") == ["t1-1", "t2-0", "t2-1", "t2-2"]


def test_java_javadoc_example_and_static_rolling_bounce() -> None:
    # RangeAssignor javadoc: C0 [t0p0, t0p1, t1p0, t1p1], C1 [t0p2, t1p2]; after a bounce that
    # renames C0 -> C3 and C1 -> C2 dynamic members swap ranges, static members (I0, I1) keep them.
    cluster = ClusterMetadata.of({"t0": 3, "t1": 3})
    both = sub("t0", "t1")
    first = as_sets(RangeAssignor().assign(cluster, {"C0": both, "C1": both}))
    assert first == {"C0": tps("t0-0", "t0-1", "t1-0", "t1-1"), "C1": tps("t0-2", "t1-2")}
    bounced = as_sets(RangeAssignor().assign(cluster, {"C3": both, "C2": both}))
    assert bounced == {"C2": tps("t0-0", "t0-1", "t1-0", "t1-1"), "C3": tps("t0-2", "t1-2")}
    static = as_sets(RangeAssignor().assign(cluster, {"C3": sub("t0", "t1", instance="I0"), "C2": sub("t0", "t1", instance="I1")}))
    assert static == {"C3": tps("t0-0", "t0-1", "t1-0", "t1-1"), "C2": tps("t0-2", "t1-2")}


def test_rack_aware_docstring_case_differs_from_plain_range() -> None:
    on_a, on_b = frozenset({"a"}), frozenset({"b"})
    cluster = ClusterMetadata.of({"t0": 4}, racks={"t0": (on_a, on_b, on_a, on_b)})
    racked = {"A": sub("t0", rack="a"), "B": sub("t0", rack="b")}
    assert as_sets(RangeAssignor().assign(cluster, racked)) == {"A": tps("t0-0", "t0-2"), "B": tps("t0-1", "t0-3")}
    plain = {"A": sub("t0"), "B": sub("t0")}
    assert as_sets(RangeAssignor().assign(cluster, plain)) == {"A": tps("t0-0", "t0-1"), "B": tps("t0-2", "t0-3")}


# -- member order: AbstractPartitionAssignorTest.testMemberInfoSorting* ---------------------------------


@pytest.mark.parametrize(
    ("java_test", "members", "expected"),
    [
        ("testMemberInfoSortingWithoutGroupInstanceId", [("a", None), ("b", None), ("c", None)], ["a", "b", "c"]),
        ("testMemberInfoSortingWithAllGroupInstanceId", [("a", "y"), ("b", "z"), ("c", "x")], ["c", "a", "b"]),
        ("testMemberInfoSortingSomeGroupInstanceId", [("a", None), ("b", "y"), ("c", "x")], ["c", "b", "a"]),
    ],
)
def test_member_info_sorting(java_test: str, members: list[tuple[str, str | None]], expected: list[str]) -> None:
    subscriptions = {m: sub("t", instance=i) for m, i in reversed(members)}
    assert member_order(subscriptions) == expected, java_test


def test_member_info_sorting_many() -> None:
    # AbstractPartitionAssignorTest.testMergeSortManyMemberInfo: static members (sorted) first, then
    # dynamic (sorted), whatever the input order; three-digit ids so string and number order agree.
    ids = [str(i + 100) for i in range(100)]
    static = {i for i in ids if int(i) % 3 == 0}
    subscriptions = {i: sub("t", instance=i if i in static else None) for i in reversed(ids)}
    assert member_order(subscriptions) == sorted(static) + sorted(set(ids) - static)


def test_member_order_uses_java_utf16_string_order() -> None:
    # Java's String.compareTo compares UTF-16 code units: U+1F600 is the pair D83D DE00, which
    # sorts before U+FF61; Python's code-point order says the opposite.
    emoji, halfwidth = "\U0001f600", "\uff61"
    assert halfwidth < emoji
    assert java_string_key(emoji) < java_string_key(halfwidth)
    assert member_order({halfwidth: sub("t"), emoji: sub("t")}) == [emoji, halfwidth]
    assert member_sort_key("z", "i") < member_sort_key("a", None)


# -- RangeAssignorTest: cases run under every RackConfig -------------------------------------------------
#
# Java's initializeRacks(rackConfig, maxConsumers) sets replicationFactor = maxConsumers, numBrokerRacks =
# maxConsumers (0 for NO_BROKER_RACK), consumer racks only unless NO_CONSUMER_RACK, and forces the
# rack-aware pass (preferRackAwareLogic = true). Brokers and racks come from
# AbstractPartitionAssignorTest.partitionInfos; the helpers below build the same inputs.

ALL_RACKS = ("a", "b", "c", "d", "e", "f")  # AbstractPartitionAssignorTest.ALL_RACKS
RACK_CONFIGS = ("NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK")


def java_topic(
    topic: str, num_partitions: int, replication_factor: int, broker_racks: Sequence[str | None], next_index: int
) -> TopicMetadata:
    """Partition p's replicas are brokers (p + j + next_index) % len(brokers), j < replication factor."""
    racks = []
    for p in range(num_partitions):
        replicas = [broker_racks[(p + j + next_index) % len(broker_racks)] for j in range(replication_factor)]
        racks.append(frozenset(r for r in replicas if r is not None))
    return TopicMetadata(topic, num_partitions, tuple(racks))


def java_topic_with_rack_count(topic: str, num_partitions: int, replication_factor: int, num_broker_racks: int) -> TopicMetadata:
    """AbstractPartitionAssignorTest.partitionInfos(topic, n, rf, numBrokerRacks, 0)."""
    num_brokers = replication_factor if num_broker_racks <= 0 else num_broker_racks * replication_factor
    broker_racks = [None if num_broker_racks <= 0 else ALL_RACKS[i % num_broker_racks] for i in range(num_brokers)]
    return java_topic(topic, num_partitions, replication_factor, broker_racks, 0)


@dataclass
class RackSetup:
    """RangeAssignorTest.initializeRacks and its subscription(topics, consumerIndex) helper."""

    config: str
    max_consumers: int = 3

    @property
    def num_broker_racks(self) -> int:
        return self.max_consumers if self.config != "NO_BROKER_RACK" else 0

    def cluster(self, **sizes: int) -> ClusterMetadata:
        return ClusterMetadata(
            {t: java_topic_with_rack_count(t, n, self.max_consumers, self.num_broker_racks) for t, n in sizes.items()}
        )

    def sub(self, topics: Sequence[str], index: int, instance: str | None = None) -> Subscription:
        num_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[index % num_racks] if self.config != "NO_CONSUMER_RACK" else None
        return Subscription(topics=tuple(topics), rack_id=rack, group_instance_id=instance)


JAVA = RangeAssignor(prefer_rack_aware_logic=True)  # what initializeRacks does to Java's assignor


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_one_consumer_no_topic(config: str) -> None:
    # RangeAssignorTest.testOneConsumerNoTopic
    s = RackSetup(config)
    assert as_sets(JAVA.assign(s.cluster(), {"consumer1": s.sub([], 0)})) == {"consumer1": set()}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_one_consumer_nonexistent_topic(config: str) -> None:
    # RangeAssignorTest.testOneConsumerNonexistentTopic
    s = RackSetup(config)
    assert as_sets(JAVA.assign(s.cluster(), {"consumer1": s.sub(["topic1"], 0)})) == {"consumer1": set()}


@dataclass(frozen=True)
class Case:
    java_test: str
    sizes: Mapping[str, int]
    members: Sequence[tuple[str, Sequence[str], str | None]]  # member id, topics, instance id (index = order)
    expected: Mapping[str, Sequence[str]]
    max_consumers: int = 3


CASES = [
    Case("testOneConsumerOneTopic", {"topic1": 3}, [("consumer1", ["topic1"], None)],
         {"consumer1": ["topic1-0", "topic1-1", "topic1-2"]}),
    Case("testOnlyAssignsPartitionsFromSubscribedTopics", {"topic1": 3, "other": 3}, [("consumer1", ["topic1"], None)],
         {"consumer1": ["topic1-0", "topic1-1", "topic1-2"]}),
    Case("testOneConsumerMultipleTopics", {"topic1": 1, "topic2": 2}, [("consumer1", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic2-0", "topic2-1"]}),
    Case("testTwoConsumersOneTopicOnePartition", {"topic1": 1},
         [("consumer1", ["topic1"], None), ("consumer2", ["topic1"], None)],
         {"consumer1": ["topic1-0"], "consumer2": []}),
    Case("testTwoConsumersOneTopicTwoPartitions", {"topic1": 2},
         [("consumer1", ["topic1"], None), ("consumer2", ["topic1"], None)],
         {"consumer1": ["topic1-0"], "consumer2": ["topic1-1"]}),
    Case("testMultipleConsumersMixedTopics", {"topic1": 3, "topic2": 2},
         [("consumer1", ["topic1"], None), ("consumer2", ["topic1", "topic2"], None), ("consumer3", ["topic1"], None)],
         {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-0", "topic2-1"], "consumer3": ["topic1-2"]}),
    Case("testTwoConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer1", ["topic1", "topic2"], None), ("consumer2", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic1-1", "topic2-0", "topic2-1"], "consumer2": ["topic1-2", "topic2-2"]}),
    # Static members compare on instance id: consumer-b (instance1) before consumer-a (instance2).
    Case("testTwoStaticConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], "instance2")],
         {"consumer-b": ["topic1-0", "topic1-1", "topic2-0", "topic2-1"], "consumer-a": ["topic1-2", "topic2-2"]}),
    # A static member sorts before a dynamic one whatever their member ids.
    Case("testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], None)],
         {"consumer-b": ["topic1-0", "topic1-1", "topic2-0", "topic2-1"], "consumer-a": ["topic1-2", "topic2-2"]}),
    Case("testStaticMemberRangeAssignmentPersistent", {"topic1": 5, "topic2": 4},
         [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
          ("consumer3", ["topic1", "topic2"], "instance3"), ("consumer4", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic1-1", "topic2-0"], "consumer2": ["topic1-2", "topic2-1"],
          "consumer3": ["topic1-3", "topic2-2"], "consumer4": ["topic1-4", "topic2-3"]},
         max_consumers=5),
    # ... then dynamic consumer4 is replaced by consumer5: same ranges. Java built consumer5's
    # subscription with the next consumer index (4, hence its rack); the "" entry only holds index 3.
    Case("testStaticMemberRangeAssignmentPersistent (consumer5 replaces consumer4)", {"topic1": 5, "topic2": 4},
         [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
          ("consumer3", ["topic1", "topic2"], "instance3"), ("", [], None), ("consumer5", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic1-1", "topic2-0"], "consumer2": ["topic1-2", "topic2-1"],
          "consumer3": ["topic1-3", "topic2-2"], "consumer5": ["topic1-4", "topic2-3"]},
         max_consumers=5),
]


@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.java_test)
def test_java_range_cases(case: Case, config: str) -> None:
    s = RackSetup(config, case.max_consumers)
    cluster = s.cluster(**case.sizes)
    subscriptions = {m: s.sub(topics, index, instance) for index, (m, topics, instance) in enumerate(case.members) if m}
    result = JAVA.assign(cluster, subscriptions)
    # Java's assertAssignment compares sets; where it compares lists (the persistence test) they are
    # in topic-then-partition order, which is ours.
    assert {m: names(result, m) for m in result} == {m: list(ps) for m, ps in case.expected.items()}
    check_common_properties(JAVA, cluster, subscriptions, result)


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_static_member_assignment_persistent_after_member_id_changes(config: str) -> None:
    # RangeAssignorTest.testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges
    s = RackSetup(config)
    cluster = s.cluster(topic1=5, topic2=5)
    members = {"consumer1": s.sub(["topic1", "topic2"], 0, "instance1"),
               "consumer2": s.sub(["topic1", "topic2"], 1, "instance2"),
               "consumer3": s.sub(["topic1", "topic2"], 2, "instance3")}
    expected = {"instance1": tps("topic1-0", "topic1-1", "topic2-0", "topic2-1"),
                "instance2": tps("topic1-2", "topic1-3", "topic2-2", "topic2-3"),
                "instance3": tps("topic1-4", "topic2-4")}
    assert by_instance(JAVA.assign(cluster, members), members) == expected
    renamed = {"consumer1": members["consumer1"], "consumer4": members["consumer3"], "consumer5": members["consumer2"]}
    assert by_instance(JAVA.assign(cluster, renamed), renamed) == expected


def test_rack_aware_static_member_assignment_persistent_after_member_id_changes() -> None:
    # RangeAssignorTest.testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges:
    # replication factor 2 over 3 broker racks, consumers on racks a, b, c.
    s = RackSetup("BROKER_AND_CONSUMER_RACK")
    cluster = ClusterMetadata({t: java_topic_with_rack_count(t, 5, 2, 3) for t in ("topic1", "topic2")})
    members = {"consumer1": s.sub(["topic1", "topic2"], 0, "instance1"),
               "consumer2": s.sub(["topic1", "topic2"], 1, "instance2"),
               "consumer3": s.sub(["topic1", "topic2"], 2, "instance3")}
    expected = {"instance1": tps("topic1-0", "topic1-2", "topic2-0", "topic2-2"),
                "instance2": tps("topic1-1", "topic1-3", "topic2-1", "topic2-3"),
                "instance3": tps("topic1-4", "topic2-4")}
    assert by_instance(JAVA.assign(cluster, members), members) == expected
    renamed = {"consumer1": members["consumer1"], "consumer4": members["consumer3"], "consumer5": members["consumer2"]}
    assert by_instance(JAVA.assign(cluster, renamed), renamed) == expected


# -- RangeAssignorTest: rack-aware cases (verifyRackAssignment) --------------------------------------------
#
# AbstractPartitionAssignorTest.verifyRackAssignment(assignor, topics, replicationFactor, brokerRacks,
# consumerRacks, consumerTopics, expected, numPartitionsWithRackMismatch): consumers are "consumer<i>";
# topics get brokers' replicas in insertion order (partitionsPerTopic's running nextIndex); expected
# strings are each consumer's partitions as sorted "topic-partition" strings; the mismatch count (when
# >= 0) is how many partitions went to a consumer with a rack that holds no replica of them.


@dataclass(frozen=True)
class RackCase:
    java_test: str
    sizes: Mapping[str, int]
    replication_factor: int
    broker_racks: Sequence[str | None]
    consumer_racks: Sequence[str | None]
    consumer_topics: Sequence[Sequence[str]]
    expected: Sequence[str]
    mismatches: int
    prefer_rack_aware_logic: bool = False


def racks(n: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def non_rack_aware(java_test: str, sizes: Mapping[str, int], consumer_topics: Sequence[Sequence[str]],
                   expected: Sequence[str]) -> list[RackCase]:
    """RangeAssignorTest.verifyNonRackAwareAssignment: seven set-ups that must all give plain ranges."""
    rows: list[tuple[int, list[str | None], list[str | None], int, bool]] = [
        (3, null_racks(3), racks(3), -1, False),
        (3, racks(3), null_racks(3), -1, False),
        (3, racks(3), racks(3), 0, False),
        (4, racks(4), racks(3), 0, False),
        (3, racks(3), ["d", "e", "f"], -1, False),
        (3, racks(3), [None, "e", "f"], -1, False),
        (3, racks(3), racks(3), 0, True),
    ]
    return [RackCase(f"{java_test} (non-rack-aware {i})", sizes, rf, brokers, consumers, consumer_topics, expected, mm, prefer)
            for i, (rf, brokers, consumers, mm, prefer) in enumerate(rows)]


T123 = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]
UNIFORM5 = {"t1": 5, "t2": 5, "t3": 5}
COPART = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
COPART_RACKS: list[str | None] = ["a", "b", "b", "a"]
SIX = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
NINE = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]  # t7-t9 do not exist

RACK_CASES = [
    *non_rack_aware("testRackAwareAssignmentWithUniformSubscription", T123, [ALL3] * 3,
                    ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]),
    RackCase("testRackAwareAssignmentWithUniformSubscription", T123, 1, racks(3), racks(3), [ALL3] * 3,
             ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"], 0),
    RackCase("testRackAwareAssignmentWithUniformSubscription", T123, 2, racks(3), racks(3), [ALL3] * 3,
             ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"], 1),
    RackCase("testRackAwareAssignmentWithUniformSubscription (a consumer rack without partitions)", T123, 3,
             racks(2), racks(3), [ALL3] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"], 4),

    *non_rack_aware("testRackAwareAssignmentWithNonEqualSubscription", T123, [ALL3, ALL3, ["t1", "t3"]],
                    ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"]),
    RackCase("testRackAwareAssignmentWithNonEqualSubscription", T123, 1, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
             ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"], 2),
    RackCase("testRackAwareAssignmentWithNonEqualSubscription", T123, 2, racks(3), racks(3), [ALL3, ALL3, ["t1", "t3"]],
             ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"], 0),
    RackCase("testRackAwareAssignmentWithNonEqualSubscription (a consumer rack without partitions)", T123, 3,
             racks(2), racks(3), [ALL3, ALL3, ["t1", "t3"]],
             ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"], 2),

    # Co-partitioning is prioritized over rack alignment.
    *non_rack_aware("testRackAwareAssignmentWithUniformPartitions", UNIFORM5, [ALL3] * 3,
                    ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]),
    RackCase("testRackAwareAssignmentWithUniformPartitions", UNIFORM5, 1, racks(3), racks(3), [ALL3] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"], 10),
    RackCase("testRackAwareAssignmentWithUniformPartitions", UNIFORM5, 2, racks(3), racks(3), [ALL3] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"], 5),
    RackCase("testRackAwareAssignmentWithUniformPartitions", UNIFORM5, 3, racks(2), racks(3), [ALL3] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"], 3),

    *non_rack_aware("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription", UNIFORM5,
                    [ALL3, ALL3, ["t1", "t3"]],
                    ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"]),
    RackCase("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription", UNIFORM5, 1, racks(3), racks(3),
             [ALL3, ALL3, ["t1", "t3"]],
             ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9),
    RackCase("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription", UNIFORM5, 2, racks(3), racks(3),
             [ALL3, ALL3, ["t1", "t3"]],
             ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0),
    RackCase("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription (a consumer rack without partitions)",
             UNIFORM5, 3, racks(2), racks(3), [ALL3, ALL3, ["t1", "t3"]],
             ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"], 2),

    RackCase("testRackAwareAssignmentWithCoPartitioning", COPART, 3, racks(2), COPART_RACKS,
             [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
             ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1"], -1),
    RackCase("testRackAwareAssignmentWithCoPartitioning", COPART, 2, racks(2), COPART_RACKS,
             [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
             ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1"], 0),
    RackCase("testRackAwareAssignmentWithCoPartitioning", COPART, 1, racks(2), COPART_RACKS,
             [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
             ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"], 0),
    RackCase("testRackAwareAssignmentWithCoPartitioning (all topics)", COPART, 3, racks(2), COPART_RACKS,
             [["t1", "t2", "t3", "t4"]] * 4,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5"], -1),
    RackCase("testRackAwareAssignmentWithCoPartitioning (all topics)", COPART, 2, racks(2), COPART_RACKS,
             [["t1", "t2", "t3", "t4"]] * 4,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5"], 0),
    RackCase("testRackAwareAssignmentWithCoPartitioning (all topics)", COPART, 1, racks(2), COPART_RACKS,
             [["t1", "t2", "t3", "t4"]] * 4,
             ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"], 0),
    RackCase("testRackAwareAssignmentWithCoPartitioning (all topics)", COPART, 1, racks(3), COPART_RACKS,
             [["t1", "t2", "t3", "t4"]] * 4,
             ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"], 6),

    RackCase("testCoPartitionedAssignmentWithSameSubscription", SIX, 3, null_racks(3), ["a", "b", "c"], [NINE] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
              "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
              "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3"], -1),
    RackCase("testCoPartitionedAssignmentWithSameSubscription", SIX, 3, racks(3), ["a", "b", "c"], [NINE] * 3,
             ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
              "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
              "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3"], 0, prefer_rack_aware_logic=True),
    RackCase("testCoPartitionedAssignmentWithSameSubscription", SIX, 2, racks(3), ["a", "b", "c"], [NINE] * 3,
             ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
              "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
              "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3"], 0, prefer_rack_aware_logic=True),
]


def rack_case_inputs(case: RackCase) -> tuple[ClusterMetadata, dict[str, Subscription]]:
    topics: dict[str, TopicMetadata] = {}
    next_index = 0  # AbstractPartitionAssignorTest.partitionsPerTopic walks the LinkedHashMap in order
    for topic, n in case.sizes.items():
        topics[topic] = java_topic(topic, n, case.replication_factor, case.broker_racks, next_index)
        next_index += n
    subscriptions = {
        f"consumer{i}": Subscription(topics=tuple(t), rack_id=r)
        for i, (t, r) in enumerate(zip(case.consumer_topics, case.consumer_racks, strict=True))
    }
    return ClusterMetadata(topics), subscriptions


@pytest.mark.parametrize("case", RACK_CASES, ids=lambda c: f"{c.java_test}-rf{c.replication_factor}")
def test_java_rack_aware_cases(case: RackCase) -> None:
    cluster, subscriptions = rack_case_inputs(case)
    assignor = RangeAssignor(prefer_rack_aware_logic=case.prefer_rack_aware_logic)
    result = assignor.assign(cluster, subscriptions)
    # Java's toSortedString: the partitions' "topic-partition" strings, sorted as strings.
    actual = {m: ", ".join(sorted(f"{tp.topic}-{tp.partition}" for tp in a.partitions)) for m, a in result.items()}
    assert actual == {f"consumer{i}": e for i, e in enumerate(case.expected)}
    if case.mismatches >= 0:
        mismatched = [
            tp
            for m, a in result.items()
            if subscriptions[m].rack_id is not None
            for tp in a.partitions
            if subscriptions[m].rack_id not in cluster.topics[tp.topic].racks_of(tp.partition)
        ]
        assert len(mismatched) == case.mismatches, mismatched
    check_common_properties(assignor, cluster, subscriptions, result)


# -- KIP-881 rules, case by case --------------------------------------------------------------------


def test_empty_consumer_rack_is_ignored() -> None:
    # Java filters rackId with !r.isEmpty(): "" behaves like no rack at all.
    on_a, on_b = frozenset({"a"}), frozenset({"b"})
    cluster = ClusterMetadata.of({"t0": 4}, racks={"t0": (on_a, on_b, on_a, on_b)})
    blank = {"A": sub("t0", rack=""), "B": sub("t0", rack="")}
    assert as_sets(RangeAssignor().assign(cluster, blank)) == {"A": tps("t0-0", "t0-1"), "B": tps("t0-2", "t0-3")}


def test_partitions_on_every_rack_need_no_rack_awareness() -> None:
    # useRackAwareAssignment: when every partition has the same rack set, racks change nothing.
    everywhere = frozenset({"a", "b"})
    cluster = ClusterMetadata.of({"t0": 4}, racks={"t0": (everywhere,) * 4})
    racked = {"A": sub("t0", rack="b"), "B": sub("t0", rack="a")}
    assert as_sets(RangeAssignor().assign(cluster, racked)) == {"A": tps("t0-0", "t0-1"), "B": tps("t0-2", "t0-3")}


def test_co_partitioned_topics_go_first_to_rackless_members_when_another_topic_is_rack_aware() -> None:
    # Once any topic needs rack awareness, assignWithRackMatching visits every group of topics with
    # the same subscribers and partition count. t1/t2 (2 partitions on racks x, y) need none on
    # their own; A's rack "z" matches neither, so partition 0 of both goes to the first matching
    # member, the rackless B, and A gets partition 1 in the plain pass (plain range: A t1-0, t2-0).
    # t3 (3 partitions, only p0 on "z") is rack-aware alone: A takes its local p0, then B takes
    # the rest of its quota of two, p1 and p2 (plain range: A t3-0, t3-1; B t3-2).
    xy, z, y = frozenset({"x", "y"}), frozenset({"z"}), frozenset({"y"})
    cluster = ClusterMetadata.of({"t1": 2, "t2": 2, "t3": 3}, racks={"t1": (xy, xy), "t2": (xy, xy), "t3": (z, y, y)})
    subscriptions = {"A": sub("t1", "t2", "t3", rack="z"), "B": sub("t1", "t2", "t3")}
    result = RangeAssignor().assign(cluster, subscriptions)
    assert as_sets(result) == {"A": tps("t1-1", "t2-1", "t3-0"), "B": tps("t1-0", "t2-0", "t3-1", "t3-2")}
    check_common_properties(RangeAssignor(), cluster, subscriptions, result)


# -- properties ---------------------------------------------------------------------------------------


def classic_range(cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> dict[str, set[TopicPartition]]:
    """The pre-KIP-881 Java RangeAssignor.assign, as an oracle: per topic, subscribers in MemberInfo
    order, n // c each and one more for the first n % c."""
    order = member_order(subscriptions)
    out: dict[str, set[TopicPartition]] = {m: set() for m in subscriptions}
    for topic in {t for s in subscriptions.values() for t in s.topics}:
        n = cluster.partitions_for(topic)
        consumers = [m for m in order if topic in subscriptions[m].topics]
        each, extra = divmod(n, len(consumers))
        for i, m in enumerate(consumers):
            start = each * i + min(i, extra)
            out[m] |= {TopicPartition(topic, p) for p in range(start, start + each + (1 if i < extra else 0))}
    return out


@MODEST
@given(topologies())
def test_common_properties_and_classic_ranges_without_racks(topology: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    cluster, subscriptions = topology
    result = RangeAssignor().assign(cluster, subscriptions)
    check_common_properties(RangeAssignor(), cluster, subscriptions, result)
    assert as_sets(result) == classic_range(cluster, subscriptions)


@MODEST
@given(topologies(racks=True), st.booleans())
def test_common_properties_with_racks(topology: tuple[ClusterMetadata, dict[str, Subscription]], prefer: bool) -> None:
    cluster, subscriptions = topology
    assignor = RangeAssignor(prefer_rack_aware_logic=prefer)
    result = assignor.assign(cluster, subscriptions)
    check_common_properties(assignor, cluster, subscriptions, result)
    # Per-topic balance survives rack awareness: among a topic's subscribers, counts differ by at
    # most one (n // c each, n % c of them one more).
    for topic in {t for s in subscriptions.values() for t in s.topics if cluster.partitions_for(t) > 0}:
        subscribers = [m for m, s in subscriptions.items() if topic in s.topics]
        counts = topic_counts(result, topic, subscribers)
        assert_balanced(counts)
        assert sum(counts.values()) == cluster.partitions_for(topic)


@MODEST
@given(topologies(racks=True), st.booleans())
def test_co_partitioning_of_topics_with_same_subscribers_and_size(
    topology: tuple[ClusterMetadata, dict[str, Subscription]], prefer: bool
) -> None:
    # Javadoc: topics with equal partition count and the same subscribers stay co-partitioned
    # (partition p of each goes to the same member), rack-aware or not.
    cluster, subscriptions = topology
    result = RangeAssignor(prefer_rack_aware_logic=prefer).assign(cluster, subscriptions)
    groups: dict[tuple[frozenset[str], int], list[str]] = {}
    for topic in {t for s in subscriptions.values() for t in s.topics if cluster.partitions_for(t) > 0}:
        subscribers = frozenset(m for m, s in subscriptions.items() if topic in s.topics)
        groups.setdefault((subscribers, cluster.partitions_for(topic)), []).append(topic)
    for topics in groups.values():
        layouts = {
            tuple(sorted((m, tp.partition) for m, a in result.items() for tp in a.partitions if tp.topic == t))
            for t in topics
        }
        assert len(layouts) == 1, topics


@MODEST
@given(topologies(static=True, racks=True), st.data())
def test_static_members_keep_their_partitions_under_new_member_ids(
    topology: tuple[ClusterMetadata, dict[str, Subscription]], data: st.DataObject
) -> None:
    # KIP-345 / RangeAssignor javadoc: ordering by group.instance.id makes the assignment survive
    # member id changes.
    cluster, subscriptions = topology
    new_ids = data.draw(st.lists(st.text("pqrs", min_size=1, max_size=5), min_size=len(subscriptions),
                                 max_size=len(subscriptions), unique=True))
    renamed = dict(zip(new_ids, subscriptions.values(), strict=True))
    before = by_instance(RangeAssignor().assign(cluster, subscriptions), subscriptions)
    after = by_instance(RangeAssignor().assign(cluster, renamed), renamed)
    assert before == after


@MODEST
@given(topologies(identical=True, static=False))
def test_identical_subscriptions_per_topic_ranges_favour_the_first_members(
    topology: tuple[ClusterMetadata, dict[str, Subscription]],
) -> None:
    # The known range skew: with identical subscriptions the first members collect every topic's
    # extra partition, so total counts can differ by up to the number of topics, never more.
    cluster, subscriptions = topology
    result = RangeAssignor().assign(cluster, subscriptions)
    counts = {m: len(a.partitions) for m, a in result.items()}
    topics = {t for t in next(iter(subscriptions.values())).topics if cluster.partitions_for(t) > 0}
    assert_balanced(counts, slack=max(1, len(topics)))
    order = member_order(subscriptions)
    assert [counts[m] for m in order] == sorted(counts.values(), reverse=True)


# -- differential: kafka-python's RangePartitionAssignor --------------------------------------------


@MODEST
@given(topologies(static=False) | topologies(static=True))
def test_same_as_kafka_python_without_racks(topology: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    # Only all-static or all-dynamic groups: kafka-python mis-sorts mixed ones (next test).
    cluster, subscriptions = topology
    ours = as_sets(RangeAssignor().assign(cluster, subscriptions))
    assert ours == kafka_python_assign(RangePartitionAssignor, cluster, subscriptions)


def test_kafka_python_drops_static_members_interleaved_with_dynamic_ones_java_wins() -> None:
    # kafka-python 3.0.12 splits static from dynamic members with itertools.groupby on unsorted
    # input and a dict, so with members in the order static, dynamic, static the first static
    # member is lost: it gets nothing and the others share its range. Java sorts all members with
    # MemberInfo's comparator: s-a (instance i1), s-c (i2), then d-b.
    cluster = ClusterMetadata.of({"t": 6})
    subscriptions = {"s-a": sub("t", instance="i1"), "d-b": sub("t"), "s-c": sub("t", instance="i2")}
    java = {"s-a": tps("t-0", "t-1"), "s-c": tps("t-2", "t-3"), "d-b": tps("t-4", "t-5")}
    assert as_sets(RangeAssignor().assign(cluster, subscriptions)) == java
    kafka_python = kafka_python_assign(RangePartitionAssignor, cluster, subscriptions)
    assert kafka_python == {"s-a": set(), "s-c": tps("t-0", "t-1", "t-2"), "d-b": tps("t-3", "t-4", "t-5")}
