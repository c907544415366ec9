"""The "cooperative-sticky" assignor (KIP-429): Java's CooperativeStickyAssignor, with its user data.

A port of ``org.apache.kafka.clients.consumer.CooperativeStickyAssignor``: the same sticky engine as
"sticky" (``mockbroker_assignors._sticky_core``), plus the cooperative rule that a partition is never handed
to a new owner in the rebalance that revokes it from the old one. Such partitions are left out of
this assignment; the old owner revokes them, rejoins, and the follow-up rebalance places them.

Under the cooperative protocol members keep their partitions while they rejoin, so previous
ownership is trusted from the subscription itself:

- ConsumerProtocolSubscription v2+ carries ``owned_partitions`` and ``generation_id``; when the
  generation is there (>= 0) both are used as they are.
- Older subscriptions carry ``owned_partitions`` (v1) and the generation in the assignor's user
  data, a struct of one field in Kafka's classic encoding::

      COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0 => generation
        generation => INT32

  A Java member writes it on every join, -1 before its first assignment. No user data means
  "generation unknown"; user data too short to read counts as generation -1.

Conflicting claims (two members listing the same partition) are settled by generation: the higher
generation keeps it; in the same generation neither does, and the partition is not assigned to
anyone else in this round either.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from mockbroker_assignors._sticky_core import (
    DEFAULT_GENERATION,
    MemberData,
    StickyResult,
    assign_sticky,
    partitions_transferring_ownership,
)
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    MemberAssignment,
    RebalanceProtocol,
    Subscription,
)

__all__ = ["CooperativeStickyAssignor", "decode_generation", "encode_user_data", "member_data"]

_INT32 = struct.Struct(">i")


class CooperativeStickyAssignor:
    """Classic-protocol "cooperative-sticky": sticky, in incremental (cooperative) rebalances.

    The target is the sticky assignment; partitions whose owner changes are first only taken away,
    and given out in the follow-up rebalance. Results are those of Java's CooperativeStickyAssignor
    for the same input (members in JoinGroup order).

    Worked example: topic t with 4 partitions, c1 owned t-0 and t-1, c2 owned t-2 and t-3, both in
    generation 1; c3 joins. The sticky target moves one partition to c3, but c3 does not get it
    yet: c2 gives up t-3 and keeps t-2.

    >>> from mockbroker_assignors.types import ClusterMetadata, Subscription, TopicPartition
    >>> cluster = ClusterMetadata.of({"t": 4})
    >>> t = [TopicPartition("t", p) for p in range(4)]
    >>> members = {
    ...     "c1": Subscription(("t",), owned_partitions=(t[0], t[1]), generation_id=1),
    ...     "c2": Subscription(("t",), owned_partitions=(t[2], t[3]), generation_id=1),
    ...     "c3": Subscription(("t",), generation_id=1),
    ... }
    >>> result = CooperativeStickyAssignor().assign(cluster, members)
    >>> {m: [f"{tp.topic}-{tp.partition}" for tp in a.partitions] for m, a in result.items()}
    {'c1': ['t-0', 't-1'], 'c2': ['t-2'], 'c3': []}

    c2 revokes t-3 and everyone rejoins in generation 2; the follow-up rebalance hands t-3 to c3:

    >>> members = {
    ...     "c1": Subscription(("t",), owned_partitions=(t[0], t[1]), generation_id=2),
    ...     "c2": Subscription(("t",), owned_partitions=(t[2],), generation_id=2),
    ...     "c3": Subscription(("t",), generation_id=2),
    ... }
    >>> result = CooperativeStickyAssignor().assign(cluster, members)
    >>> {m: [f"{tp.topic}-{tp.partition}" for tp in a.partitions] for m, a in result.items()}
    {'c1': ['t-0', 't-1'], 'c2': ['t-2'], 'c3': ['t-3']}

    ``prefer_rack_aware_logic`` mirrors the package-private test switch of Java's
    AbstractPartitionAssignor; leave it off to behave like a Java consumer.
    """

    name: str = "cooperative-sticky"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, cluster: ClusterMetadata, subscriptions: Mapping[str, Subscription]) -> GroupAssignment:
        result = self.assign_partitions(cluster, subscriptions)
        return {m: MemberAssignment(tuple(result.assignment[m])) for m in subscriptions}

    def assign_partitions(
        self,
        cluster: ClusterMetadata,
        subscriptions: Mapping[str, Subscription],
        *,
        subscriptions_map_capacity: int | None = None,
    ) -> StickyResult:
        """Java's ``assignPartitions``: the sticky target minus partitions transferring ownership.

        ``partitions_transferring_ownership`` of the result is Java's field: set by the identical
        subscriptions path, ``None`` after the general one (which recomputes it from owned and
        assigned partitions without keeping it)."""
        result = assign_sticky(
            cluster,
            subscriptions,
            member_data,
            prefer_rack_aware_logic=self.prefer_rack_aware_logic,
            subscriptions_map_capacity=subscriptions_map_capacity,
        )
        transferring = result.partitions_transferring_ownership
        if transferring is None:
            transferring = partitions_transferring_ownership(subscriptions, result.assignment)
        for tp, consumer in transferring.items():
            assigned = result.assignment[consumer]
            if tp in assigned:
                assigned.remove(tp)
        return result


def member_data(subscription: Subscription) -> MemberData:
    """CooperativeStickyAssignor.memberData: ``owned_partitions`` always; the generation from the
    v2+ field when present, else from the user data."""
    if subscription.generation_id >= 0:
        return MemberData(subscription.owned_partitions, subscription.generation_id)
    return MemberData(subscription.owned_partitions, decode_generation(subscription.user_data))


def encode_user_data(generation: int = DEFAULT_GENERATION) -> bytes:
    """CooperativeStickyAssignor.subscriptionUserData: the generation as a big-endian INT32
    (-1 before the member's first assignment)."""
    return _INT32.pack(generation)


def decode_generation(user_data: bytes | None) -> int | None:
    """The generation in cooperative-sticky user data: ``None`` without user data, -1 when it cannot
    be read (fewer than four bytes), else the INT32 it starts with."""
    if user_data is None:
        return None
    if len(user_data) < 4:
        return DEFAULT_GENERATION
    value: int = _INT32.unpack_from(user_data)[0]
    return value
