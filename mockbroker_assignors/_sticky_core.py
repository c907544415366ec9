"""The engine behind the sticky and cooperative-sticky assignors: Java's AbstractStickyAssignor, ported.

This module reproduces ``org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor`` (Kafka
trunk, commit 1eb7644 of October 2024, unchanged in substance since KAFKA-15170 in 3.8): the check for
identical subscriptions with the resolution of conflicting ownership claims, the rack information of
KIP-881, the ConstrainedAssignmentBuilder (every member subscribes to the same topics) and the
GeneralAssignmentBuilder (anything else), with its PartitionMovements bookkeeping.

The goal is the same result as Java for the same input, including the order of each member's
partition list. Java's result depends on a few iteration orders of ``java.util.HashMap`` and
``HashSet`` (which member's claim is looked at first, which member's owned partitions are kept
first, which moved partition is moved back), so those orders are emulated here: String.hashCode,
String.compareTo (UTF-16 code units), the table capacity a HashMap grows to, and bucket-by-bucket
iteration (insertion order within a bucket for ``put``, reverse order for ``computeIfAbsent``).
Not emulated: what happens once nine keys share one bucket (HashMap then resizes a small table or
turns the bucket into a tree), which realistic member ids and topic names do not run into.

Two differences by design, both about state Java keeps in the assignor instance: every call here
starts from generation -1, where a Java leader's assignor keeps the highest generation it has seen
in any earlier rebalance (``maxGeneration`` is never reset; it only matters if a group's generation
goes backwards, e.g. a group deleted and recreated under a long-lived leader); and nothing is
remembered between calls (Java's ``partitionsTransferringOwnership`` is returned instead).

Where Java throws (IllegalStateException, NullPointerException on inputs Java's own code does not
expect), :class:`StickyAssignorError` is raised instead of inventing a result.

Pure: standard library and ``mockbroker_assignors.types`` only.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from mockbroker_assignors.types import ClusterMetadata, Subscription, TopicPartition
from mockbroker_protocol.hashing import java_hash_map_bucket, java_hash_map_order, java_string_hash

DEFAULT_GENERATION = -1  # AbstractStickyAssignor.DEFAULT_GENERATION

_K = TypeVar("_K")
_MASK32 = 0xFFFFFFFF


class StickyAssignorError(RuntimeError):
    """Raised where Java's AbstractStickyAssignor would throw instead of returning an assignment."""


