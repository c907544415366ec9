"""Tests of the "roundrobin" assignor: Java's own test cases as a table, worked examples, properties,
and a differential run against kafka-python's RoundRobinPartitionAssignor."""

from __future__ import annotations

import doctest
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # type: ignore[import-untyped]

import mockbroker_assignors.roundrobin
from mockbroker_assignors.range import member_order
from mockbroker_assignors.roundrobin import RoundRobinAssignor
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    RebalanceProtocol,
    Subscription,
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
    topologies,
    tps,
)


def test_protocol_attributes() -> None:
    assignor = RoundRobinAssignor()
    assert assignor.name == "roundrobin"
    assert assignor.supported_protocols == (RebalanceProtocol.EAGER,)


def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(mockbroker_assignors.roundrobin, raise_on_error=False)
    assert tried > 0 and failures == 0


# -- worked examples from the reference articles ------------------------------------------------------


def test_two_topics_of_three_over_two_consumers() -> None:
    # RoundRobinAssignor javadoc: C0 [t0p0, t0p2, t1p1], C1 [t0p1, t1p0, t1p2].
    both = sub("t0", "t1")
    result = RoundRobinAssignor().assign(ClusterMetadata.of({"t0": 3, "t1": 3}), {"c1": both, "c0": both})
    assert names(result, "c0") == ["t0-0", "t0-2", "t1-1"]
    assert names(result, "c1") == ["t0-1", "t1-0", "t1-2"]


def test_heterogeneous_subscriptions_overload_the_widest_subscriber() -> None:
    # RoundRobinAssignor javadoc: t0, t1, t2 with 1, 2, 3 partitions; c0 [t0], c1 [t0, t1],
    # c2 [t0, t1, t2] -> c0 [t0p0], c1 [t1p0], c2 [t1p1, t2p0, t2p1, t2p2].
    cluster = ClusterMetadata.of({"t0": 1, "t1": 2, "t2": 3})
    subscriptions = {"c0": sub("t0"), "c1": sub("t0", "t1"), "c2": sub("t0", "t1", "t2")}
    result = RoundRobinAssignor().assign(cluster, subscriptions)
    assert names(result, "c0") == ["t0-0"]
    assert names(result, "c1") == ["t1-0"]
    assert names(result, "c2") == ["t1-1", "t2-0", "t2-1", "t2-2"]
    check_common_properties(RoundRobinAssignor(), cluster, subscriptions, result)


def test_seven_partitions_over_three_consumers() -> None:
    every = sub("t0")
    result = RoundRobinAssignor().assign(ClusterMetadata.of({"t0": 7}), {"c0": every, "c1": every, "c2": every})
    assert names(result, "c0") == ["t0-0", "t0-3", "t0-6"]
    assert names(result, "c1") == ["t0-1", "t0-4"]
    assert names(result, "c2") == ["t0-2", "t0-5"]


def test_four_topics_of_two_partitions_over_three_consumers_uses_everyone() -> None:
    # Where range leaves c2 idle (test_range), the round goes on across topics: 8 partitions, 3/3/2.
    topics = ("t0", "t1", "t2", "t3")
    every = sub(*topics)
    result = RoundRobinAssignor().assign(ClusterMetadata.of(dict.fromkeys(topics, 2)), {m: every for m in ("c0", "c1", "c2")})
    assert names(result, "c0") == ["t0-0", "t1-1", "t3-0"]
    assert names(result, "c1") == ["t0-1", "t2-0", "t3-1"]
    assert names(result, "c2") == ["t1-0", "t2-1"]


def test_java_javadoc_static_members() -> None:
    # RoundRobinAssignor javadoc: C0, C1, C2 over t0, t1 (3 each) get [t0pi, t1pi]; after a bounce
    # C0 -> C5, C1 -> C3, C2 -> C4 dynamic members are reshuffled, static I0..I2 keep theirs.
    cluster = ClusterMetadata.of({"t0": 3, "t1": 3})
    both = sub("t0", "t1")
    first = as_sets(RoundRobinAssignor().assign(cluster, {"C0": both, "C1": both, "C2": both}))
    assert first == {"C0": tps("t0-0", "t1-0"), "C1": tps("t0-1", "t1-1"), "C2": tps("t0-2", "t1-2")}
    bounced = as_sets(RoundRobinAssignor().assign(cluster, {"C5": both, "C3": both, "C4": both}))
    assert bounced == {"C3": tps("t0-0", "t1-0"), "C4": tps("t0-1", "t1-1"), "C5": tps("t0-2", "t1-2")}
    static = {"C5": sub("t0", "t1", instance="I0"), "C3": sub("t0", "t1", instance="I1"), "C4": sub("t0", "t1", instance="I2")}
    assert as_sets(RoundRobinAssignor().assign(cluster, static)) == {
        "C5": tps("t0-0", "t1-0"), "C3": tps("t0-1", "t1-1"), "C4": tps("t0-2", "t1-2"),
    }


