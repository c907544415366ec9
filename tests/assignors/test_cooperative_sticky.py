"""Tests of the "cooperative-sticky" assignor: Java's own test cases as facts, and properties.

Facts come from CooperativeStickyAssignorTest and the scenarios of AbstractStickyAssignorTest
(defined once in test_sticky.py, with the fixture port); each names the Java test it reproduces.
After an assignment, CooperativeStickyAssignorTest's verifyValidityAndBalance runs follow-up
rebalances while partitions are being revoked, and the Java tests assert on the final result:
``JavaFixture.verify_validity_and_balance`` does the same.
"""

from __future__ import annotations

import doctest
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mockbroker_assignors.cooperative_sticky
from mockbroker_assignors.base import Assignor
from mockbroker_assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    decode_generation,
    encode_user_data,
    member_data,
)
from mockbroker_assignors.types import ClusterMetadata, RebalanceProtocol, Subscription, TopicPartition
from mockbroker_assignors.validation import check_assignment
from tests.assignors.properties import MODEST, assert_balanced, check_common_properties, topologies
from tests.assignors.test_sticky import (
    COOPERATIVE,
    GENERATION_ID,
    SHARED_SCENARIOS,
    JavaFixture,
    RackConfig,
    is_fully_balanced,
    names,
    non_equal_rack_cases,
    run_differential_case,
    run_rack_case,
    run_subscription_not_equal_and_assign_same_partition_with_3_generation,
    tp,
    tps,
    uniform_rack_cases,
)

Topology = tuple[ClusterMetadata, dict[str, Subscription]]


# -- AbstractStickyAssignorTest, run with the cooperative assignor --------------------------------


@pytest.mark.parametrize("rc", list(RackConfig), ids=lambda rc: rc.value)
@pytest.mark.parametrize("name", sorted(SHARED_SCENARIOS))
def test_java_abstract_sticky_assignor_cases(name: str, rc: RackConfig) -> None:
    SHARED_SCENARIOS[name](COOPERATIVE, rc)


def test_java_subscription_not_equal_and_assign_same_partition_with_3_generation() -> None:
    run_subscription_not_equal_and_assign_same_partition_with_3_generation(COOPERATIVE)


@pytest.mark.parametrize("index", range(len(uniform_rack_cases(COOPERATIVE))))
def test_java_rack_aware_assignment_with_uniform_subscription(index: int) -> None:
    run_rack_case(COOPERATIVE, uniform_rack_cases(COOPERATIVE)[index])


@pytest.mark.parametrize("index", range(len(non_equal_rack_cases(COOPERATIVE))))
def test_java_rack_aware_assignment_with_non_equal_subscription(index: int) -> None:
    run_rack_case(COOPERATIVE, non_equal_rack_cases(COOPERATIVE)[index])


# -- CooperativeStickyAssignorTest ---------------------------------------------------------------------


def test_java_encode_and_decode_generation() -> None:
    """testEncodeAndDecodeGeneration: -1 before the first assignment, then the assignment's generation."""
    fresh = Subscription(("topic",), encode_user_data())
    assert encode_user_data() == b"\xff\xff\xff\xff"
    assert member_data(fresh).generation == -1
    after = Subscription(("topic",), encode_user_data(10))
    assert encode_user_data(10) == b"\x00\x00\x00\x0a"
    assert member_data(after).generation == 10


def test_java_decode_generation() -> None:
    """testDecodeGeneration: no user data and no v2 generation -> generation unknown."""
    assert member_data(Subscription(("topic",))).generation is None
    assert decode_generation(None) is None
    assert decode_generation(b"\x00\x01") == -1  # unreadable: DEFAULT_GENERATION
    assert decode_generation(b"\x00\x00\x00\x07\x99") == 7


