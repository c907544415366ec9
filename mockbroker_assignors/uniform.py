"""The KIP-848 server-side ``uniform`` assignor: balanced first, then sticky, like the Java broker's.

This is a port of the group coordinator's ``UniformAssignor``
(``org.apache.kafka.coordinator.group.assignor``), the default of
``group.consumer.assignors``. It picks one of two builders, by ``GroupSpec.homogeneous``
(Java's ``SubscriptionType``, decided on subscribed topic *names*):

* **homogeneous** (every member subscribes to the same topics): ``UniformHomogeneousAssignmentBuilder``
  as of KAFKA-18688 (apache/kafka#19677, merged to trunk May 2025, Kafka 4.1): with ``P`` partitions and ``M`` members everybody
  gets ``P // M`` partitions and ``P % M`` members one more. Each member keeps what it owns up to its
  quota; what it owns beyond is revoked; the free partitions then fill the members below their quota.
  Since KAFKA-18688 any member may hold one of the extra partitions, so an assignment that is
  already balanced does not move.
* **heterogeneous**: ``UniformHeterogeneousAssignmentBuilder`` as of KAFKA-17710 (apache/kafka#17385,
  Kafka 4.0, unchanged since): members keep the partitions of the topics they still subscribe to;
  the free partitions of each topic go, one at a time, to its least loaded subscriber (topics with
  the most partitions per subscriber first); then, topic by topic, partitions move from the most to
  the least loaded subscribers until every topic's subscribers are within one partition of each
  other, or a pass moves nothing, or 16 passes went by. With overlapping subscriptions the result
  can be slightly off balance overall (Java's javadoc gives 9/10/11), as in Java.

Racks are not used: the rack-aware code of the server-side assignors was removed by KAFKA-16694
(Kafka 3.8) and trunk has no rack awareness (KAFKA-19909, rack-aware homogeneous assignment, is an
open proposal). ``MemberSpec.rack_id`` and ``TopicMetadata.partition_racks`` are accepted and ignored.

**Iteration order, where Java's depends on hashing.** The Java builders walk ``groupSpec.memberIds()``,
the key set of a ``HashMap<String, ...>``, and the homogeneous builder walks its subscribed topics
in a ``HashSet<Uuid>``. Both orders decide who gets which partition, so we reproduce them:

* members in ``java.util.HashMap`` iteration order: by bucket of ``String.hashCode`` (spread as
  ``h ^ (h >>> 16)``) in a table sized for the group, then, within a bucket (where Java keeps its
  insertion order, which the assignor cannot know), by member id. The result depends only on the
  content of the input, never on the order of ``GroupSpec.members``. (The table is sized for the
  members present; right after members left, Java's table can still be one size larger, which
  reorders buckets. A known limit, like same-bucket ties.);
* topics in ``HashSet<Uuid>`` order when the cluster metadata carries topic ids (an optional
  ``topic_id`` attribute of ``TopicMetadata`` holding Kafka's base64 form, e.g.
  ``"T1-A4s3VTwiI5CTbEp6POw"``), otherwise by name; the heterogeneous builder's last tie-break,
  "topic id ascending", is ``Uuid.compareTo`` with ids and the name without;
* the partitions a member already owns are walked as ``MemberSpec.assigned`` lists its topics
  (Java iterates the member's own assignment map), each topic's partitions in ascending order
  (Java's ``HashSet<Integer>`` order for partition numbers below its table size).

Topics a member subscribes to that the cluster metadata lacks are ignored, as the broker does
(``TargetAssignmentBuilder`` resolves names through ``TopicIds``, which skips unknown topics; the
Java assignor only throws for an unknown topic id, which the broker never passes). Partitions out
of range or already claimed by another member (never produced by the broker) are dropped. Every
member of the group is in the result, with ``{}`` when it gets nothing (Java leaves such members
out; the coordinator reads a missing member as an empty assignment).

Worked example (homogeneous). A, B and C subscribe to t0 (4 partitions) and t1 (3): 7 partitions,
2 each and one extra. "A", "B", "C" hash to buckets 1, 2, 3, so that is the member order. Nobody
owns anything, so A and B give up the extra (members later in the order can still take it) and C
keeps it; the free partitions, t0 then t1, fill A, B, C in turn:

>>> from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec
>>> cluster = ClusterMetadata.of({"t0": 4, "t1": 3})
>>> both = frozenset({"t0", "t1"})
>>> group = GroupSpec({m: MemberSpec(m, both) for m in "ABC"})
>>> first = UniformAssignor().assign(group, cluster)
>>> for member, topics in first.items():
...     print(member, {t: sorted(ps) for t, ps in topics.items()})
A {'t0': [0, 1]}
B {'t0': [2, 3]}
C {'t1': [0, 1, 2]}

B leaves: 7 partitions for 2 members, 3 each and one extra. A owns 2 and is offered the extra slot
first, but does not fill it while C, last in the order, can still take it: A gives it up. C owns 3
and keeps the extra slot. Nobody loses anything; B's t0 2 and 3 go to A and C:

>>> group = GroupSpec({m: MemberSpec(m, both, assigned=first[m]) for m in "AC"})
>>> for member, topics in UniformAssignor().assign(group, cluster).items():
...     print(member, {t: sorted(ps) for t, ps in topics.items()})
A {'t0': [0, 1, 2]}
C {'t0': [3], 't1': [0, 1, 2]}

Worked example (heterogeneous). A subscribes to t0 (2 partitions) and t1 (4), B to t1 only. Both
topics have 2 partitions per subscriber, so t0, with fewer subscribers, goes first: both to A. Each
of t1's partitions then goes to the least loaded subscriber: B until it catches up with A (0, 1),
then each in turn (B 2, A 3):

>>> group = GroupSpec({"A": MemberSpec("A", both), "B": MemberSpec("B", frozenset({"t1"}))})
>>> cluster = ClusterMetadata.of({"t0": 2, "t1": 4})
>>> for member, topics in UniformAssignor().assign(group, cluster).items():
...     print(member, {t: sorted(ps) for t, ps in topics.items()})
A {'t0': [0, 1], 't1': [3]}
B {'t1': [0, 1, 2]}

Cost: O(P + M log M) for the homogeneous builder; the heterogeneous one adds a few sorts per topic
per balancing pass (C-level ``sorted`` with keys), with at most 16 passes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping, Sequence

from mockbroker_assignors.types import ClusterMetadata, GroupSpec, TargetAssignment, TopicMetadata
from mockbroker_protocol.hashing import (
    java_hash_map_bucket,
    java_hash_map_capacity,
    java_hash_set_copy_capacity,
    java_string_hash,
)

__all__ = [
    "UniformAssignor",
    "assign_heterogeneous",
    "assign_homogeneous",
    "java_member_order",
    "java_topic_order",
]

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF

# UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT: the balancing passes over all topics.
_MAX_ITERATION_COUNT = 16


# -- Java's iteration orders ------------------------------------------------------------------------


def _utf16(value: str) -> bytes:
    """A sort key giving ``String.compareTo`` order (UTF-16 code units, not code points)."""
    return value.encode("utf-16-be", "surrogatepass")


def java_member_order(member_ids: Iterable[str]) -> list[str]:
    """Member ids in the order Java's ``HashMap<String, ...>`` of the group's member specs yields
    them, within a bucket by member id (Java: insertion order, unknown here).

    >>> java_member_order(["C", "B", "A"])  # buckets 3, 2, 1
    ['A', 'B', 'C']
    >>> java_member_order(["member1", "member2", "member10"])  # buckets 9, 6, 3: not sorted
    ['member10', 'member2', 'member1']
    """
    ids = list(member_ids)
    capacity = java_hash_map_capacity(len(ids))  # TargetAssignmentBuilder fills a new HashMap<>()
    return sorted(ids, key=lambda m: (java_hash_map_bucket(java_string_hash(m), capacity), _utf16(m)))


def _topic_uuid(meta: TopicMetadata) -> tuple[int, int] | None:
    """The topic id as (mostSignificantBits, leastSignificantBits), signed like Java's longs, when
    the metadata carries a ``topic_id`` (Kafka's 22-character URL-safe base64 form)."""
    value = getattr(meta, "topic_id", None)
    if not isinstance(value, str) or not value:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 16:
        return None
    return int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True)


