"""The "range" assignor: Java's RangeAssignor, per-topic contiguous ranges, rack-aware per KIP-881.

For each subscribed topic, the topic's subscribers are put in order and its partitions are cut
into contiguous ranges: with ``n`` partitions and ``c`` subscribers, every subscriber gets
``n // c`` partitions and the first ``n % c`` subscribers one more. Topics are handled one by
one, so subscribers early in the order collect the extra partition of every topic.

Member order is Java's ``AbstractPartitionAssignor.MemberInfo`` ordering: static members
(with a ``group.instance.id``) first, by instance id, then dynamic members by member id, with
strings compared the way Java's ``String.compareTo`` does (UTF-16 code units).

Rack-aware assignment (KIP-881, Kafka 3.5+) applies when some member of a topic has a rack id,
the topic's partitions have replica racks, those sets overlap, and not every partition is on
the same set of racks. Then, before the plain pass, a rack-matching pass runs: topics with the
same subscribers and the same partition count are kept co-partitioned (partition ``p`` of all of
them goes to one member whose rack hosts every one of them), other topics hand each member
partitions from its own rack, never beyond the member's per-topic quota. The plain range pass
then gives out what is left. Per-topic balance (quota ``n // c``, at most ``n % c`` members
with one more) is kept in every case; rack alignment is best effort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from itertools import islice

from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSubscription,
    MemberAssignment,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)

__all__ = [
    "RangeAssignor",
    "java_string_key",
    "member_order",
    "member_sort_key",
    "sorted_partitions",
    "subscribed_topic_sizes",
]


# -- Java orderings shared by the classic assignors -------------------------------------------------


def java_string_key(value: str) -> bytes:
    """A sort key that orders strings as Java's ``String.compareTo`` does.

    Java compares UTF-16 code units; Python compares code points. They disagree only when a
    character above U+FFFF (a surrogate pair in UTF-16, 0xD800-0xDFFF) meets one in
    U+E000-U+FFFF: Java puts the former first. Big-endian UTF-16 bytes compare exactly like
    the code units, prefixes included."""
    return value.encode("utf-16-be", "surrogatepass")


def member_sort_key(member_id: str, group_instance_id: str | None) -> tuple[int, bytes, bytes]:
    """Java's ``AbstractPartitionAssignor.MemberInfo.compareTo`` as a sort key.

    Static members sort before dynamic ones, static members by ``group.instance.id`` (so their
    assignment survives a restart with a new member id, KIP-345), dynamic members by member id.
    Java leaves two static members with the same instance id in input order; a group never has
    two, and we break the tie by member id so the result never depends on dict order."""
    if group_instance_id is not None:
        return (0, java_string_key(group_instance_id), java_string_key(member_id))
    return (1, java_string_key(member_id), b"")


def member_order(subscriptions: GroupSubscription) -> list[str]:
    """Member ids of ``subscriptions`` in Java's MemberInfo order."""
    return sorted(subscriptions, key=lambda m: member_sort_key(m, subscriptions[m].group_instance_id))