@pytest.mark.parametrize("rc", list(RackConfig), ids=lambda rc: rc.value)
@pytest.mark.parametrize(("num_partitions", "expected1"), [(3, "topic-1"), (4, "topic-1 topic-3")])
def test_java_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers(
    rc: RackConfig, num_partitions: int, expected1: str
) -> None:
    """testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration
    With(Un)EqualPartitionsPerConsumer: topic-0 counts as owned by both claimants, so it cannot go
    to consumer3 until both have revoked it."""
    fx = JavaFixture(COOPERATIVE, rc)
    fx.put_topic("topic", num_partitions)
    fx.subscriptions["consumer1"] = fx.v2(["topic"], tps("topic-0 topic-1"), GENERATION_ID, 0)
    fx.subscriptions["consumer2"] = fx.v2(["topic"], tps("topic-0 topic-2"), GENERATION_ID, 1)
    fx.subscriptions["consumer3"] = fx.v2(["topic"], [], GENERATION_ID, 2)
    assignment = fx.assign()
    assert assignment == {"consumer1": tps(expected1), "consumer2": tps("topic-2"), "consumer3": []}
    assignment = fx.verify_validity_and_balance(assignment)
    assert is_fully_balanced(assignment)


def test_java_member_data_with_inconsistent_data() -> None:
    """testMemberDataWithInconsistentData: without a v2 generation, owned partitions come from the
    subscription and the generation from the user data."""
    subscription = Subscription(("topic",), encode_user_data(GENERATION_ID), tuple(tps("topic-0")))
    data = member_data(subscription)
    assert list(data.partitions) == tps("topic-0")
    assert data.generation == GENERATION_ID


def test_java_member_data_with_empty_partitions() -> None:
    """testMemberDataWithEmptyPartitionsAndEqualGeneration / ...AndHigherGeneration: the v2 fields win
    over the user data. (Both Java tests end up with user data of generation 1: the cooperative
    generateUserData encodes the assignor's own generation, whatever it is asked for.)"""
    subscription = Subscription(("topic",), encode_user_data(GENERATION_ID), (), GENERATION_ID)
    data = member_data(subscription)
    assert data.partitions == ()
    assert data.generation == GENERATION_ID


def test_java_member_data() -> None:
    """AbstractStickyAssignorTest.testMemberData (cooperative-sticky has no v0 subscription)."""
    fx = JavaFixture(COOPERATIVE)
    owned = tps("topic1-0 topic2-1")
    for build in (fx.v1, fx.v2):
        data = member_data(build(["topic"], owned, GENERATION_ID, 0))
        assert list(data.partitions) == owned
        assert data.generation == GENERATION_ID


def test_java_assignor_with_old_version_subscriptions() -> None:
    """testAssignorWithOldVersionSubscriptions: v1 subscriptions with the generation in user data."""
    fx = JavaFixture(COOPERATIVE)
    fx.put_topic("topic1", 3)
    fx.subscriptions["consumer1"] = fx.v1(["topic1"], tps("topic1-0"), GENERATION_ID, 0)
    fx.subscriptions["consumer2"] = fx.v1(["topic1"], tps("topic1-1"), GENERATION_ID, 1)
    fx.subscriptions["consumer3"] = fx.v2(["topic1"], [], GENERATION_ID, 2)
    assignment = fx.assign()
    assert assignment == {"consumer1": tps("topic1-0"), "consumer2": tps("topic1-1"), "consumer3": tps("topic1-2")}
    assignment = fx.verify_validity_and_balance(assignment)
    assert is_fully_balanced(assignment)


def test_java_uniform_subscription_transfer_ownership_list_is_right() -> None:
    """testUniformSubscriptionTransferOwnershipListIsRight: replication factor 1 on two racks; each
    member owns two partitions, one of them on the other member's rack, so both move."""
    fx = JavaFixture(COOPERATIVE)
    fx.replication_factor, fx.num_broker_racks, fx.has_consumer_rack = 1, 2, True
    fx.put_topic("topic1", 4)
    fx.subscriptions["c0"] = fx.v2(["topic1"], tps("topic1-0 topic1-1"), GENERATION_ID, 0)
    fx.subscriptions["c1"] = fx.v2(["topic1"], tps("topic1-2 topic1-3"), GENERATION_ID, 1)
    fx.assign()
    assert fx.transferring is not None and len(fx.transferring) == 2


# -- Differential facts: Java's output on inputs Java's tests do not cover ------------------------
# Each case was run through Java's CooperativeStickyAssignor.assign(Cluster, GroupSubscription)
# (Kafka trunk 1eb7644, subscriptions in a new HashMap<>() filled in this member order, as
# ConsumerCoordinator does); "expected" is Java's output. Inputs are third rounds of random groups:
# heterogeneous subscriptions, members leaving and joining, stale generations, racks.