def _uuid_hash(bits: tuple[int, int]) -> int:
    """``Uuid.hashCode()``: the two halves of ``msb ^ lsb``, xored, as an unsigned 32-bit int."""
    xor = (bits[0] ^ bits[1]) & _MASK64
    return ((xor >> 32) ^ xor) & _MASK32


def _topic_uuids(topics: Iterable[str], cluster: ClusterMetadata) -> dict[str, tuple[int, int]] | None:
    """Every topic's id, or None when any of them has none (then names stand in for ids)."""
    uuids: dict[str, tuple[int, int]] = {}
    for topic in topics:
        bits = _topic_uuid(cluster.topics[topic])
        if bits is None:
            return None
        uuids[topic] = bits
    return uuids


def java_topic_order(topics: Iterable[str], cluster: ClusterMetadata) -> list[str]:
    """Topics in the order of Java's ``new HashSet<Uuid>(subscribedTopicIds)`` when the metadata
    has topic ids (within a bucket by name), else by name."""
    names = sorted(set(topics))
    uuids = _topic_uuids(names, cluster)
    if uuids is None:
        return names
    capacity = java_hash_set_copy_capacity(len(names))
    return sorted(names, key=lambda t: java_hash_map_bucket(_uuid_hash(uuids[t]), capacity))  # stable: by name


