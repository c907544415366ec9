"""The "sticky" assignor (eager protocol): Java's StickyAssignor, with its user data codec.

A port of ``org.apache.kafka.clients.consumer.StickyAssignor`` (KIP-54): balanced first, then
sticky, rack-aware when members and replicas have racks (KIP-881). The engine is shared with
cooperative-sticky and lives in ``mockbroker_assignors._sticky_core``; this module adds what is particular to
the eager assignor: where a member's previous assignment comes from.

Under the eager protocol a member revokes everything before it joins, so the Java client does not
trust ``owned_partitions``: StickyAssignor reads the previous assignment and its generation from
its own subscription user data, which it writes after every assignment (``onAssignment``). The
user data is a struct in Kafka's classic (non-flexible) encoding::

    STICKY_ASSIGNOR_USER_DATA_V1 => [previous_assignment] generation
      previous_assignment => topic [partitions]
        topic => STRING          (INT16 length, UTF-8)
        partitions => INT32      (in an INT32-counted array)
      generation => INT32
    STICKY_ASSIGNOR_USER_DATA_V0 => [previous_assignment]          (before KIP-341: no generation)

Decoding tries V1, then V0; data that is neither counts as "owned nothing, generation -1".
No user data at all (a member that was never assigned) means "owned nothing, generation unknown".
librdkafka's sticky assignor writes and reads the same struct, so members of any of these clients
can share a group with ours.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Mapping
from itertools import repeat

from mockbroker_assignors._sticky_core import (
    DEFAULT_GENERATION,
    MemberData,
    StickyResult,
    assign_sticky,
    java_compute_if_absent_order,
)
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    MemberAssignment,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from mockbroker_protocol.hashing import java_string_hash

__all__ = ["StickyAssignor", "decode_user_data", "encode_user_data", "member_data"]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class StickyAssignor:
    """Classic-protocol "sticky": as balanced as possible, then as sticky as possible.

    With identical subscriptions every member ends up with floor or ceil of partitions / members,
    keeping as many of its previous partitions as that allows; otherwise the assignment is balanced
    as far as subscriptions allow and partitions move only to even out loads. Results, including
    the order of each member's partitions, are those of Java's StickyAssignor for the same input
    (members in JoinGroup order, which is the order Java's leader puts them into its HashMap).

    Worked example (the reference article's heterogeneous case): topics t0, t1, t2 with 1, 2 and 3
    partitions; c0 subscribes to [t0], c1 to [t0, t1], c2 to [t0, t1, t2]. Round-robin would give
    c0 t0-0, c1 t1-0, c2 t1-1 t2-0 t2-1 t2-2; sticky balances by subscription instead. The
    topics with fewest subscribers are placed first, each partition with the least loaded
    subscriber:

    >>> from mockbroker_assignors.types import ClusterMetadata, Subscription
    >>> cluster = ClusterMetadata.of({"t0": 1, "t1": 2, "t2": 3})
    >>> members = {
    ...     "c0": Subscription(("t0",)),
    ...     "c1": Subscription(("t0", "t1")),
    ...     "c2": Subscription(("t0", "t1", "t2")),
    ... }
    >>> result = StickyAssignor().assign(cluster, members)
    >>> {m: [f"{tp.topic}-{tp.partition}" for tp in a.partitions] for m, a in result.items()}
    {'c0': ['t0-0'], 'c1': ['t1-0', 't1-1'], 'c2': ['t2-0', 't2-1', 't2-2']}

    Now c0 leaves. c1 and c2 rejoin with their previous assignment in their user data (generation
    1); t0-0 goes to the least loaded subscriber and nothing else moves:

    >>> members = {
    ...     "c1": Subscription(("t0", "t1"), encode_user_data(result["c1"].partitions, 1)),
    ...     "c2": Subscription(("t0", "t1", "t2"), encode_user_data(result["c2"].partitions, 1)),
    ... }
    >>> result = StickyAssignor().assign(cluster, members)
    >>> {m: [f"{tp.topic}-{tp.partition}" for tp in a.partitions] for m, a in result.items()}
    {'c1': ['t1-0', 't1-1', 't0-0'], 'c2': ['t2-0', 't2-1', 't2-2']}

    ``prefer_rack_aware_logic`` mirrors the package-private test switch of Java's
    AbstractPartitionAssignor: rack-aware assignment even when every partition has replicas on
    every rack. Leave it off to behave like a Java consumer.
    """

    name: str = "sticky"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> GroupAssignment:
        result = self.assign_partitions(cluster, subscriptions)
        # AbstractPartitionAssignor: the sticky assignors put no user data into assignments.
        return {m: MemberAssignment(tuple(result.assignment[m])) for m in subscriptions}

    def assign_partitions(
        self,
        cluster: ClusterMetadata,
        subscriptions: Mapping[str, Subscription],
        *,
        subscriptions_map_capacity: int | None = None,
    ) -> StickyResult:
        """Java's ``assignPartitions``: lists per member plus Java's ``partitionsTransferringOwnership``
        field (see :func:`mockbroker_assignors._sticky_core.assign_sticky` for ``subscriptions_map_capacity``)."""
        return assign_sticky(
            cluster,
            subscriptions,
            member_data,
            prefer_rack_aware_logic=self.prefer_rack_aware_logic,
            subscriptions_map_capacity=subscriptions_map_capacity,
        )


def member_data(subscription: Subscription) -> MemberData:
    """StickyAssignor.memberData: always the user data, never ``owned_partitions`` (eager protocol)."""
    return decode_user_data(subscription.user_data)


def encode_user_data(partitions: Iterable[TopicPartition], generation: int) -> bytes:
    """StickyAssignor.serializeTopicPartitionAssignment: the V1 struct, byte for byte as Java writes it.

    Java groups the partitions by topic in a HashMap (CollectionUtils.groupPartitionsByTopic, with
    ``computeIfAbsent``), so topics come in that map's iteration order and each topic's partitions
    in the given order."""
    partitions = list(partitions)
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    topics = java_compute_if_absent_order((tp.topic for tp in partitions), java_string_hash)
    out = bytearray(_INT32.pack(len(topics)))
    for topic in topics:
        name = topic.encode("utf-8", "replace")  # String.getBytes(UTF_8) writes '?' for lone surrogates
        if len(name) > 0x7FFF:
            raise ValueError(f"topic name of {len(name)} bytes is larger than the maximum string length")
        numbers = grouped[topic]
        out += _INT16.pack(len(name))
        out += name
        out += _INT32.pack(len(numbers))
        out += struct.pack(f">{len(numbers)}i", *numbers)
    out += _INT32.pack(generation)
    return bytes(out)


def decode_user_data(user_data: bytes | None) -> MemberData:
    """StickyAssignor.deserializeTopicPartitionAssignment, with memberData's empty-data rule.

    ``None`` or empty: nothing owned, generation unknown. Otherwise V1 (trailing bytes ignored, as
    Schema.read ignores them), else V0 (generation unknown), else nothing owned in generation -1."""
    if not user_data:
        return MemberData((), None)
    try:
        partitions, offset = _read_previous_assignment(user_data)
        (generation,) = _INT32.unpack_from(user_data, offset)
        return MemberData(partitions, generation)
    except (ValueError, struct.error):
        pass
    try:
        partitions, _ = _read_previous_assignment(user_data)
        return MemberData(partitions, None)
    except (ValueError, struct.error):
        return MemberData((), DEFAULT_GENERATION)


def _read_previous_assignment(data: bytes) -> tuple[tuple[TopicPartition, ...], int]:
    """ArrayOf(TOPIC_ASSIGNMENT).read: counts must be non-negative and not exceed the bytes left."""
    size = len(data)
    (count,) = _INT32.unpack_from(data, 0)
    offset = 4
    if count < 0 or count > size - offset:
        raise ValueError("bad previous_assignment array size")
    partitions: list[TopicPartition] = []
    for _ in range(count):
        (length,) = _INT16.unpack_from(data, offset)
        offset += 2
        if length < 0 or length > size - offset:
            raise ValueError("bad topic string length")
        topic = data[offset : offset + length].decode("utf-8", "replace")
        offset += length
        (n,) = _INT32.unpack_from(data, offset)
        offset += 4
        if n < 0 or offset + 4 * n > size:
            raise ValueError("bad partitions array size")
        numbers = _int32_array(n).unpack_from(data, offset)
        offset += 4 * n
        partitions.extend(map(TopicPartition, repeat(topic, n), numbers))
    return tuple(partitions), offset


@functools.lru_cache(maxsize=256)
def _int32_array(n: int) -> struct.Struct:
    return struct.Struct(f">{n}i")