JAVA_DIFFERENTIAL_COOPERATIVE: list[dict[str, Any]] = [
    {'topics': {'t0': 3, 't1': 6, 't2': 5}, 'members': [('c0', 't1', 't1-2 t1-4', 2, 'ffffffff', None), ('c2', 't1 t2', 't2-0 t2-1 t2-3', 2, 'ffffffff', None), ('c4', 't0 t1 t2', 't0-1 t2-2 t2-4', 2, 'ffffffff', None), ('new-963543', 't1', 't1-3', 2, 'ffffffff', 'a'), ('new-95397', 't1', 't1-1 t1-5', 2, 'ffffffff', 'b'), ('new-117993', 't0 t1 t2', 't0-0 t0-2', 2, 'ffffffff', None)], 'expected': {'c0': 't1-2 t1-4', 'c2': 't2-0 t2-1 t2-3', 'c4': 't0-1 t2-2 t2-4', 'new-963543': 't1-3 t1-0', 'new-95397': 't1-1 t1-5', 'new-117993': 't0-0 t0-2'}},
    {'topics': {'t0': 3, 't1': 7, 't2': 8}, 'members': [('c0', 't0 t2 t1', 't0-0 t2-4 t1-2', 2, 'ffffffff', None), ('c2', 't0 t1', 't0-1 t1-3 t1-6 t1-5', 2, 'ffffffff', None), ('c3', 't1', 't1-1 t1-4 t1-0', 2, 'ffffffff', None), ('c4', 't0 t2', 't0-2 t2-2 t2-5', 2, 'ffffffff', None), ('c5', 't2', 't2-0 t2-3', 2, 'ffffffff', None), ('new-190737', 't0 t2', '', -1, 'ffffffff', 'c')], 'expected': {'c0': 't0-0 t2-4 t1-2', 'c2': 't1-3 t1-6 t1-5', 'c3': 't1-1 t1-4 t1-0', 'c4': 't0-2 t2-2 t2-5', 'c5': 't2-0 t2-3 t2-7', 'new-190737': 't2-1 t2-6'}},
    {'topics': {'t0': (5, 'a;b/c;a;b/c;b/c'), 't1': (6, 'b;a/c;b/c;c;b/c;c'), 't2': (1, 'a'), 't3': (5, 'a/b;a;a/b;a/b;a/c')}, 'members': [('c2', 't3', 't3-4 t3-1', 2, 'ffffffff', 'c'), ('c3', 't0 t3', 't0-1 t0-3 t0-4', 2, 'ffffffff', 'c'), ('c4', 't2 t0 t3 t1', 't1-2 t1-4', 2, 'ffffffff', 'c'), ('c5', 't3 t2 t0 t1', 't0-2 t3-2', 2, 'ffffffff', 'a'), ('new-59418', 't0 t3', '', 2, 'ffffffff', 'b'), ('new-479152', 't0 t1 t2 t3', 't1-3', 2, 'ffffffff', 'c'), ('new-101581', 't0 t1 t2 t3', 't1-1 t1-5', 2, 'ffffffff', 'c'), ('new-1019672', 't0 t1 t2 t3', '', -1, 'ffffffff', 'a'), ('new-367241', 't3', '', -1, 'ffffffff', 'c'), ('new-812717', 't0 t1 t2 t3', '', -1, 'ffffffff', 'c')], 'expected': {'c2': 't3-4', 'c3': 't0-3 t0-4', 'c4': 't1-2 t1-4', 'c5': 't3-2', 'new-59418': 't3-3', 'new-479152': 't1-3', 'new-101581': 't1-1 t1-5', 'new-1019672': 't2-0 t0-0', 'new-367241': 't3-0', 'new-812717': 't1-0'}},
    {'topics': {'t0': 2, 't1': 2, 't2': 3}, 'members': [('c0', 't0 t1 t2', 't0-0 t0-1 t2-2 t2-1', 2, 'ffffffff', None), ('c1', 't1', 't1-0 t1-1', 2, 'ffffffff', None)], 'expected': {'c0': 't0-0 t0-1 t2-2 t2-1 t2-0', 'c1': 't1-0 t1-1'}},
    {'topics': {'t0': 6, 't1': 7}, 'members': [('c0', 't0 t1', 't1-4 t1-5 t1-6', 2, 'ffffffff', None), ('c1', 't0', '', 2, 'ffffffff', None), ('c2', 't0', 't0-1 t0-3 t0-5', 2, 'ffffffff', None)], 'expected': {'c0': 't1-4 t1-5 t1-6 t1-0 t1-1 t1-2 t1-3', 'c1': 't0-0 t0-2 t0-4', 'c2': 't0-1 t0-3 t0-5'}},
    {'topics': {'t0': (1, 'b/c'), 't1': (5, 'a/c;a/c;b;a;a'), 't2': (1, 'c'), 't3': (8, 'c;c;a/c;b/c;a/b;c;a;a')}, 'members': [('c0', 't2', 't2-0', 2, 'ffffffff', 'a'), ('c1', 't0 t1 t3', 't3-0 t3-1 t3-5', 2, 'ffffffff', 'c'), ('c3', 't0 t1 t2 t3', 't1-2 t3-3 t0-0 t3-4', 2, 'ffffffff', 'b'), ('c4', 't1 t2 t3', 't1-0 t1-3 t1-4 t3-2', 2, 'ffffffff', 'a')], 'expected': {'c0': 't2-0', 'c1': 't3-0 t3-1 t3-5 t1-1', 'c3': 't1-2 t3-3 t0-0 t3-4', 'c4': 't1-3 t1-4 t3-2 t3-6 t3-7'}},
    {'topics': {'t0': 4, 't1': 1, 't2': 2, 't3': 5}, 'members': [('c0', 't1 t3 t0 t2', 't3-0 t3-1 t3-4', 2, 'ffffffff', None), ('c1', 't0 t2 t3', 't0-0 t0-3', 2, 'ffffffff', None), ('c2', 't1 t2 t3', 't1-0 t3-2', 2, 'ffffffff', None), ('c3', 't2', 't2-0 t2-1', 2, 'ffffffff', None), ('c4', 't2 t1 t3 t0', 't0-1', 2, 'ffffffff', None), ('new-946283', 't2', '', -1, 'ffffffff', 'c'), ('new-723508', 't2', '', -1, 'ffffffff', 'b')], 'expected': {'c0': 't3-0 t3-1 t3-4', 'c1': 't0-0 t0-3 t3-3', 'c2': 't1-0 t3-2', 'c3': 't2-1', 'c4': 't0-1 t0-2', 'new-946283': '', 'new-723508': ''}},
    {'topics': {'t0': 5, 't1': 4, 't2': 3}, 'members': [('c0', 't0', 't0-2 t0-3', 2, 'ffffffff', None), ('c1', 't1', 't1-2 t1-3', 2, 'ffffffff', None), ('c2', 't0 t1 t2', 't2-2 t0-4', 2, 'ffffffff', None), ('new-1011107', 't0 t1 t2', '', 2, 'ffffffff', 'b'), ('new-457134', 't0 t1 t2', '', 2, 'ffffffff', 'a'), ('new-888205', 't0 t1 t2', '', -1, 'ffffffff', 'a'), ('new-435163', 't0 t1 t2', '', -1, 'ffffffff', 'c'), ('new-351743', 't1', '', -1, 'ffffffff', 'a')], 'expected': {'c0': 't0-2 t0-3', 'c1': 't1-2 t1-3', 'c2': 't2-2 t0-4', 'new-1011107': 't2-0 t1-1', 'new-457134': 't0-0', 'new-888205': 't0-1', 'new-435163': 't2-1', 'new-351743': 't1-0'}},
    {'topics': {'t0': (3, 'c;a;a'), 't1': (1, 'a'), 't2': (7, 'a;a/b;c;b;b/c;a/b;b')}, 'members': [('c0', 't0 t2', 't2-5 t2-2', 2, 'ffffffff', 'a'), ('c1', 't0 t1 t2', 't2-0', 2, 'ffffffff', 'a'), ('c2', 't0', '', 2, 'ffffffff', 'b'), ('c5', 't2 t1', 't2-3 t2-6', 2, 'ffffffff', 'b')], 'expected': {'c0': 't2-5 t0-2 t2-2', 'c1': 't2-0 t1-0 t2-1', 'c2': 't0-0 t0-1', 'c5': 't2-3 t2-6 t2-4'}},
]