def _subscribed(spec_topics: Iterable[str], cluster: ClusterMetadata) -> set[str]:
    # TopicIds (what the broker hands the assignor) silently skips names it cannot resolve.
    return {t for t in spec_topics if t in cluster.topics}


def _partition_count(cluster: ClusterMetadata, topic: str) -> int:
    return max(0, cluster.topics[topic].num_partitions)


# -- the assignor -----------------------------------------------------------------------------------


class UniformAssignor:
    """KIP-848 ``uniform``: Java's ``UniformAssignor`` (see the module docstring for the rules, the
    Kafka versions followed and a worked example)."""

    name = "uniform"

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
        if not group.members:
            return {}
        order = java_member_order(group.members)
        if group.homogeneous:
            return assign_homogeneous(order, group, cluster)
        return assign_heterogeneous(order, group, cluster)


def _output(
    order: Sequence[str], owned: Sequence[Mapping[str, list[int]]], topic_order: Sequence[str]
) -> TargetAssignment:
    """Member -> topic -> partitions, topics in the Java topic order (the order the next
    computation will walk a member's assignment in), every member present."""
    rank = {t: i for i, t in enumerate(topic_order)}
    result: TargetAssignment = {}
    for index, member in enumerate(order):
        topics = owned[index]
        names = sorted(topics, key=rank.__getitem__) if len(topics) > 1 else topics
        result[member] = {t: frozenset(topics[t]) for t in names if topics[t]}
    return result


