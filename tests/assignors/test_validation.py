"""Tests of mockbroker_assignors.validation.check_assignment: one finding per broken rule, none for sound input."""

from __future__ import annotations

import doctest

from hypothesis import given
from hypothesis import strategies as st

import mockbroker_assignors.validation
from mockbroker_assignors.range import RangeAssignor
from mockbroker_assignors.roundrobin import RoundRobinAssignor
from mockbroker_assignors.types import ClusterMetadata, MemberAssignment, Subscription, TopicPartition
from mockbroker_assignors.validation import check_assignment
from tests.assignors.properties import MODEST, sub, topologies

CLUSTER = ClusterMetadata.of({"t0": 2, "t1": 1})
SUBS = {"a": sub("t0"), "b": sub("t0", "t1")}


def owns(*names: str) -> MemberAssignment:
    return MemberAssignment(
        tuple(TopicPartition(n.rpartition("-")[0], int(n.rpartition("-")[2])) for n in names)
    )


def test_docstring_example() -> None:
    failures, tried = doctest.testmod(mockbroker_assignors.validation, raise_on_error=False)
    assert tried > 0 and failures == 0


def test_sound_assignment_has_no_findings() -> None:
    assert check_assignment(CLUSTER, SUBS, {"a": owns("t0-0"), "b": owns("t0-1", "t1-0")}) == []


def test_unassigned_partition() -> None:
    assert check_assignment(CLUSTER, SUBS, {"a": owns("t0-0"), "b": owns("t0-1")}) == [
        "t1-0 is not assigned (subscribed by b)"
    ]


def test_partition_owned_twice() -> None:
    assert check_assignment(CLUSTER, SUBS, {"a": owns("t0-0", "t0-1"), "b": owns("t0-1", "t1-0")}) == [
        "t0-1 is owned by 2 members: a, b"
    ]


def test_partition_listed_twice_by_one_member() -> None:
    assert check_assignment(CLUSTER, SUBS, {"a": owns("t0-0", "t0-0"), "b": owns("t0-1", "t1-0")}) == [
        "member a lists t0-0 2 times"
    ]


def test_owner_not_subscribed() -> None:
    assert check_assignment(CLUSTER, SUBS, {"a": owns("t0-0", "t1-0"), "b": owns("t0-1")}) == [
        "member a owns t1-0 but is not subscribed to t1"
    ]


def test_unknown_member() -> None:
    findings = check_assignment(CLUSTER, SUBS, {"a": owns("t0-0"), "b": owns("t0-1", "t1-0"), "zed": owns()})
    assert findings == ["unknown member zed was assigned 0 partition(s)"]


def test_unknown_member_owning_a_partition_is_also_a_second_owner() -> None:
    findings = check_assignment(
        CLUSTER, SUBS, {"a": owns("t0-0"), "b": owns("t0-1", "t1-0"), "zed": owns("t0-0")}
    )
    assert findings == [
        "unknown member zed was assigned 1 partition(s)",
        "t0-0 is owned by 2 members: a, zed",
    ]


def test_unknown_topic_and_out_of_range_partitions() -> None:
    bad = MemberAssignment((*owns("t0-0", "nope-0", "t0-2").partitions, TopicPartition("t0", -1)))
    findings = check_assignment(CLUSTER, SUBS, {"a": bad, "b": owns("t0-1", "t1-0")})
    assert findings == [
        "member a owns nope-0 of unknown topic nope",
        "member a owns t0--1, out of range: t0 has 2 partitions",
        "member a owns t0-2, out of range: t0 has 2 partitions",
    ]


def test_missing_member_is_allowed() -> None:
    # The coordinator gives members left out of the leader's assignment an empty one.
    subs = {**SUBS, "c": sub("t0")}
    assert check_assignment(CLUSTER, subs, {"a": owns("t0-0"), "b": owns("t0-1", "t1-0")}) == []


def test_subscribed_topics_without_partitions_or_metadata_need_no_owner() -> None:
    cluster = ClusterMetadata.of({"t0": 1, "empty": 0})
    subs = {"a": sub("t0", "empty", "ghost")}
    assert check_assignment(cluster, subs, {"a": owns("t0-0")}) == []


@MODEST
@given(topologies(racks=True), st.sampled_from([RangeAssignor(), RoundRobinAssignor()]), st.data())
def test_any_single_corruption_of_a_sound_assignment_is_found(
    topology: tuple[ClusterMetadata, dict[str, Subscription]],
    assignor: RangeAssignor | RoundRobinAssignor,
    data: st.DataObject,
) -> None:
    cluster, subscriptions = topology
    result = assignor.assign(cluster, subscriptions)
    assert check_assignment(cluster, subscriptions, result) == []
    owned = [(m, tp) for m, a in result.items() for tp in a.partitions]
    member = data.draw(st.sampled_from(sorted(result)))
    corruption = data.draw(st.sampled_from(["drop", "duplicate", "foreign", "stranger"]))
    broken = dict(result)
    if corruption == "drop" and owned:
        m, tp = data.draw(st.sampled_from(owned))
        broken[m] = MemberAssignment(tuple(p for p in result[m].partitions if p != tp))
    elif corruption == "duplicate" and owned:
        _, tp = data.draw(st.sampled_from(owned))
        broken[member] = MemberAssignment((*result[member].partitions, tp))
    elif corruption == "foreign":
        broken[member] = MemberAssignment((*result[member].partitions, TopicPartition("t0", 10_000)))
    else:
        broken["not-a-member"] = MemberAssignment(())
    assert check_assignment(cluster, subscriptions, broken) != []