@pytest.mark.parametrize("index", range(len(JAVA_DIFFERENTIAL_COOPERATIVE)))
def test_java_differential_cases(index: int) -> None:
    run_differential_case(COOPERATIVE, JAVA_DIFFERENTIAL_COOPERATIVE[index])


# -- Unit behaviour ----------------------------------------------------------------------------------


def test_protocol_attributes_and_empty_group() -> None:
    assignor = CooperativeStickyAssignor()
    assert isinstance(assignor, Assignor)
    assert assignor.name == "cooperative-sticky"
    assert assignor.supported_protocols == (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    assert assignor.assign(ClusterMetadata.of({"t": 3}), {}) == {}


def test_general_path_withholds_partitions_moving_between_members() -> None:
    """Heterogeneous subscriptions: Java recomputes the partitions changing hands from owned and
    assigned partitions (computePartitionsTransferringOwnership) and withholds them. Results as the
    Java client gives them for the same two rounds."""
    cluster = ClusterMetadata.of({"t0": 4, "t1": 2})
    members = {
        "a": Subscription(("t0", "t1"), None, tuple(tps("t0-0 t0-1 t0-2 t0-3 t1-0 t1-1")), 3),
        "b": Subscription(("t0",), None, (), 3),
    }
    first = CooperativeStickyAssignor().assign(cluster, members)
    assert {m: names(x.partitions) for m, x in first.items()} == {"a": "t0-3 t1-0 t1-1", "b": ""}
    members = {
        "a": Subscription(("t0", "t1"), None, first["a"].partitions, 4),
        "b": Subscription(("t0",), None, (), 4),
    }
    second = CooperativeStickyAssignor().assign(cluster, members)
    assert {m: names(x.partitions) for m, x in second.items()} == {"a": "t0-3 t1-0 t1-1", "b": "t0-0 t0-1 t0-2"}


def test_docstring_examples() -> None:
    assert doctest.testmod(mockbroker_assignors.cooperative_sticky).failed == 0


# -- Properties --------------------------------------------------------------------------------------


def _with_topics(topology: Topology) -> bool:
    return all(s.topics for s in topology[1].values())  # see test_sticky: the empty-subscription quirk


@given(topologies(racks=True).filter(_with_topics))
@MODEST
def test_cold_start_properties(topology: Topology) -> None:
    """Nobody owns anything yet, so nothing is withheld: exactly-once ownership, subscribed-only,
    determinism (also across member orders)."""
    cluster, subscriptions = topology
    assignor = CooperativeStickyAssignor()
    check_common_properties(assignor, cluster, subscriptions, assignor.assign(cluster, subscriptions))


@st.composite
def owned_groups(draw: st.DrawFn, *, identical: bool) -> tuple[ClusterMetadata, dict[str, Subscription]]:
    """A group rejoining after a first assignment: some members left, some joined, and some claims
    are stale (an older generation) or in conflict (the same partition claimed in the same
    generation), as a broken client or a zombie member could send."""
    cluster, first = draw(topologies(identical=identical, racks=True, unknown_topics=False).filter(_with_topics))
    result = CooperativeStickyAssignor().assign(cluster, first)
    generation = draw(st.integers(1, 5))
    members: dict[str, Subscription] = {}
    every = [p for a in result.values() for p in a.partitions]
    for member, subscription in first.items():
        fate = draw(st.sampled_from(["stay", "stay", "stay", "leave", "stale", "conflict"]))
        if fate == "leave":
            continue
        owned = list(result[member].partitions)
        member_generation = generation - 1 if fate == "stale" else generation
        if fate == "conflict" and every:
            owned.append(draw(st.sampled_from(every)))
        members[member] = Subscription(
            subscription.topics, encode_user_data(-1), tuple(dict.fromkeys(owned)), member_generation, subscription.rack_id
        )
    topics = [s.topics for s in first.values()]
    for member in draw(st.lists(st.text("nqrw", min_size=1, max_size=4), max_size=3, unique=True)):
        members.setdefault(member, Subscription(draw(st.sampled_from(topics)), encode_user_data(-1), (), generation))
    if not members:
        members["solo"] = Subscription(topics[0], None, (), generation)
    return cluster, members


@given(owned_groups(identical=False))
@MODEST
def test_no_partition_changes_hands_within_one_rebalance(group: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    """A member only gets a partition that no other member claims, or that it claims too: a partition
    leaving a member is only revoked, and given out in the follow-up rebalance."""
    cluster, subscriptions = group
    result = CooperativeStickyAssignor().assign(cluster, subscriptions)
    claims: dict[TopicPartition, set[str]] = {}
    for member, subscription in subscriptions.items():
        for p in subscription.owned_partitions:
            claims.setdefault(p, set()).add(member)
    for member, assignment in result.items():
        for p in assignment.partitions:
            claimants = claims.get(p, set())
            assert not claimants or member in claimants, f"{p} handed to {member} while owned by {claimants}"
    # never twice, only subscribed, and the same answer again
    owners = [p for a in result.values() for p in a.partitions]
    assert len(owners) == len(set(owners))
    for member, assignment in result.items():
        assert all(p.topic in subscriptions[member].topics for p in assignment.partitions)
    assert CooperativeStickyAssignor().assign(cluster, subscriptions) == result


def _follow_up(
    cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription], generation: int
) -> tuple[dict[str, Subscription], Mapping[str, Any], int]:
    """Rebalance until nothing is revoked, members rejoining owning what they were given."""
    assignor = CooperativeStickyAssignor()
    result = assignor.assign(cluster, subscriptions)
    rounds = 0
    while any(set(s.owned_partitions) - set(result[m].partitions) for m, s in subscriptions.items()):
        generation += 1
        subscriptions = {
            m: Subscription(s.topics, s.user_data, result[m].partitions, generation, s.rack_id)
            for m, s in subscriptions.items()
        }
        result = assignor.assign(cluster, subscriptions)
        rounds += 1
        assert rounds <= 4, "did not settle"
    return dict(subscriptions), result, rounds


@given(owned_groups(identical=True))
@MODEST
def test_identical_subscriptions_settle_balanced(group: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    """After the follow-up rebalances: every partition owned exactly once and sizes within one."""
    cluster, subscriptions = group
    subscriptions, result, _ = _follow_up(cluster, subscriptions, 10)
    assert check_assignment(cluster, subscriptions, result) == []
    assert_balanced({m: len(a.partitions) for m, a in result.items()})


@given(owned_groups(identical=False))
@MODEST
def test_any_subscriptions_settle_valid(group: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    cluster, subscriptions = group
    subscriptions, result, _ = _follow_up(cluster, subscriptions, 10)
    assert check_assignment(cluster, subscriptions, result) == []


@given(owned_groups(identical=True))
@MODEST
def test_stickiness_with_identical_subscriptions(group: tuple[ClusterMetadata, dict[str, Subscription]]) -> None:
    """Every member whose claims are its own (no conflict, current generation) keeps them up to its
    quota, all of them when it had at most the minimum quota."""
    cluster, subscriptions = group
    result = CooperativeStickyAssignor().assign(cluster, subscriptions)
    top = max(s.generation_id for s in subscriptions.values())
    claims: dict[TopicPartition, int] = {}
    for s in subscriptions.values():
        for p in s.owned_partitions:
            claims[p] = claims.get(p, 0) + 1
    total = sum(cluster.partitions_for(t) for t in set(next(iter(subscriptions.values())).topics))
    min_quota = total // len(subscriptions)
    for member, s in subscriptions.items():
        if s.generation_id != top or any(claims[p] > 1 for p in s.owned_partitions):
            continue
        if s.rack_id and any(s.rack_id not in cluster.topics[p.topic].racks_of(p.partition) for p in s.owned_partitions):
            continue  # rack-aware assignment may move a partition closer to its replicas
        kept = set(s.owned_partitions) & set(result[member].partitions)
        assert len(kept) >= min(len(s.owned_partitions), min_quota), (member, s.owned_partitions, result[member])


def test_reference_sticky_pairs() -> None:
    """The doc example, checked from the outside: c3 waits one rebalance for t-3."""
    cluster = ClusterMetadata.of({"t": 4})
    members = {
        "c1": Subscription(("t",), owned_partitions=(tp("t", 0), tp("t", 1)), generation_id=1),
        "c2": Subscription(("t",), owned_partitions=(tp("t", 2), tp("t", 3)), generation_id=1),
        "c3": Subscription(("t",), generation_id=1),
    }
    _, result, rounds = _follow_up(cluster, members, 1)
    assert rounds == 1
    assert {m: names(a.partitions) for m, a in result.items()} == {"c1": "t-0 t-1", "c2": "t-2", "c3": "t-3"}