def assign_homogeneous(order: Sequence[str], group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
    """``UniformHomogeneousAssignmentBuilder`` (after KAFKA-18688) with members walked in ``order``
    (Java: ``groupSpec.memberIds()``); exposed so tests can try other iteration orders."""
    members = len(order)
    first = group.members[order[0]]
    topics = java_topic_order(_subscribed(first.subscribed_topics, cluster), cluster)
    if not topics:
        return {m: {} for m in order}
    sizes = {t: _partition_count(cluster, t) for t in topics}
    total = sum(sizes.values())

    # What each member owns, cleaned: subscribed topics only, real partitions, first claim wins.
    claimed = {t: bytearray(n) for t, n in sizes.items()}
    owned_before: list[list[tuple[str, list[int]]]] = []
    for member in order:
        mine: list[tuple[str, list[int]]] = []
        for topic, partitions in group.members[member].assigned.items():
            flags = claimed.get(topic)
            if flags is None:
                continue  # Not (or no longer) subscribed: the whole topic is revoked.
            n = len(flags)
            kept = []
            for p in sorted(partitions):
                if 0 <= p < n and not flags[p]:
                    flags[p] = 1
                    kept.append(p)
            if kept:
                mine.append((topic, kept))
        owned_before.append(mine)

    # The partitions nobody owns (groupSpec.isPartitionAssigned), in topic then partition order.
    unassigned: list[tuple[str, int]] = []
    for topic in topics:
        flags = claimed[topic]
        unassigned.extend((topic, p) for p in range(len(flags)) if not flags[p])

    minimum_quota, extra_left = divmod(total, members)

    # maybeRevokePartitions: keep up to the quota, revoke the rest. The first members in the
    # order are offered the extra partition, but (KAFKA-18688) a member that does not already fill
    # it gives it up, unless every member still to come must take an extra to make the count.
    owned: list[dict[str, list[int]]] = []
    unfilled: list[tuple[int, int]] = []
    for index, mine in enumerate(owned_before):
        quota = minimum_quota
        has_extra = extra_left > 0
        if has_extra:
            quota += 1
        kept_topics: dict[str, list[int]] = {}
        for topic, held in mine:
            if len(held) <= quota:
                quota -= len(held)
                kept_topics[topic] = held
            else:
                if quota > 0:
                    kept_topics[topic] = held[:quota]
                unassigned.extend((topic, p) for p in held[quota:])
                quota = 0
        if quota > 0 and has_extra and members - index > extra_left:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((index, quota))
        if has_extra:
            extra_left -= 1
        owned.append(kept_topics)

    # assignRemainingPartitions: fill the members below their quota, in order.
    cursor = 0
    for index, quota in unfilled:
        taken = unassigned[cursor : cursor + quota]
        cursor += len(taken)
        mine_now = owned[index]
        for topic, p in taken:
            mine_now.setdefault(topic, []).append(p)
    if cursor < len(unassigned):  # Java: PartitionAssignorException("Partitions were left unassigned")
        raise RuntimeError(f"uniform assignor bug: {len(unassigned) - cursor} partition(s) left unassigned")

    return _output(order, owned, topics)


class _Balancer:
    """``UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer``: over a topic's
    subscribers sorted by load (then member index), a "least loaded" range growing from the left
    and a "most loaded" range growing from the right, each holding members that started at the
    same partition count. Handing out to the least loaded and taking from the most loaded in turn
    keeps both rounds fair; the topic is balanced when the two levels differ by one or less."""

    __slots__ = (
        "least_count",
        "least_end",
        "most_count",
        "most_end",
        "most_start",
        "next_least",
        "next_most",
        "sizes",
        "sorted_members",
    )

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted_members: list[int] = []
        self.least_end = 0  # [0, least_end): the least loaded range
        self.least_count = -1  # its level before it is handed partitions
        self.next_least = 0
        self.most_start = 0  # [most_start, most_end): the most loaded range
        self.most_end = 0
        self.most_count = 1  # its level before partitions are taken from it
        self.next_most = -1

    def initialize(self, subscribers: list[int]) -> int:
        """Resets for a topic's subscribers (ascending member indices); returns max - min load."""
        sizes = self.sizes
        # Stable sort by load: ties stay by member index, as Java's comparator breaks them.
        ranked = sorted(subscribers, key=sizes.__getitem__)
        self.sorted_members = ranked
        last = len(ranked)
        self.least_end = 0
        self.least_count = sizes[ranked[0]] - 1
        self.next_least = 0
        self.most_start = last
        self.most_end = last
        self.most_count = sizes[ranked[-1]] + 1
        self.next_most = last - 1
        return sizes[ranked[-1]] - sizes[ranked[0]]

    def next_least_loaded(self) -> int:
        """The member to give the next partition to (assumes it will get it)."""
        ranked = self.sorted_members
        if self.next_least >= self.least_end:
            # Everybody in the range got one: raise its level and take in the members at that level.
            self.least_count += 1
            sizes = self.sizes
            while self.least_end < len(ranked) and sizes[ranked[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = ranked[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        """The member to take the next partition from (assumes it will give one), or -1."""
        ranked = self.sorted_members
        if self.next_most < self.most_start:
            sizes = self.sizes
            if self.most_end <= self.most_start and self.most_start > 0:
                # Emptied by exclusions: restart the level from the next member down, so that the
                # range surely grows.
                self.most_count = sizes[ranked[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[ranked[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = ranked[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drops the member ``next_most_loaded`` just returned (it has nothing of the topic to give)."""
        ranked = self.sorted_members
        at = self.next_most + 1
        ranked[at], ranked[self.most_end - 1] = ranked[self.most_end - 1], ranked[at]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


def assign_heterogeneous(order: Sequence[str], group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
    """``UniformHeterogeneousAssignmentBuilder`` (KAFKA-17710) with members numbered in ``order``
    (Java: ``groupSpec.memberIds()``); exposed so tests can try other iteration orders."""
    subscriptions = [_subscribed(group.members[m].subscribed_topics, cluster) for m in order]
    subscribers: dict[str, list[int]] = {}
    for index, topics in enumerate(subscriptions):
        for topic in topics:
            subscribers.setdefault(topic, []).append(index)  # ascending member index
    if not subscribers:
        return {m: {} for m in order}

    owners = {t: [-1] * _partition_count(cluster, t) for t in subscribers}
    sizes = [0] * len(order)

    # maybeRevokePartitions: keep the partitions of the topics still subscribed to.
    for index, member in enumerate(order):
        topics = subscriptions[index]
        for topic, partitions in group.members[member].assigned.items():
            if topic not in topics:
                continue
            topic_owners = owners[topic]
            n = len(topic_owners)
            for p in partitions:
                if 0 <= p < n and topic_owners[p] == -1:
                    topic_owners[p] = index
                    sizes[index] += 1

    # The topic order (sortTopicIds): partitions per subscriber descending, then subscriber count
    # ascending, then topic id ascending (Uuid.compareTo: signed high then low long; names without ids).
    uuids = _topic_uuids(subscribers, cluster)

    def topic_key(topic: str) -> tuple[float, int, tuple[int, int] | bytes]:
        count = len(subscribers[topic])
        tie = uuids[topic] if uuids is not None else _utf16(topic)
        return (-(len(owners[topic]) / count), count, tie)

    def assign_partition(topic: str, partition: int, member: int) -> None:
        topic_owners = owners[topic]
        previous = topic_owners[partition]
        if previous != -1:
            sizes[previous] -= 1
        topic_owners[partition] = member
        sizes[member] += 1

    balancer = _Balancer(sizes)

    # assignRemainingPartitions: each free partition to the topic's least loaded subscriber.
    free = {t: [p for p, o in enumerate(owners[t]) if o == -1] for t in subscribers}
    for topic in sorted((t for t in free if free[t]), key=topic_key):
        balancer.initialize(subscribers[topic])
        for p in free[topic]:
            assign_partition(topic, p, balancer.next_least_loaded())

    # balance / balanceTopics: only topics with two or more subscribers can move.
    movable = sorted((t for t, s in subscribers.items() if len(s) >= 2), key=topic_key)
    if movable:
        last_rebalanced = -1
        for _ in range(_MAX_ITERATION_COUNT):
            done = False
            for topic_index, topic in enumerate(movable):
                if topic_index == last_rebalanced:
                    # A whole round since the last move: nothing more to gain.
                    done = True
                    break
                moved = _balance_topic(topic, balancer, owners[topic], subscribers[topic], assign_partition)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = topic_index
            if done:
                break

    owned: list[dict[str, list[int]]] = [{} for _ in order]
    for topic, topic_owners in owners.items():
        for p, o in enumerate(topic_owners):
            owned[o].setdefault(topic, []).append(p)
    return _output(order, owned, java_topic_order(subscribers, cluster))


def _balance_topic(
    topic: str,
    balancer: _Balancer,
    topic_owners: list[int],
    subscribers: list[int],
    assign_partition: Callable[[str, int, int], None],
) -> int:
    """``balanceTopic``: moves the topic's partitions from its most to its least loaded subscribers
    until they are within one of each other or the loaded ones have none of it left; the last
    partition (by owner, then number) of a giving member moves first. Returns the moves made."""
    if balancer.initialize(subscribers) <= 1:
        return 0
    # Partitions grouped by owner (then by number), and each owner's slice of that list.
    partitions = sorted(range(len(topic_owners)), key=topic_owners.__getitem__)
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for i, p in enumerate(partitions):
        owner = topic_owners[p]
        if owner not in start:
            start[owner] = i
        end[owner] = i + 1

    moved = 0
    while not balancer.is_balanced():
        giver = balancer.next_most_loaded()
        while giver != -1 and (giver not in end or end[giver] - start[giver] <= 0):
            balancer.exclude_most_loaded()
            giver = balancer.next_most_loaded()
        if giver == -1:
            break  # Nobody loaded has a partition of this topic left to give.
        end[giver] -= 1
        partition = partitions[end[giver]]
        taker = balancer.next_least_loaded()
        if balancer.is_balanced():
            break
        assign_partition(topic, partition, taker)
        moved += 1
    return moved