@dataclass(frozen=True, slots=True)
class MemberData:
    """AbstractStickyAssignor.MemberData: what a member says it owned, and in which generation
    (``None`` for Java's ``Optional.empty()``)."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None = None


MemberDataFn = Callable[[Subscription], MemberData]


@dataclass(slots=True)
class StickyResult:
    """The raw result of one run, as Java's ``assignPartitions`` leaves it.

    ``partitions_transferring_ownership`` is Java's field of the same name: filled by the
    constrained builder, ``None`` after the general builder (the cooperative assignor then
    computes it from owned and assigned partitions)."""

    assignment: dict[str, list[TopicPartition]]
    partitions_transferring_ownership: dict[TopicPartition, str] | None
    all_subscriptions_equal: bool


# -- Java emulation: String.compareTo, TopicPartition.hashCode, HashMap/HashSet iteration order ----
# (String.hashCode and a put-filled HashMap's order: mockbroker_protocol/hashing.py)


def java_topic_partition_hash(tp: TopicPartition) -> int:
    """``TopicPartition.hashCode()``: 31 * (31 + partition) + topic.hashCode(), unsigned 32-bit."""
    return (31 * ((31 + tp.partition) & _MASK32) + java_string_hash(tp.topic)) & _MASK32


def java_string_sort_key(s: str) -> bytes:
    """A key that orders strings like ``String.compareTo`` (UTF-16 code units, not code points)."""
    return s.encode("utf-16-be", "surrogatepass")


def java_compute_if_absent_order(calls: Iterable[_K], hash_fn: Callable[[_K], int]) -> list[_K]:
    """The iteration order of a ``new HashMap<>()`` filled by ``computeIfAbsent(key, ...)`` once per
    element of ``calls`` (repeats included), as CollectionUtils.groupPartitionsByTopic does.

    Unlike ``put``, computeIfAbsent links a new node at the head of its bucket, and checks the
    size against the threshold before it looks the key up, on every call: so the table grows on
    the first call after the size has passed the threshold, even for a key already present."""
    capacity, threshold = 16, 12
    first_seen: dict[_K, int] = {}
    for key in calls:
        if len(first_seen) > threshold:
            capacity, threshold = capacity << 1, threshold << 1
        if key not in first_seen:
            first_seen[key] = len(first_seen)
    return sorted(first_seen, key=lambda k: (java_hash_map_bucket(hash_fn(k), capacity), -first_seen[k]))


class _JavaHashSet:
    """A ``new HashSet<TopicPartition>()`` reduced to what PartitionMovements needs of it: add,
    remove, and the first element its iterator returns."""

    __slots__ = ("_capacity", "_items", "_threshold")

    def __init__(self) -> None:
        self._items: dict[TopicPartition, None] = {}  # dict order == insertion order
        self._capacity = 16
        self._threshold = 12

    def __bool__(self) -> bool:
        return bool(self._items)

    def add(self, tp: TopicPartition) -> None:
        if tp in self._items:
            return
        self._items[tp] = None
        if len(self._items) > self._threshold:  # tables grow but never shrink
            self._capacity <<= 1
            self._threshold <<= 1

    def discard(self, tp: TopicPartition) -> None:
        self._items.pop(tp, None)

    def first(self) -> TopicPartition:
        capacity = self._capacity
        ranked = min(
            enumerate(self._items), key=lambda e: (java_hash_map_bucket(java_topic_partition_hash(e[1]), capacity), e[0])
        )
        return ranked[1]


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    """``List.remove(Object)``: drop the first occurrence, if any."""
    with contextlib.suppress(ValueError):
        items.remove(tp)


# -- Rack information (KIP-881) ------------------------------------------------------------------


class _RackInfo:
    """AbstractStickyAssignor.RackInfo: consumer racks and partition replica racks, kept only when
    rack-aware assignment is used."""

    __slots__ = ("consumer_racks", "num_consumers_by_partition", "partition_racks")

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        cluster: ClusterMetadata,
        member_order: Sequence[str],
        subscriptions: Mapping[str, Subscription],
        prefer_rack_aware_logic: bool,
    ) -> None:
        consumers_by_rack: dict[str, list[str]] = {}
        for member in member_order:
            rack = subscriptions[member].rack_id
            if rack:  # Java: rackId().filter(r -> !r.isEmpty())
                consumers_by_rack.setdefault(rack, []).append(member)

        partition_racks: dict[TopicPartition, frozenset[str]] = {}
        all_partition_racks: set[str] = set()
        if consumers_by_rack:
            for topic, num_partitions in partitions_per_topic.items():
                meta = cluster.topics[topic]
                for p in range(num_partitions):
                    racks = meta.racks_of(p)
                    partition_racks[TopicPartition(topic, p)] = racks
                    all_partition_racks.update(racks)

        if _use_rack_aware_assignment(
            set(consumers_by_rack), all_partition_racks, partition_racks, prefer_rack_aware_logic
        ):
            self.consumer_racks = {m: rack for rack, members in consumers_by_rack.items() for m in members}
            self.partition_racks = partition_racks
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        # Java counts these from the local map, so they exist whenever some consumer has a rack,
        # even when rack-aware assignment is off (the sort they drive is then a no-op).
        self.num_consumers_by_partition = {
            tp: sum(len(consumers_by_rack.get(r, ())) for r in racks) for tp, racks in partition_racks.items()
        }

    def racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        consumer_rack = self.consumer_racks.get(consumer)
        if consumer_rack is None:
            return False
        replica_racks = self.partition_racks.get(tp)
        return replica_racks is None or consumer_rack not in replica_racks

    def sort_partitions_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        if not self.num_consumers_by_partition:
            return partitions
        counts = self.num_consumers_by_partition
        return sorted(partitions, key=lambda tp: counts.get(tp, 0))  # stable, like List.sort

    def next_rack_consumer(self, tp: TopicPartition, consumers: list[str], first_index: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first_index + i) % n
            consumer_rack = self.consumer_racks.get(consumers[index])
            if consumer_rack is not None and consumer_rack in racks:
                return index
        return -1


def _use_rack_aware_assignment(
    consumer_racks: set[str],
    partition_racks: set[str],
    racks_per_partition: Mapping[TopicPartition, frozenset[str]],
    prefer_rack_aware_logic: bool,
) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment (KIP-881): only when consumers have racks that
    some replica is on, and (unless the test-only preference is set) some partition is not on every rack."""
    if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
        return False
    if prefer_rack_aware_logic:
        return True
    return not all(racks == partition_racks for racks in racks_per_partition.values())


# -- The entry point -----------------------------------------------------------------------------


