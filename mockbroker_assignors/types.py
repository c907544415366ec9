"""Plain data in and out of assignors: subscriptions, cluster metadata, assignments.

Modelled on the Java client's ConsumerPartitionAssignor types (classic, client-side protocol) and
on the group coordinator's ConsumerGroupPartitionAssignor types (KIP-848, server-side), with
topic names where Kafka's server side uses topic ids (the broker maps between them).
Everything is immutable and hashable, so results can be compared and cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class RebalanceProtocol(Enum):
    """ConsumerPartitionAssignor.RebalanceProtocol (KIP-429)."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """What an assignor may know of a topic: its partition count and, for rack-aware assignment
    (KIP-881), the racks of each partition's replicas (empty when unknown)."""

    name: str
    num_partitions: int
    partition_racks: tuple[frozenset[str], ...] = ()
    # Kafka's topic id (22-character base64), when known: the KIP-848 uniform assignor visits
    # topics in the order Java's HashSet<Uuid> does, so its result matches a real broker's.
    topic_id: str | None = None

    def racks_of(self, partition: int) -> frozenset[str]:
        if partition < len(self.partition_racks):
            return self.partition_racks[partition]
        return frozenset()


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    topics: Mapping[str, TopicMetadata]

    @classmethod
    def of(
        cls, partitions: Mapping[str, int], racks: Mapping[str, tuple[frozenset[str], ...]] | None = None
    ) -> ClusterMetadata:
        """Convenience: ``ClusterMetadata.of({"t0": 3, "t1": 2})``."""
        racks = racks or {}
        return cls({t: TopicMetadata(t, n, racks.get(t, ())) for t, n in partitions.items()})

    def partitions_for(self, topic: str) -> int:
        meta = self.topics.get(topic)
        return 0 if meta is None else meta.num_partitions


@dataclass(frozen=True, slots=True)
class Subscription:
    """ConsumerPartitionAssignor.Subscription: what one member sends in JoinGroup metadata
    (ConsumerProtocolSubscription v0-3)."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1  # the generation owned_partitions belong to (v2+); -1 unknown
    rack_id: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """ConsumerPartitionAssignor.Assignment: what one member is given (ConsumerProtocolAssignment)."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None


GroupSubscription = Mapping[str, Subscription]  # member id -> subscription
GroupAssignment = dict[str, MemberAssignment]  # member id -> assignment


# -- KIP-848 server-side assignors ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member as the coordinator describes it to a server assignor
    (MemberSubscriptionAndAssignmentImpl): its subscription and its current target assignment."""

    member_id: str
    subscribed_topics: frozenset[str]
    assigned: Mapping[str, frozenset[int]] = field(default_factory=dict)
    instance_id: str | None = None
    rack_id: str | None = None


@dataclass(frozen=True, slots=True)
class GroupSpec:
    members: Mapping[str, MemberSpec]

    @property
    def homogeneous(self) -> bool:
        """SubscriptionType.HOMOGENEOUS: every member subscribes to the same topics."""
        subs = {m.subscribed_topics for m in self.members.values()}
        return len(subs) <= 1


TargetAssignment = dict[str, dict[str, frozenset[int]]]  # member id -> topic -> partitions