# -- RoundRobinAssignorTest --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    java_test: str
    sizes: Mapping[str, int]
    members: Sequence[tuple[str, Sequence[str], str | None]]  # member id, topics, instance id
    expected: Mapping[str, Sequence[str]]  # Java compares these lists in order


CASES = [
    Case("testOneConsumerNoTopic", {}, [("consumer", [], None)], {"consumer": []}),
    Case("testOneConsumerNonexistentTopic", {}, [("consumer", ["topic"], None)], {"consumer": []}),
    Case("testOneConsumerOneTopic", {"topic": 3}, [("consumer", ["topic"], None)],
         {"consumer": ["topic-0", "topic-1", "topic-2"]}),
    Case("testOnlyAssignsPartitionsFromSubscribedTopics", {"topic": 3, "other": 3}, [("consumer", ["topic"], None)],
         {"consumer": ["topic-0", "topic-1", "topic-2"]}),
    Case("testOneConsumerMultipleTopics", {"topic1": 1, "topic2": 2}, [("consumer", ["topic1", "topic2"], None)],
         {"consumer": ["topic1-0", "topic2-0", "topic2-1"]}),
    Case("testTwoConsumersOneTopicOnePartition", {"topic": 1},
         [("consumer1", ["topic"], None), ("consumer2", ["topic"], None)],
         {"consumer1": ["topic-0"], "consumer2": []}),
    Case("testTwoConsumersOneTopicTwoPartitions", {"topic": 2},
         [("consumer1", ["topic"], None), ("consumer2", ["topic"], None)],
         {"consumer1": ["topic-0"], "consumer2": ["topic-1"]}),
    Case("testMultipleConsumersMixedTopics", {"topic1": 3, "topic2": 2},
         [("consumer1", ["topic1"], None), ("consumer2", ["topic1", "topic2"], None), ("consumer3", ["topic1"], None)],
         {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-0", "topic2-1"], "consumer3": ["topic1-2"]}),
    Case("testTwoDynamicConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer1", ["topic1", "topic2"], None), ("consumer2", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic1-2", "topic2-1"], "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}),
    # Static members compare on instance id: consumer-b (instance1) before consumer-a (instance2).
    Case("testTwoStaticConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], "instance2")],
         {"consumer-b": ["topic1-0", "topic1-2", "topic2-1"], "consumer-a": ["topic1-1", "topic2-0", "topic2-2"]}),
    Case("testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
         [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], None)],
         {"consumer-b": ["topic1-0", "topic1-2", "topic2-1"], "consumer-a": ["topic1-1", "topic2-0", "topic2-2"]}),
    Case("testStaticMemberRoundRobinAssignmentPersistent", {"topic1": 3, "topic2": 3},
         [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
          ("consumer3", ["topic1", "topic2"], "instance3"), ("consumer4", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic2-1"], "consumer2": ["topic1-1", "topic2-2"],
          "consumer3": ["topic1-2"], "consumer4": ["topic2-0"]}),
    Case("testStaticMemberRoundRobinAssignmentPersistent (consumer5 replaces consumer4)", {"topic1": 3, "topic2": 3},
         [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
          ("consumer3", ["topic1", "topic2"], "instance3"), ("consumer5", ["topic1", "topic2"], None)],
         {"consumer1": ["topic1-0", "topic2-1"], "consumer2": ["topic1-1", "topic2-2"],
          "consumer3": ["topic1-2"], "consumer5": ["topic2-0"]}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.java_test)
def test_java_roundrobin_cases(case: Case) -> None:
    cluster = ClusterMetadata.of(dict(case.sizes))
    subscriptions = {m: sub(*topics, instance=instance) for m, topics, instance in case.members}
    result = RoundRobinAssignor().assign(cluster, subscriptions)
    assert {m: names(result, m) for m in result} == {m: list(ps) for m, ps in case.expected.items()}
    check_common_properties(RoundRobinAssignor(), cluster, subscriptions, result)


def test_static_member_assignment_persistent_after_member_id_changes() -> None:
    # RoundRobinAssignorTest.testStaticMemberRoundRobinAssignmentPersistentAfterMemberIdChanges
    cluster = ClusterMetadata.of({"topic1": 5, "topic2": 5})
    members = {"consumer1": sub("topic1", "topic2", instance="instance1"),
               "consumer2": sub("topic1", "topic2", instance="instance2"),
               "consumer3": sub("topic1", "topic2", instance="instance3")}
    expected = {"instance1": tps("topic1-0", "topic1-3", "topic2-1", "topic2-4"),
                "instance2": tps("topic1-1", "topic1-4", "topic2-2"),
                "instance3": tps("topic1-2", "topic2-0", "topic2-3")}
    assert by_instance(RoundRobinAssignor().assign(cluster, members), members) == expected
    renamed = {"consumer1": members["consumer1"], "consumer4": members["consumer3"], "consumer5": members["consumer2"]}
    assert by_instance(RoundRobinAssignor().assign(cluster, renamed), renamed) == expected


def test_racks_are_ignored() -> None:
    # KIP-881 made only range and the sticky assignors rack-aware.
    on_a, on_b = frozenset({"a"}), frozenset({"b"})
    cluster = ClusterMetadata.of({"t0": 4}, racks={"t0": (on_b, on_a, on_b, on_a)})
    racked = {"A": sub("t0", rack="a"), "B": sub("t0", rack="b")}
    assert as_sets(RoundRobinAssignor().assign(cluster, racked)) == {"A": tps("t0-0", "t0-2"), "B": tps("t0-1", "t0-3")}


def test_topics_are_dealt_in_java_string_order() -> None:
    # RoundRobinAssignor collects topics in a TreeSet<String>: UTF-16 order, "\U0001f600" < "\uff61".
    emoji, halfwidth = "\U0001f600", "\uff61"
    every = sub(halfwidth, emoji)
    result = RoundRobinAssignor().assign(ClusterMetadata.of({halfwidth: 1, emoji: 1}), {"c0": every, "c1": every})
    assert result["c0"].partitions == (TopicPartition(emoji, 0),)
    assert result["c1"].partitions == (TopicPartition(halfwidth, 0),)


# -- properties -----------------------------------------------------------------------------------------


def dealt(cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> GroupAssignment:
    return RoundRobinAssignor().assign(cluster, subscriptions)


@MODEST
@given(topologies(racks=True))
def test_common_properties(topology: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    cluster, subscriptions = topology
    check_common_properties(RoundRobinAssignor(), cluster, subscriptions, dealt(cluster, subscriptions))


@MODEST
@given(topologies(identical=True))
def test_identical_subscriptions_are_balanced_within_one(topology: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    cluster, subscriptions = topology
    result = dealt(cluster, subscriptions)
    counts = {m: len(a.partitions) for m, a in result.items()}
    assert_balanced(counts)
    # ... and the extra partitions go to the first members in Java's order.
    assert [counts[m] for m in member_order(subscriptions)] == sorted(counts.values(), reverse=True)


@MODEST
@given(topologies(static=True), st.data())
def test_static_members_keep_their_partitions_under_new_member_ids(
    topology: tuple[ClusterMetadata, dict[str, Subscription]], data: st.DataObject
) -> None:
    cluster, subscriptions = topology
    new_ids = data.draw(st.lists(st.text("pqrs", min_size=1, max_size=5), min_size=len(subscriptions),
                                 max_size=len(subscriptions), unique=True))
    renamed = dict(zip(new_ids, subscriptions.values(), strict=True))
    assert by_instance(dealt(cluster, subscriptions), subscriptions) == by_instance(dealt(cluster, renamed), renamed)


# -- differential: kafka-python's RoundRobinPartitionAssignor --------------------------------------------


@MODEST
@given(topologies(identical=True, static=False) | topologies(identical=True, static=True))
def test_same_as_kafka_python_with_identical_subscriptions(topology: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    # Only identical subscriptions, and only all-static or all-dynamic groups: kafka-python fails on
    # the others (the two tests below).
    cluster, subscriptions = topology
    ours = as_sets(dealt(cluster, subscriptions))
    assert ours == kafka_python_assign(RoundRobinPartitionAssignor, cluster, subscriptions)


def test_kafka_python_crashes_when_a_member_must_be_skipped_java_wins() -> None:
    # kafka-python 3.0.12's skip loop does ``member_id = next(member_iter)`` where the iterator
    # yields (instance id, member id) pairs, then looks the pair up by member id: KeyError as soon
    # as the member whose turn it is does not take the topic. Java skips it (the javadoc case).
    cluster = ClusterMetadata.of({"t0": 1, "t1": 2, "t2": 3})
    subscriptions = {"c0": sub("t0"), "c1": sub("t0", "t1"), "c2": sub("t0", "t1", "t2")}
    assert as_sets(dealt(cluster, subscriptions)) == {
        "c0": tps("t0-0"), "c1": tps("t1-0"), "c2": tps("t1-1", "t2-0", "t2-1", "t2-2"),
    }
    with pytest.raises(KeyError):
        kafka_python_assign(RoundRobinPartitionAssignor, cluster, subscriptions)


def test_kafka_python_drops_static_members_interleaved_with_dynamic_ones_java_wins() -> None:
    # kafka-python 3.0.12 groups members with itertools.groupby on unsorted input into a dict, so
    # static, dynamic, static loses the first static member (it is never dealt to). Java's order:
    # s-a (instance i1), s-c (i2), d-b.
    cluster = ClusterMetadata.of({"t": 6})
    subscriptions = {"s-a": sub("t", instance="i1"), "d-b": sub("t"), "s-c": sub("t", instance="i2")}
    java = {"s-a": tps("t-0", "t-3"), "s-c": tps("t-1", "t-4"), "d-b": tps("t-2", "t-5")}
    assert as_sets(dealt(cluster, subscriptions)) == java
    kafka_python = kafka_python_assign(RoundRobinPartitionAssignor, cluster, subscriptions)
    assert kafka_python == {"s-a": set(), "s-c": tps("t-0", "t-2", "t-4"), "d-b": tps("t-1", "t-3", "t-5")}