def partitions_per_topic(cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> dict[str, int]:
    """AbstractPartitionAssignor.assign: the subscribed topics that have metadata and partitions."""
    result: dict[str, int] = {}
    for subscription in subscriptions.values():
        for topic in subscription.topics:
            if topic not in result:
                n = cluster.partitions_for(topic)
                if n > 0:
                    result[topic] = n
    return result


def assign_sticky(
    cluster: ClusterMetadata,
    subscriptions: Mapping[str, Subscription],
    member_data: MemberDataFn,
    *,
    prefer_rack_aware_logic: bool = False,
    subscriptions_map_capacity: int | None = None,
) -> StickyResult:
    """AbstractStickyAssignor.assignPartitions for the members of ``subscriptions``.

    ``subscriptions`` is taken in the order the group leader received the members (the JoinGroup
    response), which is the order Java's ConsumerCoordinator puts them into its ``HashMap``;
    ``subscriptions_map_capacity`` is that map's constructor argument (``None``: ``new HashMap<>()``,
    what the coordinator uses; Java tests sometimes pass a size). ``member_data`` decodes a
    subscription's owned partitions and generation the way the concrete assignor does."""
    if not subscriptions:
        return StickyResult({}, {}, True)
    ppt = partitions_per_topic(cluster, subscriptions)
    members = list(subscriptions)
    sub_order = java_hash_map_order(members, subscriptions_map_capacity)

    names: set[str] = set(members)
    for subscription in subscriptions.values():
        names.update(subscription.topics)
    key = {name: java_string_sort_key(name) for name in names}

    rack_info = _RackInfo(ppt, cluster, sub_order, subscriptions, prefer_rack_aware_logic)
    data = {m: member_data(subscriptions[m]) for m in sub_order}

    equal, owned, multi, max_generation = _all_subscriptions_equal(ppt, subscriptions, sub_order, data)
    # consumerToOwnedPartitions is a HashMap of its own (default capacity), filled in sub_order:
    # its order is sub_order itself unless the subscriptions map was given another capacity.
    owned_order = sub_order
    if subscriptions_map_capacity is not None:
        owned_order = java_hash_map_order(list(owned))
    if equal:
        constrained = _ConstrainedAssignmentBuilder(ppt, rack_info, owned, owned_order, multi, key)
        assignment = constrained.build()
        return StickyResult(assignment, constrained.partitions_transferring_ownership, True)
    general = _GeneralAssignmentBuilder(ppt, rack_info, owned, subscriptions, sub_order, data, max_generation, key)
    return StickyResult(general.build(), None, False)


def _all_subscriptions_equal(
    ppt: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    sub_order: Sequence[str],
    data: Mapping[str, MemberData],
) -> tuple[bool, dict[str, list[TopicPartition]], set[TopicPartition], int]:
    """AbstractStickyAssignor.allSubscriptionsEqual, which also resolves ownership claims.

    Returns (all equal, consumer -> owned and still-existing partitions, partitions claimed by
    several members in the same generation, max generation). Java's rules, in member order:
    a claim on an unclaimed partition is kept; a claim in a higher generation than the current
    claimant's takes it over; a claim in the same generation invalidates the partition for both.
    The current claimant's generation is read from its ConsumerProtocolSubscription v2+
    ``generation_id`` field, not from its member data (for the eager sticky assignor these can
    differ: Java compares the two as they are)."""
    equal = True
    subscribed_topics: set[str] = set()
    owned: dict[str, list[TopicPartition]] = {}
    multi: set[TopicPartition] = set()
    claimant: dict[TopicPartition, str] = {}
    max_generation = DEFAULT_GENERATION
    for consumer in sub_order:
        subscription = subscriptions[consumer]
        topics = subscription.topics
        # The reference set is taken from the first member with a non-empty list: a member with no
        # topics that comes first in Java's order does not make the subscriptions unequal.
        if not subscribed_topics:
            subscribed_topics.update(topics)
        elif equal and not (len(topics) == len(subscribed_topics) and subscribed_topics.issuperset(topics)):
            equal = False

        member = data[consumer]
        generation = DEFAULT_GENERATION if member.generation is None else member.generation
        max_generation = max(max_generation, generation)
        mine: list[TopicPartition] = []
        owned[consumer] = mine
        for tp in member.partitions:
            if tp.topic not in ppt:
                continue
            other = claimant.get(tp)
            if other is None:
                mine.append(tp)
                claimant[tp] = consumer
                continue
            other_generation = subscriptions[other].generation_id
            if other_generation < 0:
                other_generation = DEFAULT_GENERATION
            if generation == other_generation:
                multi.add(tp)
                _remove_first(owned[other], tp)
                claimant[tp] = consumer
            elif generation > other_generation:
                mine.append(tp)
                _remove_first(owned[other], tp)
                claimant[tp] = consumer
            # else: the other member, in a higher generation, keeps the partition
    return equal, owned, multi, max_generation


# -- ConstrainedAssignmentBuilder -----------------------------------------------------------------


class _ConstrainedAssignmentBuilder:
    """All members subscribe to the same topics: quotas of floor and ceil(partitions / members).

    1. Each member keeps owned partitions up to its quota (rack-matching ones only, when rack-aware),
       taking them in (partition, topic) order; members are visited in Java's HashMap order, and the
       first ones to own at least the max quota get it while max-quota slots remain.
    2. Rack-aware: unassigned partitions go round-robin to unfilled members on a matching rack.
    3. The rest go round-robin to unfilled members (sorted by member id), first up to the min quota,
       then to members at the min quota until the expected number of members has the max quota.
    A partition given to a member other than the one that owned it (or one claimed by several
    members in the same generation) is recorded as transferring ownership."""

    def __init__(
        self,
        ppt: Mapping[str, int],
        rack_info: _RackInfo,
        owned: dict[str, list[TopicPartition]],
        owned_order: Sequence[str],
        multi: set[TopicPartition],
        key: Mapping[str, bytes],
    ) -> None:
        self.ppt = ppt
        self.rack_info = rack_info
        self.owned = owned
        self.owned_order = owned_order
        self.multi = multi
        self.key = key
        self.partitions_transferring_ownership: dict[TopicPartition, str] = {}
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []
        total = sum(ppt.values())
        n = len(owned)
        self.min_quota = total // n
        self.max_quota = -(-total // n)
        self.expected_over_min = total % n
        self.current_over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {c: [] for c in owned}
        self.assigned: list[TopicPartition] = []

    def build(self) -> dict[str, list[TopicPartition]]:
        self._assign_owned_partitions()
        unassigned = self._unassigned_partitions()
        key = self.key
        self.under_min.sort(key=lambda m: key[m])
        self.exactly_min.sort(key=lambda m: key[m])
        unassigned = self.rack_info.sort_partitions_by_rack_consumers(unassigned)
        unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled_members()
        return self.assignment

    def _assign_owned_partitions(self) -> None:
        key = self.key
        for consumer in self.owned_order:
            kept: list[TopicPartition] = []
            for tp in self.owned[consumer]:
                if self.rack_info.racks_mismatch(consumer, tp):
                    self.maybe_revoked[tp] = consumer
                else:
                    kept.append(tp)
            # KAFKA-16277: keep owned partitions in (partition, topic) order, so that a member keeps
            # partitions spread over topics rather than all of one topic.
            kept.sort(key=lambda tp: (tp.partition, key[tp.topic]))
            if self.multi:
                for tp in self.multi:
                    _remove_first(kept, tp)

            assignment = self.assignment[consumer]
            if len(kept) < self.min_quota:
                assignment.extend(kept)
                self.assigned.extend(kept)
                self.under_min.append(consumer)
            elif len(kept) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                assignment.extend(kept[: self.max_quota])
                self.assigned.extend(kept[: self.max_quota])
                for tp in kept[self.max_quota :]:
                    self.maybe_revoked[tp] = consumer
            else:
                assignment.extend(kept[: self.min_quota])
                self.assigned.extend(kept[: self.min_quota])
                for tp in kept[self.min_quota :]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)

    def _unassigned_partitions(self) -> list[TopicPartition]:
        """All partitions, topics in name order, minus the kept ones (Java's two-pointer walk,
        reproduced as it is, so that an owned partition number the topic no longer has behaves
        as it does in Java)."""
        key = self.key
        sorted_topics = sorted(self.ppt, key=lambda t: key[t])
        all_partitions = [TopicPartition(t, p) for t in sorted_topics for p in range(self.ppt[t])]
        if not self.assigned:
            return all_partitions
        kept = _distinct_existing(self.assigned, self.ppt)
        if kept is not None:
            return [tp for tp in all_partitions if tp not in kept]
        assigned = sorted(self.assigned, key=lambda tp: (key[tp.topic], tp.partition))
        return _walk_unassigned(all_partitions, assigned)

    def _assign_rack_aware_round_robin(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        rack_info = self.rack_info
        if not rack_info.consumer_racks:
            return unassigned
        under, exactly = self.under_min, self.exactly_min
        remaining: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            consumer: str | None = None
            index = rack_info.next_rack_consumer(tp, under, next_index)
            if index >= 0:
                consumer = under[index]
                count = len(self.assignment[consumer]) + 1
                if count >= self.min_quota:
                    under.remove(consumer)
                    # a member at the min quota is unfilled only while max-quota slots remain
                    if count < self.max_quota and self.current_over_min < self.expected_over_min:
                        exactly.append(consumer)
                else:
                    index += 1
                next_index = index % len(under) if under else 0
            elif exactly:
                first = rack_info.next_rack_consumer(tp, exactly, 0)
                if first >= 0:
                    consumer = exactly[first]
                    if len(self.assignment[consumer]) + 1 == self.max_quota:
                        del exactly[first]
                        self.current_over_min += 1
                        if self.current_over_min == self.expected_over_min:
                            exactly.clear()
            if consumer is None:
                remaining.append(tp)
            else:
                self._assign_new_partition(tp, consumer)
        return remaining

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        under, exactly = self.under_min, self.exactly_min
        # Java walks an Iterator over the LinkedList of members under the min quota, removing through
        # it, restarting it when it runs out, and polling members at the min quota once it is empty.
        position = 0
        last_returned: int | None = None
        for tp in unassigned:
            if position < len(under):
                consumer = under[position]
                last_returned, position = position, position + 1
            elif not under and not exactly:
                raise StickyAssignorError("No more unfilled consumers to be assigned.")
            elif not under:
                consumer = exactly.pop(0)
            else:
                consumer = under[0]
                last_returned, position = 0, 1
            count = self._assign_new_partition(tp, consumer)
            if count == self.min_quota:
                if last_returned is None:
                    raise StickyAssignorError("IllegalStateException: iterator remove without next")
                del under[last_returned]
                position, last_returned = position - 1, None
                exactly.append(consumer)
            elif count == self.max_quota:
                self.current_over_min += 1

    def _assign_new_partition(self, tp: TopicPartition, consumer: str) -> int:
        assignment = self.assignment[consumer]
        assignment.append(tp)
        previous = self.maybe_revoked.get(tp)
        if (previous is not None and previous != consumer) or tp in self.multi:
            self.partitions_transferring_ownership[tp] = consumer
        return len(assignment)

    def _verify_unfilled_members(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise StickyAssignorError(
                "We haven't reached the expected number of members with more than the minQuota "
                "partitions, but no more partitions to be assigned"
            )
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise StickyAssignorError(
                    f"Consumer: [{member}] doesn't reach minQuota partitions, and no more partitions to be assigned"
                )


def _distinct_existing(
    partitions: list[TopicPartition], ppt: Mapping[str, int]
) -> set[TopicPartition] | None:
    """The partitions as a set, when they are distinct and all exist: the two-pointer walk then
    amounts to a set difference. ``None`` otherwise (the walk is then done as Java does it)."""
    distinct = set(partitions)
    if len(distinct) != len(partitions):
        return None
    for tp in distinct:
        n = ppt.get(tp.topic)
        if n is None or not 0 <= tp.partition < n:
            return None
    return distinct


def _walk_unassigned(
    all_partitions: Iterable[TopicPartition], sorted_assigned: list[TopicPartition]
) -> list[TopicPartition]:
    """getUnassignedPartitions: walk all partitions in order beside the sorted assigned ones."""
    unassigned: list[TopicPartition] = []
    assigned_iter = iter(sorted_assigned)
    next_assigned: TopicPartition | None = next(assigned_iter)
    for tp in all_partitions:
        if next_assigned is None or tp != next_assigned:
            unassigned.append(tp)
        else:
            next_assigned = next(assigned_iter, None)  # None: add the rest directly
    return unassigned


# -- GeneralAssignmentBuilder ---------------------------------------------------------------------


class _PartitionMovements:
    """AbstractStickyAssignor.PartitionMovements: where each partition moved during this run, so that
    a move back along a pair of members undoes an earlier move instead of making a new one."""

    __slots__ = ("by_topic", "movements")

    def __init__(self) -> None:
        self.movements: dict[TopicPartition, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], _JavaHashSet]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.movements.pop(tp)
        topic_moves = self.by_topic[tp.topic]
        moved = topic_moves[pair]
        moved.discard(tp)
        if not moved:
            del topic_moves[pair]
        if not topic_moves:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.movements[tp] = pair
        topic_moves = self.by_topic.setdefault(tp.topic, {})
        moved = topic_moves.get(pair)
        if moved is None:
            moved = topic_moves[pair] = _JavaHashSet()
        moved.add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.movements:
            source, _ = self._remove_record(tp)
            if source != new:  # not going back to where it started
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        topic_moves = self.by_topic.get(tp.topic)
        if topic_moves is None:
            return tp
        previous = self.movements.get(tp)
        if previous is not None:
            old = previous[0]
        reverse = topic_moves.get((new, old))
        if reverse is None:
            return tp
        return reverse.first()  # HashSet.iterator().next()


class _SortedConsumers:
    """The TreeSet ``sortedCurrentSubscriptions``: members by (assignment size, member id).

    Java walks the set to find the first member subscribed to a topic. When the group has few
    distinct subscriptions, the same order is also kept per subscription, and the walk becomes a
    merge of the few lists that contain the topic; otherwise the walk is done as in Java."""

    __slots__ = ("_by_class", "_class_of", "_classes_with_topic", "_entries", "_key", "_sizes", "_topics_of")

    MAX_CLASSES = 16

    def __init__(
        self,
        sizes: Mapping[str, list[TopicPartition]],
        key: Mapping[str, bytes],
        topics_of: Mapping[str, frozenset[str]],
    ) -> None:
        self._sizes = sizes
        self._key = key
        self._topics_of = topics_of
        self._entries: list[tuple[int, bytes, str]] = []
        classes = set(topics_of.values())
        self._class_of: dict[str, frozenset[str]] = {}
        self._by_class: dict[frozenset[str], list[tuple[int, bytes, str]]] = {}
        self._classes_with_topic: dict[str, list[list[tuple[int, bytes, str]]]] = {}
        if len(classes) <= self.MAX_CLASSES:
            self._class_of = dict(topics_of)
            self._by_class = {c: [] for c in classes}
            for c, entries in self._by_class.items():
                for topic in c:
                    self._classes_with_topic.setdefault(topic, []).append(entries)

    def _entry(self, member: str) -> tuple[int, bytes, str]:
        return (len(self._sizes[member]), self._key[member], member)

    def add(self, member: str) -> None:
        entry = self._entry(member)
        if _insert(self._entries, entry) and self._by_class:
            _insert(self._by_class[self._class_of[member]], entry)

    def remove(self, member: str) -> None:
        entry = self._entry(member)
        if _delete(self._entries, entry) and self._by_class:
            _delete(self._by_class[self._class_of[member]], entry)

    def first(self) -> str:
        return self._entries[0][2]

    def last(self) -> str:
        return self._entries[-1][2]

    def members(self) -> list[str]:
        return [entry[2] for entry in self._entries]

    def iter_members(self) -> Iterator[str]:
        """Lazy, like iterating the TreeSet; the caller must stop once it changes the set."""
        return (entry[2] for entry in self._entries)

    def iter_subscribers(self, topic: str) -> Iterator[str]:
        """The members subscribed to ``topic``, in the set's order (same caveat as iter_members)."""
        if not self._by_class:
            topics_of = self._topics_of
            return (entry[2] for entry in self._entries if topic in topics_of[entry[2]])
        lists = self._classes_with_topic.get(topic, [])
        if len(lists) == 1:
            return (entry[2] for entry in lists[0])
        return (entry[2] for entry in heapq.merge(*lists))


def _insert(entries: list[tuple[int, bytes, str]], entry: tuple[int, bytes, str]) -> bool:
    i = bisect.bisect_left(entries, entry)
    if i < len(entries) and entries[i] == entry:
        return False
    entries.insert(i, entry)
    return True


def _delete(entries: list[tuple[int, bytes, str]], entry: tuple[int, bytes, str]) -> bool:
    i = bisect.bisect_left(entries, entry)
    if i < len(entries) and entries[i] == entry:
        del entries[i]
        return True
    return False


@dataclass(frozen=True, slots=True)
class _PreviousOwner:
    consumer: str
    generation: int


class _GeneralAssignmentBuilder:
    """Members subscribe to different topics.

    1. Keep every owned partition the member still subscribes to (and, rack-aware, that is on its rack).
    2. Give each unassigned partition to the least loaded subscriber (rack-matching ones first).
    3. Move partitions from more loaded to less loaded subscribers until no partition could move to a
       member with two or more fewer partitions; a partition goes back to a member that owned it in an
       earlier generation when that helps, and a move back along a pair of members undoes an earlier
       move. Topics with a single subscriber, and members that can take nothing else, stay out of it.
    4. Keep the result only if it is more balanced than before step 3 (or nothing was owned)."""

    def __init__(
        self,
        ppt: Mapping[str, int],
        rack_info: _RackInfo,
        owned: dict[str, list[TopicPartition]],
        subscriptions: Mapping[str, Subscription],
        sub_order: Sequence[str],
        data: Mapping[str, MemberData],
        max_generation: int,
        key: Mapping[str, bytes],
    ) -> None:
        self.ppt = ppt
        self.rack_info = rack_info
        self.subscriptions = subscriptions
        self.sub_order = sub_order
        self.data = data
        self.max_generation = max_generation
        self.key = key
        self.total_partitions = sum(ppt.values())
        self.revocation_required = False

        self.topic_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        self.consumer_topics: dict[str, list[str]] = {}
        for consumer in sub_order:
            topics = [t for t in subscriptions[consumer].topics if t in ppt]  # duplicates kept, as in Java
            self.consumer_topics[consumer] = topics
            for t in topics:
                self.topic_consumers[t].append(consumer)
        self.consumer_topic_sets = {c: frozenset(ts) for c, ts in self.consumer_topics.items()}
        self.max_assignment_size = {c: self._max_assignment_size(ts) for c, ts in self.consumer_topics.items()}

        self.current: dict[str, list[TopicPartition]] = owned
        for consumer in sub_order:
            self.current.setdefault(consumer, [])
        self.partition_consumer: dict[TopicPartition, str] = {
            tp: c for c, partitions in self.current.items() for tp in partitions
        }
        sorted_topics = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), key[t]))
        self.sorted_all_partitions = [TopicPartition(t, p) for t in sorted_topics for p in range(ppt[t])]
        self.sorted_consumers = _SortedConsumers(self.current, key, self.consumer_topic_sets)
        self.movements = _PartitionMovements()

    def _max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.ppt):
            return self.total_partitions
        return sum(self.ppt[t] for t in topics)

    def _size(self, consumer: str) -> int:
        partitions = self.current.get(consumer)
        if partitions is None:
            raise StickyAssignorError(f"NullPointerException: no current assignment for {consumer!r}")
        return len(partitions)

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._prepopulate_current_assignments()
        assigned = self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(assigned)
        for consumer in self.current:
            self.sorted_consumers.add(consumer)
        self._balance(previous, unassigned)
        return self.current

    def _prepopulate_current_assignments(self) -> dict[TopicPartition, _PreviousOwner]:
        """Claims from members behind the highest generation: where each partition was before, for
        moving it back there (the latest such claim wins; ties go to the member seen first)."""
        previous: dict[TopicPartition, _PreviousOwner] = {}
        for consumer in self.sub_order:
            member = self.data[consumer]
            if member.generation is not None and member.generation < self.max_generation:
                generation = member.generation
            elif member.generation is None and self.max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in member.partitions:
                known = previous.get(tp)
                if known is None or generation > known.generation:
                    previous[tp] = _PreviousOwner(consumer, generation)
        return previous

    def _assign_owned_partitions(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        for consumer, partitions in self.current.items():
            topics = set(self.subscriptions[consumer].topics)
            kept: list[TopicPartition] = []
            for tp in partitions:
                if tp.topic not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in topics or self.rack_info.racks_mismatch(consumer, tp):
                    self.revocation_required = True
                else:
                    kept.append(tp)
            partitions[:] = kept
            assigned.extend(kept)
        return assigned

    def _unassigned_partitions(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not assigned:
            return self.sorted_all_partitions  # the same list, as in Java
        kept = _distinct_existing(assigned, self.ppt)
        if kept is not None:
            return [tp for tp in self.sorted_all_partitions if tp not in kept]
        key, topic_consumers = self.key, self.topic_consumers
        assigned.sort(key=lambda tp: (len(topic_consumers[tp.topic]), key[tp.topic], tp.partition))
        return _walk_unassigned(self.sorted_all_partitions, assigned)

    # -- balance ---------------------------------------------------------------------------------

    def _balance(self, previous: dict[TopicPartition, _PreviousOwner], unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.sorted_consumers.last()]

        to_assign = unassigned
        if self.rack_info.consumer_racks:
            to_assign = list(unassigned)
            self._maybe_assign(to_assign, self.rack_info, remove_assigned=True)
        self._maybe_assign(to_assign, None, remove_assigned=False)

        fixed_topics = {t for t, consumers in self.topic_consumers.items() if len(consumers) < 2}
        if fixed_topics:
            self.sorted_all_partitions[:] = [tp for tp in self.sorted_all_partitions if tp.topic not in fixed_topics]
            unassigned[:] = [tp for tp in unassigned if tp.topic not in fixed_topics]

        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for consumer in self.consumer_topics:
            if not self._can_consumer_participate(consumer):
                self.sorted_consumers.remove(consumer)
                fixed_assignments[consumer] = self.current.pop(consumer)

        pre_balance = {c: list(ps) for c, ps in self.current.items()}
        pre_balance_partition_consumer = dict(self.partition_consumer)
        self._init_balance_tracking()

        if not self.revocation_required:
            self._perform_reassignments(unassigned, previous)
        reassignment_performed = self._perform_reassignments(self.sorted_all_partitions, previous)

        if (
            not initializing
            and reassignment_performed
            and _balance_score(self.current) >= _balance_score(pre_balance)
        ):
            self.current.clear()
            self.current.update(pre_balance)
            self.partition_consumer = pre_balance_partition_consumer

        self.current.update(fixed_assignments)

    def _maybe_assign(
        self, partitions: list[TopicPartition], rack_info: _RackInfo | None, *, remove_assigned: bool
    ) -> None:
        remaining: list[TopicPartition] = []
        for tp in partitions:
            if self.topic_consumers[tp.topic] and self._maybe_assign_partition(tp, rack_info) and remove_assigned:
                continue
            remaining.append(tp)
        if remove_assigned:
            partitions[:] = remaining

    def _maybe_assign_partition(self, tp: TopicPartition, rack_info: _RackInfo | None) -> bool:
        """To the first member in (size, id) order subscribed to the topic (and on a replica's rack)."""
        for consumer in self.sorted_consumers.iter_subscribers(tp.topic):
            if rack_info is None or not rack_info.racks_mismatch(consumer, tp):
                self.sorted_consumers.remove(consumer)
                self.current[consumer].append(tp)
                self.partition_consumer[tp] = consumer
                self.sorted_consumers.add(consumer)
                return True
        return False

    def _can_consumer_participate(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        if len(partitions) < self.max_assignment_size[consumer]:
            return True
        return any(len(self.topic_consumers[tp.topic]) >= 2 for tp in partitions)

    # -- isBalanced, kept incrementally ------------------------------------------------------------

    def _init_balance_tracking(self) -> None:
        """For each topic, how many of its partitions each member holds (partitions the topic
        really has; members outside the balancing are left out, as Java removes them)."""
        self.topic_holders: dict[str, dict[str, int]] = {t: {} for t in self.ppt}
        for consumer, partitions in self.current.items():
            for tp in partitions:
                self._track(tp, consumer, 1)

    def _track(self, tp: TopicPartition, consumer: str, delta: int) -> None:
        holders = self.topic_holders.get(tp.topic)
        if holders is None or not 0 <= tp.partition < self.ppt[tp.topic]:
            return
        count = holders.get(consumer, 0) + delta
        if count:
            holders[consumer] = count
        else:
            holders.pop(consumer, None)

    def _is_balanced(self) -> bool:
        """isBalanced: sizes differ by at most one, or no partition of a topic a member could still
        take is held by a member with two or more partitions more.

        Java checks every potential partition of every member that is not yet full; the same answer
        comes from comparing, per topic, the largest holder with the smallest subscriber that is not
        full (a subscriber's own partitions can never be the witness)."""
        sorted_consumers = self.sorted_consumers
        current = self.current
        smallest = len(current[sorted_consumers.first()])
        largest = len(current[sorted_consumers.last()])
        if smallest >= largest - 1:
            return True
        max_sizes, consumer_topics = self.max_assignment_size, self.consumer_topics
        topic_min: dict[str, int] = {}
        for consumer in sorted_consumers.iter_members():  # ascending sizes: first seen is smallest
            size = len(current[consumer])
            if size + 1 >= largest:
                break  # no holder can have two more than this member or any after it
            if size == max_sizes[consumer]:
                continue
            for t in consumer_topics[consumer]:
                topic_min.setdefault(t, size)
        for t, size in topic_min.items():
            for holder in self.topic_holders[t]:
                holder_partitions = current.get(holder)
                if holder_partitions is not None and len(holder_partitions) > size + 1:
                    return False
        return True

    def _perform_reassignments(
        self, reassignable: list[TopicPartition], previous: dict[TopicPartition, _PreviousOwner]
    ) -> bool:
        reassignment_performed = False
        topic_consumers = self.topic_consumers
        rack_info = self.rack_info
        while True:
            modified = False
            for tp in reassignable:
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                if consumer is None:
                    raise StickyAssignorError(f"NullPointerException: partition {tp} has no current consumer")
                size = self._size(consumer)
                prior = previous.get(tp)
                if prior is not None and size > self._size(prior.consumer) + 1:
                    self._reassign_partition_to(tp, prior.consumer)
                    reassignment_performed = modified = True
                    continue

                # KIP-881: a partition on its member's rack moves only towards a member on its rack
                found_rack_consumer = False
                consumer_rack = rack_info.consumer_racks.get(consumer)
                if consumer_rack is not None:
                    partition_racks = rack_info.partition_racks.get(tp)
                    if partition_racks is None:
                        raise StickyAssignorError(f"NullPointerException: no racks for {tp}")
                    if partition_racks and consumer_rack in partition_racks:
                        racks_of = rack_info.consumer_racks
                        on_rack = [o for o in topic_consumers[tp.topic] if racks_of.get(o) in partition_racks]
                        if self._any_smaller_by_two(size, on_rack):
                            self._reassign_partition(tp)
                            reassignment_performed = modified = found_rack_consumer = True
                if not found_rack_consumer and self._any_smaller_by_two(size, topic_consumers[tp.topic]):
                    self._reassign_partition(tp)
                    reassignment_performed = modified = True
            if not modified:
                return reassignment_performed

    def _any_smaller_by_two(self, size: int, consumers: list[str]) -> bool:
        """Some of ``consumers`` has at least two partitions fewer than ``size``."""
        current = self.current
        try:
            return any(size > len(current[other]) + 1 for other in consumers)
        except KeyError as missing:
            raise StickyAssignorError(f"NullPointerException: no current assignment for {missing}") from None

    def _reassign_partition(self, tp: TopicPartition) -> None:
        """To the least loaded member subscribed to the topic (rack not considered, as in Java)."""
        for candidate in self.sorted_consumers.iter_subscribers(tp.topic):
            self._reassign_partition_to(tp, candidate)
            return
        raise StickyAssignorError(f"NullPointerException: no member to take {tp}")

    def _reassign_partition_to(self, tp: TopicPartition, new_consumer: str) -> None:
        consumer = self.partition_consumer[tp]
        to_move = self.movements.partition_to_move(tp, consumer, new_consumer)
        self._process_partition_movement(to_move, new_consumer)

    def _process_partition_movement(self, tp: TopicPartition, new_consumer: str) -> None:
        old_consumer = self.partition_consumer[tp]
        if new_consumer not in self.current:
            raise StickyAssignorError(f"NullPointerException: no current assignment for {new_consumer!r}")
        self.sorted_consumers.remove(old_consumer)
        self.sorted_consumers.remove(new_consumer)
        self.movements.move(tp, old_consumer, new_consumer)
        _remove_first(self.current[old_consumer], tp)
        self.current[new_consumer].append(tp)
        self.partition_consumer[tp] = new_consumer
        self._track(tp, old_consumer, -1)
        self._track(tp, new_consumer, 1)
        self.sorted_consumers.add(new_consumer)
        self.sorted_consumers.add(old_consumer)


def _balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    """getBalanceScore: the sum over all pairs of members of the difference of their sizes."""
    sizes = sorted(len(ps) for ps in assignment.values())
    n = len(sizes)
    return sum(size * (2 * i - n + 1) for i, size in enumerate(sizes))


# -- Cooperative adjustment ----------------------------------------------------------------------


def partitions_transferring_ownership(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    """CooperativeStickyAssignor.computePartitionsTransferringOwnership: partitions given to a member
    that did not own them and revoked from a member that did (owned = the subscriptions'
    ``owned_partitions`` as sent)."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for consumer, assigned in assignment.items():
        owned = subscriptions[consumer].owned_partitions
        owned_set = set(owned)
        for tp in assigned:
            if tp not in owned_set:
                added[tp] = consumer
        assigned_set = set(assigned)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: consumer for tp, consumer in added.items() if tp in revoked}