def sorted_partitions(partitions: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
    """Partitions in Java's ``TopicPartitionComparator`` order: topic (Java string order), then number."""
    return tuple(sorted(partitions, key=lambda tp: (java_string_key(tp.topic), tp.partition)))


def subscribed_topic_sizes(cluster: ClusterMetadata, subscriptions: GroupSubscription) -> dict[str, int]:
    """Partition counts of every subscribed topic the cluster knows with at least one partition.

    ``AbstractPartitionAssignor.assign`` skips topics without metadata or without partitions
    ("Skipping assignment for topic {} since no metadata is available")."""
    sizes: dict[str, int] = {}
    for subscription in subscriptions.values():
        for topic in subscription.topics:
            if topic not in sizes:
                count = cluster.partitions_for(topic)
                if count > 0:
                    sizes[topic] = count
    return {topic: sizes[topic] for topic in sorted(sizes, key=java_string_key)}


# -- per-topic state, after RangeAssignor.TopicAssignmentState ----------------------------------------


class _TopicState:
    """One topic's progress: who subscribes (in order), each member's quota, what is left."""

    def __init__(
        self,
        topic: str,
        num_partitions: int,
        consumers: list[str],
        consumer_racks: Mapping[str, str],
        replica_racks: Callable[[int], frozenset[str]],
        prefer_rack_aware_logic: bool,
    ) -> None:
        self.topic = topic
        self.consumers = consumers
        self.racks = {c: consumer_racks.get(c) for c in consumers}
        self.unassigned: dict[int, None] = dict.fromkeys(range(num_partitions))  # ordered set
        self.num_assigned = dict.fromkeys(consumers, 0)
        self.per_consumer = num_partitions // len(consumers) if consumers else 0
        self.remaining_with_extra = num_partitions % len(consumers) if consumers else 0

        all_consumer_racks = {r for r in self.racks.values() if r is not None}
        # Java only reads replica racks when some subscriber of the topic has a rack; the size of
        # this map is also the "partition count" its co-partitioning grouping uses (0 otherwise).
        self.partition_racks: dict[int, frozenset[str]] = (
            {p: replica_racks(p) for p in range(num_partitions)} if all_consumer_racks else {}
        )
        all_partition_racks: set[str] = set().union(*self.partition_racks.values())
        self.needs_rack_aware = _use_rack_aware_assignment(
            all_consumer_racks, all_partition_racks, self.partition_racks, prefer_rack_aware_logic
        )

    def racks_match(self, consumer: str, partition: int) -> bool:
        # A member without a rack matches every partition (Java: !consumerRack.isPresent()).
        rack = self.racks[consumer]
        return rack is None or rack in self.partition_racks.get(partition, frozenset())

    def max_assignable(self, consumer: str) -> int:
        # Quota n // c, plus one while fewer than n % c members have taken their extra partition.
        quota = self.per_consumer + (1 if self.remaining_with_extra > 0 else 0)
        return max(0, quota - self.num_assigned[consumer])

    def on_assigned(self, consumer: str, partitions: list[int]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.per_consumer:
            self.remaining_with_extra -= 1
        for p in partitions:
            del self.unassigned[p]


def _use_rack_aware_assignment(
    consumer_racks: set[str],
    partition_racks: set[str],
    racks_per_partition: Mapping[int, frozenset[str]],
    prefer_rack_aware_logic: bool,
) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment (KIP-881): only when consumer and replica
    racks overlap, and (unless forced) only when some partition is missing from some rack, since
    otherwise every member is already local to every partition."""
    if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
        return False
    if prefer_rack_aware_logic:
        return True
    return not all(racks == partition_racks for racks in racks_per_partition.values())


class RangeAssignor:
    """Java's RangeAssignor (protocol name "range", EAGER), including KIP-881 rack awareness.

    Worked example (the Java javadoc's): two members, topics t0 and t1 with three partitions
    each. Per topic, 3 // 2 = 1 each and the first member (in order) gets the 3 % 2 = 1 extra:

    >>> from mockbroker_assignors.types import ClusterMetadata, Subscription
    >>> cluster = ClusterMetadata.of({"t0": 3, "t1": 3})
    >>> both = Subscription(topics=("t0", "t1"))
    >>> result = RangeAssignor().assign(cluster, {"C1": both, "C0": both})
    >>> [f"{tp.topic}p{tp.partition}" for tp in result["C0"].partitions]
    ['t0p0', 't0p1', 't1p0', 't1p1']
    >>> [f"{tp.topic}p{tp.partition}" for tp in result["C1"].partitions]
    ['t0p2', 't1p2']

    Static members are ordered by ``group.instance.id`` ahead of dynamic ones, so after a rolling
    restart that hands out new member ids the ranges stay with the same instances:

    >>> i1 = Subscription(topics=("t0", "t1"), group_instance_id="I1")
    >>> i0 = Subscription(topics=("t0", "t1"), group_instance_id="I0")
    >>> result = RangeAssignor().assign(cluster, {"C2": i1, "C3": i0})
    >>> [f"{tp.topic}p{tp.partition}" for tp in result["C3"].partitions]
    ['t0p0', 't0p1', 't1p0', 't1p1']

    Rack-aware example: one topic t0 with 4 partitions, partitions 0 and 2 on rack "a", 1 and 3
    on rack "b"; member A on rack "a", B on rack "b". Plain range would give A [0, 1] and B
    [2, 3]; rack matching keeps both members' quota of two and gives each its local partitions:

    >>> on_a, on_b = frozenset({"a"}), frozenset({"b"})
    >>> cluster = ClusterMetadata.of({"t0": 4}, racks={"t0": (on_a, on_b, on_a, on_b)})
    >>> result = RangeAssignor().assign(cluster, {
    ...     "A": Subscription(topics=("t0",), rack_id="a"),
    ...     "B": Subscription(topics=("t0",), rack_id="b"),
    ... })
    >>> [tp.partition for tp in result["A"].partitions], [tp.partition for tp in result["B"].partitions]
    ([0, 2], [1, 3])

    Results: every member of ``subscriptions`` is in the result (possibly with no partitions),
    members in Java's order, each member's partitions sorted by topic then partition. (Java
    returns its lists in hash-map topic order when no rack-aware pass ran, and sorted when one
    did; order within an assignment carries no meaning, so we always sort.)

    ``prefer_rack_aware_logic`` mirrors the package-private flag Java's tests set to run the
    rack-matching pass even when every partition is on every rack; leave it off in real use.
    """

    name: str = "range"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def __repr__(self) -> str:
        return f"RangeAssignor(prefer_rack_aware_logic={self.prefer_rack_aware_logic})"

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        members = member_order(subscriptions)
        # Java ignores an empty rack id (subscription.rackId().filter(r -> !r.isEmpty())).
        consumer_racks = {m: s.rack_id for m, s in subscriptions.items() if s.rack_id}
        states = [
            _TopicState(
                topic,
                count,
                _subscribers(topic, members, subscriptions),
                consumer_racks,
                cluster.topics[topic].racks_of,
                self.prefer_rack_aware_logic,
            )
            for topic, count in subscribed_topic_sizes(cluster, subscriptions).items()
        ]
        assigned: dict[str, list[TopicPartition]] = {m: [] for m in members}

        if any(state.needs_rack_aware for state in states):
            _assign_with_rack_matching(states, assigned)
        for state in states:
            _assign_ranges(state, lambda _consumer, _partition: True, assigned)

        return {m: MemberAssignment(sorted_partitions(assigned[m])) for m in members}


def _subscribers(topic: str, members: list[str], subscriptions: Mapping[str, Subscription]) -> list[str]:
    # ``members`` is already in MemberInfo order, so filtering keeps that order; a topic listed
    # twice in one subscription counts once (Java collects consumers into a LinkedHashMap).
    return [m for m in members if topic in subscriptions[m].topics]


def _assign(
    consumer: str, partitions: list[int], state: _TopicState, assigned: dict[str, list[TopicPartition]]
) -> None:
    assigned[consumer].extend(TopicPartition(state.topic, p) for p in partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(
    state: _TopicState,
    may_assign: Callable[[str, int], bool],
    assigned: dict[str, list[TopicPartition]],
) -> None:
    """RangeAssignor.assignRanges: each member in order takes the lowest unassigned partitions it
    may take, up to its remaining quota. With ``may_assign`` always true and nothing assigned yet
    this is exactly the classic contiguous ranges."""
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        # the first ``limit`` partitions it may take, in order; stop there (scanning the rest
        # for every member would make a topic cost members x partitions)
        take = list(islice((p for p in state.unassigned if may_assign(consumer, p)), limit))
        if take:
            _assign(consumer, take, state, assigned)


def _assign_with_rack_matching(states: list[_TopicState], assigned: dict[str, list[TopicPartition]]) -> None:
    """RangeAssignor.assignWithRackMatching: group topics by (subscribers, partition count).

    A group of several topics is co-partitioned and assigned partition by partition; a lone topic
    gets a rack-matching range pass if it needs one. Each topic's state is only touched by its own
    group, so the order groups are visited in (a hash-map order in Java) cannot change the result.
    """
    groups: dict[tuple[frozenset[str], int], list[_TopicState]] = {}
    for state in states:
        # Java keys on the topic's consumer->rack map (same members means same racks) and then on
        # partitionRacks.size(), which is 0 when no subscriber has a rack.
        key = (frozenset(state.consumers), len(state.partition_racks))
        groups.setdefault(key, []).append(state)
    for (_, num_partitions), group in groups.items():
        if len(group) > 1:
            _assign_co_partitioned(group[0].consumers, num_partitions, group, assigned)
        elif group[0].needs_rack_aware:
            state = group[0]
            _assign_ranges(state, state.racks_match, assigned)


def _assign_co_partitioned(
    consumers: list[str],
    num_partitions: int,
    states: list[_TopicState],
    assigned: dict[str, list[TopicPartition]],
) -> None:
    """RangeAssignor.assignCoPartitionedWithRackMatching (KAFKA-14891): partition p of every topic
    in the group goes to the first member, in order, whose rack hosts partition p of all of them
    and who has quota left in all of them; co-partitioning wins over rack alignment, so a p with
    no such member is left for the plain pass. Runs for such groups even when none of their
    topics needs rack awareness on its own, as long as some topic in the group assignment does."""
    remaining = list(consumers)
    for p in range(num_partitions):
        match = next(
            (c for c in remaining if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)),
            None,
        )
        if match is None:
            continue
        for state in states:
            _assign(match, [p], state, assigned)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break
